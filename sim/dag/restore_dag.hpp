#pragma once

/// The restore after a failure as a task DAG: every simulated GPU reloading its checkpoint shard at
/// once, from where a kind of failure leaves a copy, hop by hop.

#include <cstdint>
#include <vector>

#include "sim/config/scenario_spec.hpp"
#include "sim/dag/rank_layout.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

/// Where a reload comes from.
enum class RestoreSource {
  last_tier,   ///< the last checkpoint tier (a node tier of the rank's node, or the object store)
  local_dram,  ///< in_memory: the node's own snapshot
  peer_dram,   ///< in_memory: a peer node's copy, over the NICs
  local_ssd,   ///< near_storage: the 16-bit weights from the SSDs (the states stay there)
  object_store_near,  ///< near_storage after losing the node: states to the new SSDs, weights up
  previous_stage,     ///< redundant_compute: the replica on the previous stage's GPU
};

/// The rank holding `rank`'s replica under redundant computation: the same lane one stage before.
std::int64_t previous_stage_rank(const RankLayout& ranks, std::int64_t rank);

/// The reload of every rank `shape` simulates (`per_rank`: checkpoint bytes per rank of each stage).
TaskDag build_restore_dag(const Scenario& scenario, const TaskDag& shape, const std::vector<double>& per_rank,
                          RestoreSource source);

}  // namespace strata
