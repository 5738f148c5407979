#include "sim/exec/run.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "sim/exec/executor.hpp"
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
  return r;
}

}  // namespace strata
