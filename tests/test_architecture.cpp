// The structure docs/architecture.md draws, checked on the sources:
//  - includes go one way through the layers: core <- config <- graph <- dag <- platform <- exec <-
//    analysis <- report <- plan <- the CLI (tools/cli);
//  - after config, no code compares a registered policy name as a string: policies are types.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "sim/config/policy_catalog.hpp"
#include "support.hpp"

using namespace strata;

namespace {

namespace fs = std::filesystem;

/// The layers, lowest first; a file may include its own layer and the ones before it.
const std::vector<std::string> kLayers = {"core", "config", "graph", "dag", "platform",
                                          "exec", "analysis", "report", "plan", "cli"};

int layer_rank(const std::string& layer) {
  auto it = std::find(kLayers.begin(), kLayers.end(), layer);
  return it == kLayers.end() ? -1 : static_cast<int>(it - kLayers.begin());
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every C++ source of a layer: sim/LAYER/* and, for the CLI, tools/cli/*.
std::map<fs::path, std::string> sources_by_layer() {
  const fs::path root = test::source_path("");
  std::map<fs::path, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root / "sim")) {
    const auto ext = e.path().extension();
    if (ext != ".cpp" && ext != ".hpp") continue;
    out[fs::relative(e.path(), root)] = fs::relative(e.path(), root / "sim").begin()->string();
  }
  for (const auto& e : fs::directory_iterator(root / "tools" / "cli")) out[fs::relative(e.path(), root)] = "cli";
  return out;
}

}  // namespace

TEST_CASE("Includes go one way through the layers", "[unit][architecture]") {
  const std::regex include(R"re(#include "sim/([a-z_]+)/)re");
  std::vector<std::string> wrong;
  std::size_t checked = 0;
  for (const auto& [path, layer] : sources_by_layer()) {
    const int own = layer_rank(layer);
    if (own < 0) {
      wrong.push_back(path.string() + ": not in a known layer (" + layer + ")");
      continue;
    }
    std::istringstream lines(read(test::source_path(path.string())));
    for (std::string line; std::getline(lines, line);) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      ++checked;
      const std::string target = m[1].str();
      if (layer_rank(target) < 0 || layer_rank(target) > own)
        wrong.push_back(path.string() + " (" + layer + ") includes sim/" + target + "/");
    }
  }
  for (const auto& w : wrong) UNSCOPED_INFO(w);
  CHECK(checked > 100);
  CHECK(wrong.empty());
}

TEST_CASE("After config, no code compares a policy name as a string", "[unit][architecture]") {
  std::set<std::string> names;
  for (const auto& category : policy_catalog().categories())
    for (const auto& policy : category.policies) names.insert(policy.name);
  REQUIRE(names.count("in_memory") == 1);
  REQUIRE(names.count("congestion_aware") == 1);
  // `x == "name"`, `x != "name"`, `"name" == x`, and a string switch's `? "name"` arms are spelled
  // with == as well, so these two cover them.
  // Line by line, with short names: std::regex recurses per character and overflows on long spans.
  const std::regex after(R"re([=!]=\s*"([a-z0-9_]{1,40})")re"), before(R"re("([a-z0-9_]{1,40})"\s*[=!]=)re");
  std::vector<std::string> wrong;
  for (const auto& [path, layer] : sources_by_layer()) {
    if (layer == "core" || layer == "config") continue;
    std::istringstream text(read(test::source_path(path.string())));
    int number = 0;
    for (std::string line; std::getline(text, line);) {
      ++number;
      for (const std::regex* re : {&after, &before})
        for (std::sregex_iterator it(line.begin(), line.end(), *re), end; it != end; ++it)
          if (names.count((*it)[1].str()))
            wrong.push_back(fmt::format("{}:{}: compares \"{}\"", path.string(), number, (*it)[1].str()));
    }
  }
  for (const auto& w : wrong) UNSCOPED_INFO(w);
  CHECK(wrong.empty());
}
