// The strata binary end to end: exit codes, where output goes, atomic report files, determinism of
// every shipped scenario.

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/wait.h>

#include "sim/core/units.hpp"
#include "support.hpp"

using strata::test::Result;
using strata::test::strata_cli;
using strata::test::temp_file;

TEST_CASE("strata --version and describe succeed", "[cli]") {
  Result v = strata_cli("--version");
  CHECK(v.code == 0);
  CHECK(v.out.starts_with("strata "));
  Result m = strata_cli("describe models");
  CHECK(m.code == 0);
  CHECK(m.out.find("gpt3-175b") != std::string::npos);
  CHECK(m.out.find("174.62B") != std::string::npos);
  Result h = strata_cli("describe hardware");
  CHECK(h.code == 0);
  CHECK(h.out.find("rtx4090-pcie-8x") != std::string::npos);
  Result p = strata_cli("describe policies");
  CHECK(p.code == 0);
  for (const char* name : {"interleaved", "selective", "nvme", "near_storage", "weibull"})
    CHECK(p.out.find(name) != std::string::npos);
}

TEST_CASE("A run writes the report atomically and prints the summary", "[cli]") {
  std::string out = temp_file("ok.json");
  Result r = strata_cli(fmt::format("run default --json {}", out));
  CHECK(r.code == 0);
  CHECK(r.out.find("FITS") != std::string::npos);
  REQUIRE(std::filesystem::exists(out));
  auto report = nlohmann::json::parse(std::ifstream(out));
  CHECK(report["schema"] == "strata.report/v1");
  CHECK(report["fits"] == true);
  std::filesystem::remove(out);
}

TEST_CASE("The summary table fits in 100 columns", "[cli]") {
  for (const char* name : {"default", "korthikanti-1t-full", "llama-3.1-405b-llama3-16k", "mixtral-8x7b-h100"}) {
    Result r = strata_cli(fmt::format("run {}", name));
    REQUIRE(r.code == 0);
    std::size_t column = 0, widest = 0;
    for (unsigned char c : r.out) {
      if (c == '\n') column = 0;
      else if ((c & 0xC0) != 0x80) widest = std::max(widest, ++column);  // count code points, not bytes
    }
    INFO(name);
    CHECK(widest <= 100);
    // The wrap keeps a number with its percent sign: no continuation line starts with "%".
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const std::size_t first = line.find_first_not_of(' ');
      INFO(line);
      CHECK_FALSE((first != std::string::npos && line[first] == '%'));
    }
  }
}

TEST_CASE("A report to stdout leaves only JSON on stdout", "[cli]") {
  Result r = strata_cli("run scenarios/korthikanti-22b-full.json --json - -v");
  CHECK(r.code == 0);
  auto report = nlohmann::json::parse(r.out);  // throws if anything else reached stdout
  CHECK(report["model"]["name"] == "megatron-22b");
}

TEST_CASE("Overrides reach into scenario, model and hardware", "[cli]") {
  Result r = strata_cli("run default --quiet --json - --set hardware.gpu.hbm=\"40 GiB\" --set memory.recompute=none");
  CHECK(r.code == 0);
  auto report = nlohmann::json::parse(r.out);
  CHECK(report["memory"]["gpu_capacity_bytes"] == 40ll * 1024 * 1024 * 1024);
  CHECK(report["fits"] == false);
  CHECK(report["memory"]["overflows"][0]["tier"] == "hbm");
}

TEST_CASE("Invalid input exits 2, one line per error, and writes nothing", "[cli]") {
  std::string out = temp_file("bad.json");
  std::string err = temp_file("bad.err");
  Result r = strata_cli(fmt::format("run default --json {} --set parallelism.tp=5 --set gpus=40 --set "
                                    "training.micro_batch_size=0",
                                    out),
                        err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_FALSE(std::filesystem::exists(out));
  std::ifstream in(err);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "--set training.micro_batch_size=0: /training/micro_batch_size: out of range (got 0, expected an "
                "integer in [1, 1000000])\n");
  std::filesystem::remove(err);

  CHECK(strata_cli("run no-such-scenario").code == 2);
  CHECK(strata_cli("run default --set nonsense").code == 2);
  CHECK(strata_cli("run").code == 2);
  CHECK(strata_cli("frobnicate").code == 2);
}

TEST_CASE("Every shipped scenario runs and gives byte-identical reports twice", "[cli][determinism][slow]") {
  int scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(strata::test::source_path("scenarios"))) {
    if (entry.path().extension() != ".json") continue;
    std::string args = fmt::format("run {} --quiet --json -", entry.path().string());
    Result a = strata_cli(args), b = strata_cli(args);
    INFO(entry.path().filename().string());
    CHECK(a.code == 0);
    CHECK_FALSE(a.out.empty());
    CHECK(a.out == b.out);
    ++scenarios;
  }
  CHECK(scenarios >= 15);
}

