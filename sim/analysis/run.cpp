#include "sim/analysis/run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <optional>

#include "sim/analysis/checkpoint_cost.hpp"
#include "sim/analysis/checkpoint_simulator.hpp"
#include "sim/analysis/pipeline_balance.hpp"
#include "sim/analysis/run_level.hpp"
#include "sim/analysis/confidence.hpp"
#include "sim/analysis/dag_cache.hpp"
#include "sim/analysis/verdict.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata {


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

ComputeGraph scenario_graph(const Scenario& sc) {
  GraphShape shape;
  shape.seq_len = sc.training.seq_len;
  shape.micro_batch = sc.training.micro_batch_size;
  // fp8 training keeps activations in 16-bit outside the GEMMs (Transformer Engine).
  shape.activation_bytes = std::max(2.0, bytes_per_element(sc.training.precision));
  shape.flash_attention = sc.training.flash_attention;
  shape.eager_elementwise = !sc.training.behaviour.fused_elementwise;
  shape.cross_entropy = sc.training.behaviour.cross_entropy;
  shape.logit_metrics = sc.training.behaviour.logit_metrics;
  shape.fp8_saved_linear_inputs =
      sc.training.precision == Precision::fp8 && sc.training.behaviour.fp8_saves_quantized_inputs;
  shape.gathered_linear_inputs =
      sc.training.behaviour.sequence_parallel_style == SequenceParallelStyle::dtensor;
  if (sc.training.autocast()) {
    shape.autocast_weight_bytes = bytes_per_element(sc.training.precision);
    shape.residual_bytes = bytes_per_element(sc.training.param_precision);
  }
  return build_compute_graph(sc.model, shape);
}

/// The static phases: parameter and FLOP counts, the pipeline partition, the memory estimate.
RunResult static_result(const Scenario& sc, const ComputeGraph& graph) {
  RunResult r;
  r.parameters = total_parameters(graph);
  r.parameters_by_kind = parameter_breakdown(graph);
  r.flops_per_iteration = model_flops(graph) * static_cast<double>(sc.num_microbatches() * sc.parallelism.dp);
  r.partition = scenario_partition(sc, graph);
  r.memory = estimate_memory(sc, graph, r.partition);
  return r;
}

}  // namespace

RunResult estimate_scenario(const Scenario& sc) {
  RunResult r = static_result(sc, scenario_graph(sc));
  r.verdict = decide_verdict(sc, r);
  r.confidence = assess_confidence(sc, r);
  return r;
}

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

  const DagOptions training_options{options.fold};
  const std::shared_ptr<const TaskDag> dag = shared_dag(options, "training", training_options, [&] {
    return build_training_dag(sc, graph, r.partition, r.memory, training_options);
  });
  auto layout_ptr = std::make_shared<const PlatformLayout>(sc.hardware, sc.gpus);
  auto costs_ptr = std::make_shared<const TaskCosts>(sc.hardware, sc.training.precision, *layout_ptr, *dag);
  const PlatformLayout& layout = *layout_ptr;
  const TaskCosts& costs = *costs_ptr;
  spdlog::debug("task DAG: {} tasks on {} simulated GPUs", dag->tasks.size(), dag->represents.size());

  SimulationResult sim;
  sim.executor = to_string(options.executor);
  sim.folded = options.fold;
  sim.checkpoint_window = options.window();
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
  const TaskTimes free = run_contention_free(*dag, costs);
  const auto [free_start, free_end] = last_iteration_window(*dag, free);
  sim.contention_free_iteration_time = free_end - free_start;
  TaskTimes times = execute(options.executor, *dag, costs, layout);
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
    p.verdict = decide_verdict(point, p);
    p.confidence = assess_confidence(point, p);
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
