// Iteration time against Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models", arXiv 2205.05198), Table 5: 22B, 175B, 530B and 1T on A100-80GB, full
// recompute and selective recompute + sequence parallelism (docs/references.md, Iteration time).
// One set of hardware efficiencies for all eight (hardware_profiles/dgx-a100-80g.json). Calculon's
// published error on the same points: 3.65 % mean, 8.87 % max; the acceptance is 3 % / 6 %.

#include <catch2/catch.hpp>

#include "support.hpp"

namespace {

using strata::test::Comparison;

struct Case {
  const char* model;
  double h, L, v, gpus, batch;
  double full_s, selective_s, mfu, hfu;  // Table 5
};

// Table 3 settings (s = 2048, v = 51200) and Table 5 results.
const Case kCases[] = {
    {"22b", 6144, 48, 51200, 8, 4, 1.42, 1.10, 0.415, 0.437},
    {"175b", 12288, 96, 51200, 64, 64, 18.13, 13.75, 0.514, 0.528},
    {"530b", 20480, 105, 51200, 280, 280, 49.05, 37.83, 0.560, 0.570},
    {"1t", 25600, 128, 51200, 512, 512, 94.42, 71.49, 0.563, 0.570},
};
constexpr double kSeq = 2048, kPeak = 312e12;  // A100 bf16 dense peak used by the paper

// Eq. 7 (model FLOPs) and Eq. 8 (hardware FLOPs with selective recompute), per iteration.
double eq7(const Case& c) { return 72 * c.batch * c.L * kSeq * c.h * c.h * (1 + kSeq / (6 * c.h) + c.v / (12 * c.h * c.L)); }
double eq8(const Case& c) { return 72 * c.batch * c.L * kSeq * c.h * c.h * (1 + kSeq / (3 * c.h) + c.v / (12 * c.h * c.L)); }

}  // namespace

TEST_CASE("Korthikanti et al. 2022 Table 5: iteration time, MFU and HFU", "[validation][simulation][slow]") {
  Comparison time("Korthikanti et al. 2022 Table 5, iteration time (DES executor)", "s");
  Comparison mfu("Table 5 MFU from Eq. 7 with the simulated time (points of peak)", "%");
  Comparison hfu("Table 5 HFU from Eq. 8 with the simulated time (points of peak)", "%");
  for (const Case& c : kCases) {
    for (const char* policy : {"full", "selective"}) {
      const strata::Scenario sc = strata::test::load(fmt::format("korthikanti-{}-{}", c.model, policy));
      const strata::RunResult r = strata::run_scenario(sc);
      const double t = r.simulation->throughput.iteration_time;
      const bool selective = std::string(policy) == "selective";
      time.add(fmt::format("{} {}", c.model, policy), selective ? c.selective_s : c.full_s, t);
      if (selective) {
        mfu.add(c.model, 100 * c.mfu, 100 * eq7(c) / (t * c.gpus * kPeak));
        hfu.add(c.model, 100 * c.hfu, 100 * eq8(c) / (t * c.gpus * kPeak));
      }
    }
  }
  time.print();
  mfu.print();
  hfu.print();
  CHECK(time.mean_error() <= 0.03);
  CHECK(time.max_error() <= 0.06);
  for (const Comparison* table : {&mfu, &hfu})
    for (const auto& row : table->rows()) {
      INFO(row.label);
      CHECK(std::fabs(row.strata - row.source) <= 2.0);  // percentage points
    }
}

namespace {

/// One transformer layer's forward and backward on the first pipeline rank, in the steady
/// iteration's first micro-batch: its compute tasks plus the TP collectives between them, as the
/// executor ran them (Table 4 timed a layer the same way, communication included).
struct LayerTimes {
  double forward = 0.0, backward = 0.0;
};

LayerTimes layer_times(const strata::TaskDag& dag, const strata::TaskTimes& times, int layer) {
  using strata::TaskKind;
  const std::int32_t steady = dag.iterations - 1;
  double backward_starts = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < dag.tasks.size(); ++i) {
    const auto& t = dag.tasks[i];
    if (t.layer == layer && t.microbatch == 0 && t.iteration == steady && t.rank() == 0 &&
        (t.kind == TaskKind::recompute || t.kind == TaskKind::backward))
      backward_starts = std::min(backward_starts, times.start[i]);
  }
  // Each phase from its first task's start to its last task's end: overlapped tasks count once.
  const double inf = std::numeric_limits<double>::infinity();
  double first[2] = {inf, inf}, end[2] = {-inf, -inf};
  for (std::size_t i = 0; i < dag.tasks.size(); ++i) {
    const auto& t = dag.tasks[i];
    if (t.layer != layer || t.microbatch != 0 || t.iteration != steady || t.rank() != 0) continue;
    if (t.kind != TaskKind::forward && t.kind != TaskKind::recompute && t.kind != TaskKind::backward &&
        t.kind != TaskKind::tp_comm)
      continue;
    const int phase = times.start[i] < backward_starts ? 0 : 1;
    first[phase] = std::min(first[phase], times.start[i]);
    end[phase] = std::max(end[phase], times.finish[i]);
  }
  return {end[0] - first[0], end[1] - first[1]};
}

}  // namespace

// Table 4 (22B, one layer, TP 8, micro-batch 4, s = 2048; docs/references.md): the per-layer split
// behind Table 5's iteration times, so a good iteration time cannot hide a wrong forward/backward
// balance. A middle layer is timed (the first and last also carry the embedding and LM head).
TEST_CASE("Korthikanti et al. 2022 Table 4: one layer's forward and backward", "[validation][simulation][slow]") {
  struct Row {
    const char* label;
    const char* recompute;
    bool sequence_parallel;
    double forward_ms, backward_ms;
  };
  const Row rows[] = {{"baseline, no recompute", "none", false, 7.7, 11.9},
                      {"full recompute", "full", false, 7.7, 19.5},
                      {"selective recompute", "selective", false, 7.7, 13.2},
                      {"selective recompute + SP", "selective", true, 7.2, 13.1}};
  Comparison forward("Korthikanti et al. 2022 Table 4, 22B layer forward (DES executor)", "ms");
  Comparison backward("Korthikanti et al. 2022 Table 4, 22B layer backward incl. recompute (DES executor)", "ms");
  for (const Row& row : rows) {
    const strata::Scenario sc =
        strata::test::load("korthikanti-22b-selective", {fmt::format("memory.recompute=\"{}\"", row.recompute),
                                                          fmt::format("parallelism.sequence_parallel={}",
                                                                      row.sequence_parallel ? "true" : "false")});
    strata::SimulationOptions options;
    options.keep_schedule = true;
    const strata::RunResult r = strata::run_scenario(sc, options);
    const LayerTimes t = layer_times(*r.simulation->dag, *r.simulation->times, 24);
    forward.add(row.label, row.forward_ms, 1e3 * t.forward);
    backward.add(row.label, row.backward_ms, 1e3 * t.backward);
  }
  forward.print();
  backward.print();
  // Issue 14's target for Table 4: every per-layer forward and backward within 10 %.
  CHECK(forward.max_error() <= 0.10);
  CHECK(backward.max_error() <= 0.10);
}
