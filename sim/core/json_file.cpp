#include "sim/core/json_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>

#include "sim/core/diagnostics.hpp"

namespace strata {

namespace {

[[noreturn]] void fail(const std::string& file, std::string message) {
  throw InputError({Diagnostic{file, "", std::move(message)}});
}

/// Nesting depth of JSON text, ignoring brackets inside strings.
int max_depth(const std::string& text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    else if (c == '}' || c == ']') --depth;
  }
  return deepest;
}

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& display_name) {
  int depth = max_depth(text);
  if (depth > kMaxInputDepth)
    fail(display_name, fmt::format("nesting too deep (got depth {}, expected at most {})", depth,
                                   kMaxInputDepth));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = e.what();
    auto pos = what.find("syntax error");
    if (pos != std::string::npos) what = what.substr(pos);
    fail(display_name, fmt::format("invalid JSON at line {}, column {}: {}", line, column, what));
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& display_name) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) fail(display_name, "file not found");
  if (std::filesystem::is_directory(path, ec)) fail(display_name, "is a directory, expected a JSON file");
  auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(display_name, fmt::format("cannot read file ({})", ec.message()));
  if (size > kMaxInputBytes)
    fail(display_name, fmt::format("file too large (got {} bytes, expected at most {})", size,
                                   kMaxInputBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(display_name, "cannot open file");
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), display_name);
}

void write_file_atomically(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    out << content;
    out.flush();
    if (!out) {
      std::filesystem::remove(tmp);
      throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
  }
}

}  // namespace strata
