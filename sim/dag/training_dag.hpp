#pragma once

/// Turns the computation graph and the scenario's policies into the task DAG of N training
/// iterations: per pipeline stage its schedule of forward, backward and recompute work per layer,
/// TP collectives, transfers between stages, DP gradient reduction, ZeRO-3 parameter gathers, the
/// optimizer step (on the GPU, the host or the drives), offload copies and optionally one checkpoint.
/// training_dag.cpp walks the schedule; each policy family has its emitter in sim/dag/*_emitter.*
/// over the shared DagContext (dag_context.hpp), with the per-layer costs of layer_work.hpp.

#include <string>

#include "sim/config/scenario_spec.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "sim/dag/rank_layout.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

struct DagOptions {
  /// Simulate one rank per pipeline stage: its tensor-parallel peers and data-parallel replicas do
  /// the same work at the same time (symmetry), so the executor scales shared links instead.
  bool fold = true;
  /// Take one checkpoint after this iteration's optimizer step (-1: none); its tasks count as the
  /// next iteration's, so that iteration's time includes the stall. At least that next iteration is
  /// simulated.
  int checkpoint_after = -1;
  /// Simulate at least this many iterations.
  int min_iterations = 1;
  /// in_memory: this checkpoint is the n-th one that also goes to the tiers after DRAM.
  bool persist = false;
};

/// How many iterations the DAG for these options holds.
int dag_iterations(const Scenario& sc, const DagOptions& options);

/// Bytes of the checkpoint each rank writes (its share of the 16-bit weights and the optimizer
/// states; every data-parallel and context-parallel rank writes its 1/(dp·cp), as distributed checkpointing
/// does: CP ranks hold the same states, so they share the writing as DP replicas do), per stage.
std::vector<double> checkpoint_bytes_per_rank(const Scenario& sc, const MemoryEstimate& memory);

RankLayout rank_layout(const Scenario& sc);

/// The size of a scenario's training DAG, estimated from its shape before it is built, and the
/// input that drives it (a JSON pointer into the scenario), for guards against runs that would
/// exhaust memory.
struct DagSizeEstimate {
  double tasks = 0.0;
  std::string driver;  ///< "/training/iterations", "/training/global_batch_size" or "" (--no-fold)
  std::string factors;  ///< "2 iterations x 64 micro-batches x 12 layers per GPU x 8 simulated GPUs"
};
DagSizeEstimate estimate_dag_size(const Scenario& sc, bool fold);

TaskDag build_training_dag(const Scenario& sc, const ComputeGraph& graph, const PipelinePartition& partition,
                           const MemoryEstimate& memory, const DagOptions& options);

}  // namespace strata
