#include "sim/dag/context_parallel_emitter.hpp"

#include <map>

namespace strata {

double ring_bytes(const ContextParallelPlan& plan, bool forward) {
  const double steps = static_cast<double>(plan.cp - 1);
  return (forward ? 1.0 : 2.0) * steps * plan.kv_block_bytes;
}

std::vector<TaskId> ContextParallelEmitter::ring_step(int stage, const DagContext::ChunkPos& pos, double bytes,
                                                      const DagContext::Frontier& deps,
                                                      std::vector<MemoryChange> alloc) {
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  std::vector<TaskId> out(lanes.size());
  // Lanes of one CP ring: the same data-parallel index and TP index.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < lanes.size(); ++i)
    groups[{lanes[i].first / layout.cp, lanes[i].second}].push_back(i);
  for (const auto& [key, members] : groups) {
    Task t = ctx_.base(TaskKind::cp_comm, Stream::cp_comm, {}, stage);
    DagContext::set_pos(t, pos);
    for (std::size_t i : members) {
      const std::int64_t r = ctx_.rank_of(stage, lanes[i]);
      const std::vector<std::int64_t> ring = layout.cp_group(r);
      const std::int64_t next = ring[static_cast<std::size_t>((layout.cp_index(r) + 1) % layout.cp)];
      t.ranks.push_back(r);
      t.flows.push_back({Device::gpu(r), Device::gpu(next), bytes, layout.node(r) != layout.node(next)});
      t.deps.insert(t.deps.end(), deps[i].begin(), deps[i].end());
    }
    t.allocate = alloc;
    const TaskId id = ctx_.dag().add(std::move(t));
    for (std::size_t i : members) out[i] = id;
  }
  return out;
}

DagContext::Frontier ContextParallelEmitter::attention(int stage, const DagContext::ChunkPos& pos,
                                                       const LayerWork& w, bool forward,
                                                       const std::vector<TaskId>& before) {
  const int cp = static_cast<int>(plan_.cp);
  const double B = plan_.kv_block_bytes;
  const TaskKind kind = forward ? TaskKind::forward : TaskKind::backward;
  const CpAttentionWork& c = w.cp;
  // Every step carries 1/cp of the core's FLOPs (equal work under causal load balancing); the
  // diagonal step also its memory-bound traffic.
  const double per_step_bwd = c.core_bwd_flops / static_cast<double>(cp);
  const DagContext::Work diag{forward ? c.diag_flops : per_step_bwd, forward ? w.core_bytes : c.core_bwd_bytes,
                              forward ? c.diag_fwd_s : c.diag_bwd_s};
  const DagContext::Work step{forward ? c.step_flops : per_step_bwd, 0.0, forward ? c.step_fwd_s : c.step_bwd_s};
  const MemoryChange buffers{Tier::hbm, MemoryUse::workspace, plan_.buffer_bytes};

  // Send 0 goes out as soon as K/V exist (the work before the attention) and takes the ring's
  // receive buffers; the last step gives them back.
  const int sends = forward ? cp - 1 : cp;
  std::vector<TaskId> computed = before;  // per lane: the last attention step, or the work before it
  std::vector<std::vector<TaskId>> sent = {ring_step(stage, pos, B, DagContext::frontier_of(before), {buffers})};
  for (int i = 0; i < cp; ++i) {
    // Step i runs on the block send i−1 brought (its own at step 0).
    DagContext::Frontier deps = DagContext::frontier_of(computed);
    if (i > 0)
      for (std::size_t l = 0; l < deps.size(); ++l) deps[l].push_back(sent[static_cast<std::size_t>(i - 1)][l]);
    const bool last = i == cp - 1;
    std::vector<TaskId> done = ctx_.per_lane(stage, kind, pos, i == 0 ? diag : step, {},
                                             last ? std::vector<MemoryChange>{buffers} : std::vector<MemoryChange>{},
                                             deps);
    if (i + 1 < sends) {
      // Send i+1 forwards the block send i brought; backward with the dK/dV accumulated through
      // step i, and the last send the dK/dV alone.
      DagContext::Frontier send_deps = DagContext::frontier_of(sent.back());
      for (std::size_t l = 0; l < send_deps.size(); ++l) send_deps[l].push_back(done[l]);
      const double bytes = forward || i + 1 == cp - 1 ? B : 2.0 * B;
      sent.push_back(ring_step(stage, pos, bytes, send_deps, {}));
    }
    computed = std::move(done);
  }
  DagContext::Frontier after = DagContext::frontier_of(computed);
  if (!forward)
    for (std::size_t l = 0; l < after.size(); ++l) after[l].push_back(sent.back()[l]);
  return after;
}

}  // namespace strata
