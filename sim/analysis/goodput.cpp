#include "sim/analysis/goodput.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "sim/core/diagnostics.hpp"

namespace strata {

namespace {

constexpr std::int64_t kMaxEvents = 100'000'000;
/// All runs of one run-level simulation together: about two seconds on this project's machines.
constexpr double kMaxRunLevelEvents = 2e8;

/// Mean and 95 % half-width (normal approximation, 1.96 standard errors).
Interval summarize(const std::vector<double>& v) {
  Interval out;
  if (v.empty()) return out;
  double sum = 0.0;
  for (double x : v) sum += x;
  out.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0.0;
    for (double x : v) ss += (x - out.mean) * (x - out.mean);
    out.ci95 = 1.96 * std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  }
  return out;
}

struct OneRun {
  double useful = 0.0, failures = 0.0, lost = 0.0, restart = 0.0, restore = 0.0, checkpoint = 0.0;
};

/// Draws times between job failures. The Weibull law keeps the job MTBF: scale = M / Γ(1 + 1/k).
class FailureClock {
 public:
  FailureClock(const FailureLaw& law, std::uint64_t seed) : rng_(seed), law_(law) {}
  /// A uniform draw in [0, 1) made from 53 random bits, so results depend on no library's
  /// distribution algorithms.
  double uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }
  double next() {
    const double e = -std::log1p(-uniform());  // Exp(1), by inverse transform
    if (law_.distribution == FailureDistribution::weibull) {
      const double k = law_.weibull_shape;
      return law_.mtbf_s / std::tgamma(1.0 + 1.0 / k) * std::pow(e, 1.0 / k);
    }
    return law_.mtbf_s * e;
  }

 private:
  std::mt19937_64 rng_;
  FailureLaw law_;
};

OneRun one_run(const RunCycle& c, const FailureLaw& law, double horizon, std::uint64_t seed) {
  std::vector<FailureMode> modes = c.modes;
  if (modes.empty()) modes = {{1.0, c.checkpoints, c.durable_s, c.restore_s}};
  if (!c.checkpoints)
    for (auto& m : modes) m.survives = false;
  const std::size_t kinds = modes.size();
  FailureClock clock(law, seed);
  OneRun r;
  double t = 0.0;
  double next_failure = clock.next();
  double done = 0.0;  // useful work since the start
  // Per failure kind: the useful work the newest checkpoint outliving it holds, and the one taken
  // but not yet durable for it.
  std::vector<double> durable(kinds, 0.0), pending_work(kinds, -1.0), pending_at(kinds, 0.0);
  double since_checkpoint = 0.0;
  auto settle = [&](double now) {
    for (std::size_t k = 0; k < kinds; ++k)
      if (pending_work[k] >= 0.0 && pending_at[k] <= now) {
        durable[k] = pending_work[k];
        pending_work[k] = -1.0;
      }
  };
  auto kind_of_failure = [&]() -> std::size_t {
    if (kinds == 1) return 0;
    double u = clock.uniform();
    for (std::size_t k = 0; k + 1 < kinds; ++k) {
      if (u < modes[k].share) return k;
      u -= modes[k].share;
    }
    return kinds - 1;
  };
  // A failure at `at`: the work since the newest checkpoint its kind leaves is lost; restart, then
  // reload. Newer checkpoints of other kinds hold discarded work: none is newer than the restart point.
  auto fail = [&](double at) {
    settle(at);
    const FailureMode& m = modes[kind_of_failure()];
    const std::size_t k = static_cast<std::size_t>(&m - modes.data());
    const double restart_point = m.survives ? durable[k] : 0.0;
    r.failures += 1.0;
    r.lost += done - restart_point;
    done = restart_point;
    since_checkpoint = 0.0;
    for (std::size_t j = 0; j < kinds; ++j) {
      durable[j] = std::min(durable[j], done);
      pending_work[j] = -1.0;
    }
    const double restore = m.survives && restart_point > 0.0 ? m.restore_s : 0.0;
    r.restart += std::clamp(horizon - at, 0.0, c.restart_s);
    r.restore += std::clamp(horizon - at - c.restart_s, 0.0, restore);
    t = at + c.restart_s + restore;
    next_failure = t + clock.next();
  };
  std::int64_t events = 0;
  while (t < horizon) {
    if (++events > kMaxEvents)
      throw InputError({Diagnostic{"failures", "/failures/horizon",
                                   "the run-level simulation exceeds 1e8 events in one run (lower failures.horizon or "
                                   "checkpoint less often)"}});
    // Work until the next checkpoint (or the horizon), unless a failure comes first.
    const double work_end = std::min(horizon, c.checkpoints ? t + (c.work_s - since_checkpoint) : horizon);
    if (next_failure < work_end) {
      done += next_failure - t;
      fail(next_failure);
      continue;
    }
    done += work_end - t;
    since_checkpoint += work_end - t;
    t = work_end;
    settle(t);
    if (t >= horizon) break;
    // Checkpoint: training stalls; the copy outlives each kind `durable_s` after it started.
    if (next_failure < std::min(t + c.stall_s, horizon)) {
      r.checkpoint += next_failure - t;
      fail(next_failure);
      continue;
    }
    for (std::size_t k = 0; k < kinds; ++k) {
      // The stall includes any wait for the previous persist (back-pressure), so that one is durable.
      if (pending_work[k] >= 0.0) durable[k] = pending_work[k];
      pending_work[k] = done;
      pending_at[k] = t + modes[k].durable_s;
    }
    r.checkpoint += std::min(c.stall_s, horizon - t);
    t += c.stall_s;
    since_checkpoint = 0.0;
    settle(t);
  }
  r.useful = done;
  return r;
}

}  // namespace

