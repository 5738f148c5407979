#include "sim/core/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sim/core/diagnostics.hpp"

namespace strata {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void refuse(const std::string& label, std::string message) {
  throw InputError({Diagnostic{label, "", std::move(message)}});
}

std::string label_of(const std::string& option, const std::string& path) {
  return option.empty() ? path : option + " " + path;
}

/// The folder an atomic write puts its temporary file in.
fs::path folder_of(const fs::path& file) {
  fs::path parent = file.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

void check_folder(const fs::path& file, const std::string& label) {
  const fs::path folder = folder_of(file);
  struct stat st {};
  if (::stat(folder.c_str(), &st) != 0)
    refuse(label, fmt::format("folder {} cannot be used: {} (expected an existing, writable folder)",
                              folder.string(), std::strerror(errno)));
  if (!S_ISDIR(st.st_mode))
    refuse(label, fmt::format("{} is not a folder (expected an existing, writable folder)", folder.string()));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    refuse(label, fmt::format("folder {} is not writable: {}", folder.string(), std::strerror(errno)));
}

/// The final path a chain of symlinks names, even when that path does not exist yet (a dangling
/// link creates its target, as `cp` and shells do).
fs::path final_target(const fs::path& link, const std::string& label) {
  fs::path current = link;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(current, ec))) return current;
    fs::path next = fs::read_symlink(current, ec);
    if (ec) refuse(label, fmt::format("cannot read the symbolic link: {}", ec.message()));
    current = next.is_absolute() ? next : folder_of(current) / next;
  }
  refuse(label, "too many levels of symbolic links");
}

/// /proc/PID/fd/N and /dev/fd/N name an open descriptor: writing there must go to that descriptor,
/// not replace the file it happens to point at.
bool names_open_descriptor(const std::string& path) {
  return path.starts_with("/proc/") || path.starts_with("/dev/fd/") || path.starts_with("/dev/std");
}

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category());
    if (n == 0) throw std::system_error(EIO, std::generic_category());
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

[[noreturn]] void fail_write(const OutputPath& destination, int error_number) {
  const std::string label = label_of(destination.option(), destination.path());
  const std::string reason = std::strerror(error_number);
  if (is_path_error(error_number)) refuse(label, fmt::format("cannot write: {}", reason));
  throw OutputError(fmt::format("{}: cannot write: {}", label, reason));
}

mode_t new_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

bool is_path_error(int error_number) {
  switch (error_number) {
    case ENOENT:
    case ENOTDIR:
    case EISDIR:
    case EACCES:
    case EPERM:
    case EROFS:
    case ENAMETOOLONG:
    case ELOOP:
    case ENXIO:
      return true;
    default:
      return false;
  }
}

OutputPath::OutputPath(std::string path, std::string option) : path_(std::move(path)), option_(std::move(option)) {
  const std::string label = label_of(option_, path_);
  if (path_.empty()) refuse(option_.empty() ? "output" : option_, "empty path (expected a file path or -)");
  if (path_ == "-") {
    mode_ = Mode::standard_output;
    return;
  }
  struct stat link {};
  if (::lstat(path_.c_str(), &link) != 0) {
    if (errno != ENOENT) refuse(label, fmt::format("cannot be used: {}", std::strerror(errno)));
    mode_ = Mode::atomic;
    target_ = path_;
    check_folder(target_, label);
    return;
  }
  struct stat st {};
  const bool is_link = S_ISLNK(link.st_mode);
  if (is_link && ::stat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse(label, fmt::format("cannot be used: {}", std::strerror(errno)));
    mode_ = Mode::atomic;  // a dangling link: its target is created
    target_ = final_target(path_, label);
    check_folder(target_, label);
    return;
  }
  if (!is_link) st = link;
  if (S_ISDIR(st.st_mode)) refuse(label, "is a directory (expected a file path)");
  if (S_ISBLK(st.st_mode)) refuse(label, "is a block device (expected a file path)");
  if (S_ISSOCK(st.st_mode)) refuse(label, "is a socket (expected a file path, a FIFO or -)");
  if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) || (is_link && names_open_descriptor(path_))) {
    mode_ = Mode::write_through;
    if (::access(path_.c_str(), W_OK) != 0)
      refuse(label, fmt::format("is not writable: {}", std::strerror(errno)));
    return;
  }
  mode_ = Mode::atomic;
  target_ = is_link ? final_target(path_, label) : fs::path(path_);
  check_folder(target_, label);
}

