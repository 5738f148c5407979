#pragma once

/// User-input errors with the JSON pointer of the offending value. All errors of a document are
/// collected before anything is reported, so a user fixes a scenario in one pass.

#include <stdexcept>
#include <string>
#include <vector>

namespace strata {

/// One problem in the input: `FILE: /json/pointer: what is wrong (got X, expected Y)`.
struct Diagnostic {
  std::string file;
  std::string pointer;
  std::string message;

  std::string to_string() const;
};

/// Maps a pointer in a composed document back to the file (and pointer) the value came from, e.g.
/// `/model/hidden_size` in a scenario that names `models/gpt3-175b.json` → that file, `/hidden_size`.
class SourceMap {
 public:
  explicit SourceMap(std::string root_file = "<input>") : root_file_(std::move(root_file)) {}

  /// Everything under `prefix` came from `file`, where it sat at the document root.
  void map_prefix(std::string prefix, std::string file);
  /// Everything under `prefix` was set by `label` (e.g. `--set tp=3`); pointers stay as they are.
  void label_prefix(std::string prefix, std::string label);
  /// Resolves a composed-document pointer to (file, pointer in that file).
  std::pair<std::string, std::string> locate(const std::string& pointer) const;
  const std::string& root_file() const { return root_file_; }
  /// Whether the value at `pointer` was set by a labelled override (`--set`), not read from a file.
  bool is_overridden(const std::string& pointer) const;

 private:
  struct Entry {
    std::string prefix;
    std::string file;
    bool rebase = true;
  };
  /// The entry that describes `pointer`: the longest prefix, the later one on a tie.
  const Entry* find(const std::string& pointer) const;
  std::string root_file_;
  std::vector<Entry> entries_;
};

/// Thrown when input is invalid; carries every diagnostic. The CLI prints them and exits 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Collects diagnostics against a source map.
class Diagnostics {
 public:
  explicit Diagnostics(const SourceMap* sources = nullptr) : sources_(sources) {}

  void add(const std::string& pointer, std::string message);
  void add_raw(Diagnostic d) { items_.push_back(std::move(d)); }
  bool empty() const { return items_.empty(); }
  /// Whether the value at `pointer` came from a `--set` (see SourceMap::is_overridden).
  bool is_overridden(const std::string& pointer) const { return sources_ && sources_->is_overridden(pointer); }
  std::size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  /// Throws InputError when anything was collected.
  void throw_if_any() const;

 private:
  const SourceMap* sources_;
  std::vector<Diagnostic> items_;
};

/// Quotes a JSON value for a message, shortened so one error stays one line.
std::string show_value(const std::string& dumped_json);

}  // namespace strata
