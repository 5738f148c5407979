#include "sim/dag/redundant_compute_emitter.hpp"

namespace strata {

RedundantComputeEmitter::RedundantComputeEmitter(DagContext& ctx, const PipelinePartition& part,
                                                 const MemoryEstimate& mem, const std::vector<LayerWork>& work,
                                                 const StateBytes& states, TensorParallelEmitter& tp,
                                                 const DataParallelEmitter& dp, bool context_parallel)
    : ctx_(ctx), part_(part), mem_(mem), work_(work), states_(states), tp_(tp), dp_(dp),
      context_parallel_(context_parallel), chunks_(part.stages * part.virtual_stages), blocks_(0) {
  for (const ModelChunk& c : part.chunks) blocks_ += c.num_layers;
}

/// Redundant computation (Bamboo, Thorpe et al. NSDI 2023; docs/references.md, Redundant
/// computation): after its own forward and send, the stage runs the forward of the successor
/// chunk's layers on the same input, with their TP collectives, so that it can take over if the
/// successor fails. Its activations are not kept (Bamboo's lazy backward runs only after a
/// failure). It is the successor's forward, TP overlap included: with the framework's TP overlap its
/// collectives run beside its GEMMs, which the SMs they hold slow as in the forward (training_dag:
/// not a block's CP ring steps), and async TP's fused passes are in the layers' forward seconds.
/// Not included: an MoE block's expert-parallel all-to-alls, and CP's K/V exchange.
void RedundantComputeEmitter::forward(int stage, const PipelineUnit& u) {
  DagContext::Work work;
  int collectives = 0;
  double collective_bytes = 0.0;
  for (const int l : chunk_work_units(part_, successor(u.chunk), work_)) {
    const LayerWork& w = work_[static_cast<std::size_t>(l)];
    const DagContext::Work unit{w.fwd_flops, w.fwd_bytes, w.fwd_s};
    const bool ring_steps = context_parallel_ && l < blocks_;
    const DagContext::Work run =
        ring_steps ? unit : tp_.stretched(unit, w.fwd_s > 0.0 ? w.core_s / w.fwd_s : 0.0, true);
    work.flops += run.flops;
    work.bytes += run.bytes;
    work.seconds += run.seconds;
    collectives += w.tp_fwd;
    collective_bytes += w.tp_fwd_bytes;
  }
  auto& last = ctx_.last(stage);
  const DagContext::Frontier before = last;
  const DagContext::ChunkPos pos{u.chunk, u.microbatch, -1};
  auto ids = ctx_.per_lane(stage, TaskKind::redundant, pos, work, {}, {}, last);
  last = tp_.collectives(stage, collectives, collective_bytes, pos, ids, &before);
}

/// Redundant computation keeps the successor's replica current: after the successor's gradients
/// are reduced they come over (its shard, in the gradient precision) and this stage runs the
/// successor's optimizer step on its copy of the states.
void RedundantComputeEmitter::step(int stage) {
  const int next_stage = part_.chunks[static_cast<std::size_t>(successor(stage))].stage;
  // The successor's parameters, in this stage's optimizer shard.
  const double params = mem_.stages[static_cast<std::size_t>(next_stage)].parameters / dp_.optimizer_shards();
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  const auto& reduced = dp_.reductions(next_stage);
  const auto& next_last = ctx_.last(next_stage);
  auto& last = ctx_.last(stage);
  std::vector<TaskId> received;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::int64_t src = ctx_.rank_of(next_stage, lanes[i]), dst = ctx_.rank_of(stage, lanes[i]);
    Task t = ctx_.base(TaskKind::pp_transfer, Stream::p2p, {dst}, stage);
    DagContext::set_pos(t, {0, -1, -1});
    t.flows.push_back({Device::gpu(src), Device::gpu(dst), params * states_.gradients,
                       layout.node(src) != layout.node(dst)});
    t.deps = reduced.empty() ? next_last[i] : std::vector<TaskId>{reduced.back()};
    received.push_back(ctx_.dag().add(std::move(t)));
  }
  DagContext::Frontier deps = last;
  for (std::size_t i = 0; i < lanes.size(); ++i) deps[i].push_back(received[i]);
  const double per_param = adam_step_bytes(states_);
  last = DagContext::frontier_of(
      ctx_.per_lane(stage, TaskKind::redundant, {0, -1, -1}, {.bytes = per_param * params}, {}, {}, deps));
}

}  // namespace strata
