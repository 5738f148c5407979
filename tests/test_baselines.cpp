// Regression: every shipped scenario's fresh report against its committed baseline
// (results/baseline/NAME.json, regenerated on purpose with tools/update-baselines). Structure must
// match exactly (keys, types, array lengths, strings, booleans); numbers within a relative 1e-6,
// which allows another compiler's or CPU's rounding but not a changed model.

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <regex>
#include <sys/wait.h>

#include "sim/core/json_file.hpp"
#include "sim/plan/compare.hpp"
#include "support.hpp"

namespace {

constexpr double kRelativeTolerance = 1e-6;

void compare(const nlohmann::json& base, const nlohmann::json& now, const std::string& path,
             std::vector<std::string>& diffs) {
  auto differ = [&](const std::string& what) {
    diffs.push_back(fmt::format("{}: {} (baseline {}, now {})", path.empty() ? "/" : path, what, base.dump(),
                                now.dump()));
  };
  if (base.is_number() && now.is_number()) {
    const double a = base.get<double>(), b = now.get<double>();
    if (std::fabs(a - b) > kRelativeTolerance * std::max(std::fabs(a), std::fabs(b)) + 1e-300) differ("number moved");
    return;
  }
  if (base.type() != now.type()) return differ("type changed");
  if (base.is_object()) {
    for (const auto& [key, value] : base.items()) {
      if (!now.contains(key)) diffs.push_back(fmt::format("{}/{}: key removed", path, key));
      else compare(value, now.at(key), path + "/" + key, diffs);
    }
    for (const auto& [key, value] : now.items())
      if (!base.contains(key)) diffs.push_back(fmt::format("{}/{}: key added", path, key));
  } else if (base.is_array()) {
    if (base.size() != now.size()) return differ("array length changed");
    for (std::size_t i = 0; i < base.size(); ++i) compare(base[i], now[i], fmt::format("{}/{}", path, i), diffs);
  } else if (base != now) {
    differ("value changed");
  }
}

/// The report on stdout; the summary table (which goes to stderr with --json -) into `summary_file`.
std::string run_report(const std::filesystem::path& scenario, const std::string& summary_file) {
  const std::string cmd = fmt::format("'{}' run '{}' --json - 2>'{}'", STRATA_BINARY, scenario.string(), summary_file);
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::string out;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  REQUIRE(pclose(pipe) == 0);
  return out;
}

}  // namespace

TEST_CASE("Every shipped scenario matches its committed baseline report", "[regression][slow]") {
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(strata::test::source_path("scenarios"))) {
    if (entry.path().extension() != ".json") continue;
    const auto baseline_path = strata::test::source_path("results/baseline/" + entry.path().stem().string() + ".json");
    INFO(entry.path().filename().string() << " (regenerate on purpose with tools/update-baselines)");
    REQUIRE(std::filesystem::exists(baseline_path));
    std::ifstream in(baseline_path);
    const nlohmann::json baseline = nlohmann::json::parse(in);
    const std::string summary_file = strata::test::temp_file("summary.txt");
    const nlohmann::json now = nlohmann::json::parse(run_report(entry.path(), summary_file));
    // The summary shows no negative zero ("contention -0.0 us"): a value that rounds to zero has no sign.
    std::ifstream summary_in(summary_file);
    const std::string summary((std::istreambuf_iterator<char>(summary_in)), std::istreambuf_iterator<char>());
    CHECK(summary.find("GPU peak") != std::string::npos);
    static const std::regex negative_zero(R"((^|[^0-9.])-0(\.0*)?([^0-9.]|$))");
    CHECK_FALSE(std::regex_search(summary, negative_zero));
    std::filesystem::remove(summary_file);
    std::vector<std::string> diffs;
    compare(baseline, now, "", diffs);
    for (const auto& d : diffs) std::cout << entry.path().stem().string() << " " << d << "\n";
    CHECK(diffs.empty());
    ++compared;
  }
  CHECK(compared >= 17);
}

TEST_CASE("The shipped policy orderings hold on the committed baselines", "[regression]") {
  // results/orderings.json: pairs of shipped scenarios and "A op B" rules on their reports. The
  // baselines themselves are checked against fresh runs by the test above.
  const auto doc = strata::read_json_file(strata::test::source_path("results/orderings.json"), "results/orderings.json");
  int checked = 0;
  for (const auto& pair : doc.at("orderings")) {
    const std::string a = pair.at("a"), b = pair.at("b");
    auto report = [](const std::string& name) {
      return strata::read_json_file(strata::test::source_path("results/baseline/" + name + ".json"), name);
    };
    const nlohmann::json ra = report(a), rb = report(b);
    for (const auto& rule : strata::parse_rules(pair, "results/orderings.json")) {
      const strata::RuleOutcome r = strata::check_rule(rule, ra, rb);
      std::cout << fmt::format("{}  {} vs {}: {}: {}\n", r.holds ? "PASS" : "FAIL", a, b, rule.metric, r.detail);
      CHECK(r.holds);
      ++checked;
    }
  }
  CHECK(checked >= 9);
}
