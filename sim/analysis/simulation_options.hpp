#pragma once

/// How a scenario is simulated: which executor, folded or not, what is kept for a trace, and the
/// guards on the simulation's size.

#include "sim/exec/executor.hpp"

namespace strata {

struct SimulationOptions {
  ExecutorKind executor = ExecutorKind::des;
  bool fold = true;           ///< one representative per group of identical ranks
  bool keep_schedule = false; ///< keep the DAG and task times in the result (for a trace)
  /// Iterations simulated after a checkpoint at most; the background hops' steady pace is
  /// extrapolated beyond them (up to 64 iterations, the next checkpoint, are covered either way).
  int checkpoint_window = 4;
  /// Guard: refuse a DAG estimated above this many tasks (about 550 bytes each while simulated:
  /// BENCHMARKS.md's 1T case peaks at 485 MiB for 915,840 tasks).
  double max_tasks = kDefaultMaxTasks;
  /// Guard: refuse a trace (keep_schedule) of more tasks than this (about 700 bytes each in the file:
  /// the 1T case's trace was 646 MB for 915,840 tasks).
  double max_trace_tasks = kDefaultMaxTraceTasks;

  static constexpr double kDefaultMaxTasks = 1e7;
  static constexpr double kDefaultMaxTraceTasks = 5e5;
};

}  // namespace strata
