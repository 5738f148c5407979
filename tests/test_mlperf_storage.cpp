// MLPerf Storage v2.0's checkpointing workloads as shipped scenarios, reported in the benchmark's
// definitions (checkpoint.mlperf.*): duration = the slowest rank's, throughput = the whole checkpoint's
// bytes / duration, sizes in GiB (which the benchmark's summary labels "GB"). Strata's size model
// (14 B/param: 16-bit weights + fp32 master and two Adam moments) against the benchmark's stated sizes
// and the totals DLIO printed in the v3.0 runs (docs/references.md, MLPerf Storage checkpointing).

#include <catch2/catch.hpp>

#include <fstream>

#include "support.hpp"

namespace {

using namespace strata;

struct Workload {
  std::string scenario;
  std::int64_t gpus, tp, pp, dp, zero;
  double stated_gib;   ///< the rules' table (mlpstorage config.py: model + optimizer)
  double printed_gib;  ///< "Total checkpoint size" in a v3.0 dlio.log
};

const std::vector<Workload> kWorkloads = {
    {"mlperf-storage-llama3-8b", 8, 1, 1, 8, 3, 105, 104.704521},
    {"mlperf-storage-llama3-70b", 64, 8, 1, 8, 3, 911, 911.212128},
    {"mlperf-storage-llama3-405b", 512, 8, 32, 2, 1, 5288, 5292.248718},
    {"mlperf-storage-llama3-1t", 1024, 8, 64, 2, 1, 17997, 15426.589264},
};

}  // namespace

TEST_CASE("MLPerf Storage checkpointing workloads report save and restore in the benchmark's terms",
          "[checkpoint][mlperf]") {
  for (const Workload& w : kWorkloads) {
    INFO(w.scenario);
    const Scenario sc = test::load(w.scenario);
    CHECK(sc.gpus == w.gpus);
    CHECK(sc.parallelism.tp == w.tp);
    CHECK(sc.parallelism.pp == w.pp);
    CHECK(sc.parallelism.dp == w.dp);
    CHECK(sc.parallelism.zero_stage == w.zero);
    const RunResult r = run_scenario(sc, {ExecutorKind::list, true, false});
    REQUIRE(r.checkpoint);
    const nlohmann::json report = make_report(sc, r);
    const auto& m = report.at("checkpoint").at("mlperf");
    const double gib = m.at("size_gib").get<double>();
    CHECK(gib == Approx(r.checkpoint->size_bytes / kGiB));
    CHECK(m.at("save_duration_s").get<double>() == Approx(r.checkpoint->persist_s));
    CHECK(m.at("load_duration_s").get<double>() == Approx(r.checkpoint->restore_s));
    CHECK(m.at("save_throughput_gib_per_s").get<double>() == Approx(gib / r.checkpoint->persist_s));
    CHECK(m.at("load_throughput_gib_per_s").get<double>() == Approx(gib / r.checkpoint->restore_s));
    const double vs_stated = gib / w.stated_gib - 1.0;
    // The size model counts what DLIO writes (fp16 model + fp32 optimizer = 14 B/param) ...
    CHECK(gib == Approx(w.printed_gib).epsilon(0.015));
    // ... and differs from the stated table only for the 1T workload, whose 18 TB (2571 + 15426)
    // is not what the benchmark writes (15426.59 GiB in the v3.0 runs).
    if (w.scenario == "mlperf-storage-llama3-1t") CHECK(vs_stated < -0.10);
    else CHECK(std::fabs(vs_stated) < 0.015);
    std::cout << fmt::format("{}: {:.2f} GiB (stated {:.0f}, {:+.1f} %), save {:.2f} s = {:.2f} GiB/s, load {:.2f} s\n",
                             w.scenario, gib, w.stated_gib, 100.0 * vs_stated,
                             m.at("save_duration_s").get<double>(), m.at("save_throughput_gib_per_s").get<double>(),
                             m.at("load_duration_s").get<double>());
  }
}

TEST_CASE("The MLPerf bandwidth sweep runs the four workloads at every store bandwidth",
          "[checkpoint][mlperf][sweep][slow]") {
  const std::string out = test::temp_file("mlperf-sweep");
  const auto r = test::strata_cli(
      "sweep scenarios/sweeps/mlperf-storage-checkpoint-bandwidth.json --executor list -j 2 -q --out " + out, "&1");
  INFO(r.out);
  CHECK(r.code == 0);
  std::ifstream csv(out + "/results.csv");
  std::string header, line;
  std::getline(csv, header);
  CHECK(header.find("checkpoint.mlperf.save_duration_s") != std::string::npos);
  int ok = 0;
  while (std::getline(csv, line)) ok += line.find(",ok,") != std::string::npos;
  CHECK(ok == 32);
  std::filesystem::remove_all(out);
}
