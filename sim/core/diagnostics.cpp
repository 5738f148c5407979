#include "sim/core/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace strata {

std::string Diagnostic::to_string() const {
  return fmt::format("{}: {}: {}", file, pointer.empty() ? "/" : pointer, message);
}

void SourceMap::map_prefix(std::string prefix, std::string file) {
  entries_.push_back({std::move(prefix), std::move(file), true});
}

void SourceMap::label_prefix(std::string prefix, std::string label) {
  entries_.push_back({std::move(prefix), std::move(label), false});
}

bool SourceMap::is_overridden(const std::string& pointer) const {
  const Entry* best = find(pointer);
  return best && !best->rebase;
}

std::pair<std::string, std::string> SourceMap::locate(const std::string& pointer) const {
  const Entry* best = find(pointer);
  if (!best) return {root_file_, pointer};
  if (!best->rebase) return {best->file, pointer};
  return {best->file, pointer.substr(best->prefix.size())};
}

const SourceMap::Entry* SourceMap::find(const std::string& pointer) const {
  const Entry* best = nullptr;
  for (const Entry& e : entries_) {
    bool inside = pointer == e.prefix ||
                  (pointer.starts_with(e.prefix) && pointer.size() > e.prefix.size() &&
                   pointer[e.prefix.size()] == '/');
    // Later entries win ties: an override applied after a file was inlined describes the value.
    if (inside && (!best || e.prefix.size() >= best->prefix.size())) best = &e;
  }
  return best;
}

namespace {
std::string join_lines(const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const Diagnostic& d : ds) {
    if (!out.empty()) out += '\n';
    out += d.to_string();
  }
  return out;
}
}  // namespace

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(join_lines(diagnostics)), diagnostics_(std::move(diagnostics)) {}

void Diagnostics::add(const std::string& pointer, std::string message) {
  if (sources_) {
    auto [file, local] = sources_->locate(pointer);
    items_.push_back({std::move(file), std::move(local), std::move(message)});
  } else {
    items_.push_back({"<input>", pointer, std::move(message)});
  }
}

void Diagnostics::throw_if_any() const {
  if (!items_.empty()) throw InputError(items_);
}

std::string show_value(const std::string& dumped_json) {
  constexpr std::size_t kMax = 48;
  std::string s = dumped_json;
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > kMax) s = s.substr(0, kMax - 3) + "...";
  return s;
}

}  // namespace strata
