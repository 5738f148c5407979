#include "sim/exec/task_costs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace strata {

TaskCosts::TaskCosts(const HardwareSpec& hw, Precision precision, const PlatformLayout& layout, const TaskDag& dag) {
  auto peak = hw.gpu.peak.find(precision);
  if (peak == hw.gpu.peak.end()) throw std::logic_error("GPU has no peak for the compute dtype");
  flops_rate_ = peak->second.value * hw.efficiency.gemm;
  memory_rate_ = hw.gpu.hbm_bandwidth.value * hw.efficiency.memory;
  host_rate_ = hw.host.cpu_adam_params_per_s;
  gpus_per_node_ = hw.gpus_per_node;
  gpus_ = layout.gpus();

  // Folded groups: the simulated rank of each group of interchangeable ranks.
  std::map<std::int64_t, std::int64_t> representative;
  for (const auto& [rank, count] : dag.represents) representative[rank / dag.fold_group] = rank;
  auto mirror = [&](const Device& d) {
    if (d.kind != DeviceKind::gpu || dag.represents.count(d.index)) return d;
    auto it = representative.find(d.index / dag.fold_group);
    if (it == representative.end()) throw std::logic_error("flow to a rank outside every simulated group");
    return Device::gpu(it->second);
  };

  routed_.resize(dag.tasks.size());
  latency_.assign(dag.tasks.size(), 0.0);
  sm_share_.assign(dag.tasks.size(), 0.0);
  const double sms = hw.kernels.present ? static_cast<double>(hw.kernels.sm_count) : 0.0;
  // A send from one GPU to another of its node (a pipeline stage's, a context-parallel ring step):
  // NCCL's point-to-point path reaches less than its collectives over the same NVLink. Only where the
  // profile measures it lower is it a cap of its own (a node without NVLink sends over PCIe).
  if (hw.nvlink_bandwidth.value > 0.0 && hw.efficiency.nvlink_p2p < hw.efficiency.nvlink)
    p2p_cap_ = hw.nvlink_bandwidth.value * hw.efficiency.nvlink_p2p;
  // The ranks one simulated rank stands for that share a link move the same bytes at the same time:
  // a link carries k flows, for the folded group with the most GPUs on it.
  struct LinkUse {
    LinkId link = 0;
    std::int64_t multiplicity = 1;
    LinkSpec spec;
  };
  // Each used link once, found by its id in a flat index (every flow looks up each of its links).
  std::vector<LinkUse> used;
  std::vector<std::int32_t> use_of(static_cast<std::size_t>(layout.link_count()), -1);
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    double slowest_latency = 0.0;  // per step and per call, of the slowest route
    for (const Flow& f : t.flows) {
      // Whole bytes, as the DES moves them, so both executors charge the same transfer.
      RoutedFlow rf{layout.route(f.src, mirror(f.dst), f.remote, f.direct, f.rail, f.in_switch), std::round(f.bytes),
                    f.background};
      if (is_point_to_point(t.kind) && !f.remote && f.src.kind == DeviceKind::gpu && f.dst.kind == DeviceKind::gpu)
        rf.rate_cap = p2p_cap_;
      double step = 0.0, call = 0.0;
      for (LinkId l : rf.links) {
        std::int32_t& slot = use_of.at(static_cast<std::size_t>(l));
        if (slot < 0) {
          slot = static_cast<std::int32_t>(used.size());
          LinkUse& use = used.emplace_back();
          use.link = l;
          use.spec = layout.link(l);
          if (dag.fold_group > 1) {
            std::map<std::int64_t, std::int64_t> per_group;
            for (std::int64_t g : layout.attached_gpus(l))
              if (representative.count(g / dag.fold_group))
                use.multiplicity = std::max(use.multiplicity, ++per_group[g / dag.fold_group]);
          }
        }
        const LinkUse& use = used[static_cast<std::size_t>(slot)];
        step += use.spec.latency;
        call += use.spec.call_latency;
      }
      slowest_latency = std::max(slowest_latency, t.latency_steps * step + t.collective_calls * call);
      routed_[id].push_back(std::move(rf));
    }
    latency_[id] = t.flows.empty() ? 0.0 : slowest_latency + t.issue_delay_s;
    if (t.collective_calls > 0 && !t.flows.empty() && sms > 0.0) {
      const bool crosses = std::any_of(t.flows.begin(), t.flows.end(), [](const Flow& f) { return f.remote; });
      const bool in_switch = std::any_of(t.flows.begin(), t.flows.end(), [](const Flow& f) { return f.in_switch; });
      const auto held = static_cast<double>(crosses     ? hw.nic.collective_sms
                                            : in_switch ? hw.nvlink_sharp_sms
                                                        : hw.nvlink_collective_sms);
      // At least one SM stays with the compute kernels.
      sm_share_[id] = std::min(held, sms - 1.0) / sms;
    }
  }
  for (const LinkUse& use : used) {
    if (!(use.spec.bandwidth > 0)) throw std::logic_error("flow over a link with no bandwidth: " + use.spec.name);
    bandwidth_[use.link] = use.spec.bandwidth / static_cast<double>(use.multiplicity);
  }
}

double TaskCosts::compute_seconds(const Task& t) const {
  if (on_host(t)) {
    // The node's CPUs update every local GPU's shard at once: each gets an equal share of the rate.
    const std::int64_t node = t.rank() / gpus_per_node_;
    const auto sharing = std::min(gpus_per_node_, gpus_ - node * gpus_per_node_);
    return t.host_params * static_cast<double>(sharing) / host_rate_;
  }
  if (t.kernel_seconds > 0.0) return t.kernel_seconds;
  return t.flops / flops_rate_ + t.memory_bytes / memory_rate_;
}

double TaskCosts::uncontended_seconds(TaskId id, const Task& t) const {
  if (t.flows.empty()) return compute_seconds(t);
  double longest = 0.0;
  for (const RoutedFlow& f : routed_[id]) {
    double bw = f.rate_cap;
    for (LinkId l : f.links) bw = std::min(bw, bandwidth_.at(l));
    longest = std::max(longest, f.bytes / bw);
  }
  return latency_[id] + longest;
}

}  // namespace strata
