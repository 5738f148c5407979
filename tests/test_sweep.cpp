// Sweeps end to end: a sweep killed with SIGKILL at random moments and resumed gives exactly the rows
// of an uninterrupted run; shards merge to the unsharded result; invalid points are recorded, not
// fatal; invalid sweep files are refused with the JSON pointer, exit 2.

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "sim/core/diagnostics.hpp"
#include "sim/plan/sweep_runner.hpp"
#include "sim/plan/sweep_spec.hpp"
#include "sim/report/report.hpp"
#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("strata-sweep-test-" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

/// Starts `strata ARGS...` in the background from the source tree.
pid_t spawn(const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(STRATA_SOURCE_DIR) != 0) ::_exit(127);
    std::vector<char*> argv = {const_cast<char*>(STRATA_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::freopen("/dev/null", "w", stderr);
    ::execv(STRATA_BINARY, argv.data());
    ::_exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int run_cli(const std::vector<std::string>& args) { return wait_for(spawn(args)); }

std::vector<std::string> sorted_rows(const fs::path& dir) {
  std::ifstream in(dir / "results.jsonl");
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) rows.push_back(line);
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// 32 DES points of GPT-3 175B on 64 A100 in 16 families of two failure rates (about a third of a
/// second each family), and 32 invalid ones.
fs::path write_sweep(const fs::path& dir) {
  const json sweep = {{"base", "korthikanti-175b-selective"},
                      {"grid",
                       {{"training.micro_batch_size", {1, 2}},
                        {"memory.recompute", {"selective", "full"}},
                        {"parallelism.tp", {8, 16}},
                        {"failures.gpu_mtbf", {"2000 h", "50000 h"}}}},
                      {"sample", {{"count", 4}, {"seed", 3},
                                  {"axes", {{"hardware.nvlink.bandwidth", {"200 GB/s", "300 GB/s", "450 GB/s"}},
                                            {"hardware.nic.bandwidth", {"100 Gb/s", "200 Gb/s"}}}}}}};
  const fs::path file = dir / "sweep.json";
  std::ofstream(file) << sweep.dump(2);
  return file;
}

}  // namespace

TEST_CASE("A sweep killed with SIGKILL and resumed gives exactly the uninterrupted rows", "[sweep][slow]") {
  const fs::path dir = scratch("kill");
  const fs::path file = write_sweep(dir);
  const fs::path whole = dir / "whole", killed = dir / "killed";
  REQUIRE(run_cli({"sweep", file.string(), "--out", whole.string(), "-j", "2", "-q"}) == 0);
  const auto expected = sorted_rows(whole);
  REQUIRE(expected.size() == 64);
  CHECK(std::count_if(expected.begin(), expected.end(), [](const std::string& r) {
          return r.find("\"status\":\"invalid\"") != std::string::npos;
        }) == 32);  // tp 16 × pp 8 needs 128 GPUs, not 64: recorded as invalid, not fatal

  std::mt19937 rng(12345);
  int kills = 0;
  for (int attempt = 0; attempt < 12; ++attempt) {
    const pid_t pid = spawn({"sweep", file.string(), "--out", killed.string(), "-j", "2", "-q"});
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 900));
    if (::kill(pid, SIGKILL) == 0) ++kills;
    wait_for(pid);
  }
  INFO(kills << " kills");
  CHECK(kills > 0);
  REQUIRE(run_cli({"sweep", file.string(), "--out", killed.string(), "-j", "2", "-q"}) == 0);
  CHECK(sorted_rows(killed) == expected);
}

