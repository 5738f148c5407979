// Pipeline schedules against their closed forms (Narayanan et al. 2021 §2.2; docs/references.md,
// Pipeline schedules):
// with identical stages and free communication, the bubble is (p-1)/(m+p-1) of the iteration for
// GPipe and 1F1B and (p-1)/(v·m+p-1) for the interleaved schedule, and the iteration lasts
// (m+p-1)·(t_f+t_b), or (m+(p-1)/v)·(t_f+t_b) interleaved.

#include <catch2/catch.hpp>

#include <limits>
#include <set>

#include "sim/exec/executor.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "sim/dag/pipeline_schedule.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/analysis/schedule_metrics.hpp"
#include "support.hpp"

namespace {

/// A scenario whose stages are identical and whose transfers cost nothing: no vocabulary (no
/// embedding or LM head work), unbounded memory and link bandwidth (memory-bound kernels, the
/// optimizer and every transfer take no time), no tensor or data parallelism.
strata::Scenario uniform_pipeline(const std::string& schedule, int p, int v, int m, int layers) {
  strata::Scenario sc = strata::test::load_inline(
      {{"model", "llama-2-7b"},
       {"hardware", "dgx-a100-80g"},
       {"gpus", p},
       {"training", {{"seq_len", 1024}, {"micro_batch_size", 1}, {"global_batch_size", m}, {"iterations", 2}}},
       {"parallelism", {{"pp", p}, {"schedule", schedule}, {"virtual_stages", v}}}},
      {fmt::format("model.num_hidden_layers={}", layers)});
  const double inf = std::numeric_limits<double>::infinity();
  sc.model.vocab_size = 0;
  sc.hardware.gpu.hbm_bandwidth.value = inf;
  sc.hardware.nvlink_bandwidth.value = inf;
  sc.hardware.nic.bandwidth.value = inf;
  sc.hardware.nvlink_latency = strata::Seconds(0.0);
  sc.hardware.nvlink_collective_latency = strata::Seconds(0.0);
  // Uniform work per stage for the closed forms: the roofline (kernel tables would add per-kernel
  // launch costs and shape effects that differ between the first, middle and last stages).
  sc.hardware.kernels = strata::KernelSpec{};
  return sc;
}

}  // namespace

TEST_CASE("Pipeline bubble matches the closed forms for GPipe, 1F1B and interleaved 1F1B", "[analytic][simulation]") {
  struct Shape {
    const char* schedule;
    int p, v, m;
  };
  const Shape shapes[] = {{"gpipe", 4, 1, 8},       {"1f1b", 4, 1, 8},        {"1f1b", 8, 1, 3},
                          {"1f1b", 2, 1, 16},       {"interleaved", 4, 2, 8}, {"interleaved", 4, 3, 4},
                          {"interleaved", 8, 2, 16}};
  for (const Shape& s : shapes) {
    const int layers = s.p * s.v * 2;
    const strata::Scenario sc = uniform_pipeline(s.schedule, s.p, s.v, s.m, layers);
    strata::RunResult r = strata::run_scenario(sc, {strata::ExecutorKind::list, true, false});
    const double p = s.p, v = s.v, m = s.m;
    const double expected_bubble = s.v > 1 ? (p - 1) / (v * m + p - 1) : (p - 1) / (m + p - 1);
    // t_f + t_b of one stage for one micro-batch: its forward and backward GEMM work.
    const strata::ComputeGraph graph = strata::build_compute_graph(sc.model, {sc.training.seq_len, 1, 2.0, true});
    const double rate = sc.hardware.gpu.peak.at(sc.training.precision).value * sc.hardware.efficiency.gemm;
    const double stage_work = strata::model_flops(graph) / p / rate;
    const double expected_time = s.v > 1 ? (m + (p - 1) / v) * stage_work : (m + p - 1) * stage_work;
    INFO(fmt::format("{} p={} v={} m={}", s.schedule, s.p, s.v, s.m));
    CHECK(r.simulation->throughput.bubble_fraction == Approx(expected_bubble).epsilon(1e-6));
    CHECK(r.simulation->throughput.iteration_time == Approx(expected_time).epsilon(1e-6));
  }
}

