#include "sim/dag/tensor_parallel_emitter.hpp"

#include <algorithm>
#include <map>

#include "sim/dag/collectives.hpp"

namespace strata {

DagContext::Work TensorParallelEmitter::stretched(DagContext::Work work, double core_fraction, bool forward) const {
  if (!overlapped() || work.seconds <= 0.0) return work;
  const double stretch = forward ? overlap_.forward_stretch : overlap_.backward_stretch;
  const double core = work.seconds * std::clamp(core_fraction, 0.0, 1.0);
  work.seconds = core + (work.seconds - core) * stretch;
  return work;
}

/// TP collectives on the hidden-state buffer for each TP group among the lanes: one task per group,
/// depending on its members' tasks. With SP they are reduce-scatter + all-gather pairs of the same
/// volume and step count, so they are modelled as the equivalent all-reduces.
DagContext::Frontier TensorParallelEmitter::collectives(int stage, int count, const DagContext::ChunkPos& pos,
                                                        const std::vector<TaskId>& producers,
                                                        const DagContext::Frontier* before) {
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  DagContext::Frontier out(lanes.size());
  if (layout.tp == 1 || count == 0) {
    for (std::size_t i = 0; i < lanes.size(); ++i) out[i] = {producers[i]};
    return out;
  }
  const bool overlap = overlapped() && before != nullptr && overlap_.chunks > 1;
  // Overlapped: Transformer Engine cuts each GEMM and its collective into `chunks` slices and runs
  // slice k's exchange beside slice k+1's GEMM, so every slice but one is hidden behind compute
  // (NeMo docs, Communication Overlap; docs/references.md).
  const double hidden_share = overlap ? 1.0 - 1.0 / static_cast<double>(overlap_.chunks) : 0.0;
  std::map<std::int64_t, std::vector<std::size_t>> groups;  // dp index -> lanes
  for (std::size_t i = 0; i < lanes.size(); ++i) groups[lanes[i].first].push_back(i);
  for (const auto& [d, members] : groups) {
    std::vector<std::int64_t> simulated;
    for (std::size_t i : members) simulated.push_back(ctx_.rank_of(stage, lanes[i]));
    auto add = [&](double share, const std::vector<TaskId>& deps) {
      Task t = ring_collective(Collective::all_reduce, layout.tp_group(simulated.front()), simulated,
                               share * count * hidden_bytes_, TaskKind::tp_comm, Stream::tp_comm, layout);
      t.latency_steps *= count;
      // Overlapped slices move through Transformer Engine's userbuffers, not NCCL calls: they do
      // not pay NCCL's per-call cost (nvlink.collective_latency).
      t.collective_calls = overlap ? 0 : count;
      t.iteration = ctx_.iteration();
      t.stage = stage;
      DagContext::set_pos(t, pos);
      t.deps = deps;
      return ctx_.dag().add(std::move(t));
    };
    std::vector<TaskId> after;
    for (std::size_t i : members) after.push_back(producers[i]);
    if (overlap) {
      std::vector<TaskId> start;
      for (std::size_t i : members) start.insert(start.end(), (*before)[i].begin(), (*before)[i].end());
      after.push_back(add(hidden_share, start));
    }
    const TaskId id = add(1.0 - hidden_share, after);
    for (std::size_t i : members) out[i] = {id};
  }
  return out;
}

}  // namespace strata
