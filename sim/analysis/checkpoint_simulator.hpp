#pragma once

/// Checkpoint windows: a training run with one checkpoint in it, executed, and what the checkpoint
/// did to training measured from the executed times (snapshot stall, interference, persist, peer
/// copies, staging peaks); windows too short for the background hops are extrapolated at their
/// steady pace. Also the restores, executed the same way.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/analysis/results.hpp"
#include "sim/analysis/simulation_options.hpp"
#include "sim/config/scenario_spec.hpp"
#include "sim/dag/restore_dag.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata {

/// What one simulated checkpoint did to training, from the checkpoint's first task.
struct CheckpointRun {
  double snapshot_stall_s = 0.0;  ///< the iteration right after the checkpoint minus a plain one
  double stall_s = 0.0;           ///< all training time lost until the checkpoint is done
  double blocking_s = 0.0;        ///< until the blocking hops are done (a copy in the first tier)
  double replicated_s = 0.0;      ///< until the peer copies are in place (in_memory)
  double persist_s = 0.0;         ///< until the last task is done
  std::map<Tier, NodeTierPeak> staging;
  std::shared_ptr<const TaskDag> dag;  ///< the schedule, for a trace
  std::shared_ptr<const TaskTimes> times;
};

/// Simulates checkpoints and restores against one training run. It keeps what it simulated, so
/// scenarios that differ only in their checkpoint interval reuse the windows and restores.
class CheckpointSimulator {
 public:
  /// `training` is the training run's DAG: the restores reload the ranks it simulates.
  CheckpointSimulator(const Scenario& sc, const ComputeGraph& graph, const RunResult& r, const TaskDag& training,
                      const SimulationOptions& options, const PlatformLayout& layout)
      : sc_(sc), graph_(graph), r_(r), training_(training), options_(options), layout_(layout) {}

  TaskTimes simulate(const TaskDag& dag) const;

  const RunResult& training() const { return r_; }

  /// The steady iteration time without a checkpoint.
  double baseline() const;

  /// The iteration time of the same run without the checkpoint section (redundant computation's
  /// reference).
  double plain_iteration() const;

  /// One checkpoint after iteration c, with enough iterations after it that its background hops end
  /// inside the simulated window (up to the next checkpoint, `interval_iterations` later), so their
  /// interference with training counts in the stall (both executors share bandwidth, so both need
  /// the window).
  ///
  /// At most `options.window()` iterations are simulated. When the background hops outlast
  /// them, one more iteration gives their steady state: how much each further iteration with the
  /// hops behind it slows training, and how much later it makes each hop end. That pace continues
  /// until the hops end or the next checkpoint is due (tests/test_checkpoint.cpp compares it with
  /// simulating every iteration).
  CheckpointRun run(double T, bool persist, std::int64_t interval_iterations) const;

  /// Every simulated GPU reloading at once from `source` (`per_rank`: bytes per rank of each
  /// stage, the same for every member of a family); returns the makespan.
  double restore(RestoreSource source, const std::vector<double>& per_rank) const;

 private:
  /// What a simulated run with a checkpoint after iteration `checkpoint_after` and `after`
  /// iterations behind it measured (times in simulated seconds). The interval only decides how long
  /// a window is needed, so scenarios that differ in their interval share the windows of equal
  /// length.
  struct Window {
    int checkpoint_after = 0;
    std::vector<double> ends;  ///< end of each iteration's GPU work
    double first = 0.0;        ///< the first checkpoint task starts
    double done = 0.0;         ///< the last one ends
    double blocking = 0.0;     ///< the blocking hops (on the compute stream) end
    double replicated = 0.0;   ///< the peer copies (DRAM to DRAM) end
    std::map<Tier, NodeTierPeak> staging;
    std::shared_ptr<const TaskDag> dag;  ///< kept only for a trace
    std::shared_ptr<const TaskTimes> times;
  };

  const Window& window(int after, bool persist) const;

  CheckpointRun measure(const Window& w, int after, double T) const;

  /// `w` has `after` iterations behind the checkpoint, `next` one more; the hops still run at the
  /// end of `w`. Each further iteration with the hops behind it slows training by what the last one
  /// did (`slowdown`) and delays a hop's end by what it did; the hops run until they catch up with
  /// training or the next checkpoint, `reach` iterations after this one, is due.
  CheckpointRun extrapolate(const Window& w, const Window& next, int after, int reach, double T) const;

  const Scenario& sc_;
  const ComputeGraph& graph_;
  const RunResult& r_;
  const TaskDag& training_;
  const SimulationOptions& options_;
  const PlatformLayout& layout_;
  mutable std::map<std::pair<int, bool>, Window> windows_;
  mutable std::map<RestoreSource, double> restores_;
  mutable std::optional<double> baseline_;
  mutable std::optional<double> plain_iteration_;
  /// Iterations a checkpoint's window covers at most: beyond them back-pressure is computed.
  static constexpr std::int64_t kMaxWindow = 64;
  /// Re-simulations with a longer window when the background hops outlast it (each re-simulation
  /// sizes the window from the last one's persist, so one is usually enough).
  static constexpr int kMaxAttempts = 3;
};

}  // namespace strata
