#pragma once

/// Context parallelism inside a layer: the attention of a rank's s/cp tokens against the whole
/// sequence, as a ring (Megatron-Core with TransformerEngine's AttnFuncWithCPAndKVP2P). Each of the
/// cp steps runs attention on one K/V block while the ring passes the next block to the successor:
///   forward, cp−1 sends of one K/V block;
///   backward, cp sends: K/V first, then K/V with the dK/dV accumulated so far, and last the dK/dV
///   alone back to their owner.
/// Step i+1 waits for send i; send i+1 waits for send i and for step i (PyTorch's NCCL stream waits
/// for the compute stream when an operation is issued, and the buffer it receives into is the one
/// step i reads), so each send overlaps the attention step after it.
/// Per rank, layer and micro-batch that is (cp−1)·B forward and 2(cp−1)·B backward, with
/// B = 2·act·b·(s/cp)·kv_width/tp (ring_bytes below).

#include <cstdint>
#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/layer_work.hpp"

namespace strata {

/// What the emitter needs of the scenario.
struct ContextParallelPlan {
  std::int64_t cp = 1;
  double kv_block_bytes = 0.0;  ///< B: one K/V block of one rank (s/cp tokens, kv_width/tp wide, K and V)
  double buffer_bytes = 0.0;    ///< the ring's receive buffers, held while a layer's attention runs
};

/// Bytes one rank sends around the ring for one layer and micro-batch: forward (cp−1)·B, backward
/// 2(cp−1)·B.
double ring_bytes(const ContextParallelPlan& plan, bool forward);

class ContextParallelEmitter {
 public:
  ContextParallelEmitter(DagContext& ctx, const ContextParallelPlan& plan) : ctx_(ctx), plan_(plan) {}

  bool active() const { return plan_.cp > 1; }

  /// The layer's attention core as ring steps after `before` (one task per lane, the work before
  /// the attention); returns what the work after it waits for per lane: the last step, and
  /// backward the send that brings dK/dV home.
  DagContext::Frontier attention(int stage, const DagContext::ChunkPos& pos, const LayerWork& w, bool forward,
                                 const std::vector<TaskId>& before);

 private:
  /// One ring step: every CP group's members send `bytes` to their successor; one task per group,
  /// waiting for `deps` of its members.
  std::vector<TaskId> ring_step(int stage, const DagContext::ChunkPos& pos, double bytes,
                                const DagContext::Frontier& deps, std::vector<MemoryChange> alloc);

  DagContext& ctx_;
  ContextParallelPlan plan_;
};

}  // namespace strata
