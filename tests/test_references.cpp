// Every citation resolves inside the repository: the sources, tests, tools, profiles, models,
// scenarios, README and docs cite papers, datasheets or a section of docs/references.md, never a
// working file kept outside the repository (the reference-numbers digest or the numbered seed
// documents). Each "docs/references.md, <Section>" citation must name a heading of that file.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "support.hpp"

using namespace strata;

namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool cited_text(const fs::path& p) {
  static const std::set<std::string> kExtensions = {".cpp", ".hpp", ".h", ".json",
                                                    ".md",  ".txt", ""};
  return kExtensions.count(p.extension().string()) > 0;
}

/// The tracked text files that may carry citations, relative to the source tree.
std::vector<fs::path> cited_files() {
  const fs::path root = test::source_path("");
  std::vector<fs::path> out;
  for (const char* dir : {"sim", "tools", "hardware_profiles", "models", "scenarios", "docs"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && cited_text(e.path())) out.push_back(e.path());
  for (const auto& e : fs::directory_iterator(root / "tests"))
    if (e.is_regular_file() && (e.path().extension() == ".cpp" || e.path().extension() == ".hpp"))
      out.push_back(e.path());
  for (const char* file : {"README.md", "BENCHMARKS.md", "CMakeLists.txt"})
    out.push_back(root / file);
  return out;
}

}  // namespace

TEST_CASE("Citations name sources or docs/references.md, not files outside the repository",
          "[docs]") {
  // Spelled in pieces so that this file does not match itself.
  const std::regex outside("PUBLISHED_" + std::string("NUMBERS") + "|\\bseeds?[ /_]?0[0-9][0-9]\\b",
                           std::regex::icase);
  const std::vector<fs::path> files = cited_files();
  REQUIRE(files.size() > 50);
  for (const auto& p : files) {
    std::istringstream lines(read(p));
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (std::regex_search(line, outside)) FAIL_CHECK(p.string() << ":" << number << ": " << line);
    }
  }
}

TEST_CASE("Every cited section of docs/references.md exists", "[docs]") {
  const std::string refs = read(test::source_path("docs/references.md"));
  std::set<std::string> headings;
  const std::regex heading("#{2,4} +(.+?) *");
  std::istringstream lines(refs);
  std::smatch hm;
  for (std::string line; std::getline(lines, line);)
    if (std::regex_match(line, hm, heading)) headings.insert(hm[1].str());
  REQUIRE(headings.count("Model configurations") == 1);

  // Comments wrap citations over lines: join each line break and its comment marker into a space.
  const std::regex wrap("\\n[ \\t]*(///?|#)?[ \\t]*");
  const std::regex cite("docs/references\\.md`?, ([A-Z][A-Za-z0-9 -]*[A-Za-z0-9])");
  int citations = 0;
  for (const auto& p : cited_files()) {
    const std::string text = std::regex_replace(read(p), wrap, " ");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), cite);
         it != std::sregex_iterator(); ++it) {
      const std::string section = (*it)[1].str();
      bool found = false;
      for (const auto& h : headings) found = found || section.rfind(h, 0) == 0;
      if (!found)
        FAIL_CHECK(p.string() << ": no section for \"docs/references.md, " << section << "\"");
      ++citations;
    }
  }
  CHECK(citations > 10);
}