OutputBatch::~OutputBatch() { discard_temporaries(); }

void OutputBatch::add(const OutputPath& destination, std::string content) {
  pending_.push_back({destination, std::move(content), {}});
}

void OutputBatch::discard_temporaries() {
  for (Pending& p : pending_) {
    if (p.temporary.empty()) continue;
    ::unlink(p.temporary.c_str());
    p.temporary.clear();
  }
}

void OutputBatch::commit() {
  // Stage every atomic output in full first, so that any failure leaves nothing behind.
  for (Pending& p : pending_) {
    if (p.destination.mode() != OutputPath::Mode::atomic) continue;
    const fs::path& target = p.destination.target();
    std::string name = (folder_of(target) / fmt::format(".{}.tmp.XXXXXX", target.filename().string())).string();
    const int fd = ::mkstemp(name.data());
    if (fd < 0) {
      const int err = errno;
      discard_temporaries();
      fail_write(p.destination, err);
    }
    p.temporary = name;
    struct stat existing {};
    const mode_t mode = ::stat(target.c_str(), &existing) == 0 ? (existing.st_mode & 07777) : new_file_mode();
    int err = 0;
    try {
      write_all(fd, p.content);
      if (::fchmod(fd, mode) != 0) err = errno;
    } catch (const std::system_error& e) {
      err = e.code().value();
    }
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      discard_temporaries();
      fail_write(p.destination, err);
    }
  }
  for (Pending& p : pending_) {
    if (p.temporary.empty()) continue;
    if (::rename(p.temporary.c_str(), p.destination.target().c_str()) != 0) {
      const int err = errno;
      discard_temporaries();
      fail_write(p.destination, err);
    }
    p.temporary.clear();
  }
  for (Pending& p : pending_) {
    if (p.destination.mode() == OutputPath::Mode::atomic) continue;
    try {
      if (p.destination.mode() == OutputPath::Mode::standard_output) {
        std::fflush(stdout);
        write_all(STDOUT_FILENO, p.content);
        continue;
      }
      const int flags = O_WRONLY | O_CLOEXEC | (names_open_descriptor(p.destination.path()) ? O_APPEND : 0);
      const int fd = ::open(p.destination.path().c_str(), flags);
      if (fd < 0) throw std::system_error(errno, std::generic_category());
      try {
        write_all(fd, p.content);
      } catch (...) {
        ::close(fd);
        throw;
      }
      if (::close(fd) != 0) throw std::system_error(errno, std::generic_category());
    } catch (const std::system_error& e) {
      fail_write(p.destination, e.code().value());
    }
  }
  pending_.clear();
}

void write_output(const OutputPath& destination, std::string content) {
  OutputBatch batch;
  batch.add(destination, std::move(content));
  batch.commit();
}

void write_file_atomically(const fs::path& path, const std::string& content) {
  write_output(OutputPath(path.string(), ""), content);
}

void append_line(const fs::path& file, std::string_view line) {
  const OutputPath destination(file.string(), "");
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) fail_write(destination, errno);
  std::string data(line);
  data.push_back('\n');
  // One write(2): a line is whole or cut off at the end, never interleaved with another writer's.
  const ssize_t n = ::write(fd, data.data(), data.size());
  int err = n < 0 ? errno : (n == static_cast<ssize_t>(data.size()) ? 0 : ENOSPC);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) fail_write(destination, err);
}

void flush_standard_output() {
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    const int err = errno != 0 ? errno : EIO;
    throw OutputError(fmt::format("standard output: cannot write: {}", std::strerror(err)));
  }
}

}  // namespace strata
