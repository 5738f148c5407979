#include "sim/dag/restore_dag.hpp"

#include "sim/dag/training_dag.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

std::int64_t previous_stage_rank(const RankLayout& ranks, std::int64_t rank) {
  const std::int64_t stage = (ranks.stage_of(rank) + ranks.pp - 1) % ranks.pp;
  return ranks.rank(stage, ranks.replica(rank), ranks.tp_index(rank));
}

TaskDag build_restore_dag(const Scenario& sc, const TaskDag& shape, const std::vector<double>& per_rank,
                          RestoreSource source) {
  TaskDag restore;
  restore.fold_group = shape.fold_group;
  restore.represents = shape.represents;
  const RankLayout ranks = rank_layout(sc);
  const StateBytes b = state_bytes(sc.training);
  const std::int64_t nodes = sc.nodes;
  for (const auto& [rank, count] : shape.represents) {
    restore.resident[rank] = {};
    const std::int64_t node = ranks.node(rank);
    const double bytes = per_rank[static_cast<std::size_t>(ranks.stage_of(rank))];
    // Near storage saves the states alone; the weights come back as 16-bit from the master copy.
    const double weights = bytes / b.optimizer * b.weights;
    std::vector<Flow> hops;
    switch (source) {
      case RestoreSource::last_tier: {
        const Tier last = sc.checkpoint.tiers.back();
        hops.push_back({tier_device(last, node), Device::gpu(rank), bytes, false,
                        sc.checkpoint.gpudirect && last == Tier::local_ssd});
        break;
      }
      case RestoreSource::local_dram: hops.push_back({tier_device(Tier::dram, node), Device::gpu(rank), bytes}); break;
      case RestoreSource::peer_dram:
        hops.push_back({tier_device(Tier::dram, (node + 1) % nodes), tier_device(Tier::dram, node), bytes, true});
        hops.push_back({tier_device(Tier::dram, node), Device::gpu(rank), bytes});
        break;
      case RestoreSource::local_ssd:
        hops.push_back({tier_device(Tier::local_ssd, node), Device::gpu(rank), weights, false, true});
        break;
      case RestoreSource::object_store_near:
        hops.push_back({tier_device(Tier::object_store, 0), tier_device(Tier::local_ssd, node), bytes});
        hops.push_back({tier_device(Tier::local_ssd, node), Device::gpu(rank), weights, false, true});
        break;
      case RestoreSource::previous_stage: {
        const std::int64_t from = previous_stage_rank(ranks, rank);
        hops.push_back({Device::gpu(from), Device::gpu(rank), bytes, ranks.node(from) != node});
        break;
      }
    }
    std::vector<TaskId> prev;
    for (std::size_t h = 0; h < hops.size(); ++h) {
      Task t;
      t.kind = TaskKind::checkpoint;
      t.stream = h == 0 ? Stream::checkpoint : h == 1 ? Stream::checkpoint_2 : Stream::checkpoint_3;
      t.ranks = {rank};
      t.deps = prev;
      hops[h].rail = rank;
      t.flows.push_back(hops[h]);
      prev = {restore.add(std::move(t))};
    }
  }
  return restore;
}

}  // namespace strata