TEST_CASE("Schedules run every forward before its backward and keep at most p micro-batches in 1F1B", "[unit]") {
  for (auto schedule : {strata::Schedule::gpipe, strata::Schedule::one_f_one_b, strata::Schedule::interleaved}) {
    const int p = 4, v = schedule == strata::Schedule::interleaved ? 2 : 1, m = 8;
    const auto order = strata::pipeline_order(schedule, p, v, m);
    REQUIRE(order.size() == static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
      std::set<std::pair<int, int>> open;
      std::size_t most = 0;
      for (const auto& u : order[static_cast<std::size_t>(s)]) {
        CHECK(u.chunk % p == s);
        if (u.forward) {
          CHECK(open.insert({u.chunk, u.microbatch}).second);
        } else {
          CHECK(open.erase({u.chunk, u.microbatch}) == 1);
        }
        most = std::max(most, open.size());
      }
      CHECK(open.empty());
      CHECK(order[static_cast<std::size_t>(s)].size() == static_cast<std::size_t>(2 * m * v));
      if (schedule == strata::Schedule::one_f_one_b) CHECK(most == static_cast<std::size_t>(p - s));
      if (schedule == strata::Schedule::gpipe) CHECK(most == static_cast<std::size_t>(m));
    }
  }
}

TEST_CASE("Every shipped scenario's task DAG, checkpoint included, is acyclic with its stream order",
          "[schedule][graph][slow]") {
  // The executors take insertion order as a topological order; Boost.Graph's topological sort of
  // the dependencies plus each stream's program order must accept every DAG the builder makes.
  for (const std::string& name : strata::test::catalog().list("scenario")) {
    INFO(name);
    const strata::Scenario sc = strata::test::load(name);
    const strata::ComputeGraph graph = strata::build_compute_graph(
        sc.model, {sc.training.seq_len, sc.training.micro_batch_size, 2.0, sc.training.flash_attention});
    const auto part = strata::partition_layers(static_cast<int>(sc.model.num_layers),
                                               static_cast<int>(sc.parallelism.pp),
                                               static_cast<int>(sc.parallelism.virtual_stages));
    const strata::MemoryEstimate memory = strata::estimate_memory(sc, graph, part);
    strata::DagOptions options{true, sc.checkpoint.enabled ? 0 : -1, 2};
    options.persist = sc.checkpoint.enabled;
    const strata::TaskDag dag = strata::build_training_dag(sc, graph, part, memory, options);
    std::vector<strata::TaskId> order;
    REQUIRE_NOTHROW(order = strata::topological_order(dag));
    CHECK(order.size() == dag.tasks.size());
  }
}

TEST_CASE("Interleaved pipelines with layers that pp·v does not divide: Llama 3 405B, 126 layers on PP 16",
          "[simulation][schedule]") {
  // The Llama 3 paper (§3.3.2) runs 126 layers over 16 stages with the interleaved schedule, one
  // layer fewer on the first and the last stage (they hold the embedding and the LM head).
  const strata::Scenario one_f =
      strata::test::load("llama-3.1-405b-llama3-16k", {"training.iterations=1"});
  const strata::Scenario sc = strata::test::load(
      "llama-3.1-405b-llama3-16k", {"training.iterations=1", "parallelism.schedule=interleaved", "parallelism.virtual_stages=4"});
  const strata::RunResult r = strata::run_scenario(sc, {strata::ExecutorKind::list, true, false});
  int total = 0;
  for (const auto& c : r.partition.chunks) {
    CHECK(c.num_layers >= 1);
    total += c.num_layers;
  }
  CHECK(total == 126);
  CHECK(r.partition.layers_on_stage(0) == 7);
  CHECK(r.partition.layers_on_stage(15) == 7);
  for (int s = 1; s < 15; ++s) CHECK(r.partition.layers_on_stage(s) == 8);
  const strata::RunResult base = strata::run_scenario(one_f, {strata::ExecutorKind::list, true, false});
  INFO("1F1B bubble " << base.simulation->throughput.bubble_fraction << ", interleaved "
                      << r.simulation->throughput.bubble_fraction);
  CHECK(r.simulation->throughput.bubble_fraction < 0.5 * base.simulation->throughput.bubble_fraction);
}
