#pragma once

/// Runs a validated scenario through the phases: graph (build), memory model, report data.

#include "sim/config/scenario_spec.hpp"
#include "sim/report/report.hpp"

namespace strata {

/// Builds the computation graph and applies the policies. Throws std::logic_error only on an
/// internal invariant violation; user errors were caught by validation.
RunResult run_scenario(const Scenario& scenario);

}  // namespace strata
