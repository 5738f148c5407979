#pragma once

/// Redundant computation (Bamboo, Thorpe et al. NSDI 2023; docs/references.md, Redundant
/// computation): each stage keeps a replica of its successor chunk, runs that chunk's forward after
/// its own, and after each step receives the successor's reduced gradients to update its replica,
/// so that it can take over if the successor fails.

#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/data_parallel_emitter.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/pipeline_schedule.hpp"
#include "sim/dag/tensor_parallel_emitter.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

class RedundantComputeEmitter {
 public:
  /// `context_parallel`: the blocks' forwards run as CP's ring steps (ContextParallelEmitter), which
  /// the TP overlap does not slow.
  RedundantComputeEmitter(DagContext& ctx, const PipelinePartition& part, const MemoryEstimate& mem,
                          const std::vector<LayerWork>& work, const StateBytes& states, TensorParallelEmitter& tp,
                          const DataParallelEmitter& dp, bool context_parallel);

  /// After the unit's own forward and send: the successor chunk's forward on the same input.
  void forward(int stage, const PipelineUnit& u);
  /// After every stage's optimizer step: the stage's replica of its successor is updated.
  void step(int stage);

 private:
  /// The model chunk whose replica a chunk's stage keeps (redundant computation): the next one.
  int successor(int chunk) const { return (chunk + 1) % chunks_; }

  DagContext& ctx_;
  const PipelinePartition& part_;
  const MemoryEstimate& mem_;
  const std::vector<LayerWork>& work_;
  StateBytes states_;
  TensorParallelEmitter& tp_;
  const DataParallelEmitter& dp_;
  bool context_parallel_;
  int chunks_;
  int blocks_;  ///< transformer blocks in the model: work units below it are blocks
};

}  // namespace strata
