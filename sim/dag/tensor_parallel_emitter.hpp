#pragma once

/// Tensor (and sequence) parallelism inside a layer: the collectives on the hidden-state buffer
/// that follow a layer's compute in each TP group, one task per group waiting for its members.
/// Forward, backward, recomputation and redundant computation all end in them.

#include <vector>

#include "sim/dag/dag_context.hpp"

namespace strata {

class TensorParallelEmitter {
 public:
  /// `hidden_bytes`: one micro-batch's hidden-state buffer, what each collective reduces.
  TensorParallelEmitter(DagContext& ctx, double hidden_bytes) : ctx_(ctx), hidden_bytes_(hidden_bytes) {}

  /// `count` all-reduce equivalents after `producers` (one per lane); returns the new frontier.
  DagContext::Frontier collectives(int stage, int count, const DagContext::ChunkPos& pos,
                                   const std::vector<TaskId>& producers);

 private:
  DagContext& ctx_;
  double hidden_bytes_;
};

}  // namespace strata
