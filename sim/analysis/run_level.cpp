#include "sim/analysis/run_level.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "sim/analysis/goodput.hpp"

namespace strata {

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
    out.young_interval_s = young_interval(cycle.stall_s, law.mtbf_s);
    out.daly_interval_s = daly_interval(cycle.stall_s, law.mtbf_s);
    // Goodput if checkpoints came at those intervals (whole iterations, at least one).
    auto at = [&](double interval_s) {
      RunCycle c = cycle;
      c.work_s = std::max(1.0, std::round(interval_s / iteration)) * iteration;
      // Back-pressure depends on the interval: recompute it for this one.
      const CheckpointResult& k = *r.checkpoint;
      const double busy = policy.peer_replicas > 0 ? k.replicate_s : k.persist_s;
      const double unpressured = k.stall_s - k.backpressure_s;
      const double wait = policy.blocks_until_durable ? 0.0 : std::max(0.0, busy - unpressured - c.work_s);
      c.stall_s = unpressured + wait;
      for (auto& m : c.modes) m.durable_s = std::max(m.durable_s, c.stall_s);
      return simulate_goodput(c, law, f.horizon.value, seed, f.runs).goodput.mean;
    };
    out.goodput_at_young = at(out.young_interval_s);
    out.goodput_at_daly = at(out.daly_interval_s);
  }
  return out;
}

}  // namespace strata
