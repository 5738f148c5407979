#pragma once

/// The run over the failure horizon: the steady iteration and checkpoint cycle, failures of each
/// kind, restarts and reloads, giving goodput, and the Young / Daly intervals as references.

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

RunLevelResult simulate_run(const Scenario& scenario, const RunResult& result);

}  // namespace strata
