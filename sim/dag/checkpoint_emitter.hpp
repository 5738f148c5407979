#pragma once

/// One checkpoint of every stage after an iteration's step: the snapshot out of HBM (or from where
/// offloaded states already are), its hops down `checkpoint.tiers`, blocking or in the background
/// as the strategy's typed behaviour says, chunked into a pipeline when it says so, and the peer
/// DRAM replicas of an in-memory checkpoint (Gemini).

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/config/checkpoint_policy.hpp"
#include "sim/dag/dag_context.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

/// What the checkpoint emitter needs of the scenario and the run.
struct CheckpointPlan {
  CheckpointBehaviour policy;
  std::vector<Tier> tiers;        ///< checkpoint.tiers, first hop first
  bool persist = false;           ///< in-memory: this checkpoint also goes past the first tier
  bool near_storage = false;      ///< the optimizer states live on computational SSDs
  Tier weights_at = Tier::none;   ///< where offloaded parameters live
  Tier optimizer_at = Tier::none; ///< where offloaded optimizer states live
  std::int64_t nodes = 1;         ///< nodes of the cluster, for the peer replicas
  StateBytes states;
  bool gpudirect = false;         ///< the snapshot to local SSDs is a GPUDirect Storage DMA (no host bounce)
};

class CheckpointEmitter {
 public:
  CheckpointEmitter(DagContext& ctx, CheckpointPlan plan, const MemoryEstimate& mem)
      : ctx_(ctx), plan_(std::move(plan)), mem_(mem) {}

  /// The stage's checkpoint after its frontier and `in_flight` (a delayed step still running).
  void emit(int stage, const DagContext::Frontier& in_flight);

 private:
  DagContext::Frontier replicate(int stage, const DagContext::Frontier& after, double bytes);

  DagContext& ctx_;
  CheckpointPlan plan_;
  const MemoryEstimate& mem_;
};

}  // namespace strata
