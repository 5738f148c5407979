#pragma once

/// Where each (pipeline stage, data-parallel replica, context-parallel rank, tensor-parallel peer)
/// lives: Megatron-Core's rank order, tensor-parallel fastest, then context-parallel, then
/// data-parallel, then pipeline (its "tp-cp-ep-dp-pp" order), so a TP group shares a node and a CP
/// ring stays as close as it can.
///
/// The DP and CP ranks of one stage and TP index hold the same weights: the DAG's emitters address
/// them by one "replica" index e = dp_index·cp + cp_index (dp·cp of them), which is also the group
/// gradients are reduced over and ZeRO shards over (Megatron's data-parallel group with CP).
///
/// Expert parallelism adds no rank: it is carved out of data parallelism (ep divides dp, Megatron's
/// rule), an EP group being ep consecutive DP indices of one (stage, CP index, TP index). Folded
/// (expert TP 1, MoE parallel folding) the experts get a grid of their own over the stage's ranks
/// in the same order: an EP group is ep consecutive ranks, its expert-data-parallel group the ranks
/// ep apart (Megatron-Core's expert "tp-ep-dp-pp" order with expert TP 1).

#include <cstdint>
#include <vector>

namespace strata {

struct RankLayout {
  std::int64_t tp = 1, pp = 1, dp = 1, gpus_per_node = 1, cp = 1;
  std::int64_t ep = 1;          ///< expert-parallel degree, divides dp (folded: tp·cp·dp)
  bool experts_folded = false;  ///< expert TP 1: EP groups over the stage's tp·cp·dp ranks
  /// The smallest group inside one node whose all-reduce the node's NVSwitch reduces (NVLink SHARP,
  /// switch_all_reduce_from in collectives.hpp); 0: every all-reduce runs as a ring.
  std::int64_t switch_reduce_from = 0;
  /// Replicas of the sharded states (HSDP): ZeRO shards over shard_size() consecutive replica indices.
  std::int64_t dp_replicate = 1;

  /// The rank's place among its stage's ranks: replica·tp + tp_index.
  std::int64_t local(std::int64_t rank) const { return rank % (replicas() * tp); }
  /// Ranks holding the same experts, over which their gradients are reduced.
  std::int64_t expert_dp_size() const {
    return experts_folded ? replicas() * tp / ep : replicas() / ep;
  }

  /// Ranks of a stage that hold the same weights for one TP index: dp·cp.
  std::int64_t replicas() const { return dp * cp; }
  /// Ranks over which ZeRO or the distributed optimizer shards: dp·cp / dp_replicate.
  std::int64_t shard_size() const { return replicas() / dp_replicate; }

  /// The rank of replica index `replica` (dp_index·cp + cp_index).
  std::int64_t rank(std::int64_t stage, std::int64_t replica, std::int64_t tp_index) const {
    return (stage * replicas() + replica) * tp + tp_index;
  }
  std::int64_t stage_of(std::int64_t rank) const { return rank / (replicas() * tp); }
  /// dp_index·cp + cp_index.
  std::int64_t replica(std::int64_t rank) const { return (rank / tp) % replicas(); }
  std::int64_t dp_index(std::int64_t rank) const { return replica(rank) / cp; }
  std::int64_t cp_index(std::int64_t rank) const { return replica(rank) % cp; }
  std::int64_t tp_index(std::int64_t rank) const { return rank % tp; }
  std::int64_t node(std::int64_t rank) const { return rank / gpus_per_node; }

  /// Members of the rank's tensor-parallel group, in ring order.
  std::vector<std::int64_t> tp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t t = 0; t < tp; ++t) g.push_back(rank(stage_of(r), replica(r), t));
    return g;
  }
  /// Members of the rank's context-parallel group, in ring order (the K/V ring).
  std::vector<std::int64_t> cp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t c = 0; c < cp; ++c) g.push_back(rank(stage_of(r), dp_index(r) * cp + c, tp_index(r)));
    return g;
  }
  /// Members of the rank's data-parallel group with its CP ranks (dp·cp), in ring order: the ranks
  /// holding the same weights, over which gradients are reduced and ZeRO shards.
  std::vector<std::int64_t> dp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t e = 0; e < replicas(); ++e) g.push_back(rank(stage_of(r), e, tp_index(r)));
    return g;
  }
  /// Members of the rank's shard group, in ring order: shard_size() consecutive replica indices (the
  /// inner dimension of torchtitan's (dp_replicate, dp_shard) mesh; with CP inside it), over which ZeRO
  /// shards and its gathers and reduce-scatters run. The whole DP×CP group when dp_replicate is 1.
  std::vector<std::int64_t> shard_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    const std::int64_t first = replica(r) / shard_size() * shard_size();
    for (std::int64_t e = first; e < first + shard_size(); ++e) g.push_back(rank(stage_of(r), e, tp_index(r)));
    return g;
  }
  /// Members of the rank's replicate group, in ring order: the rank's counterparts in the other shard
  /// groups, which hold the same shard and all-reduce its gradients.
  std::vector<std::int64_t> replicate_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t e = replica(r) % shard_size(); e < replicas(); e += shard_size())
      g.push_back(rank(stage_of(r), e, tp_index(r)));
    return g;
  }
  /// Members of the rank's expert-parallel group (the ranks its tokens' all-to-all spans): ep
  /// consecutive DP indices; folded, ep consecutive ranks of the stage.
  std::vector<std::int64_t> ep_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    if (experts_folded) {
      const std::int64_t base = r - local(r), first = local(r) / ep * ep;
      for (std::int64_t l = first; l < first + ep; ++l) g.push_back(base + l);
      return g;
    }
    const std::int64_t first = dp_index(r) / ep * ep;
    for (std::int64_t d = first; d < first + ep; ++d) g.push_back(rank(stage_of(r), d * cp + cp_index(r), tp_index(r)));
    return g;
  }
  /// Members of the rank's expert-data-parallel group: the (dp/ep)·cp ranks holding the same
  /// experts (CP ranks hold the same weights), over which their gradients are reduced; folded, the
  /// tp·cp·dp/ep ranks ep apart.
  std::vector<std::int64_t> expert_dp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    if (experts_folded) {
      const std::int64_t base = r - local(r);
      for (std::int64_t l = local(r) % ep; l < replicas() * tp; l += ep) g.push_back(base + l);
      return g;
    }
    for (std::int64_t d = dp_index(r) % ep; d < dp; d += ep)
      for (std::int64_t c = 0; c < cp; ++c) g.push_back(rank(stage_of(r), d * cp + c, tp_index(r)));
    return g;
  }
};

}  // namespace strata
