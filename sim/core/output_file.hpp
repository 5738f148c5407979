#pragma once

/// The one writer of every file Strata produces (reports, traces, sweep folders, baselines). What is
/// at the path decides how it is written, so an output can never destroy what it names:
///  - a new path or a regular file: atomically (a temporary file in the same folder, then a rename);
///  - a symlink: followed, and its final target replaced atomically (the link stays);
///  - `-`, a FIFO, a character device or a socket: written through (nothing is replaced);
///  - a directory or a block device: refused as an input error before any work is done.

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

/// A write that failed for a reason that is not the user's path (a full disk, an I/O error). Exit 1
/// with the path and the system's reason; the user's path being wrong is an InputError (exit 2).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An output destination, checked when it is made (before any simulation runs).
class OutputPath {
 public:
  enum class Mode { atomic, write_through, standard_output };

  /// Checks `path`, named on the command line by `option` (e.g. "--json"): its folder must exist and
  /// be writable, it must not be a directory or a block device. Throws InputError naming the option.
  OutputPath(std::string path, std::string option);

  const std::string& path() const { return path_; }
  const std::string& option() const { return option_; }
  Mode mode() const { return mode_; }
  /// Where an atomic write lands: the path itself, or a symlink's final target.
  const std::filesystem::path& target() const { return target_; }

 private:
  std::string path_;
  std::string option_;
  Mode mode_ = Mode::atomic;
  std::filesystem::path target_;
};

/// Writes several outputs all or nothing: each atomic output is first written in full to a temporary
/// file beside its target; only when all of them are written are they renamed into place, then the
/// write-through outputs are written. A failure removes every temporary file, so a failed run leaves
/// no output behind. Throws InputError when the cause is the path, OutputError otherwise.
class OutputBatch {
 public:
  OutputBatch() = default;
  OutputBatch(const OutputBatch&) = delete;
  OutputBatch& operator=(const OutputBatch&) = delete;
  ~OutputBatch();

  void add(const OutputPath& destination, std::string content);
  void commit();

 private:
  struct Pending {
    OutputPath destination;
    std::string content;
    std::filesystem::path temporary;  ///< set once staged
  };
  void discard_temporaries();
  std::vector<Pending> pending_;
};

/// Writes one output (an OutputBatch of one).
void write_output(const OutputPath& destination, std::string content);

/// Writes a file of Strata's own (inside an output folder it manages) atomically; `path` is checked
/// like any output and named by itself in errors.
void write_file_atomically(const std::filesystem::path& path, const std::string& content);

/// Appends one line with a single write(2) to an O_APPEND descriptor, so concurrent writers never
/// interleave and a line is whole or (after a kill mid-write) cut off at the end of the file.
void append_line(const std::filesystem::path& file, std::string_view line);

/// Flushes standard output; throws OutputError naming it when anything written to it was lost
/// (a closed pipe, a full device).
void flush_standard_output();

/// Whether an errno value means the path itself is wrong (missing folder, permission, read-only).
bool is_path_error(int error_number);

}  // namespace strata
