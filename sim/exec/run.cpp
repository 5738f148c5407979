#include "sim/exec/run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include "sim/exec/executor.hpp"
#include "sim/exec/goodput.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/training_dag.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata {

std::string to_string(ExecutorKind k) { return k == ExecutorKind::des ? "des" : "list"; }

namespace {

/// "node3.nvlink_tx5" → "nvlink_tx": the kind of link, without its node and index.
std::string link_class(const std::string& name) {
  auto dot = name.find('.');
  std::string s = dot == std::string::npos ? name : name.substr(dot + 1);
  while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

/// The data reads of the first iteration (every rank at once: the start-up burst) and of the last.
DataResult data_reads(const Scenario& sc, const TaskDag& dag, const TaskTimes& times) {
  DataResult d;
  d.bytes_per_iteration = static_cast<double>(sc.training.global_batch_size) * sc.data.sample_bytes;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    if (t.kind != TaskKind::data_load) continue;
    if (t.iteration == 0) d.startup_read_s = std::max(d.startup_read_s, times.finish[id]);
    if (t.iteration == dag.iterations - 1) d.read_s = std::max(d.read_s, times.finish[id] - times.start[id]);
  }
  return d;
}

/// Names of the links each task's flows cross, for the trace.
LinkNamer link_namer(std::shared_ptr<const PlatformLayout> layout, std::shared_ptr<const TaskCosts> costs) {
  return [layout, costs](TaskId id) {
    std::vector<std::string> names;
    for (const RoutedFlow& f : costs->flows(id))
      for (LinkId l : f.links) names.push_back(layout->link(l).name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  };
}

Throughput throughput(const Scenario& sc, const RunResult& r, const ScheduleAnalysis& a) {
  Throughput t;
  const double T = a.iteration_time, gpus = static_cast<double>(sc.gpus);
  const double peak = sc.hardware.gpu.peak.at(sc.training.precision).value;
  t.iteration_time = T;
  t.samples_per_s = static_cast<double>(sc.training.global_batch_size) / T;
  t.tokens_per_s = t.samples_per_s * static_cast<double>(sc.training.seq_len);
  t.flops_per_gpu = r.flops_per_iteration / T / gpus;
  t.hw_flops_per_gpu = (r.flops_per_iteration / gpus + a.recompute_flops_per_gpu) / T;
  t.mfu = t.flops_per_gpu / peak;
  t.hfu = t.hw_flops_per_gpu / peak;
  t.bubble_fraction = a.bubble_fraction;
  return t;
}

}  // namespace

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

/// What one simulated checkpoint did to training, from the checkpoint's first task.
struct CheckpointRun {
  double snapshot_stall_s = 0.0;  ///< the iteration right after the checkpoint minus a plain one
  double stall_s = 0.0;           ///< all training time lost until the checkpoint is done
  double blocking_s = 0.0;        ///< until the blocking hops are done (a copy in the first tier)
  double replicated_s = 0.0;      ///< until the peer copies are in place (in_memory)
  double persist_s = 0.0;         ///< until the last task is done
  std::map<Tier, NodeTierPeak> staging;
  std::shared_ptr<const TaskDag> dag;  ///< the schedule, for a trace
  std::shared_ptr<const TaskTimes> times;
};

/// The rank holding `rank`'s replica under redundant computation: the same lane one stage before.
std::int64_t previous_stage_rank(const RankLayout& ranks, std::int64_t rank) {
  const std::int64_t stage = (ranks.stage_of(rank) + ranks.pp - 1) % ranks.pp;
  return ranks.rank(stage, ranks.dp_index(rank), ranks.tp_index(rank));
}

/// Where a reload comes from.
enum class RestoreSource {
  last_tier,   ///< the last checkpoint tier (a node tier of the rank's node, or the object store)
  local_dram,  ///< in_memory: the node's own snapshot
  peer_dram,   ///< in_memory: a peer node's copy, over the NICs
  local_ssd,   ///< near_storage: the 16-bit weights from the SSDs (the states stay there)
  object_store_near,  ///< near_storage after losing the node: states to the new SSDs, weights up
  previous_stage,     ///< redundant_compute: the replica on the previous stage's GPU
};

class CheckpointSimulator;
double simulate_restore(const Scenario& sc, const TaskDag& shape, const std::vector<double>& per_rank,
                        RestoreSource source, const CheckpointSimulator& sim);

/// Simulates checkpoints and restores against one training run. It keeps what it simulated, so
/// scenarios that differ only in their checkpoint interval reuse the windows and restores.
class CheckpointSimulator {
 public:
  /// `training` is the training run's DAG: the restores reload the ranks it simulates.
  CheckpointSimulator(const Scenario& sc, const ComputeGraph& graph, const RunResult& r, const TaskDag& training,
                      const SimulationOptions& options, const PlatformLayout& layout)
      : sc_(sc), graph_(graph), r_(r), training_(training), options_(options), layout_(layout) {}

