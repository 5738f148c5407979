#pragma once

/// Runs a validated scenario through the phases: graph, task DAG, executor, and the analyses of the
/// executed times (schedule metrics, checkpoint cost, run-level goodput, the verdict).

#include <string>
#include <vector>

#include "sim/analysis/results.hpp"
#include "sim/analysis/simulation_options.hpp"
#include "sim/config/scenario_spec.hpp"
#include "sim/core/diagnostics.hpp"

namespace strata {

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
