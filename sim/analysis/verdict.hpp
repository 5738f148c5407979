#pragma once

/// The verdict: does the run fit? Decided once, from the static memory estimate, the executed
/// memory timelines and the checkpoint's staging peaks.

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

Verdict decide_verdict(const Scenario& scenario, const RunResult& result);

}  // namespace strata
