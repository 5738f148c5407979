#include "sim/dag/expert_parallel_emitter.hpp"

#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace strata {

Task all_to_all(const std::vector<std::int64_t>& group, const std::vector<std::int64_t>& simulated, double bytes,
                const RankLayout& layout) {
  Task t;
  t.kind = TaskKind::ep_comm;
  t.stream = Stream::ep_comm;
  t.ranks = simulated;
  t.latency_steps = 1;  // every pair at once
  t.collective_calls = 1;
  const double share = bytes / static_cast<double>(group.size());
  for (std::int64_t r : simulated) {
    bool member = false;
    for (std::int64_t q : group) {
      if (q == r) {
        member = true;
        continue;
      }
      t.flows.push_back({Device::gpu(r), Device::gpu(q), share, layout.node(r) != layout.node(q)});
    }
    if (!member) throw std::logic_error("all-to-all member outside its group");
  }
  return t;
}

DagContext::Frontier ExpertParallelEmitter::all_to_alls(int stage, int count, double bytes,
                                                        const DagContext::ChunkPos& pos,
                                                        const DagContext::Frontier& producers) {
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  if (layout.ep == 1 || count == 0) return producers;
  DagContext::Frontier out(lanes.size());
  // Lanes of one EP group: the same TP index, the same CP index and the same block of ep DP
  // indices. A lane's first is the replica index dp_index·cp + cp_index, not the DP index: with
  // CP > 1 dividing it by ep alone mixed CP ranks into one group (RankLayout::ep_group).
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::vector<std::size_t>> groups;
  // Folded, a group is ep consecutive ranks of the stage.
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::int64_t replica = lanes[i].first;
    if (layout.experts_folded)
      groups[{(replica * layout.tp + lanes[i].second) / layout.ep, 0, 0}].push_back(i);
    else
      groups[{replica / layout.cp / layout.ep, replica % layout.cp, lanes[i].second}].push_back(i);
  }
  for (const auto& [key, members] : groups) {
    std::vector<std::int64_t> simulated;
    for (std::size_t i : members) simulated.push_back(ctx_.rank_of(stage, lanes[i]));
    const std::vector<std::int64_t> group = layout.ep_group(simulated.front());
    std::vector<TaskId> previous;
    for (std::size_t i : members) previous.insert(previous.end(), producers[i].begin(), producers[i].end());
    for (int c = 0; c < count; ++c) {
      Task t = all_to_all(group, simulated, bytes, layout);
      t.iteration = ctx_.iteration();
      t.stage = stage;
      DagContext::set_pos(t, pos);
      t.deps = std::move(previous);
      previous = {ctx_.dag().add(std::move(t))};
    }
    for (std::size_t i : members) out[i] = previous;
  }
  return out;
}

}  // namespace strata
