#pragma once

/// Runs a validated scenario through the phases: graph (build, task DAG), exec (simulate), report data.

#include "sim/config/scenario_spec.hpp"
#include "sim/report/report.hpp"

namespace strata {

enum class ExecutorKind { des, list };
std::string to_string(ExecutorKind k);

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

/// Adds an error to `diag` when the scenario's DAG (or its trace) would exceed the limits of
/// `options`, naming the input that drives its size and the option that raises the limit.
void check_simulation_size(const Scenario& scenario, const SimulationOptions& options, Diagnostics& diag);

/// The static phases only (graph, partition, memory estimate): no simulation. For screening.
RunResult estimate_scenario(const Scenario& scenario);

/// Throws std::logic_error only on an internal invariant violation; user errors were caught by
/// validation.
RunResult run_scenario(const Scenario& scenario, const SimulationOptions& options = {});

/// run_scenario for each of a family of scenarios that differ at most in `failures` (read only by
/// the run-level model) and `checkpoint.interval_iterations` (which decides only how long a
/// checkpoint's simulated window must be and what it costs per interval). They share one training
/// run, one restore per source and every checkpoint window of equal length, so a sweep over those
/// inputs costs little more than one run. Results are those of run_scenario, in order.
std::vector<RunResult> run_scenarios(const std::vector<Scenario>& family, const SimulationOptions& options = {});

/// Whether members of a family may differ at the dotted scenario path ("failures.gpu_mtbf": yes).
bool family_may_differ_in(const std::string& path);

}  // namespace strata