TEST_CASE("Trace output (--trace) is trace-event JSON whose every event is well formed", "[cli][trace]") {
  const std::string trace = temp_file("trace.json");
  Result r = strata_cli(fmt::format("run korthikanti-22b-selective -q --trace {}", trace));
  REQUIRE(r.code == 0);
  std::ifstream in(trace);
  const nlohmann::json events = nlohmann::json::parse(in);  // throws (fails the test) if not JSON
  REQUIRE(events.is_array());
  std::map<std::string, int> phases;
  for (const auto& e : events) {
    INFO(e.dump());
    REQUIRE(e.is_object());
    CHECK(e.at("name").is_string());
    const std::string ph = e.at("ph").get<std::string>();
    ++phases[ph];
    CHECK(e.at("pid").is_number_integer());
    CHECK(e.at("tid").is_number_integer());
    CHECK(e.at("args").is_object());
    if (ph == "X" || ph == "C" || ph == "b" || ph == "e") {
      CHECK(e.at("ts").is_number());
      CHECK(e.at("ts").get<double>() >= 0.0);
    }
    if (ph == "b" || ph == "e") {
      CHECK(e.at("id").is_number_integer());
      CHECK(e.at("cat").is_string());
    }
    if (ph == "X") CHECK(e.at("dur").get<double>() >= 0.0);
    if (ph == "M") CHECK(e.at("args").at("name").is_string());
    if (ph == "C") CHECK(e.at("args").at("bytes").is_number());
    CHECK((ph == "X" || ph == "M" || ph == "C" || ph == "b" || ph == "e"));
  }
  CHECK(phases["X"] > 0);  // task spans on GPU streams
  CHECK(phases["b"] > 0);  // transfers on links
  CHECK(phases["b"] == phases["e"]);
  CHECK(phases["M"] > 0);  // process and thread names
  CHECK(phases["C"] > 0);  // memory counters
  std::filesystem::remove(trace);
}

TEST_CASE("Executor and folding flags: list and DES agree when uncontended, --no-fold simulates every rank",
          "[cli][simulation]") {
  auto report = [](const std::string& flags) {
    Result r = strata_cli("run korthikanti-22b-selective -q --json - " + flags);
    REQUIRE(r.code == 0);
    return nlohmann::json::parse(r.out);
  };
  const auto des = report(""), list = report("--executor list"), every = report("--no-fold");
  CHECK(des["simulation"]["executor"] == "des");
  CHECK(list["simulation"]["executor"] == "list");
  CHECK(des["simulation"]["simulated_gpus"] == 1);
  CHECK(every["simulation"]["simulated_gpus"] == 8);
  CHECK(list["throughput"]["iteration_time_s"].get<double>() ==
        Approx(des["throughput"]["iteration_time_s"].get<double>()).epsilon(1e-9));
  CHECK(strata_cli("run default -q --executor warp").code == 2);
}

TEST_CASE("The trace of a checkpointing run shows the checkpoint's flows on their links", "[cli][trace][checkpoint]") {
  // Sync checkpoint straight to the object store: each GPU's shard crosses its PCIe link, its NIC and
  // the object store's write path.
  const std::string trace = temp_file("trace-checkpoint.json");
  Result r = strata_cli(fmt::format("run llama-2-7b-zero1-a100 -q --trace {} --set checkpoint.strategy=sync "
                                    "--set 'checkpoint.tiers=[\"object_store\"]'", trace));
  REQUIRE(r.code == 0);
  std::ifstream in(trace);
  const nlohmann::json events = nlohmann::json::parse(in);
  std::map<std::string, int> checkpoint_links;
  for (const auto& e : events)
    if (e.at("ph") == "b" && e.at("args").value("kind", "") == "checkpoint") ++checkpoint_links[e.at("name")];
  CHECK(checkpoint_links.count("object_store_write") == 1);
  CHECK(checkpoint_links.count("node0.nic_tx0") == 1);
  CHECK(checkpoint_links.count("node0.pcie_tx0") == 1);
  std::filesystem::remove(trace);
}

TEST_CASE("strata compare diffs two reports and checks ordering rules (exit 3 when one fails)", "[cli][compare]") {
  const std::string rules = temp_file("rules.json");
  std::ofstream(rules) << R"({"rules": [{"metric": "checkpoint.stall_s", "op": ">", "why": "sync blocks"}]})";
  const std::string a = "results/baseline/llama-3-70b-h100-cxl-sync.json";
  const std::string b = "results/baseline/llama-3-70b-h100-cxl-async.json";
  Result ok = strata_cli(fmt::format("compare {} {} --check {}", a, b, rules));
  CHECK(ok.code == 0);
  CHECK(ok.out.find("checkpoint.stall_s") != std::string::npos);
  // The values shown are the baselines' own, with their units.
  auto stall = [](const std::string& report) {
    return nlohmann::json::parse(std::ifstream(strata::test::source_path(report))).at("checkpoint").at("stall_s").get<double>();
  };
  CHECK(ok.out.find(fmt::format("PASS  A.checkpoint.stall_s > B.checkpoint.stall_s: {} > {}", strata::format_seconds(stall(a)),
                                strata::format_seconds(stall(b)))) != std::string::npos);
  CHECK(ok.out.find("scenario.name") != std::string::npos);  // a changed string shows too
  Result flipped = strata_cli(fmt::format("compare {} {} --check {}", b, a, rules));
  CHECK(flipped.code == 3);
  CHECK(flipped.out.find("FAIL") != std::string::npos);
  Result same = strata_cli(fmt::format("compare {} {}", a, a));
  CHECK(same.code == 0);
  CHECK(same.out.find("0 metric(s) differ") != std::string::npos);
  std::ofstream(rules) << R"({"rules": [{"metric": "x", "op": "=>"}]})";
  const std::string err = temp_file("compare-err.txt");
  Result bad = strata_cli(fmt::format("compare {} {} --check {}", a, b, rules), err);
  CHECK(bad.code == 2);
  std::ifstream in(err);
  std::string line;
  std::getline(in, line);
  CHECK(line.find("/rules/0/op") != std::string::npos);
  std::filesystem::remove(rules);
}
