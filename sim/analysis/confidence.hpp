#pragma once

/// How sure a run's answer is: whether the GPU's compute comes from measured kernel tables, whether
/// the GPU, framework and model size fall inside what docs/validation.md reproduces, and any number
/// beyond what a published run ever reached. Each doubt is one line of `warnings`.

#include <string>
#include <vector>

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

Confidence assess_confidence(const Scenario& sc, const RunResult& r);

}  // namespace strata
