#pragma once

/// Data parallelism and ZeRO across replicas: the gradient reduction of each layer (all-reduce, or
/// reduce-scatter into shards under ZeRO / the distributed optimizer), the ZeRO-3 parameter gathers
/// ahead of each layer's compute (with ZeRO-Infinity's fetch of offloaded shards), and the
/// ZeRO-1/2 all-gather of the updated weights after the step. Collectives are hierarchical when
/// whole replica groups share a node.

#include <cstdint>
#include <vector>

#include "sim/dag/collectives.hpp"
#include "sim/dag/dag_context.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

/// What the data-parallel emitter needs of the scenario.
struct DataParallelPlan {
  std::int64_t zero_stage = 0;
  bool distributed_optimizer = false;
  std::int64_t prefetch_layers = 1;  ///< ZeRO-3 gathers run this many layers ahead
  Tier params_tier = Tier::none;     ///< where offloaded parameters live (ZeRO-Infinity)
  StateBytes states;
};

class DataParallelEmitter {
 public:
  DataParallelEmitter(DagContext& ctx, const DataParallelPlan& plan, int stages);

  /// Optimizer states (and, after ZeRO-1, the step) are sharded over the replicas.
  bool sharded() const { return plan_.zero_stage >= 1 || plan_.distributed_optimizer; }
  double optimizer_shards() const { return sharded() ? static_cast<double>(ctx_.layout().replicas()) : 1.0; }
  /// ZeRO-3 gathers each layer's weights before its compute.
  bool gathers_params() const {
    return plan_.zero_stage >= 3 && (ctx_.layout().replicas() > 1 || plan_.params_tier != Tier::none);
  }
  /// ZeRO-2/3 reduce-scatter every micro-batch into their gradient partitions; otherwise the
  /// accumulated gradients are reduced once, after the last micro-batch.
  bool partitioned_grads() const { return plan_.zero_stage >= 2; }
  /// Sharded below ZeRO-3: each replica updates its shard and the weights are all-gathered after.
  bool gathers_after_step() const { return sharded() && plan_.zero_stage < 3 && ctx_.layout().replicas() > 1; }

  void new_iteration(int stages) { dp_tasks_.assign(static_cast<std::size_t>(stages), {}); }
  /// This iteration's gradient-reduction tasks of the stage, in order.
  const std::vector<TaskId>& reductions(int stage) const { return dp_tasks_[static_cast<std::size_t>(stage)]; }

  /// ZeRO-3 gather of the layer's weights; joins the stage's frontier. Returns what the compute
  /// that consumes them releases.
  std::vector<MemoryChange> param_gather(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                         DagContext::Frontier& last);
  /// The layer's gradient reduction after `last`. Returns the reduction's last task.
  TaskId gradient_reduction(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                            const DagContext::Frontier& last);
  /// ZeRO-1/2 and the distributed optimizer: the updated weights all-gathered after the step
  /// (`step`, one task per lane); `done` becomes the gather.
  void gather_updated(int stage, double parameters, const std::vector<TaskId>& step, DagContext::Frontier& done);
  /// After the step: the next iteration's first ZeRO-3 gathers fetch the weights it will use.
  void restart_gathers(int stage, const DagContext::Frontier& last);

 private:
  std::vector<Task> dp_collective(int stage, Collective c, double bytes, TaskKind kind,
                                  const DagContext::ChunkPos& pos, Stream stream = Stream::dp_comm);

  DagContext& ctx_;
  DataParallelPlan plan_;
  std::vector<std::vector<TaskId>> dp_tasks_;                     // per stage, this iteration
  std::vector<std::vector<std::vector<TaskId>>> gather_history_;  // per stage: see param_gather
};

}  // namespace strata