TEST_CASE("Shards 1..N of a sweep merge to exactly the unsharded result", "[sweep][slow]") {
  const fs::path dir = scratch("shards");
  const fs::path file = write_sweep(dir);
  REQUIRE(run_cli({"sweep", file.string(), "--out", (dir / "all").string(), "-q"}) == 0);
  std::vector<std::string> merge = {"sweep", "--merge"};
  for (int i = 1; i <= 3; ++i) {
    const fs::path out = dir / ("shard" + std::to_string(i));
    REQUIRE(run_cli({"sweep", file.string(), "--out", out.string(), "--shard", std::to_string(i) + "/3", "-j", "1",
                    "-q"}) == 0);
    merge.push_back(out.string());
  }
  // Each shard holds whole families (points that differ only in failures share a training run),
  // records its assignment, and the shards together hold every point once.
  std::map<std::string, int> shard_of_family;
  std::set<std::int64_t> points;
  for (int i = 1; i <= 3; ++i) {
    const fs::path out = dir / ("shard" + std::to_string(i));
    const json settings = json::parse(std::ifstream(out / "settings.json"));
    CHECK(settings.at("shard").at("shard") == i);
    CHECK(settings.at("shard").at("of") == 3);
    std::ifstream rows(out / "results.jsonl");
    std::int64_t held = 0;
    for (std::string line; std::getline(rows, line);) {
      json row = json::parse(line);
      CHECK(points.insert(row.at("point").get<std::int64_t>()).second);
      ++held;
      json family = row.at("params");
      family.erase("failures.gpu_mtbf");
      auto [it, added] = shard_of_family.try_emplace(family.dump(), i);
      CHECK(it->second == i);
    }
    CHECK(settings.at("shard").at("points") == held);
  }
  CHECK(points.size() == 64);
  merge.insert(merge.end(), {"--out", (dir / "merged").string()});
  REQUIRE(run_cli(merge) == 0);
  CHECK(sorted_rows(dir / "merged") == sorted_rows(dir / "all"));
  std::ifstream a(dir / "merged" / "results.csv"), b(dir / "all" / "results.csv");
  std::stringstream sa, sb;
  sa << a.rdbuf();
  sb << b.rdbuf();
  CHECK(sa.str() == sb.str());
  // A folder of another sweep does not merge.
  const json other = {{"base", "korthikanti-22b-selective"}, {"grid", {{"memory.recompute", {"full"}}}}};
  std::ofstream(dir / "other.json") << other.dump();
  REQUIRE(run_cli({"sweep", (dir / "other.json").string(), "--out", (dir / "other").string(), "-q"}) == 0);
  CHECK(run_cli({"sweep", "--merge", (dir / "all").string(), (dir / "other").string(), "--out",
                (dir / "bad").string()}) == 2);
  // Nor does a folder holding another sweep take this one's results.
  CHECK(run_cli({"sweep", file.string(), "--out", (dir / "other").string(), "-q"}) == 2);
  // Nor do rows run with other options mix: a DES folder refuses screening rows, and shards run
  // with different executors do not merge.
  CHECK(run_cli({"sweep", file.string(), "--out", (dir / "all").string(), "--executor", "list", "-q"}) == 2);
  CHECK(run_cli({"sweep", file.string(), "--out", (dir / "all").string(), "--checkpoint-window", "8", "-q"}) == 2);
  REQUIRE(run_cli({"sweep", file.string(), "--out", (dir / "screened1").string(), "--shard", "1/3", "--executor",
                   "list", "-q"}) == 0);
  CHECK(run_cli({"sweep", "--merge", (dir / "screened1").string(), (dir / "shard2").string(),
                 (dir / "shard3").string(), "--out", (dir / "mixed").string()}) == 2);

  // A merge with a shard missing is refused; with --allow-partial it is marked partial.
  const strata::test::Result absent = strata::test::strata_cli(fmt::format("sweep --merge '{}' '{}' --out '{}'",
                                                            (dir / "shard1").string(), (dir / "shard2").string(),
                                                            (dir / "holes").string()), "&1");
  CHECK(absent.code == 2);
  CHECK_THAT(absent.out, Catch::Contains("shard(s) 3 of 3 absent"));
  CHECK_FALSE(fs::exists(dir / "holes" / "results.csv"));
  REQUIRE(run_cli({"sweep", "--merge", (dir / "shard1").string(), (dir / "shard2").string(), "--out",
                   (dir / "partial").string(), "--allow-partial"}) == 0);
  const json partial = json::parse(std::ifstream(dir / "partial" / "settings.json"));
  const auto third = json::parse(std::ifstream(dir / "shard3" / "settings.json")).at("shard").at("points").get<int>();
  const std::string missing = std::to_string(third) + " of 64 points missing";
  CHECK(partial.at("partial").get<std::string>().starts_with(missing + " ("));
  CHECK_FALSE(partial.contains("shard"));
  std::string first_line;
  std::getline(std::ifstream(dir / "partial" / "results.csv") >> std::ws, first_line);
  CHECK(first_line.starts_with("# partial: " + missing));
}

