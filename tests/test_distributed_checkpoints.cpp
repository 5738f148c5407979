// Full recomputation's checkpointed inputs distributed over TP (memory.distribute_saved_activations:
// Megatron-LM's --distribute-saved-activations, DeepSpeed's partition_activations): each TP rank keeps
// 1/tp of a block's input, and the TP group all-gathers it before the block is recomputed.

#include <catch2/catch.hpp>

#include "sim/analysis/run.hpp"
#include "dag_support.hpp"
#include "support.hpp"

using namespace strata;

namespace {

/// Korthikanti et al.'s 22B (TP8, no SP, full recomputation), one iteration.
Scenario megatron_22b(bool distribute) {
  return test::load("korthikanti-22b-full",
                    {"training.iterations=1", std::string("memory.distribute_saved_activations=") +
                                                  (distribute ? "true" : "false")});
}

int tp_tasks(const TaskDag& dag) {
  int n = 0;
  for (const Task& t : dag.tasks) n += t.kind == TaskKind::tp_comm ? 1 : 0;
  return n;
}

}  // namespace

TEST_CASE("Distributed checkpoints keep 1/tp of each block's input and gather it before the rerun",
          "[recompute][memory]") {
  const Scenario kept = megatron_22b(false), split = megatron_22b(true);
  const RunResult a = run_scenario(kept), b = run_scenario(split);
  // Korthikanti et al. 2022 Table 2: full recomputation keeps the layer input, 2sbh bytes per layer;
  // distributed, each of the t ranks keeps 2sbh/t.
  const double s = static_cast<double>(kept.training.seq_len), mb = static_cast<double>(kept.training.micro_batch_size);
  const double h = static_cast<double>(kept.model.hidden_size), t = static_cast<double>(kept.parallelism.tp);
  const double layers = static_cast<double>(kept.model.num_layers);
  const double in_flight = static_cast<double>(a.memory.stages.front().microbatches_in_flight);
  CHECK(a.memory.stages.front().hbm.activations - b.memory.stages.front().hbm.activations ==
        Approx(in_flight * layers * 2.0 * s * mb * h * (1.0 - 1.0 / t)));
  // One more TP collective per block recomputed, and it costs time.
  const auto dag_a = test::single_stage_dag(kept), dag_b = test::single_stage_dag(split);
  CHECK(tp_tasks(dag_b.dag) - tp_tasks(dag_a.dag) == static_cast<int>(layers));
  CHECK(b.simulation->throughput.iteration_time > a.simulation->throughput.iteration_time);
}

TEST_CASE("Distributed checkpoints need full recomputation, TP and no sequence parallelism", "[recompute][input]") {
  CHECK_THROWS_AS(test::load("korthikanti-22b-selective", {"memory.distribute_saved_activations=true"}), InputError);
  CHECK_THROWS_AS(test::load("korthikanti-22b-full", {"memory.distribute_saved_activations=true",
                                                      "parallelism.sequence_parallel=true"}),
                  InputError);
  CHECK_THROWS_AS(test::load("llama-2-7b-zero1-a100", {"memory.recompute=full",
                                                       "memory.distribute_saved_activations=true"}),
                  InputError);
}