  TaskTimes simulate(const TaskDag& dag) const {
    const TaskCosts costs(sc_.hardware, sc_.training.precision, layout_, dag);
    return options_.executor == ExecutorKind::des ? run_des(dag, costs, layout_) : run_list_schedule(dag, costs);
  }

  const RunResult& training() const { return r_; }

  /// The steady iteration time without a checkpoint.
  double baseline() const {
    if (dag_iterations(sc_, {options_.fold}) >= 2) return r_.simulation->throughput.iteration_time;
    if (!baseline_) {
      const TaskDag plain = build_training_dag(sc_, graph_, r_.partition, r_.memory, {options_.fold, -1, 2});
      const auto [s0, e0] = last_iteration_window(plain, simulate(plain));
      baseline_ = e0 - s0;
    }
    return *baseline_;
  }

  /// The iteration time of the same run without the checkpoint section (redundant computation's
  /// reference).
  double plain_iteration() const {
    if (!plain_iteration_) {
      Scenario plain = sc_;
      plain.checkpoint.enabled = false;
      const MemoryEstimate plain_memory = estimate_memory(plain, graph_, r_.partition);
      const TaskDag dag = build_training_dag(plain, graph_, r_.partition, plain_memory, {options_.fold, -1, 2});
      const auto [s0, e0] = last_iteration_window(dag, simulate(dag));
      plain_iteration_ = e0 - s0;
    }
    return *plain_iteration_;
  }

  /// One checkpoint after iteration c, with enough iterations after it that its background hops end
  /// inside the simulated window (up to the next checkpoint, `interval_iterations` later), so their
  /// interference with training counts in the stall. Without contention (the list executor) nothing
  /// the background hops do slows training, so one iteration after the checkpoint is exact.
  ///
  /// At most `options.checkpoint_window` iterations are simulated. When the background hops outlast
  /// them, one more iteration gives their steady state: how much each further iteration with the
  /// hops behind it slows training, and how much later it makes each hop end. That pace continues
  /// until the hops end or the next checkpoint is due (tests/test_checkpoint.cpp compares it with
  /// simulating every iteration).
  CheckpointRun run(double T, bool persist, std::int64_t interval_iterations) const {
    const int reach = static_cast<int>(std::min<std::int64_t>(interval_iterations, kMaxWindow));
    const bool contention_free = options_.executor == ExecutorKind::list;
    const int cap = std::max(1, std::min(reach, options_.checkpoint_window));
    int after = 1;
    for (int attempt = 0;; ++attempt) {
      const Window& w = window(after, persist);
      const bool covered = contention_free || w.done <= w.ends.back() || after >= reach;
      if (covered) return measure(w, after, T);
      if (after >= cap) return extrapolate(w, window(after + 1, persist), after, reach, T);
      if (attempt + 1 == kMaxAttempts) return measure(w, after, T);
      after = std::min(cap, after + static_cast<int>(std::ceil((w.done - w.ends.back()) / T)) + 1);
    }
  }

  /// Every simulated GPU reloading at once from `source` (`per_rank`: bytes per rank of each
  /// stage, the same for every member of a family); returns the makespan.
  double restore(RestoreSource source, const std::vector<double>& per_rank) const {
    auto it = restores_.find(source);
    if (it != restores_.end()) return it->second;
    return restores_[source] = simulate_restore(sc_, training_, per_rank, source, *this);
  }