TEST_CASE("Swept quantities get a numeric column in SI units beside the text", "[sweep]") {
  const fs::path dir = scratch("numeric");
  const fs::path file = write_sweep(dir);
  REQUIRE(run_cli({"sweep", file.string(), "--out", (dir / "out").string(), "--executor", "list", "-q"}) == 0);
  std::ifstream csv(dir / "out" / "results.csv");
  std::string header, row;
  std::getline(csv, header);
  CHECK(header.find("params.hardware.nvlink.bandwidth,params.hardware.nvlink.bandwidth [B/s]") != std::string::npos);
  CHECK(header.find("params.failures.gpu_mtbf,params.failures.gpu_mtbf [s]") != std::string::npos);
  // Each row's numeric cell is the SI value of the text before it ("2000 h" -> 7200000).
  bool seen = false;
  while (std::getline(csv, row))
    if (row.find(",2000 h,7200000") != std::string::npos) seen = true;
  CHECK(seen);
}

TEST_CASE("Screening with --confirm reruns the best screened points with the DES", "[sweep]") {
  const fs::path dir = scratch("confirm");
  const std::string file = "scenarios/sweeps/llama-2-7b-rtx4090-offload.json";
  REQUIRE(run_cli({"sweep", file, "--out", (dir / "des").string(), "-q"}) == 0);
  REQUIRE(run_cli({"sweep", file, "--out", (dir / "screen").string(), "--executor", "list", "--confirm", "3",
                   "-q"}) == 0);
  // The three highest screened tokens/s, found here from the rows.
  std::vector<std::pair<double, std::int64_t>> ranked;
  std::map<std::int64_t, std::string> des;
  for (const std::string& line : sorted_rows(dir / "screen")) {
    const json row = json::parse(line);
    if (row.at("status") == "ok")
      ranked.emplace_back(-row.at("report").at("throughput.tokens_per_s").get<double>(), row.at("point").get<std::int64_t>());
  }
  for (const std::string& line : sorted_rows(dir / "des")) des[json::parse(line).at("point").get<std::int64_t>()] = line;
  std::sort(ranked.begin(), ranked.end());
  REQUIRE(ranked.size() > 3);
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < 3; ++i) expected.push_back(des.at(ranked[i].second));
  std::sort(expected.begin(), expected.end());
  // The confirmed rows are the DES sweep's rows for those points.
  CHECK(sorted_rows(dir / "screen" / "confirm") == expected);
  // --confirm needs a screening run.
  CHECK(run_cli({"sweep", file, "--out", (dir / "bad").string(), "--confirm", "3", "-q"}) == 2);
}

TEST_CASE("Scenarios run as a family give exactly the reports of separate runs", "[sweep][family][slow]") {
  // Checkpoint intervals short enough for the persist to press back and long enough not to, with a
  // slow object store so that the windows differ in length, and two failure rates; async and
  // in-memory checkpoints; both executors.
  for (const std::string executor : {"des", "list"}) {
    for (const std::string strategy : {"async", "in_memory"}) {
      std::vector<strata::Scenario> family;
      for (const std::string interval : {"1", "4", "40"})
        for (const std::string mtbf : {"2000 h", "50000 h"})
          family.push_back(strata::test::load("llama-3-70b-h100-cxl-async",
                                              {"checkpoint.strategy=" + strategy,
                                               "hardware.object_store.bandwidth=20 GB/s",
                                               "checkpoint.interval_iterations=" + interval,
                                               "failures.gpu_mtbf=" + mtbf}));
      strata::SimulationOptions options;
      options.executor = executor == "des" ? strata::ExecutorKind::des : strata::ExecutorKind::list;
      const auto together = strata::run_scenarios(family, options);
      REQUIRE(together.size() == family.size());
      for (std::size_t i = 0; i < family.size(); ++i) {
        INFO(executor << " " << strategy << " member " << i);
        const json alone = strata::make_report(family[i], strata::run_scenario(family[i], options));
        CHECK(strata::make_report(family[i], together[i]).dump() == alone.dump());
      }
    }
  }
}

