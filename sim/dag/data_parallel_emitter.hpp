#pragma once

/// Data parallelism and ZeRO across replicas: the gradient reduction of each layer (all-reduce, or
/// reduce-scatter into shards under ZeRO / the distributed optimizer), the ZeRO-3 parameter gathers
/// ahead of each layer's compute (with ZeRO-Infinity's fetch of offloaded shards), and the
/// ZeRO-1/2 / distributed-optimizer all-gather of the updated weights: after the step, or layer by
/// layer in the next forward when the framework overlaps it. Each collective is one NCCL ring over its
/// group, spread over the members' NICs across nodes. Under expert parallelism the experts' gradients are reduced
/// over their expert-data-parallel group, the dense ones over DP. With replicated shard groups (HSDP,
/// parallelism.dp_replicate) the shards, gathers and reduce-scatters span a shard group, and each reduced shard
/// is all-reduced across the replicas.

#include <cstdint>
#include <vector>

#include "sim/dag/collectives.hpp"
#include "sim/dag/dag_context.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

/// When the distributed optimizer / ZeRO-1/2 all-gathers the weights each replica has updated.
enum class UpdatedGather {
  /// As one collective behind the step, before the next iteration's compute.
  after_step,
  /// Layer by layer in the next iteration's first forward, each layer's gather dispatched as the
  /// forward reaches the layer before (Megatron-Core --overlap-param-gather, forward pre-hooks).
  paced_by_forward,
  /// All issued behind the step in the forward's order, each layer's first forward waiting for its
  /// own: Megatron-Core's align_param_gather under the interleaved schedule, which issues the first
  /// two model chunks' at the schedule's start and each later chunk's a few micro-batches ahead of it.
  issued_at_step,
};

/// What the data-parallel emitter needs of the scenario.
struct DataParallelPlan {
  std::int64_t zero_stage = 0;
  bool distributed_optimizer = false;
  std::int64_t prefetch_layers = 1;  ///< ZeRO-3 gathers run this many layers ahead
  /// Below ZeRO-3: when the updated weights are gathered (training.overlap_param_gather,
  /// align_param_gather).
  UpdatedGather updated_gather = UpdatedGather::after_step;
  Tier params_tier = Tier::none;     ///< where offloaded parameters live (ZeRO-Infinity)
  StateBytes states;
  /// The fp8 linears' weights gathered in fp8 (FrameworkBehaviour::fp8_param_gather).
  bool fp8_param_gather = false;

  /// What all-gathering `params` weights moves, `fp8_params` of them the fp8 linears'.
  double gathered_bytes(double params, double fp8_params) const {
    const double fp8_width = fp8_param_gather ? 1.0 : states.weights;
    return (params - fp8_params) * states.weights + fp8_params * fp8_width;
  }
};

class DataParallelEmitter {
 public:
  DataParallelEmitter(DagContext& ctx, const DataParallelPlan& plan, int stages);

  /// Optimizer states (and, after ZeRO-1, the step) are sharded over the replicas.
  bool sharded() const { return plan_.zero_stage >= 1 || plan_.distributed_optimizer; }
  double optimizer_shards() const { return sharded() ? static_cast<double>(ctx_.layout().shard_size()) : 1.0; }
  /// ZeRO-3 gathers each layer's weights before its compute.
  bool gathers_params() const {
    return plan_.zero_stage >= 3 && (ctx_.layout().shard_size() > 1 || plan_.params_tier != Tier::none);
  }
  /// ZeRO-2/3 reduce-scatter every micro-batch into their gradient partitions; otherwise the
  /// accumulated gradients are reduced once, after the last micro-batch.
  bool partitioned_grads() const { return plan_.zero_stage >= 2; }
  /// Sharded below ZeRO-3: each replica updates its shard and the weights are all-gathered after,
  /// either as one collective behind the step or layer by layer in the next forward.
  bool gathers_updated() const { return sharded() && plan_.zero_stage < 3 && ctx_.layout().shard_size() > 1; }
  bool gathers_updated_after_step() const {
    return gathers_updated() && plan_.updated_gather == UpdatedGather::after_step;
  }
  bool gathers_updated_in_forward() const {
    return gathers_updated() && plan_.updated_gather != UpdatedGather::after_step;
  }

  void new_iteration(int stages) { dp_tasks_.assign(static_cast<std::size_t>(stages), {}); }
  /// This iteration's gradient-reduction tasks of the stage, in order.
  const std::vector<TaskId>& reductions(int stage) const { return dp_tasks_[static_cast<std::size_t>(stage)]; }

  /// ZeRO-3 gather of the layer's weights; joins the stage's frontier. Returns what the compute
  /// that consumes them releases.
  std::vector<MemoryChange> param_gather(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                         DagContext::Frontier& last);
  /// The layer's updated weights gathered before its first forward of the iteration, one layer ahead
  /// or all issued at the step (plan's UpdatedGather); joins the stage's frontier. The weights stay.
  void updated_gather(int stage, const DagContext::ChunkPos& pos, const LayerWork& w, DagContext::Frontier& last);
  /// The layer's gradient reduction after `last`. Returns the reduction's last task.
  TaskId gradient_reduction(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                            const DagContext::Frontier& last);
  /// ZeRO-1/2 and the distributed optimizer, not overlapped: the updated weights all-gathered after the step
  /// (`step`, one task per lane); `done` becomes the gather. `expert_parameters`: the routed experts'
  /// part of `parameters`, gathered over the expert-DP group under EP; `fp8_parameters` the part in
  /// linears that run in fp8, experts included.
  void gather_updated(int stage, double parameters, double expert_parameters, double fp8_parameters,
                      const std::vector<TaskId>& step, DagContext::Frontier& done);
  /// After the step: the next iteration's first gathers fetch the weights it will use.
  void restart_gathers(int stage, const DagContext::Frontier& last);

 private:
  /// A layer's weights gathered `ahead` layers before its compute (kIssuedAtRestart: gated only by
  /// restart_gathers); with `transient`, into a workspace that the compute using them releases
  /// (returned).
  std::vector<MemoryChange> gather_ahead(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                         DagContext::Frontier& last, std::size_t ahead, bool transient,
                                         TaskKind kind);
  static constexpr std::size_t kIssuedAtRestart = static_cast<std::size_t>(-1);
  /// The ranks a collective runs over: a lane's DP×CP group; its shard group (the DP×CP group unless
  /// HSDP replicates the shards) or replicate group (its counterparts in the other shard groups); or
  /// its expert-data-parallel group (the ranks holding the same experts under EP).
  enum class Group { data_parallel, shard, replicate, expert_data_parallel };
  Task group_collective(int stage, Collective c, double bytes, const DagContext::ChunkPos& pos, TaskKind kind,
                        Stream stream, Group group);

  DagContext& ctx_;
  DataParallelPlan plan_;
  std::vector<std::vector<TaskId>> dp_tasks_;                     // per stage, this iteration
  std::vector<std::vector<std::vector<TaskId>>> gather_history_;  // per stage: see param_gather
};

}  // namespace strata
