#pragma once

/// The per-rank task DAG an executor runs: compute kernels, transfers and collectives, each on one
/// stream of one GPU, with its dependencies and the memory it takes and gives back. The executor
/// needs nothing else: it never sees the policies that produced the tasks.

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <span>
#include <vector>

#include "sim/config/scenario_spec.hpp"
#include "sim/core/device.hpp"

namespace strata {

using TaskId = std::uint32_t;
inline constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();

enum class TaskKind : std::uint8_t {
  forward,
  backward,
  recompute,
  optimizer,
  tp_comm,       ///< tensor/sequence-parallel collectives inside a block
  pp_transfer,   ///< activation or gradient between pipeline stages
  dp_comm,       ///< gradient reduction (and ZeRO-1/2 parameter all-gather) across replicas
  param_gather,  ///< ZeRO-3 parameter all-gather before a layer's forward or backward
  offload,       ///< a copy between HBM and an offload tier (activations, parameters, gradients)
  host_optimizer,  ///< the optimizer step on the host CPU (ZeRO-Offload)
  checkpoint,      ///< a checkpoint snapshot or persist hop
  data_load,       ///< reading an iteration's training samples into host memory
  redundant,       ///< redundant computation of the next stage's work (Bamboo)
  cp_comm,         ///< a context-parallel ring step: K/V (and backward dK/dV) blocks to the ring successor
  ep_comm,         ///< expert-parallel all-to-all: tokens to their experts' ranks and back
};
inline constexpr int kNumTaskKinds = 15;
static_assert(kNumTaskKinds == static_cast<int>(TaskKind::ep_comm) + 1, "kNumTaskKinds counts every TaskKind");
std::string to_string(TaskKind k);
bool is_compute(TaskKind k);
/// A send from one rank to one other (NCCL send/recv), not a collective over a group.
bool is_point_to_point(TaskKind k);

/// CUDA-stream-like queues per GPU: tasks of one stream run one at a time in program order.
/// Copies to and from offload tiers get a stream per purpose (activations out, activations in,
/// gradients out, parameters in, updated weights in), so none queues behind another's dependencies;
/// they still share the links they cross.
enum class Stream : std::uint8_t {
  compute,
  tp_comm,
  p2p,  ///< asynchronous point-to-point (the training DAG's own p2p blocks the compute stream)
  dp_comm,
  gather,
  offload_out,
  offload_in,
  grad_out,
  param_in,
  upload,
  host,
  checkpoint,    ///< background persist: the hop after the snapshot
  checkpoint_2,  ///< the next hop (a tiered checkpoint pipelines its hops)
  checkpoint_3,
  data,  ///< training-data reads
  cp_comm,  ///< the context-parallel ring's sends, beside the attention they overlap
  ep_comm,  ///< expert-parallel all-to-all (blocks the compute stream, as the TP collectives do)
};
inline constexpr int kNumStreams = 17;
std::string to_string(Stream s);

enum class MemoryUse : std::uint8_t { params, gradients, optimizer, activations, workspace, buffers };
inline constexpr int kNumMemoryUses = 6;
std::string to_string(MemoryUse u);

/// Bytes a task holds on one tier of its rank (HBM for the GPU, the node's share for host tiers).
struct MemoryChange {
  Tier tier = Tier::hbm;
  MemoryUse use = MemoryUse::activations;
  double bytes = 0.0;
};

/// The device a storage tier is on: a node's DRAM, CXL memory or SSDs, or the shared object store.
/// Throws std::logic_error for HBM or none.
Device tier_device(Tier tier, std::int64_t node);

/// One point-to-point stream of bytes. `remote` says whether it crosses nodes, which the executor
/// needs when the destination is a folded-away rank it does not simulate.
struct Flow {
  Device src;
  Device dst;
  double bytes = 0.0;
  bool remote = false;
  bool direct = false;      ///< peer-to-peer DMA between a GPU and an SSD (no host bounce buffer)
  bool background = false;  ///< yields every link it crosses to other flows (a scavenger transport)
  /// A node tier's transfer over the network leaves through this GPU's NIC (its rail); -1: the
  /// node's first NIC.
  std::int64_t rail = -1;
  /// Part of an all-reduce the NVSwitch reduces (NVLink SHARP): it also crosses the switch's
  /// reduction for the sender's port, efficiency.nvlink_sharp of the line rate (PlatformLayout).
  bool in_switch = false;
};

struct Task {
  TaskKind kind = TaskKind::forward;
  Stream stream = Stream::compute;
  /// Ranks whose `stream` the task occupies: one, or every member of an unfolded collective.
  std::vector<std::int64_t> ranks;
  double flops = 0.0;         ///< compute-bound work, run at the GEMM rate
  double memory_bytes = 0.0;  ///< memory-bound work, run at the HBM rate
  /// The kernels' time on the task's GPU from their shapes (sim/graph/kernel_costs); 0: the
  /// roofline of `flops` and `memory_bytes` applies.
  double kernel_seconds = 0.0;
  double host_params = 0.0;   ///< parameters the host CPU updates (host_optimizer)
  std::vector<Flow> flows;    ///< all start together; the task ends when the last one does
  int latency_steps = 1;      ///< sequential steps of a collective: each pays the route latency
  int collective_calls = 0;   ///< NCCL collectives the task stands for: each pays the route's call latency once
  /// Seconds from the task being ready to its flows starting, paid like a latency: a collective
  /// issued from inside a kernel that is already running (Megatron's asynchronous TP backward
  /// issues the exchange once the kernel's first GEMM is done).
  double issue_delay_s = 0.0;
  std::vector<MemoryChange> allocate;  ///< taken when the task starts, on each of its ranks
  std::vector<MemoryChange> release;   ///< given back when it ends
  std::vector<TaskId> deps;
  std::int32_t iteration = 0;
  std::int32_t stage = 0;
  std::int32_t chunk = 0;
  std::int32_t microbatch = -1;
  std::int32_t layer = -1;

