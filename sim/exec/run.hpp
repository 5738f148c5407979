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
};

/// The static phases only (graph, partition, memory estimate): no simulation. For screening.
RunResult estimate_scenario(const Scenario& scenario);

/// Throws std::logic_error only on an internal invariant violation; user errors were caught by
/// validation.
RunResult run_scenario(const Scenario& scenario, const SimulationOptions& options = {});

}  // namespace strata
