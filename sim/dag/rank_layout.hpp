#pragma once

/// Where each (pipeline stage, data-parallel replica, tensor-parallel peer) lives: Megatron-LM's rank
/// order, tensor-parallel fastest, then data-parallel, then pipeline, so a TP group shares a node.

#include <cstdint>
#include <vector>

namespace strata {

struct RankLayout {
  std::int64_t tp = 1, pp = 1, dp = 1, gpus_per_node = 1;

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
};

}  // namespace strata
