#pragma once

/// What a schedule means: the steady-state iteration time, where each simulated GPU's time went
/// (compute, recompute, exposed communication by kind, pipeline bubble), the critical path, and the
/// memory each rank held over time, from every task's allocations and frees.

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include <functional>
#include "sim/dag/task_dag.hpp"

namespace strata {

struct TimeBreakdown {
  double compute = 0.0;    ///< forward, backward and optimizer kernels
  double recompute = 0.0;  ///< activation recomputation
  std::map<TaskKind, double> exposed_comm;  ///< transfers (and host work) with the compute stream idle
  double bubble = 0.0;     ///< nothing running on the GPU
  double exposed_total() const;  ///< communication between GPUs
  double exposed_offload() const;  ///< offload copies and the host optimizer step
};

struct RankMemory {
  std::map<Tier, double> peak;                  ///< per tier
  std::array<double, kNumMemoryUses> at_peak{};  ///< HBM breakdown at the HBM peak
  double peak_time = 0.0;                       ///< when HBM peaked
  std::map<Tier, double> peak_times;            ///< when each tier peaked
};

/// The most a node held in one host tier at once over the executed schedule, merging its GPUs'
/// timelines (a folded GPU counts as the rank simulated for it).
struct NodeTierPeak {
  double bytes = 0.0;
  std::int64_t node = 0;
  double time = 0.0;
};

struct CriticalPath {
  std::map<TaskKind, double> seconds;   ///< time on the path by task kind, within the window
  std::map<std::string, double> links;  ///< transfer time on the path by bottleneck link class
};

struct ScheduleAnalysis {
  double window_start = 0.0, window_end = 0.0;  ///< the last iteration
  double iteration_time = 0.0;
  TimeBreakdown breakdown;  ///< mean over the simulated GPUs, weighted by the ranks they stand for
  double bubble_fraction = 0.0;
  double recompute_flops_per_gpu = 0.0;  ///< in the window, mean over GPUs (recompute and redundant work)
  CriticalPath critical_path;
  std::map<std::int64_t, RankMemory> memory;
  std::map<Tier, NodeTierPeak> node_tiers;  ///< per host tier, the node that peaked highest
};

/// Names the resource that bounds a transfer task (e.g. "nvlink_tx"), for the critical path.
using BottleneckNamer = std::function<std::string(TaskId)>;

/// The last iteration's window: from the end of the one before (or 0) to its end, where an iteration
/// ends with its last compute-stream task (with one iteration: its last task).
std::pair<double, double> last_iteration_window(const TaskDag& dag, const TaskTimes& times);

ScheduleAnalysis analyse_schedule(const TaskDag& dag, const TaskTimes& times, const BottleneckNamer& bottleneck,
                                  std::int64_t gpus, std::int64_t gpus_per_node);

/// analyse_schedule's node_tiers alone: per host tier, the node whose use peaked highest.
std::map<Tier, NodeTierPeak> node_tier_peaks(const TaskDag& dag, const TaskTimes& times, std::int64_t gpus,
                                             std::int64_t gpus_per_node);

}  // namespace strata
