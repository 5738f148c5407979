#include "sim/exec/run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <limits>

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

/// Simulates one checkpoint after a training iteration and measures what it costs against the same
/// run without it; restore is every simulated GPU reading its shard back at once.
CheckpointResult simulate_checkpoint(const Scenario& sc, const ComputeGraph& graph, const RunResult& r,
                                     const SimulationOptions& options, const PlatformLayout& layout) {
  CheckpointResult c;
  c.strategy = sc.checkpoint.strategy;
  const auto per_rank = checkpoint_bytes_per_rank(sc, r.memory);
  for (std::size_t s = 0; s < per_rank.size(); ++s) {
    c.size_bytes += per_rank[s] * static_cast<double>(sc.parallelism.tp * sc.parallelism.dp);
    c.max_rank_bytes = std::max(c.max_rank_bytes, per_rank[s]);
  }
  auto simulate = [&](const TaskDag& dag, const TaskCosts& costs) {
    return options.executor == ExecutorKind::des ? run_des(dag, costs, layout) : run_list_schedule(dag, costs);
  };
  // The checkpoint goes after the second-to-last iteration, so the last one carries its stall; the
  // baseline is the same steady-state iteration without it.
  const int iterations = std::max(2, dag_iterations(sc, {options.fold}));
  double baseline = r.simulation->throughput.iteration_time;
  if (dag_iterations(sc, {options.fold}) < 2) {
    const TaskDag plain = build_training_dag(sc, graph, r.partition, r.memory, {options.fold, -1, 2});
    const auto [s0, e0] = last_iteration_window(plain, simulate(plain, TaskCosts(sc.hardware, sc.training.precision,
                                                                                 layout, plain)));
    baseline = e0 - s0;
  }
  const TaskDag dag = build_training_dag(sc, graph, r.partition, r.memory, {options.fold, iterations - 2, iterations});
  const TaskCosts costs(sc.hardware, sc.training.precision, layout, dag);
  const TaskTimes times = simulate(dag, costs);
  const auto [start, end] = last_iteration_window(dag, times);
  c.snapshot_stall_s = std::max(0.0, (end - start) - baseline);
  double first = std::numeric_limits<double>::infinity(), durable = 0.0;
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    if (dag.tasks[id].kind == TaskKind::checkpoint) {
      first = std::min(first, times.start[id]);
      durable = std::max(durable, times.finish[id]);
    }
  c.persist_s = durable - first;
  // The next snapshot is due one interval after this one's stall; it waits if this persist (which
  // frees the staging pool) has not finished by then.
  const double interval = static_cast<double>(sc.checkpoint.interval_iterations) * r.simulation->throughput.iteration_time;
  c.backpressure_s =
      sc.checkpoint.strategy == "sync" ? 0.0 : std::max(0.0, c.persist_s - c.snapshot_stall_s - interval);
  c.stall_s = c.snapshot_stall_s + c.backpressure_s;
  c.overhead_fraction = c.stall_s / interval;
  c.staging = analyse_schedule(dag, times, [](TaskId) { return std::string(); }, sc.gpus, sc.hardware.gpus_per_node)
                  .node_tiers;

  // Restore: every simulated GPU reads its shard from the durable tier at once.
  TaskDag restore;
  restore.fold_group = dag.fold_group;
  restore.represents = dag.represents;
  const RankLayout ranks = rank_layout(sc);
  const Tier durable_tier = sc.checkpoint.tiers.back();
  for (const auto& [rank, count] : dag.represents) {
    restore.resident[rank] = {};
    Task t;
    t.kind = TaskKind::checkpoint;
    t.stream = Stream::checkpoint;
    t.ranks = {rank};
    const Device src = durable_tier == Tier::object_store
                           ? Device{DeviceKind::object_store, 0}
                           : Device{durable_tier == Tier::dram ? DeviceKind::dram
                                    : durable_tier == Tier::cxl ? DeviceKind::cxl
                                                                : DeviceKind::local_ssd,
                                    ranks.node(rank)};
    t.flows.push_back({src, Device::gpu(rank), per_rank[static_cast<std::size_t>(ranks.stage_of(rank))], false});
    restore.add(std::move(t));
  }
  const TaskCosts restore_costs(sc.hardware, sc.training.precision, layout, restore);
  c.restore_s = (options.executor == ExecutorKind::des ? run_des(restore, restore_costs, layout)
                                                       : run_list_schedule(restore, restore_costs))
                    .makespan();
  return c;
}