 private:
  /// What a simulated run with a checkpoint after iteration `checkpoint_after` and `after`
  /// iterations behind it measured (times in simulated seconds). The interval only decides how long
  /// a window is needed, so scenarios that differ in their interval share the windows of equal
  /// length.
  struct Window {
    int checkpoint_after = 0;
    std::vector<double> ends;  ///< end of each iteration's GPU work
    double first = 0.0;        ///< the first checkpoint task starts
    double done = 0.0;         ///< the last one ends
    double blocking = 0.0;     ///< the blocking hops (on the compute stream) end
    double replicated = 0.0;   ///< the peer copies (DRAM to DRAM) end
    std::map<Tier, NodeTierPeak> staging;
    std::shared_ptr<const TaskDag> dag;  ///< kept only for a trace
    std::shared_ptr<const TaskTimes> times;
  };

  const Window& window(int after, bool persist) const {
    auto [it, added] = windows_.try_emplace({after, persist});
    if (!added) return it->second;
    Window& w = it->second;
    w.checkpoint_after = std::max(2, dag_iterations(sc_, {options_.fold})) - 2;
    DagOptions opt{options_.fold, w.checkpoint_after, w.checkpoint_after + 1 + after};
    opt.persist = persist;
    auto dag = std::make_shared<const TaskDag>(build_training_dag(sc_, graph_, r_.partition, r_.memory, opt));
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

  CheckpointRun measure(const Window& w, int after, double T) const {
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

  /// `w` has `after` iterations behind the checkpoint, `next` one more; the hops still run at the
  /// end of `w`. Each further iteration with the hops behind it slows training by what the last one
  /// did (`slowdown`) and delays a hop's end by what it did; the hops run until they catch up with
  /// training or the next checkpoint, `reach` iterations after this one, is due.
  CheckpointRun extrapolate(const Window& w, const Window& next, int after, int reach, double T) const {
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

  const Scenario& sc_;
  const ComputeGraph& graph_;
  const RunResult& r_;
  const TaskDag& training_;
  const SimulationOptions& options_;
  const PlatformLayout& layout_;
  mutable std::map<std::pair<int, bool>, Window> windows_;
  mutable std::map<RestoreSource, double> restores_;
  mutable std::optional<double> baseline_;
  mutable std::optional<double> plain_iteration_;
  /// Iterations a checkpoint's window covers at most: beyond them back-pressure is computed.
  static constexpr std::int64_t kMaxWindow = 64;
  /// Re-simulations with a longer window when the background hops outlast it (each re-simulation
  /// sizes the window from the last one's persist, so one is usually enough).
  static constexpr int kMaxAttempts = 3;
};

/// Every simulated GPU reloading at once from `source`; returns the makespan.
double simulate_restore(const Scenario& sc, const TaskDag& shape, const std::vector<double>& per_rank,
                        RestoreSource source, const CheckpointSimulator& sim) {
  TaskDag restore;
  restore.fold_group = shape.fold_group;
  restore.represents = shape.represents;
  const RankLayout ranks = rank_layout(sc);
  const StateBytes b = state_bytes(sc.training);
  const std::int64_t nodes = sc.nodes;
  for (const auto& [rank, count] : shape.represents) {
    restore.resident[rank] = {};
    const std::int64_t node = ranks.node(rank);
    const double bytes = per_rank[static_cast<std::size_t>(ranks.stage_of(rank))];
    // Near storage saves the states alone; the weights come back as 16-bit from the master copy.
    const double weights = bytes / b.optimizer * b.weights;
    std::vector<Flow> hops;
    switch (source) {
      case RestoreSource::last_tier:
        hops.push_back({tier_device(sc.checkpoint.tiers.back(), node), Device::gpu(rank), bytes});
        break;
      case RestoreSource::local_dram: hops.push_back({tier_device(Tier::dram, node), Device::gpu(rank), bytes}); break;
      case RestoreSource::peer_dram:
        hops.push_back({tier_device(Tier::dram, (node + 1) % nodes), tier_device(Tier::dram, node), bytes, true});
        hops.push_back({tier_device(Tier::dram, node), Device::gpu(rank), bytes});
        break;
      case RestoreSource::local_ssd:
        hops.push_back({tier_device(Tier::local_ssd, node), Device::gpu(rank), weights, false, true});
        break;
      case RestoreSource::object_store_near:
        hops.push_back({tier_device(Tier::object_store, 0), tier_device(Tier::local_ssd, node), bytes});
        hops.push_back({tier_device(Tier::local_ssd, node), Device::gpu(rank), weights, false, true});
        break;
      case RestoreSource::previous_stage: {
        const std::int64_t from = previous_stage_rank(ranks, rank);
        hops.push_back({Device::gpu(from), Device::gpu(rank), bytes, ranks.node(from) != node});
        break;
      }
    }
    std::vector<TaskId> prev;
    for (std::size_t h = 0; h < hops.size(); ++h) {
      Task t;
      t.kind = TaskKind::checkpoint;
      t.stream = h == 0 ? Stream::checkpoint : h == 1 ? Stream::checkpoint_2 : Stream::checkpoint_3;
      t.ranks = {rank};
      t.deps = prev;
      hops[h].rail = rank;
      t.flows.push_back(hops[h]);
      prev = {restore.add(std::move(t))};
    }
  }
  return sim.simulate(restore).makespan();
}

}  // namespace

/// Simulates a checkpoint after a training iteration and measures what it costs against the same
/// run without it; restore is every simulated GPU reading its shard back at once, from where each
/// failure kind leaves a copy.
CheckpointResult simulate_checkpoint(const Scenario& sc, const CheckpointSimulator& sim) {
  const RunResult& r = sim.training();
  CheckpointResult c;
  const CheckpointSpec& spec = sc.checkpoint;
  const CheckpointBehaviour policy = behaviour(spec.strategy);
  const auto per_rank = checkpoint_bytes_per_rank(sc, r.memory);
  for (std::size_t s = 0; s < per_rank.size(); ++s) {
    c.size_bytes += per_rank[s] * static_cast<double>(sc.parallelism.tp * sc.parallelism.dp);
    c.max_rank_bytes = std::max(c.max_rank_bytes, per_rank[s]);
  }
  if (!policy.writes_checkpoints) {
    // No checkpoint: the cost is the slower iteration (against the same run without the replicas);
    // a failed rank's state comes from the previous stage's GPU, unless one node held both.
    const double plain = sim.plain_iteration();
    const double T = r.simulation->throughput.iteration_time;
    c.redundant_overhead_s = T - plain;
    c.overhead_fraction = c.redundant_overhead_s / plain;
    const RankLayout ranks = rank_layout(sc);
    bool apart = true;  // every replica on another node than the rank it protects
    for (std::int64_t rank = 0; rank < sc.gpus; ++rank)
      apart = apart && ranks.node(previous_stage_rank(ranks, rank)) != ranks.node(rank);
    const Recovery replica{true, 0.0, sim.restore(RestoreSource::previous_stage, per_rank)};
    c.recovery["gpu"] = replica;
    c.recovery["network"] = replica;
    c.recovery["node"] = apart ? replica : Recovery{false, 0.0, 0.0};
    c.restore_s = replica.restore_s;
    return c;
  }
  const double T = sim.baseline();
  const double interval = static_cast<double>(spec.interval_iterations) * r.simulation->throughput.iteration_time;
  const bool in_memory = policy.peer_replicas > 0, near = policy.optimizer_on_ssd;
  const CheckpointRun one = sim.run(T, false, spec.interval_iterations);
  // The next snapshot is due one interval after this one's stall; it waits if this persist (which
  // frees the staging pool) has not finished by then.
  auto wait_for = [&](double busy_s, double stall_s, double period_s) {
    return policy.blocks_until_durable ? 0.0 : std::max(0.0, busy_s - stall_s - period_s);
  };
  c.snapshot_stall_s = one.snapshot_stall_s;
  c.interference_s = std::max(0.0, one.stall_s - one.snapshot_stall_s);
  c.persist_s = one.persist_s;
  c.staging = one.staging;
  c.dag = one.dag;
  c.times = one.times;
  c.backpressure_s = wait_for(in_memory ? one.replicated_s : one.persist_s, one.stall_s, interval);
  c.stall_s = one.stall_s + c.backpressure_s;
  if (in_memory) {
    c.replicate_s = one.replicated_s;
    if (spec.tiers.size() > 1) {
      // Every persist_every-th checkpoint also goes on to the later tiers: average the two kinds.
      const CheckpointRun persisting = sim.run(T, true, spec.interval_iterations);
      const double n = static_cast<double>(policy.persist_every);
      const double wait = wait_for(persisting.persist_s, persisting.stall_s, n * interval);
      c.persist_s = persisting.persist_s;
      c.stall_s = ((n - 1.0) * c.stall_s + persisting.stall_s + wait) / n;
      for (const auto& [tier, peak] : persisting.staging)
        if (!c.staging.count(tier) || c.staging.at(tier).bytes < peak.bytes) c.staging[tier] = peak;
    }
  }
  c.overhead_fraction = c.stall_s / interval;

  // Restore, per failure kind, from the nearest copy that kind leaves (gpu and network failures
  // leave every tier; a node failure loses that node's DRAM, CXL and SSD copies).
  auto restore = [&](RestoreSource source) { return sim.restore(source, per_rank); };
  const bool durable_remote = spec.tiers.back() == Tier::object_store;
  auto& local = c.recovery["gpu"];
  auto& node = c.recovery["node"];
  if (in_memory) {
    local = {true, one.blocking_s, restore(RestoreSource::local_dram)};
    node = {true, one.replicated_s, restore(RestoreSource::peer_dram)};
  } else if (near) {
    local = {true, 0.0, restore(RestoreSource::local_ssd)};
    if (durable_remote) node = {true, c.persist_s, restore(RestoreSource::object_store_near)};
    else node = {false, 0.0, 0.0};
  } else {
    local = {true, c.persist_s, restore(RestoreSource::last_tier)};
    if (durable_remote) node = local;
    else node = {false, 0.0, 0.0};
  }
  c.recovery["network"] = local;
  c.restore_s = local.restore_s;
  return c;
}

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

namespace {

ComputeGraph scenario_graph(const Scenario& sc) {
  GraphShape shape;
  shape.seq_len = sc.training.seq_len;
  shape.micro_batch = sc.training.micro_batch_size;
  // fp8 training keeps activations in 16-bit outside the GEMMs (Transformer Engine).
  shape.activation_bytes = std::max(2.0, bytes_per_element(sc.training.precision));
  shape.flash_attention = sc.training.flash_attention;
  return build_compute_graph(sc.model, shape);
}

/// The static phases: parameter and FLOP counts, the pipeline partition, the memory estimate.
RunResult static_result(const Scenario& sc, const ComputeGraph& graph) {
  RunResult r;
  r.parameters = total_parameters(graph);
  r.parameters_by_kind = parameter_breakdown(graph);
  r.flops_per_iteration = model_flops(graph) * static_cast<double>(sc.num_microbatches() * sc.parallelism.dp);
  r.partition = partition_layers(static_cast<int>(sc.model.num_layers), static_cast<int>(sc.parallelism.pp),
                                 static_cast<int>(sc.parallelism.virtual_stages));
  r.memory = estimate_memory(sc, graph, r.partition);
  return r;
}

}  // namespace

RunResult estimate_scenario(const Scenario& sc) { return static_result(sc, scenario_graph(sc)); }

void check_simulation_size(const Scenario& sc, const SimulationOptions& options, Diagnostics& diag) {
  const DagSizeEstimate size = estimate_dag_size(sc, options.fold);
  const std::string fix = size.driver.empty() ? "drop --no-fold" : fmt::format("lower {}", size.driver.substr(1));
  if (size.tasks > options.max_tasks)
    diag.add(size.driver, fmt::format("the simulation would hold about {:.2g} tasks ({}, about {:.1f} GiB), above "
                                      "the limit of {:.2g} ({}, or raise --max-tasks)",
                                      size.tasks, size.factors, size.tasks * 550.0 / (1 << 30), options.max_tasks, fix));
  else if (options.keep_schedule && size.tasks > options.max_trace_tasks)
    diag.add(size.driver, fmt::format("the trace would hold about {:.2g} tasks ({}, about {:.0f} MB), above the limit "
                                      "of {:.2g} ({}, or raise --max-trace-tasks)", size.tasks, size.factors,
                                      size.tasks * 700.0 / 1e6, options.max_trace_tasks, fix));
}

std::vector<RunResult> run_scenarios(const std::vector<Scenario>& family, const SimulationOptions& options) {
  if (family.empty()) return {};
  const Scenario& sc = family.front();
  {
    Diagnostics guard;
    check_simulation_size(sc, options, guard);
    guard.throw_if_any();
  }
  const ComputeGraph graph = scenario_graph(sc);
  RunResult r = static_result(sc, graph);

  auto dag = std::make_shared<TaskDag>(build_training_dag(sc, graph, r.partition, r.memory, {options.fold}));
  auto layout_ptr = std::make_shared<const PlatformLayout>(sc.hardware, sc.gpus);
  auto costs_ptr = std::make_shared<const TaskCosts>(sc.hardware, sc.training.precision, *layout_ptr, *dag);
  const PlatformLayout& layout = *layout_ptr;
  const TaskCosts& costs = *costs_ptr;
  spdlog::debug("task DAG: {} tasks on {} simulated GPUs", dag->tasks.size(), dag->represents.size());

  SimulationResult sim;
  sim.executor = to_string(options.executor);
  sim.folded = options.fold;
  sim.tasks = dag->tasks.size();
  sim.simulated_gpus = static_cast<std::int64_t>(dag->represents.size());
  sim.fold_group = dag->fold_group;
  auto bottleneck = [&](TaskId id) {
    double worst = -1.0;
    std::string cls;
    for (const RoutedFlow& f : costs.flows(id)) {
      double bw = std::numeric_limits<double>::infinity();
      LinkId narrow = 0;
      for (LinkId l : f.links)
        if (costs.bandwidth(l) < bw) bw = costs.bandwidth(narrow = l);
      if (!f.links.empty() && f.bytes / bw > worst) {
        worst = f.bytes / bw;
        cls = link_class(layout.link(narrow).name);
      }
    }
    return cls;
  };
  TaskTimes list = run_list_schedule(*dag, costs);
  const auto [list_start, list_end] = last_iteration_window(*dag, list);
  sim.contention_free_iteration_time = list_end - list_start;
  TaskTimes times = options.executor == ExecutorKind::des ? run_des(*dag, costs, layout) : std::move(list);
  sim.analysis = analyse_schedule(*dag, times, bottleneck, sc.gpus, sc.hardware.gpus_per_node);
  sim.contention_time = sim.analysis.iteration_time - sim.contention_free_iteration_time;
  sim.throughput = throughput(sc, r, sim.analysis);
  if (sc.data.enabled) {
    r.data = data_reads(sc, *dag, times);
    // The breakdown averages over every GPU; only the first stage's read, and the others see the
    // delay as bubble.
    const auto& exposed = sim.analysis.breakdown.exposed_comm;
    if (auto it = exposed.find(TaskKind::data_load); it != exposed.end())
      r.data->stall_s = it->second * static_cast<double>(sc.parallelism.pp);
  }
  if (options.keep_schedule) {
    sim.dag = dag;
    sim.times = std::make_shared<TaskTimes>(std::move(times));
    sim.link_names = link_namer(layout_ptr, costs_ptr);
  }
  r.simulation = std::move(sim);
  std::optional<CheckpointSimulator> checkpoints;
  if (sc.checkpoint.enabled) checkpoints.emplace(sc, graph, r, *dag, options, layout);
  std::vector<RunResult> out;
  out.reserve(family.size());
  for (const Scenario& point : family) {
    if (point.checkpoint.enabled != sc.checkpoint.enabled)
      throw std::logic_error("run_scenarios: a family's members differ in more than their interval and failures");
    RunResult p = r;
    if (point.checkpoint.enabled) {
      p.checkpoint = simulate_checkpoint(point, *checkpoints);
      if (p.checkpoint->dag) {
        // The trace shows the run with the checkpoint, so that its flows appear on their links.
        auto& kept = *p.simulation;
        kept.dag = p.checkpoint->dag;
        kept.times = p.checkpoint->times;
        kept.link_names = link_namer(layout_ptr, std::make_shared<const TaskCosts>(sc.hardware, sc.training.precision,
                                                                                   layout, *kept.dag));
      }
    }
    if (point.failures.enabled) p.run = simulate_run(point, p);
    out.push_back(std::move(p));
  }
  return out;
}

bool family_may_differ_in(const std::string& path) {
  return path == "checkpoint.interval_iterations" || path == "failures" || path.rfind("failures.", 0) == 0;
}

RunResult run_scenario(const Scenario& sc, const SimulationOptions& options) {
  return std::move(run_scenarios({sc}, options).front());
}

}  // namespace strata
