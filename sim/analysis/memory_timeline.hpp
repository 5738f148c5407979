#pragma once

/// Memory over time, from every task's allocations and frees in an executed schedule: per simulated
/// GPU and tier (its HBM, its share of host tiers), and per node for the host tiers. The peaks the
/// report quotes (schedule_metrics) come from the same events; these are the curves behind them, for
/// the --html report's plots.

#include <cstdint>
#include <map>
#include <vector>

#include "sim/config/tier.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

/// A step function: `bytes[i]` held from `time_s[i]` until the next time (seconds of simulated time).
struct MemorySeries {
  std::vector<double> time_s;
  std::vector<double> bytes;
};

/// Per simulated rank, per tier it uses: what it holds over time (what was resident before the first
/// task at time 0). At one instant frees apply before allocations, as in schedule_metrics.
std::map<std::int64_t, std::map<Tier, MemorySeries>> rank_memory_timelines(const TaskDag& dag,
                                                                          const TaskTimes& times);

/// One node's host tiers (not HBM) over time: the sum of its GPUs' shares, a folded GPU counting as
/// the rank simulated for it (as node_tier_peaks merges them).
std::map<Tier, MemorySeries> node_memory_timelines(const TaskDag& dag, const TaskTimes& times, std::int64_t gpus,
                                                   std::int64_t gpus_per_node, std::int64_t node);

}  // namespace strata
