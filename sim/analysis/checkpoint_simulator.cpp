#include "sim/analysis/checkpoint_simulator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/analysis/dag_cache.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"

namespace strata {

namespace {

/// End of each iteration's GPU work (compute stream), in simulated seconds.
std::vector<double> iteration_ends(const TaskDag& dag, const TaskTimes& times) {
  std::vector<double> end(static_cast<std::size_t>(std::max(1, static_cast<int>(dag.iterations))), 0.0);
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    if (dag.tasks[id].stream == Stream::compute) {
      auto& e = end[static_cast<std::size_t>(dag.tasks[id].iteration)];
      e = std::max(e, times.finish[id]);
    }
  return end;
}

}  // namespace

TaskTimes CheckpointSimulator::simulate(const TaskDag& dag) const {
  const TaskCosts costs(sc_.hardware, sc_.training.precision, layout_, dag);
  return execute(options_.executor, dag, costs, layout_);
}

double CheckpointSimulator::baseline() const {
  if (dag_iterations(sc_, {options_.fold}) >= 2) return r_.simulation->throughput.iteration_time;
  if (!baseline_) {
    const DagOptions two{options_.fold, -1, 2};
    const auto plain = shared_dag(options_, "baseline", two,
                                  [&] { return build_training_dag(sc_, graph_, r_.partition, r_.memory, two); });
    const auto [s0, e0] = last_iteration_window(*plain, simulate(*plain));
    baseline_ = e0 - s0;
  }
  return *baseline_;
}

double CheckpointSimulator::plain_iteration() const {
  if (!plain_iteration_) {
    Scenario plain = sc_;
    plain.checkpoint.enabled = false;
    const MemoryEstimate plain_memory = estimate_memory(plain, graph_, r_.partition);
    const DagOptions two{options_.fold, -1, 2};
    const auto dag = shared_dag(options_, "without checkpoint", two,
                                [&] { return build_training_dag(plain, graph_, r_.partition, plain_memory, two); });
    const auto [s0, e0] = last_iteration_window(*dag, simulate(*dag));
    plain_iteration_ = e0 - s0;
  }
  return *plain_iteration_;
}

CheckpointRun CheckpointSimulator::run(double T, bool persist, std::int64_t interval_iterations) const {
  const int reach = static_cast<int>(std::min<std::int64_t>(interval_iterations, kMaxWindow));
  const int cap = std::max(1, std::min(reach, options_.window()));
  int after = 1;
  for (int attempt = 0;; ++attempt) {
    const Window& w = window(after, persist);
    const bool covered = w.done <= w.ends.back() || after >= reach;
    if (covered) return measure(w, after, T);
    if (after >= cap) return extrapolate(w, window(after + 1, persist), after, reach, T);
    if (attempt + 1 == kMaxAttempts) return measure(w, after, T);
    after = std::min(cap, after + static_cast<int>(std::ceil((w.done - w.ends.back()) / T)) + 1);
  }
}

double CheckpointSimulator::restore(RestoreSource source, const std::vector<double>& per_rank) const {
  auto it = restores_.find(source);
  if (it != restores_.end()) return it->second;
  return restores_[source] = simulate(build_restore_dag(sc_, training_, per_rank, source)).makespan();
}

const CheckpointSimulator::Window& CheckpointSimulator::window(int after, bool persist) const {
  auto [it, added] = windows_.try_emplace({after, persist});
  if (!added) return it->second;
  Window& w = it->second;
  w.checkpoint_after = std::max(2, dag_iterations(sc_, {options_.fold})) - 2;
  DagOptions opt{options_.fold, w.checkpoint_after, w.checkpoint_after + 1 + after};
  opt.persist = persist;
  auto dag = shared_dag(options_, "window", opt,
                        [&] { return build_training_dag(sc_, graph_, r_.partition, r_.memory, opt); });
  auto times = std::make_shared<const TaskTimes>(simulate(*dag));
  w.ends = iteration_ends(*dag, *times);
  w.first = std::numeric_limits<double>::infinity();
  for (TaskId id = 0; id < dag->tasks.size(); ++id) {
    const Task& t = dag->tasks[id];
    if (t.kind != TaskKind::checkpoint) continue;
    w.first = std::min(w.first, times->start[id]);
    w.done = std::max(w.done, times->finish[id]);
    if (t.stream == Stream::compute) w.blocking = std::max(w.blocking, times->finish[id]);
    // DRAM to DRAM is a copy to a peer node (tiers appear once each, so no hop moves DRAM to DRAM).
    if (t.stream == Stream::checkpoint && !t.flows.empty() && t.flows.front().src.kind == DeviceKind::dram &&
        t.flows.front().dst.kind == DeviceKind::dram)
      w.replicated = std::max(w.replicated, times->finish[id]);
  }
  // Nothing to move (near storage without later tiers): the checkpoint is done when taken.
  if (!std::isfinite(w.first)) w.first = w.ends[static_cast<std::size_t>(w.checkpoint_after)];
  w.staging = node_tier_peaks(*dag, *times, sc_.gpus, sc_.hardware.gpus_per_node);
  if (options_.keep_schedule) {
    w.dag = std::move(dag);
    w.times = std::move(times);
  }
  return w;
}

CheckpointRun CheckpointSimulator::measure(const Window& w, int after, double T) const {
  const double origin = w.ends[static_cast<std::size_t>(w.checkpoint_after)];
  CheckpointRun out;
  out.snapshot_stall_s = std::max(0.0, w.ends[static_cast<std::size_t>(w.checkpoint_after) + 1] - origin - T);
  out.stall_s = std::max(0.0, w.ends.back() - origin - static_cast<double>(after) * T);
  out.blocking_s = std::max(0.0, w.blocking - w.first);
  out.replicated_s = std::max(0.0, w.replicated - w.first);
  out.persist_s = std::max(0.0, w.done - w.first);
  out.staging = w.staging;
  out.dag = w.dag;
  out.times = w.times;
  return out;
}

CheckpointRun CheckpointSimulator::extrapolate(const Window& w, const Window& next, int after, int reach, double T) const {
  CheckpointRun out = measure(w, after, T);
  const CheckpointRun more = measure(next, after + 1, T);
  const double end = w.ends.back();
  const double slowdown = more.stall_s - out.stall_s;
  const double iteration = T + slowdown;
  // Iterations after the window until a hop ending at `at` (and `delay` later per iteration)
  // catches up with training, at most until the next checkpoint.
  auto overlap = [&](double at, double delay) {
    if (at <= end) return 0.0;
    const double limit = static_cast<double>(reach - after);
    return iteration > delay ? std::min((at - end) / (iteration - delay), limit) : limit;
  };
  const double k_done = overlap(w.done, next.done - w.done);
  out.persist_s = std::max(0.0, w.done + k_done * (next.done - w.done) - w.first);
  const double k_replicated = overlap(w.replicated, next.replicated - w.replicated);
  out.replicated_s = std::max(0.0, w.replicated + k_replicated * (next.replicated - w.replicated) - w.first);
  out.stall_s = std::max(0.0, out.stall_s + k_done * slowdown);
  return out;
}

}  // namespace strata
