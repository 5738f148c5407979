#include "sim/dag/tensor_parallel_emitter.hpp"

#include <map>

#include "sim/dag/collectives.hpp"

namespace strata {

/// TP collectives on the hidden-state buffer for each TP group among the lanes: one task per group,
/// depending on its members' tasks. With SP they are reduce-scatter + all-gather pairs of the same
/// volume and step count, so they are modelled as the equivalent all-reduces.
DagContext::Frontier TensorParallelEmitter::collectives(int stage, int count, const DagContext::ChunkPos& pos,
                                                        const std::vector<TaskId>& producers) {
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  DagContext::Frontier out(lanes.size());
  if (layout.tp == 1 || count == 0) {
    for (std::size_t i = 0; i < lanes.size(); ++i) out[i] = {producers[i]};
    return out;
  }
  std::map<std::int64_t, std::vector<std::size_t>> groups;  // dp index -> lanes
  for (std::size_t i = 0; i < lanes.size(); ++i) groups[lanes[i].first].push_back(i);
  for (const auto& [d, members] : groups) {
    std::vector<std::int64_t> simulated;
    for (std::size_t i : members) simulated.push_back(ctx_.rank_of(stage, lanes[i]));
    Task t = ring_collective(Collective::all_reduce, layout.tp_group(simulated.front()), simulated,
                             count * hidden_bytes_, TaskKind::tp_comm, Stream::tp_comm, layout);
    t.latency_steps *= count;
    t.iteration = ctx_.iteration();
    t.stage = stage;
    DagContext::set_pos(t, pos);
    for (std::size_t i : members) t.deps.push_back(producers[i]);
    TaskId id = ctx_.dag().add(std::move(t));
    for (std::size_t i : members) out[i] = {id};
  }
  return out;
}

}  // namespace strata