/// The run over `failures.horizon`: the job fails at the combined rate of its GPUs and nodes; each
/// failure costs the restart, the reload and the work since the newest durable checkpoint.
RunLevelResult simulate_run(const Scenario& sc, const RunResult& r) {
  const FailureSpec& f = sc.failures;
  double rate = static_cast<double>(sc.gpus) / f.gpu_mtbf.value;
  if (f.node_mtbf.value > 0) rate += static_cast<double>(sc.nodes) / f.node_mtbf.value;
  const FailureLaw law{1.0 / rate, f.distribution, f.weibull_shape};
  const double iteration = r.simulation->throughput.iteration_time;
  RunCycle cycle;
  cycle.restart_s = f.restart_time.value;
  cycle.checkpoints = r.checkpoint.has_value();
  if (r.checkpoint) {
    cycle.work_s = static_cast<double>(sc.checkpoint.interval_iterations) * iteration;
    cycle.stall_s = r.checkpoint->stall_s;
    cycle.durable_s = std::max(r.checkpoint->persist_s, r.checkpoint->stall_s);
    cycle.restore_s = r.checkpoint->restore_s;
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
  if (r.checkpoint) {
    out.first_order_goodput = first_order_goodput(cycle, law.mtbf_s);
    out.young_interval_s = young_interval(cycle.stall_s, law.mtbf_s);
    out.daly_interval_s = daly_interval(cycle.stall_s, law.mtbf_s);
    // Goodput if checkpoints came at those intervals (whole iterations, at least one).
    auto at = [&](double interval_s) {
      RunCycle c = cycle;
      c.work_s = std::max(1.0, std::round(interval_s / iteration)) * iteration;
      // Back-pressure depends on the interval: recompute it for this one.
      const CheckpointResult& k = *r.checkpoint;
      const double wait =
          sc.checkpoint.strategy == "sync" ? 0.0 : std::max(0.0, k.persist_s - k.snapshot_stall_s - c.work_s);
      c.stall_s = k.snapshot_stall_s + wait;
      return simulate_goodput(c, law, f.horizon.value, seed, f.runs).goodput.mean;
    };
    out.goodput_at_young = at(out.young_interval_s);
    out.goodput_at_daly = at(out.daly_interval_s);
  }
  return out;
}

RunResult run_scenario(const Scenario& sc, const SimulationOptions& options) {
  GraphShape shape;
  shape.seq_len = sc.training.seq_len;
  shape.micro_batch = sc.training.micro_batch_size;
  // fp8 training keeps activations in 16-bit outside the GEMMs (Transformer Engine).
  shape.activation_bytes = std::max(2.0, bytes_per_element(sc.training.precision));
  shape.flash_attention = sc.training.flash_attention;
  ComputeGraph graph = build_compute_graph(sc.model, shape);

  RunResult r;
  r.parameters = total_parameters(graph);
  r.flops_per_iteration = model_flops(graph) * static_cast<double>(sc.num_microbatches() * sc.parallelism.dp);
  r.partition = partition_layers(static_cast<int>(sc.model.num_layers), static_cast<int>(sc.parallelism.pp),
                                 static_cast<int>(sc.parallelism.virtual_stages));
  r.memory = estimate_memory(sc, graph, r.partition);

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
  if (options.keep_schedule) {
    sim.dag = dag;
    sim.times = std::make_shared<TaskTimes>(std::move(times));
    sim.link_names = [layout_ptr, costs_ptr](TaskId id) {
      std::vector<std::string> names;
      for (const RoutedFlow& f : costs_ptr->flows(id))
        for (LinkId l : f.links) names.push_back(layout_ptr->link(l).name);
      std::sort(names.begin(), names.end());
      names.erase(std::unique(names.begin(), names.end()), names.end());
      return names;
    };
  }
  r.simulation = std::move(sim);
  // Checkpoint strategies simulated so far; the others are validated and reported as not simulated.
  const std::string& strategy = sc.checkpoint.strategy;
  if (sc.checkpoint.enabled && (strategy == "sync" || strategy == "async" || strategy == "tiered"))
    r.checkpoint = simulate_checkpoint(sc, graph, r, options, layout);
  // Goodput needs the checkpoint's cost: without a simulated strategy it would assume no checkpoints.
  if (sc.failures.enabled && (r.checkpoint || !sc.checkpoint.enabled)) r.run = simulate_run(sc, r);
  return r;
}

}  // namespace strata
