#include "sim/analysis/run_level.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "sim/analysis/goodput.hpp"

namespace strata {

namespace {

/// Candidate intervals grow by this factor. Near the optimum τ*, goodput falls by about ε²·δ/τ* for
/// a relative interval error ε (second order of the first-order model), so 15 % steps (ε ≤ 7.5 %)
/// cost under 0.1 % of goodput while the checkpoint overhead δ/τ* stays under 18 %.
constexpr double kGridRatio = 1.15;
/// Candidates, best by the first-order model, that the run-level simulation evaluates.
constexpr int kSimulatedCandidates = 4;

}  // namespace

/// The run over `failures.horizon`: the job fails at the combined rate of its GPUs, nodes and
/// network; each failure costs the restart, the reload of the newest checkpoint its kind leaves, and
/// the work done since that checkpoint.
RunLevelResult simulate_run(const Scenario& sc, const RunResult& r) {
  const FailureSpec& f = sc.failures;
  const std::map<std::string, double> rates = {
      {"gpu", static_cast<double>(sc.gpus) / f.gpu_mtbf.value},
      {"node", f.node_mtbf.value > 0 ? static_cast<double>(sc.nodes) / f.node_mtbf.value : 0.0},
      {"network", f.network_mtbf.value > 0 ? static_cast<double>(sc.nodes) / f.network_mtbf.value : 0.0}};
  double rate = 0.0;
  for (const auto& [kind, x] : rates) rate += x;
  const FailureLaw law{1.0 / rate, f.distribution, f.weibull_shape};
  const double iteration = r.simulation->throughput.iteration_time;
  RunCycle cycle;
  cycle.restart_s = f.restart_time.value;
  cycle.checkpoints = r.checkpoint.has_value();
  // Redundant computation keeps every iteration's state: nothing older than the iteration is lost.
  const CheckpointBehaviour policy = behaviour(sc.checkpoint.strategy);
  const bool redundant = !policy.writes_checkpoints;
  if (r.checkpoint) {
    const CheckpointResult& k = *r.checkpoint;
    cycle.work_s = (redundant ? 1.0 : static_cast<double>(sc.checkpoint.interval_iterations)) * iteration;
    cycle.stall_s = k.stall_s;
    cycle.durable_s = std::max(k.persist_s, k.stall_s);
    cycle.restore_s = k.restore_s;
    double restore = 0.0;
    for (const auto& [kind, x] : rates) {
      if (x <= 0.0) continue;
      const Recovery& rec = k.recovery.at(kind);
      cycle.modes.push_back({x / rate, rec.survives, std::max(rec.durable_s, k.stall_s), rec.restore_s});
      restore += x / rate * (rec.survives ? rec.restore_s : 0.0);
    }
    cycle.restore_s = restore;
  }
  const auto seed = static_cast<std::uint64_t>(f.seed);
  const GoodputResult g = simulate_goodput(cycle, law, f.horizon.value, seed, f.runs);
  RunLevelResult out;
  out.job_mtbf_s = law.mtbf_s;
  out.runs = g.runs;
  out.goodput = g.goodput.mean;
  out.goodput_ci95 = g.goodput.ci95;
  out.failures = g.failures.mean;
  out.lost_work_s = g.lost_work_s.mean;
  out.restart_s = g.restart_s.mean;
  out.restore_s = g.restore_s.mean;
  out.checkpoint_s = g.checkpoint_s.mean;
  out.effective_tokens_per_s = g.goodput.mean * r.simulation->throughput.tokens_per_s;
  if (r.checkpoint) out.first_order_goodput = first_order_goodput(cycle, law.mtbf_s);
  if (r.checkpoint && !redundant) {
    // Young and Daly assume a checkpoint costs the stall δ whatever the interval, and that it is
    // durable when the stall ends: references, labelled with the δ they were given.
    out.young_daly_delta_s = cycle.stall_s;
    out.young_interval_s = young_interval(cycle.stall_s, law.mtbf_s);
    out.daly_interval_s = daly_interval(cycle.stall_s, law.mtbf_s);
    // The cycle with checkpoints every n iterations: the stall without back-pressure, plus the wait
    // for the previous persist (or peer copy) when the interval is shorter than it takes.
    const CheckpointResult& k = *r.checkpoint;
    const double busy = policy.peer_replicas > 0 ? k.replicate_s : k.persist_s;
    const double unpressured = k.stall_s - k.backpressure_s;
    auto cycle_every = [&](double n) {
      RunCycle c = cycle;
      c.work_s = n * iteration;
      const double wait = policy.blocks_until_durable ? 0.0 : std::max(0.0, busy - unpressured - c.work_s);
      c.stall_s = unpressured + wait;
      for (auto& m : c.modes) m.durable_s = std::max(m.durable_s, c.stall_s);
      return c;
    };
    auto iterations_of = [&](double interval_s) { return std::max(1.0, std::round(interval_s / iteration)); };
    auto goodput_every = [&](double n) {
      return simulate_goodput(cycle_every(n), law, f.horizon.value, seed, f.runs).goodput.mean;
    };
    out.goodput_at_young = goodput_every(iterations_of(out.young_interval_s));
    out.goodput_at_daly = goodput_every(iterations_of(out.daly_interval_s));

    // The best interval on the simulated cost itself. Candidates: whole iterations on a geometric
    // grid up to the horizon, and the user's, Young's, Daly's and the persist time's intervals. The
    // first-order model with the durability lag ranks them (cheap); the run-level simulation, with
    // the same seeds as the user's interval, decides among the best few, and the user's interval
    // stays the answer unless one of them beats it.
    const double user_n = static_cast<double>(sc.checkpoint.interval_iterations);
    const double last_n = std::max(1.0, std::floor(f.horizon.value / iteration));
    std::vector<double> candidates = {user_n, iterations_of(out.young_interval_s), iterations_of(out.daly_interval_s),
                                      std::min(last_n, std::max(1.0, std::ceil(busy / iteration)))};
    for (double n = 1.0; n <= last_n; n = std::max(n + 1.0, std::ceil(n * kGridRatio))) candidates.push_back(n);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::stable_sort(candidates.begin(), candidates.end(), [&](double a, double b) {
      return first_order_goodput_with_lag(cycle_every(a), law.mtbf_s) >
             first_order_goodput_with_lag(cycle_every(b), law.mtbf_s);
    });
    out.best_interval_iterations = user_n;
    out.goodput_at_best = out.goodput;
    std::map<double, IntervalGoodput> curve;
    for (double n : candidates)
      curve[n] = {n, n * iteration, first_order_goodput_with_lag(cycle_every(n), law.mtbf_s), std::nullopt};
    curve[user_n].simulated_goodput = out.goodput;
    curve[iterations_of(out.young_interval_s)].simulated_goodput = out.goodput_at_young;
    curve[iterations_of(out.daly_interval_s)].simulated_goodput = out.goodput_at_daly;
    int simulated = 0;
    for (double n : candidates) {
      if (simulated == kSimulatedCandidates) break;
      if (n == user_n) continue;
      // Intervals so short that simulating them would exceed the event budget are not contenders.
      if (goodput_events(cycle_every(n), law, f.horizon.value, f.runs) > max_goodput_events()) continue;
      ++simulated;
      const double g = goodput_every(n);
      curve[n].simulated_goodput = g;
      if (g > out.goodput_at_best) {
        out.goodput_at_best = g;
        out.best_interval_iterations = n;
      }
    }
    out.best_interval_s = out.best_interval_iterations * iteration;
    for (const auto& [n, point] : curve) out.interval_curve.push_back(point);
    out.backpressure_at_best_s = cycle_every(out.best_interval_iterations).stall_s - unpressured;
  }
  return out;
}

}  // namespace strata
