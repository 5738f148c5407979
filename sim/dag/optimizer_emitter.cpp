#include "sim/dag/optimizer_emitter.hpp"

namespace strata {

OptimizerEmitter::OptimizerEmitter(DagContext& ctx, const OptimizerPlan& plan, const MemoryEstimate& mem,
                                   DataParallelEmitter& dp, OffloadEmitter& offload, int stages)
    : ctx_(ctx), plan_(plan), mem_(mem), dp_(dp), offload_(offload) {
  delayed_step_.assign(static_cast<std::size_t>(stages), {});
}

void OptimizerEmitter::step(int stage) {
  const StageMemory& sm = mem_.stages[static_cast<std::size_t>(stage)];
  const bool sharded = dp_.sharded();
  const double shard = dp_.optimizer_shards();
  // Sharded: dense parameters over the shard group (dp·cp without HSDP), experts over expert-DP,
  // all_parameters / (dp·cp) (StageMemory).
  const double params = (sharded ? sm.all_parameters : sm.parameters) / shard;
  auto& last = ctx_.last(stage);
  DagContext::Frontier deps = last;
  const auto& dp = dp_.reductions(stage);
  if (!dp.empty())
    for (auto& d : deps) d.push_back(dp.back());
  std::vector<TaskId> ids;
  const Tier tier = plan_.optimizer_tier;
  const Tier params_tier = plan_.params_tier;
  const StateBytes& states = plan_.states;
  if (plan_.near_storage) {
    ids = offload_.storage_optimizer(stage, params, deps);
  } else if (tier == Tier::none) {
    // Adam (adam_step_bytes). A mixed-precision step makes three more passes (Megatron-LM's
    // MixedPrecisionOptimizer.step, megatron/optimizer/optimizer.py): the gradient-norm clipping reads
    // the gradients, the master -> model copy re-reads the master weights, and zero_grad writes the
    // gradient buffer.
    const double adam = adam_step_bytes(states);
    const double per_param = adam + 2.0 * states.gradients + states.master;
    ids = ctx_.per_lane(stage, TaskKind::optimizer, {0, -1, -1}, {.bytes = per_param * params}, {}, {}, deps);
    if (params_tier != Tier::none)  // the updated shard goes back to where the parameters live
      ids = ctx_.copies(stage, {0, -1, -1}, Stream::upload, params_tier, false, params * states.weights, {}, {},
                        DagContext::frontier_of(ids));
  } else {
    ids = offload_.host_optimizer(stage, tier, params, deps);
  }
  DagContext::Frontier done = DagContext::frontier_of(ids);
  if (dp_.gathers_updated_after_step())
    dp_.gather_updated(stage, sm.parameters, sm.expert_parameters, sm.fp8_parameters, ids, done);
  if (tier != Tier::none && plan_.delayed_update) {
    // DPU: the next iteration runs on the weights of the step before this one, so it waits only for
    // that step while this one overlaps it.
    auto& previous = delayed_step_[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < ctx_.num_lanes() && i < previous.size(); ++i)
      last[i].insert(last[i].end(), previous[i].begin(), previous[i].end());
    previous = done;
  } else {
    last = done;
  }
  // The next iteration's first gathers (ZeRO-3, or the overlapped updated weights) wait for this step.
  dp_.restart_gathers(stage, last);
}

}  // namespace strata
