#pragma once

/// How a scenario is simulated: which executor, folded or not, what is kept for a trace, and the
/// guards on the simulation's size.

#include <string>

#include "sim/exec/executor.hpp"

namespace strata {

struct SimulationOptions {
  ExecutorKind executor = ExecutorKind::des;
  bool fold = true;           ///< one representative per group of identical ranks
  bool keep_schedule = false; ///< keep the DAG and task times in the result (for a trace)
  /// Iterations simulated after a checkpoint at most; the background hops' steady pace is
  /// extrapolated beyond them (up to 64 iterations, the next checkpoint, are covered either way).
  /// 0: the executor's own (window()).
  int checkpoint_window = 0;
  /// Sweeps: families with equal groups build equal task DAGs (they differ in nothing a DAG reads),
  /// so a worker shares them (analysis/dag_cache). "": not shared.
  std::string dag_group{};
  /// Guard: refuse a DAG estimated above this many tasks (about 550 bytes each while simulated:
  /// BENCHMARKS.md's 1T case peaks at 485 MiB for 915,840 tasks).
  double max_tasks = kDefaultMaxTasks;
  /// Guard: refuse a trace (keep_schedule) of more tasks than this (about 700 bytes each in the file:
  /// the 1T case's trace was 646 MB for 915,840 tasks).
  double max_trace_tasks = kDefaultMaxTraceTasks;

  /// The checkpoint window the executor simulates: `checkpoint_window` when set, else the DES's 4 or
  /// screening's 1. Screening is the thin approximation: it extrapolates the hops' steady pace from
  /// the second iteration behind the checkpoint, which on every shipped scenario and sweep point
  /// stays within 0.01 % of the DES's stall and persist time (tests/test_screening.cpp,
  /// BENCHMARKS.md) at under half the simulated iterations.
  int window() const {
    if (checkpoint_window > 0) return checkpoint_window;
    return executor == ExecutorKind::list ? kScreeningWindow : kDesWindow;
  }

  static constexpr int kDesWindow = 4;
  static constexpr int kScreeningWindow = 1;
  static constexpr double kDefaultMaxTasks = 1e7;
  static constexpr double kDefaultMaxTraceTasks = 5e5;
};

}  // namespace strata
