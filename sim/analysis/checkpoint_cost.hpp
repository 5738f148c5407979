#pragma once

/// What a checkpoint costs, from its simulated windows: the stall per checkpoint (snapshot,
/// interference, back-pressure), the time until durable, and per failure kind the copy that
/// survives it and its restore.

#include "sim/analysis/checkpoint_simulator.hpp"
#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

CheckpointResult simulate_checkpoint(const Scenario& scenario, const CheckpointSimulator& simulator);

}  // namespace strata
