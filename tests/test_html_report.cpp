// The --html report: formatting only (its numbers are the JSON report's), one offline file, long
// timelines decimated with their peaks kept, and written like every output (never destroying what
// is at its path). The page itself is checked in a browser by tests/browser/check_reports.py.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/analysis/run.hpp"
#include "sim/report/html_report.hpp"
#include "support.hpp"

using namespace strata;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("The run page's data: the JSON report's numbers, and timelines that keep every peak", "[unit][html]") {
  const Scenario sc = test::load("llama-2-7b-zero1-a100");
  SimulationOptions options;
  options.keep_schedule = true;
  const RunResult r = run_scenario(sc, options);
  const nlohmann::json data = html_run_data(sc, r, nlohmann::json::object());
  nlohmann::json report = make_report(sc, r);
  round_doubles(report);
  CHECK(data.at("report") == report);
  // Each simulated GPU's plotted HBM peak is the timeline peak the report quotes (6 digits).
  REQUIRE(!data.at("timelines").at("gpus").empty());
  for (const auto& g : data.at("timelines").at("gpus")) {
    const auto& b = g.at("hbm").at("b");
    REQUIRE(!b.empty());
    const double plotted = *std::max_element(b.begin(), b.end());
    double quoted = 0.0;
    for (const auto& gpu : report.at("memory").at("gpus"))
      if (gpu.at("rank") == g.at("rank")) quoted = gpu.at("timeline").at("peak_bytes").get<double>();
    if (quoted > 0) CHECK(plotted == Approx(quoted).epsilon(1e-5));
    CHECK(b.size() <= 1500);
  }
  CHECK(!data.at("gantt").at("bars").empty());
  CHECK(data.at("gantt").at("window_s").get<double>() > 0);
}

TEST_CASE("strata run --html writes one offline page under 5 MB, and refuses a folder before running",
          "[cli][html][slow]") {
  const std::string out = test::temp_file("report.html");
  auto r = test::strata_cli("run default -q --html " + out);
  REQUIRE(r.code == 0);
  const std::string page = slurp(out);
  CHECK(page.size() < 5'000'000);
  CHECK(page.find("window.STRATA = {") != std::string::npos);
  CHECK(page.find("\"gantt\"") != std::string::npos);
  CHECK(page.find("\"hops\"") != std::string::npos);
  // Nothing loaded from elsewhere: no external script, stylesheet or image (the browser test also
  // fails on any request the page makes).
  for (const char* external : {"<script src", "<link ", "src=\"http", "href=\"http", "url(http", "@import url"})
    CHECK(page.find(external) == std::string::npos);
  std::filesystem::remove(out);

  const std::string folder = test::temp_file("a-folder");
  std::filesystem::create_directory(folder);
  r = test::strata_cli("run default -q --html " + folder, "&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("--html") != std::string::npos);
  CHECK(std::filesystem::is_directory(folder));
  std::filesystem::remove_all(folder);
}

TEST_CASE("compare --html - writes only the page to standard output; the table goes to stderr", "[cli][html][slow]") {
  const std::string report = test::temp_file("compare-a.json");
  REQUIRE(test::strata_cli("run default -q --json " + report).code == 0);
  const auto r = test::strata_cli("compare " + report + " " + report + " --html -");
  REQUIRE(r.code == 0);
  CHECK(r.out.starts_with("<!DOCTYPE html>"));
  CHECK(r.out.find("metric                ") == std::string::npos);  // the table's header
  const std::string table = test::temp_file("compare-table.txt");
  REQUIRE(test::strata_cli("compare " + report + " " + report + " --html -", table).code == 0);
  CHECK(slurp(table).find("0 metric(s) differ") != std::string::npos);
  std::filesystem::remove(report);
  std::filesystem::remove(table);
}
