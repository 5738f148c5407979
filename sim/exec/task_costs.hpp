#pragma once

/// What each task costs on the platform: compute time from a roofline (GEMM work at peak ×
/// efficiency, memory-bound work at HBM bandwidth × efficiency, run back to back), and for
/// transfers the links each flow crosses. With symmetric ranks folded away, a link shared by k
/// ranks of one folded group carries k identical flows, so its bandwidth is divided by k.

#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "sim/config/hardware_spec.hpp"
#include "sim/dag/task_dag.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata {

struct RoutedFlow {
  std::vector<LinkId> links;
  double bytes = 0.0;
  bool background = false;  ///< runs only while no other flow uses its links (DES)
  /// A point-to-point send between two GPUs of a node, which NCCL drives with fewer channels than a
  /// collective (efficiency.nvlink_p2p): at most this many bytes/s, shared by the flows between the
  /// same two GPUs (a peer's channels); infinite for every other flow.
  double rate_cap = std::numeric_limits<double>::infinity();
};

class TaskCosts {
 public:
  TaskCosts(const HardwareSpec& hw, Precision precision, const PlatformLayout& layout, const TaskDag& dag);

  double flops_per_second() const { return flops_rate_; }
  /// The rate cap of a point-to-point send inside a node (RoutedFlow::rate_cap); infinite when the
  /// profile states none below its collectives' rate.
  double point_to_point_cap() const { return p2p_cap_; }
  /// Whether the task's work runs on the host CPU rather than a GPU or a link.
  static bool on_host(const Task& t) { return t.host_params > 0.0; }
  /// Roofline time of a task's compute work.
  double compute_seconds(const Task& t) const;
  /// Links of each flow, with folded-away destinations mapped onto their representative.
  const std::vector<RoutedFlow>& flows(TaskId id) const { return routed_[id]; }
  /// Latency the task pays before its bytes move: its steps × the slowest route's latency, its NCCL
  /// calls × the route's call latency, and its issue delay.
  double latency_seconds(TaskId id) const { return latency_[id]; }
  /// The fraction of each of its GPUs' compute the task's kernels hold while it runs: an NCCL
  /// collective's channels, one CTA on an SM of its own each (nvlink.collective_sms inside a node,
  /// nvlink.sharp_sms for an all-reduce in the switch, nic.collective_sms across nodes, over
  /// kernels.sm_count), so kernels beside it run on the rest.
  /// 0 for everything else (copies run on copy engines; userbuffers slices are priced by the TP
  /// overlap's own SM margins).
  double sm_share(TaskId id) const { return sm_share_[id]; }
  /// Bandwidth of a link as the executor sees it (divided by the folded multiplicity).
  double bandwidth(LinkId link) const { return bandwidth_.at(link); }
  /// Every link some flow uses, in id order.
  const std::map<LinkId, double>& used_links() const { return bandwidth_; }
  /// The uncontended time of a task: compute, or latency + the slowest flow alone on its route.
  double uncontended_seconds(TaskId id, const Task& t) const;

 private:
  double flops_rate_ = 0.0, memory_rate_ = 0.0;
  double host_rate_ = 0.0;  ///< CPU-Adam parameters/s of one node, shared by its GPUs
  double p2p_cap_ = std::numeric_limits<double>::infinity();
  std::int64_t gpus_per_node_ = 1, gpus_ = 1;
  std::vector<std::vector<RoutedFlow>> routed_;
  std::vector<double> latency_;
  std::vector<double> sm_share_;
  std::map<LinkId, double> bandwidth_;
};

}  // namespace strata
