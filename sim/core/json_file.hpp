#pragma once

/// Reading JSON documents safely: size and nesting limits, duplicate keys refused, errors with line
/// and column that never echo the content of a file that is not JSON. (Writing: output_file.hpp.)

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace strata {

/// Inputs larger than this are refused before reading: a scenario is kilobytes, and a mistaken path
/// to a dataset should fail at once instead of exhausting memory.
inline constexpr std::uintmax_t kMaxInputBytes = 64ull * 1024 * 1024;
/// Deeper nesting than any real scenario; guards the recursive destructor of nlohmann::json.
inline constexpr int kMaxInputDepth = 64;

/// Nesting depth of JSON text (brackets inside strings ignored), checked before parsing.
int json_nesting_depth(const std::string& text);

/// Reads and parses a JSON file. Throws InputError naming `display_name`.
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& display_name);
/// Parses JSON text. Throws InputError naming `display_name`.
nlohmann::json parse_json_text(const std::string& text, const std::string& display_name);

}  // namespace strata
