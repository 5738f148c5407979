#include "sim/dag/recompute_emitter.hpp"

namespace strata {

void RecomputeEmitter::before_backward(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                       DagContext::Frontier& last, std::vector<MemoryChange>& release) {
  if (policy_ == Recompute::none) return;
  const bool full = policy_ == Recompute::full;
  std::vector<MemoryChange> alloc = {{Tier::hbm, MemoryUse::workspace, w.rebuilt}};
  const DagContext::Work work = full ? DagContext::Work{w.block_flops, w.block_bytes, w.block_s}
                                     : DagContext::Work{w.core_flops, w.core_bytes, w.core_s};
  auto ids = ctx_.per_lane(stage, TaskKind::recompute, pos, work, alloc, {}, last);
  last = tp_.collectives(stage, full ? kBlockCollectives : 0, pos, ids);
  // Rerunning a whole MoE block dispatches and combines its tokens again.
  last = ep_.all_to_alls(stage, full ? w.ep_fwd : 0, w.ep_bytes, pos, last);
  release.push_back({Tier::hbm, MemoryUse::workspace, w.rebuilt});
}

}  // namespace strata
