#include "sim/dag/recompute_emitter.hpp"

namespace strata {

void RecomputeEmitter::before_backward(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                       DagContext::Frontier& last, std::vector<MemoryChange>& release) {
  if (w.recompute == Recompute::none) return;
  const bool full = w.recompute == Recompute::full;
  std::vector<MemoryChange> alloc = {{Tier::hbm, MemoryUse::workspace, w.rebuilt}};
  const RerunWork rerun = rerun_work(w, w.recompute, selective_);
  const DagContext::Work work{rerun.flops, rerun.bytes, rerun.seconds};
  // A full recomputation reruns the block's forward GEMMs, with their TP collectives overlapped as
  // the forward's are; per-op checkpointing under SP repeats the all-gathers of the block's inputs
  // (it keeps the reduce-scatters' outputs), overlapped where the TP overlap pipelines them.
  const DagContext::Frontier before = last;
  const double core_fraction = w.block_s > 0.0 ? w.core_s / w.block_s : 0.0;
  auto ids = ctx_.per_lane(stage, TaskKind::recompute, pos, full ? tp_.stretched(work, core_fraction, true) : work,
                           alloc, {}, last);
  last = full ? tp_.collectives(stage, w.tp_block, w.tp_block_bytes, pos, ids, &before)
              : tp_.collectives(stage, rerun.tp_all_gathers, rerun.tp_all_gather_bytes, pos, ids,
                                tp_.overlaps_per_op_rerun() ? &before : nullptr, Collective::all_gather);
  // A checkpointed input distributed over TP is all-gathered whole for the rerun. It is put after the
  // rerun's own collectives: they all block the compute stream (distributing is refused with
  // sequence parallelism, so no TP overlap runs), so the order does not change the time.
  if (full && w.tp_saved_input_bytes > 0.0) {
    std::vector<TaskId> producers;
    for (const auto& lane : last) producers.push_back(lane.front());
    last = tp_.collectives(stage, 1, w.tp_saved_input_bytes, pos, producers, nullptr, Collective::all_gather);
  }
  // Rerunning a whole MoE block dispatches and combines its tokens again.
  last = ep_.all_to_alls(stage, full ? w.ep_fwd : 0, w.ep_bytes, pos, last);
  release.push_back({Tier::hbm, MemoryUse::workspace, w.rebuilt});
}

}  // namespace strata