GoodputResult simulate_goodput(const RunCycle& cycle, const FailureLaw& law, double horizon_s, std::uint64_t seed,
                               std::int64_t runs) {
  // Each run visits every checkpoint and every failure of its horizon: refuse before spending minutes.
  const double events = goodput_events(cycle, law, horizon_s, runs);
  const double per_run = events / static_cast<double>(runs);
  if (events > kMaxRunLevelEvents)
    throw InputError({Diagnostic{"failures", runs > 64 ? "/failures/runs" : "/failures/horizon",
                                 fmt::format("the run-level simulation would take about {:.2g} events ({} runs x "
                                             "{:.2g} checkpoints and failures each), above the limit of {:.2g} (lower "
                                             "failures.runs or failures.horizon, or checkpoint less often)",
                                             events, runs, per_run, kMaxRunLevelEvents)}});
  std::vector<double> goodput, failures, lost, restart, restore, checkpoint;
  for (std::int64_t i = 0; i < runs; ++i) {
    const OneRun r = one_run(cycle, law, horizon_s, seed + static_cast<std::uint64_t>(i));
    goodput.push_back(r.useful / horizon_s);
    failures.push_back(r.failures);
    lost.push_back(r.lost);
    restart.push_back(r.restart);
    restore.push_back(r.restore);
    checkpoint.push_back(r.checkpoint);
  }
  GoodputResult out;
  out.goodput = summarize(goodput);
  out.failures = summarize(failures);
  out.lost_work_s = summarize(lost);
  out.restart_s = summarize(restart);
  out.restore_s = summarize(restore);
  out.checkpoint_s = summarize(checkpoint);
  out.runs = runs;
  return out;
}

double goodput_events(const RunCycle& cycle, const FailureLaw& law, double horizon_s, std::int64_t runs) {
  const double cycle_s = cycle.checkpoints ? cycle.work_s + cycle.stall_s : horizon_s;
  const double per_run = horizon_s / std::max(cycle_s, 1e-9) + horizon_s / std::max(law.mtbf_s, 1e-9) + 1.0;
  return per_run * static_cast<double>(runs);
}

double max_goodput_events() { return kMaxRunLevelEvents; }

double young_interval(double delta, double mtbf) { return std::sqrt(2.0 * delta * mtbf); }

double daly_interval(double delta, double mtbf) {
  if (delta >= 2.0 * mtbf) return mtbf;
  const double x = delta / (2.0 * mtbf);
  return std::sqrt(2.0 * delta * mtbf) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - delta;
}

double first_order_goodput(const RunCycle& c, double mtbf) {
  const double tau = c.work_s;
  // Past the first-order regime (failures more often than a restart, a reload and half an interval
  // take) the formula goes negative; the fraction it estimates cannot.
  return std::clamp((1.0 - (c.restart_s + c.restore_s + tau / 2.0) / mtbf) / (1.0 + c.stall_s / tau), 0.0, 1.0);
}

double first_order_goodput_with_lag(const RunCycle& c, double mtbf) {
  double lag = 0.0;
  for (const FailureMode& m : c.modes)
    if (m.survives) lag += m.share * std::max(0.0, m.durable_s - c.stall_s);
  if (c.modes.empty()) lag = std::max(0.0, c.durable_s - c.stall_s);
  const double tau = c.work_s;
  return std::clamp((1.0 - (c.restart_s + c.restore_s + tau / 2.0 + lag) / mtbf) / (1.0 + c.stall_s / tau), 0.0, 1.0);
}

}  // namespace strata
