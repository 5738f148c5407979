#include "sim/core/json_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <vector>
#include <sstream>
#include <system_error>

#include "sim/core/diagnostics.hpp"
#include "sim/core/params.hpp"

namespace strata {

namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& file, std::string message) {
  throw InputError({Diagnostic{file, "", std::move(message)}});
}

}  // namespace

int json_nesting_depth(const std::string& text) {
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

namespace {

/// Builds the document from nlohmann's SAX parser and refuses what the plain parser lets through or
/// reports badly: a key that appears twice in one object (the plain parser silently keeps the last),
/// a number a double cannot hold (an out_of_range exception without a position). Messages never
/// quote the text itself: the file may not be JSON at all.
class CheckedBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  CheckedBuilder(json& root, const std::string& text) : root_(root), text_(text) {}

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(number_integer_t v) { return add(v); }
  bool number_unsigned(number_unsigned_t v) { return add(v); }
  bool number_float(number_float_t v, const string_t&) { return add(v); }
  bool string(string_t& v) { return add(std::move(v)); }
  bool binary(binary_t& v) { return add(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    Frame& top = stack_.back();
    if (top.value->contains(k)) {
      error_ = fmt::format("{}: duplicate key (expected each key once in an object)", pointer_of(k));
      return false;
    }
    top.key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t byte, const std::string&, const json::exception& e) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i + 1 < byte && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error_ = fmt::format("invalid JSON at line {}, column {}: {}", line, column, syntax_message(e));
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  struct Frame {
    json* value;
    std::string key;  // the key of the next member, for objects
  };

  /// Where the next value goes, written into its parent.
  json* slot() {
    if (stack_.empty()) return &root_;
    Frame& top = stack_.back();
    if (top.value->is_array()) {
      top.value->push_back(nullptr);
      return &top.value->back();
    }
    return &(*top.value)[top.key];
  }
  bool add(json v) {
    *slot() = std::move(v);
    return true;
  }
  bool open(json container) {
    json* at = slot();
    *at = std::move(container);
    stack_.push_back({at, {}});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
  std::string pointer_of(const std::string& key) const {
    std::string out;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
      const Frame& f = stack_[i];
      out += '/';
      out += f.value->is_array() ? std::to_string(f.value->size() - 1) : pointer_escape(f.key);
    }
    out += '/';
    out += pointer_escape(key);
    return out;
  }

  /// nlohmann's message without its "last read: '...'" quote of the input.
  static std::string syntax_message(const json::exception& e) {
    std::string what = e.what();
    if (what.find("number overflow") != std::string::npos) return "number too large for a double";
    if (auto at = what.find("syntax error"); at != std::string::npos) what = what.substr(at);
    if (auto quoted = what.find("; last read: '"); quoted != std::string::npos) {
      auto expected = what.find("; expected", quoted);
      what.erase(quoted, expected == std::string::npos ? std::string::npos : expected - quoted);
    }
    return what;
  }

  json& root_;
  const std::string& text_;
  std::vector<Frame> stack_;
  std::string error_;
};

}  // namespace

nlohmann::json parse_json_text(const std::string& text, const std::string& display_name) {
  const int depth = json_nesting_depth(text);
  if (depth > kMaxInputDepth)
    fail(display_name, fmt::format("nesting too deep (got depth {}, expected at most {})", depth, kMaxInputDepth));
  json root;
  CheckedBuilder builder(root, text);
  if (!json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true)) {
    const std::string& why = builder.error();
    // A duplicate key names its place by pointer; other errors have a position in the text.
    if (why.starts_with("/")) {
      const auto colon = why.find(": ");
      throw InputError({Diagnostic{display_name, why.substr(0, colon), why.substr(colon + 2)}});
    }
    fail(display_name, why.empty() ? "invalid JSON" : why);
  }
  return root;
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

}  // namespace strata
