#pragma once

// The training DAG of a one-stage scenario, for tests that count what its tasks move.

#include "sim/dag/training_dag.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata::test {

struct BuiltDag {
  ComputeGraph graph;
  TaskDag dag;
};

/// `sc`'s graph (micro-batch 1) and its training DAG on one pipeline stage.
inline BuiltDag single_stage_dag(const Scenario& sc) {
  BuiltDag b{build_compute_graph(sc.model, {.seq_len = sc.training.seq_len, .micro_batch = 1}), {}};
  const auto part = partition_layers(static_cast<int>(sc.model.num_layers), 1, 1);
  b.dag = build_training_dag(sc, b.graph, part, estimate_memory(sc, b.graph, part), {true, -1, 1});
  return b;
}

}  // namespace strata::test
