#pragma once

// One marked region of a generated document (docs/validation.md has one per validation test):
// the tests regenerate their region and fail when the committed text differed.

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace strata::test {

/// Replaces what lies between `begin` and `end` (markers kept) with `body`, adding the markers, and
/// the file with `preamble`, when absent; returns whether the file changed. Two tests write regions
/// of the same file and ctest runs them in parallel, so the read-modify-write holds an exclusive
/// lock on the file: without it one test's rewrite could overwrite the other's.
inline bool rewrite_region(const std::filesystem::path& path, const std::string& begin, const std::string& end,
                           const std::string& body, const std::string& preamble) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
  if (fd < 0) return true;  // cannot be read or written: report it as out of date
  ::flock(fd, LOCK_EX);
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  if (text.empty()) text = preamble;
  const std::string block = begin + "\n" + body + end;
  std::string updated;
  const auto b = text.find(begin), e = text.find(end);
  if (b == std::string::npos || e == std::string::npos || e < b) updated = text + "\n" + block + "\n";
  else updated = text.substr(0, b) + block + text.substr(e + end.size());
  const bool changed = updated != text;
  if (changed) std::ofstream(path, std::ios::binary | std::ios::trunc) << updated;
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return changed;
}

}  // namespace strata::test
