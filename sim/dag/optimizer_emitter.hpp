#pragma once

/// The optimizer step that ends each iteration on every stage: after the stage's last gradient
/// reduction, Adam on the GPU, or on the host (offloaded optimizer) or the drives (near storage)
/// through the offload emitter, then the ZeRO-1/2 all-gather of the updated weights. Under
/// DeepSpeed's delayed parameter update (DPU) it keeps the step the next iteration waits for.

#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/data_parallel_emitter.hpp"
#include "sim/dag/offload_emitter.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

/// What the optimizer emitter needs of the scenario.
struct OptimizerPlan {
  Tier optimizer_tier = Tier::none;  ///< where offloaded optimizer states live (none: on the GPU)
  Tier params_tier = Tier::none;     ///< where offloaded parameters live
  bool delayed_update = false;       ///< DPU
  bool near_storage = false;         ///< the step runs on computational SSDs
  StateBytes states;
};

class OptimizerEmitter {
 public:
  OptimizerEmitter(DagContext& ctx, const OptimizerPlan& plan, const MemoryEstimate& mem, DataParallelEmitter& dp,
                   OffloadEmitter& offload, int stages);

  void step(int stage);
  /// Under a delayed update, the stage's step still running when the next iteration starts.
  const DagContext::Frontier& in_flight(int stage) const { return delayed_step_[static_cast<std::size_t>(stage)]; }

 private:
  DagContext& ctx_;
  OptimizerPlan plan_;
  const MemoryEstimate& mem_;
  DataParallelEmitter& dp_;
  OffloadEmitter& offload_;
  std::vector<DagContext::Frontier> delayed_step_;  // per stage: the offloaded step the next iteration waits for (DPU)
};

}  // namespace strata
