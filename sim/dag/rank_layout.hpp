#pragma once

/// Where each (pipeline stage, data-parallel replica, tensor-parallel peer) lives: Megatron-LM's rank
/// order, tensor-parallel fastest, then data-parallel, then pipeline, so a TP group shares a node.
/// Expert parallelism adds no rank: it is carved out of data parallelism (Megatron-Core's
/// tp-cp-ep-dp-pp order), an EP group being ep consecutive DP indices of one (stage, TP index).

#include <cstdint>
#include <vector>

namespace strata {

struct RankLayout {
  std::int64_t tp = 1, pp = 1, dp = 1, gpus_per_node = 1;
  std::int64_t ep = 1;  ///< expert-parallel degree, divides dp

  std::int64_t rank(std::int64_t stage, std::int64_t dp_index, std::int64_t tp_index) const {
    return (stage * dp + dp_index) * tp + tp_index;
  }
  std::int64_t stage_of(std::int64_t rank) const { return rank / (dp * tp); }
  std::int64_t dp_index(std::int64_t rank) const { return (rank / tp) % dp; }
  std::int64_t tp_index(std::int64_t rank) const { return rank % tp; }
  std::int64_t node(std::int64_t rank) const { return rank / gpus_per_node; }

  /// Members of the rank's tensor-parallel group, in ring order.
  std::vector<std::int64_t> tp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t t = 0; t < tp; ++t) g.push_back(rank(stage_of(r), dp_index(r), t));
    return g;
  }
  /// Members of the rank's data-parallel group, in ring order.
  std::vector<std::int64_t> dp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t d = 0; d < dp; ++d) g.push_back(rank(stage_of(r), d, tp_index(r)));
    return g;
  }
  /// Members of the rank's expert-parallel group (the ranks its tokens' all-to-all spans): ep
  /// consecutive DP indices.
  std::vector<std::int64_t> ep_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    const std::int64_t first = dp_index(r) / ep * ep;
    for (std::int64_t d = first; d < first + ep; ++d) g.push_back(rank(stage_of(r), d, tp_index(r)));
    return g;
  }
  /// Members of the rank's expert-data-parallel group: the dp/ep ranks holding the same experts,
  /// over which their gradients are reduced.
  std::vector<std::int64_t> expert_dp_group(std::int64_t r) const {
    std::vector<std::int64_t> g;
    for (std::int64_t d = dp_index(r) % ep; d < dp; d += ep) g.push_back(rank(stage_of(r), d, tp_index(r)));
    return g;
  }
};

}  // namespace strata