TEST_CASE("The shipped GPT-3 checkpoint sweep runs as one family per strategy and bandwidth", "[sweep][family]") {
  const fs::path file = strata::test::source_path("scenarios/sweeps/gpt3-175b-h100-checkpoint.json");
  std::ifstream in(file);
  const strata::SweepSpec spec = strata::parse_sweep(json::parse(in), file.string());
  std::vector<const strata::SweepPoint*> points;
  for (const auto& p : spec.points) points.push_back(&p);
  const auto families = strata::sweep_families(points);
  // Intervals (5) and MTBFs (10) vary within a family; strategies (4) × bandwidths (10) do not.
  CHECK(families.size() == 40);
  for (const auto& f : families) {
    CHECK(f.size() == 50);
    for (const auto* p : f) {
      CHECK(p->params.at("checkpoint.strategy") == f.front()->params.at("checkpoint.strategy"));
      CHECK(p->params.at("hardware.object_store.bandwidth") == f.front()->params.at("hardware.object_store.bandwidth"));
    }
  }
}

TEST_CASE("Invalid sweep files get one line per error with the JSON pointer", "[sweep][input]") {
  struct Case {
    const char* what;
    json doc;
    std::string expected;
  };
  const json base = "korthikanti-22b-selective";
  const std::vector<Case> cases = {
      {"bad path", {{"base", base}, {"grid", {{"parallelism.tpp", {1}}}}},
       "s.json: /grid/parallelism.tpp: unknown scenario path 'parallelism.tpp' (expected a dotted path such as "
       "parallelism.tp, hardware.object_store.bandwidth or model.num_layers)"},
      {"empty axis", {{"base", base}, {"grid", {{"parallelism.tp", json::array()}}}},
       "s.json: /grid/parallelism.tp: empty list (expected at least one value)"},
      {"incompatible value", {{"base", base}, {"grid", {{"parallelism.tp", {1, "two"}}}}},
       "s.json: /grid/parallelism.tp/1: wrong type (got \"two\", expected an integer in [1, 1000000])"},
      {"bad unit", {{"base", base}, {"zip", {{"hardware.object_store.bandwidth", {"10 GB"}}}}},
       "s.json: /zip/hardware.object_store.bandwidth/0: invalid quantity: unit 'GB' is not a bandwidth like "
       "\"25 GB/s\" (got \"10 GB\", expected a bandwidth like \"25 GB/s\" greater than 0)"},
      {"unequal zip",
       {{"base", base}, {"zip", {{"memory.recompute", {"full", "none"}}, {"parallelism.tp", {1}}}}},
       "s.json: /zip/parallelism.tp: 1 values, but memory.recompute has 2 (expected zipped axes of equal length)"},
      {"axis twice", {{"base", base}, {"grid", {{"parallelism.tp", {1}}}}, {"zip", {{"parallelism.tp", {2}}}}},
       "s.json: /zip/parallelism.tp: path appears in more than one axis (expected it once)"},
      {"no axes", {{"base", base}}, "s.json: /: no axes (expected grid, zip or sample)"},
      {"no base", {{"grid", {{"parallelism.tp", {1}}}}},
       "s.json: /base: missing (expected a scenario name, path or object)"},
      {"unknown key", {{"base", base}, {"grids", json::object()}},
       "s.json: /grids: unknown key (got \"grids\", expected one of: name, description, base, grid, zip, sample)"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    std::string got;
    try {
      strata::parse_sweep(c.doc, "s.json");
    } catch (const strata::InputError& e) {
      for (const auto& d : e.diagnostics()) {
        if (!got.empty()) got += '\n';
        got += d.to_string();
      }
    }
    CHECK(got == c.expected);
  }
  // Through the CLI: exit 2, and no output folder contents.
  const fs::path dir = scratch("invalid");
  std::ofstream(dir / "bad.json") << json({{"base", base}, {"grid", {{"parallelism.tp", json::array()}}}}).dump();
  CHECK(run_cli({"sweep", (dir / "bad.json").string(), "--out", (dir / "out").string()}) == 2);
  CHECK_FALSE(fs::exists(dir / "out" / "results.jsonl"));
  const fs::path good = write_sweep(dir);
  CHECK(run_cli({"sweep", good.string(), "--out", (dir / "out").string(), "--shard", "4/3"}) == 2);
}