  std::int64_t rank() const { return ranks.front(); }
};

/// The DAG for one scenario, plus what is resident on each rank before the first task.
class StreamPredecessors;

struct TaskDag {
  std::vector<Task> tasks;
  std::map<std::int64_t, std::vector<MemoryChange>> resident;  ///< per simulated rank
  /// Simulated ranks and how many identical ranks each stands for (1 when unfolded).
  std::map<std::int64_t, std::int64_t> represents;
  /// Ranks r and r' are interchangeable (folded into one simulated rank) iff r / fold_group equals
  /// r' / fold_group; 1 when nothing is folded.
  std::int64_t fold_group = 1;
  std::int32_t iterations = 1;
  /// Set when the DAG is shared through a sweep worker's DAG cache (analysis/dag_cache): DAGs with
  /// one identity are one DAG, and their costs differ at most in the links' bandwidths.
  std::string shared_identity;
  /// The stream order, computed once for a shared DAG (else each executor computes it).
  std::shared_ptr<const StreamPredecessors> stream_order;

  TaskId add(Task t);
  /// The last task added on `rank`'s compute stream (its stream predecessor-to-be), or kNoTask.
  TaskId last_compute(std::int64_t rank) const {
    const auto r = static_cast<std::size_t>(rank);
    return r < last_compute_.size() ? last_compute_[r] : kNoTask;
  }

  std::vector<TaskId> last_compute_;  ///< by rank, kept by add()
};

/// When each task ran, as an executor scheduled it (seconds of simulated time).
struct TaskTimes {
  std::vector<double> start;
  std::vector<double> finish;
  double makespan() const;
};

/// For each task, the previous task on each of its streams (program order): `[id]` lists them.
class StreamPredecessors {
 public:
  std::span<const TaskId> operator[](TaskId id) const {
    return {ids_.data() + offsets_[id], ids_.data() + offsets_[id + 1]};
  }

 private:
  friend std::shared_ptr<const StreamPredecessors> stream_predecessors(const TaskDag& dag);
  std::vector<std::size_t> offsets_;  ///< task id → first of its predecessors in ids_ (one past the end last)
  std::vector<TaskId> ids_;
};

/// The DAG's stream order: `stream_order` when it carries one, else computed now.
std::shared_ptr<const StreamPredecessors> stream_predecessors(const TaskDag& dag);

/// Checks the DAG, with each stream's program order as extra edges, is acyclic (Boost.Graph
/// topological sort) and returns that order. Throws std::logic_error naming a task on a cycle.
std::vector<TaskId> topological_order(const TaskDag& dag);

}  // namespace strata
