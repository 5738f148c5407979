#pragma once

/// The run-level simulation: a training run over a horizon with a seeded failure process. Between
/// failures it alternates useful work and checkpoints; a failure costs the restart, the reload of the
/// newest durable checkpoint and the work done since it. Also the Young (1974) and Daly (2006)
/// optimal checkpoint intervals.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/config/scenario_spec.hpp"

namespace strata {

/// One kind of failure: its share of all failures and what it leaves to restart from.
struct FailureMode {
  double share = 1.0;       ///< probability that a failure is of this kind
  bool survives = true;     ///< false: no checkpoint outlives it (restart from the beginning)
  double durable_s = 0.0;   ///< from a checkpoint's start until a copy outliving this kind exists
  double restore_s = 0.0;   ///< reloading that copy
};

struct RunCycle {
  double work_s = 0.0;        ///< useful training time between checkpoints (interval × iteration)
  double stall_s = 0.0;       ///< training time lost to each checkpoint
  double durable_s = 0.0;     ///< from a checkpoint's start until it survives a failure (≥ stall)
  double restart_s = 0.0;     ///< failure to training resumed, before reload
  double restore_s = 0.0;     ///< reloading the newest durable checkpoint
  bool checkpoints = true;    ///< false: nothing survives a failure
  /// Failure kinds; empty: one kind, described by durable_s, restore_s and checkpoints.
  std::vector<FailureMode> modes;
};

struct FailureLaw {
  double mtbf_s = 0.0;             ///< of the whole job: 1 / (Σ component failure rates)
  FailureDistribution distribution = FailureDistribution::exponential;  ///< of the time between job failures
  double weibull_shape = 1.0;
};

struct Interval {
  double mean = 0.0, ci95 = 0.0;  ///< mean over runs and the half-width of its 95 % interval
};

struct GoodputResult {
  Interval goodput;      ///< useful time / wall time
  Interval failures;     ///< per run
  Interval lost_work_s, restart_s, restore_s, checkpoint_s;  ///< per run, over the horizon
  std::int64_t runs = 0;
};

GoodputResult simulate_goodput(const RunCycle& cycle, const FailureLaw& law, double horizon_s, std::uint64_t seed,
                               std::int64_t runs);

/// Young: sqrt(2·δ·M).
double young_interval(double checkpoint_s, double mtbf_s);
/// Daly: sqrt(2δM)·[1 + (1/3)·sqrt(δ/(2M)) + (1/9)·(δ/(2M))] − δ for δ < 2M, else M.
double daly_interval(double checkpoint_s, double mtbf_s);
/// First-order goodput: (1 − (restart + restore + τ/2)/M) / (1 + δ/τ).
double first_order_goodput(const RunCycle& cycle, double mtbf_s);
/// The first-order goodput with the durability lag: a failure in the `lag` after a checkpoint's
/// stall, before the copy its kind needs is durable, loses one more interval τ; per failure that
/// costs lag/τ · τ = lag more (lag averaged over the failure kinds that leave a copy).
double first_order_goodput_with_lag(const RunCycle& cycle, double mtbf_s);
/// Run-level events (checkpoints and failures over every run) a goodput simulation would take.
double goodput_events(const RunCycle& cycle, const FailureLaw& law, double horizon_s, std::int64_t runs);
/// The most events a goodput simulation may take (about two seconds).
double max_goodput_events();

}  // namespace strata
