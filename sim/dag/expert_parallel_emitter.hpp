#pragma once

/// Expert parallelism: the all-to-alls that carry each MoE layer's routed tokens to the ranks
/// holding their experts (dispatch) and bring the experts' outputs back (combine), forward and
/// backward, one task per EP group waiting for its members. They block the compute stream, as in
/// Megatron-Core's alltoall token dispatcher without overlap.

#include <cstdint>
#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

/// One all-to-all over `group`: every simulated member sends bytes/n to each of the n-1 others, all
/// at once (NCCL's grouped send/receive), so each member's links carry (n-1)/n of its bytes. The
/// platform routes each pair over NVLink inside a node and the NICs across nodes.
Task all_to_all(const std::vector<std::int64_t>& group, const std::vector<std::int64_t>& simulated, double bytes,
                const RankLayout& layout);

class ExpertParallelEmitter {
 public:
  explicit ExpertParallelEmitter(DagContext& ctx) : ctx_(ctx) {}

  /// `count` all-to-alls of `bytes` per rank one after the other after `producers`; returns the new
  /// frontier (`producers` itself when count is 0 or there is no EP).
  DagContext::Frontier all_to_alls(int stage, int count, double bytes, const DagContext::ChunkPos& pos,
                                   const DagContext::Frontier& producers);

 private:
  DagContext& ctx_;
};

}  // namespace strata
