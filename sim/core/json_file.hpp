#pragma once

/// Reading JSON documents safely (size and nesting limits, errors with line and column) and writing
/// output files atomically (a reader never sees a partial file).

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace strata {

/// Inputs larger than this are refused before reading: a scenario is kilobytes, and a mistaken path
/// to a dataset should fail at once instead of exhausting memory.
inline constexpr std::uintmax_t kMaxInputBytes = 64ull * 1024 * 1024;
/// Deeper nesting than any real scenario; guards the recursive destructor of nlohmann::json.
inline constexpr int kMaxInputDepth = 64;

/// Reads and parses a JSON file. Throws InputError naming `display_name`.
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& display_name);
/// Parses JSON text. Throws InputError naming `display_name`.
nlohmann::json parse_json_text(const std::string& text, const std::string& display_name);

/// Writes `content` to `path` through a temporary file in the same folder and a rename.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

}  // namespace strata
