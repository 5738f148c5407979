#pragma once

/// Activation recomputation (Korthikanti et al. 2022): before a layer's backward, rerun what the
/// policy did not keep (the attention core for Megatron's selective, the elementwise ops and every
/// other matmul for per-op selective checkpointing, the whole block for full, with its TP
/// collectives and expert all-to-alls), into transient workspace that the backward gives back.

#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/expert_parallel_emitter.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/tensor_parallel_emitter.hpp"

namespace strata {

class RecomputeEmitter {
 public:
  RecomputeEmitter(DagContext& ctx, TensorParallelEmitter& tp, ExpertParallelEmitter& ep, SelectiveRecompute selective)
      : ctx_(ctx), tp_(tp), ep_(ep), selective_(selective) {}

  /// The layer's recomputation on `last`, if its policy (LayerWork::recompute) recomputes; adds the
  /// workspace it rebuilds to what the backward `release`s.
  void before_backward(int stage, const DagContext::ChunkPos& pos, const LayerWork& w, DagContext::Frontier& last,
                       std::vector<MemoryChange>& release);

 private:
  DagContext& ctx_;
  TensorParallelEmitter& tp_;
  ExpertParallelEmitter& ep_;
  SelectiveRecompute selective_;
};

}  // namespace strata
