// Run-level goodput against closed forms: Young (1974) and Daly (2006) optimal intervals with Daly's
// published examples (docs/references.md, Checkpoint interval: δ = 5 min; M = 24 h → 116.7 min,
// 6 h → 56.7 min, 15 min → 9.1 min; Young 120 / 60 / 12.2 min), and the first-order goodput model
// (1 − (restart + τ/2)/M) / (1 + δ/τ) for exponential failures.

#include <catch2/catch.hpp>

#include "sim/analysis/goodput.hpp"
#include "support.hpp"

using namespace strata;

TEST_CASE("Young and Daly intervals reproduce Daly's published examples", "[analytic][goodput]") {
  test::Comparison table("Optimal checkpoint interval, δ = 5 min (Daly 2006)", "min");
  const double delta = 5 * 60.0;
  const double mtbf[] = {24 * 3600.0, 6 * 3600.0, 15 * 60.0};
  const double daly[] = {116.7, 56.7, 9.1}, young[] = {120.0, 60.0, 12.2};
  for (int i = 0; i < 3; ++i) {
    table.add(fmt::format("Daly, M = {:.0f} min", mtbf[i] / 60), daly[i], daly_interval(delta, mtbf[i]) / 60);
    table.add(fmt::format("Young, M = {:.0f} min", mtbf[i] / 60), young[i], young_interval(delta, mtbf[i]) / 60);
  }
  table.print();
  for (const auto& row : table.rows()) {
    INFO(row.label);
    CHECK(std::fabs(row.strata - row.source) <= 0.05);  // the published values have one decimal
  }
  CHECK(daly_interval(3 * 3600.0, 3600.0) == 3600.0);  // δ ≥ 2M: checkpoint every MTBF
}

TEST_CASE("Simulated goodput matches the first-order model for exponential failures", "[analytic][goodput]") {
  test::Comparison table("Goodput, exponential failures (mean of 400 runs of 2000 h)", "");
  const double hour = 3600.0;
  for (double mtbf_h : {20.0, 50.0}) {
    RunCycle cycle;
    cycle.work_s = 0.5 * hour;
    cycle.stall_s = 60.0;
    cycle.durable_s = 60.0;  // sync: durable when the stall ends
    cycle.restart_s = 600.0;
    const FailureLaw law{mtbf_h * hour, FailureDistribution::exponential, 1.0};
    const GoodputResult g = simulate_goodput(cycle, law, 2000 * hour, 7, 400);
    const double model = first_order_goodput(cycle, law.mtbf_s);
    table.add(fmt::format("M = {:.0f} h, τ = 30 min, δ = 1 min, R = 10 min (±{:.4f})", mtbf_h, g.goodput.ci95), model,
              g.goodput.mean);
    CHECK((std::fabs(g.goodput.mean - model) <= 0.01 * model || std::fabs(g.goodput.mean - model) <= g.goodput.ci95));
    CHECK(g.failures.mean == Approx(2000.0 / mtbf_h).epsilon(0.05));
  }
  table.print();
}

TEST_CASE("Goodput runs are deterministic per seed and Weibull keeps the MTBF", "[unit][goodput]") {
  RunCycle cycle{1800.0, 60.0, 120.0, 600.0, 300.0, true, {}};
  const FailureLaw exp_law{36000.0, FailureDistribution::exponential, 1.0}, weibull{36000.0, FailureDistribution::weibull, 0.7};
  const GoodputResult a = simulate_goodput(cycle, exp_law, 1e6, 3, 16), b = simulate_goodput(cycle, exp_law, 1e6, 3, 16);
  CHECK(a.goodput.mean == b.goodput.mean);
  const GoodputResult w = simulate_goodput(cycle, weibull, 1e7, 3, 64);
  // Failures per run ≈ horizon / (MTBF + recovery) whatever the shape.
  CHECK(w.failures.mean == Approx(1e7 / (36000.0 + 900.0)).epsilon(0.05));
}

TEST_CASE("The best interval knows persistence: when persist far outlasts the stall it is at least the persist time",
          "[regression][goodput][checkpoint]") {
  // Async 920 GiB checkpoints drained to a 1 GB/s object store: the snapshot stalls well under a
  // second, the persist takes a quarter of an hour, and at the user's 50 iterations each
  // checkpoint waits for the previous persist. Young and Daly, fed the stall, would checkpoint
  // more often still.
  const Scenario sc = test::load("llama-3-70b-h100-cxl-async",
                                 {"hardware.object_store.bandwidth=\"1 GB/s\"", "failures.gpu_mtbf=\"5000 h\""});
  const RunResult r = run_scenario(sc);
  REQUIRE(r.checkpoint);
  REQUIRE(r.run);
  const CheckpointResult& k = *r.checkpoint;
  const RunLevelResult& g = *r.run;
  std::printf("stall %.2f s (snapshot %.2f s), persist %.1f s; user's interval %.1f s: goodput %.4f\n", k.stall_s,
              k.snapshot_stall_s, k.persist_s,
              static_cast<double>(sc.checkpoint.interval_iterations) * r.simulation->throughput.iteration_time,
              g.goodput);
  std::printf("best %.1f s (%g iterations): goodput %.4f; Young %.1f s: %.4f; Daly %.1f s: %.4f\n",
              g.best_interval_s, g.best_interval_iterations, g.goodput_at_best, g.young_interval_s,
              g.goodput_at_young, g.daly_interval_s, g.goodput_at_daly);
  REQUIRE(k.persist_s > 100 * k.snapshot_stall_s);
  CHECK(g.best_interval_s >= k.persist_s);
  CHECK(g.goodput_at_best >= g.goodput);
  CHECK(g.goodput_at_best >= g.goodput_at_young);
  CHECK(g.goodput_at_best >= g.goodput_at_daly);
  CHECK(g.backpressure_at_best_s == 0.0);
}
