#include "sim/dag/offload_emitter.hpp"

#include <optional>
#include <utility>

namespace strata {

OffloadEmitter::OffloadEmitter(DagContext& ctx, const OffloadSpec& spec, const StateBytes& states, bool near_storage,
                               double optimizer_shards, const std::vector<LayerWork>& work)
    : ctx_(ctx), spec_(spec), states_(states), near_storage_(near_storage), optimizer_shards_(optimizer_shards),
      work_(work) {}

void OffloadEmitter::new_iteration(int stages) {
  act_out_.clear();
  grad_out_.assign(static_cast<std::size_t>(stages), {});
  act_copies_.assign(static_cast<std::size_t>(stages), {});
}

void OffloadEmitter::begin_unit(int stage, const PipelineUnit& u, const ModelChunk& chunk) {
  unit_chunk_ = u.chunk;
  unit_microbatch_ = u.microbatch;
  unit_first_layer_ = chunk.first_layer;
  unit_layers_ = chunk.num_layers;
  if (u.forward || spec_.activations == Tier::none) return;
  fetched_.assign(static_cast<std::size_t>(chunk.num_layers), {});
  // Offloaded activations come back `prefetch_layers` layers before their backward needs them.
  const int ahead = static_cast<int>(spec_.prefetch_layers);
  for (int k = 0; k <= ahead && k < unit_layers_; ++k) fetch(stage, k, ctx_.last(stage));
}

/// The backward unit's k-th layer (in backward order) fetched back, after `gate` and its copy out.
void OffloadEmitter::fetch(int stage, int k, DagContext::Frontier gate) {
  const Tier act_tier = spec_.activations;
  const int layer = unit_first_layer_ + unit_layers_ - 1 - k;
  const double saved = work_[static_cast<std::size_t>(layer)].saved;
  const auto& sent = act_out_.at({unit_chunk_, unit_microbatch_, layer});
  for (std::size_t i = 0; i < ctx_.num_lanes(); ++i) gate[i].push_back(sent[i]);
  fetched_[static_cast<std::size_t>(k)] =
      ctx_.copies(stage, {unit_chunk_, unit_microbatch_, layer}, Stream::offload_in, act_tier, true, saved,
                  {{Tier::hbm, MemoryUse::activations, saved}},
                  {{act_tier, MemoryUse::activations, saved * pinned_factor(act_tier)}}, gate);
}

void OffloadEmitter::before_forward(int stage, DagContext::Frontier& last) {
  const auto ahead = static_cast<std::size_t>(spec_.prefetch_layers);
  const auto& outgoing = act_copies_[static_cast<std::size_t>(stage)];
  if (spec_.activations != Tier::none && outgoing.size() > ahead) {
    // Back-pressure: at most prefetch_layers + 1 layers wait in HBM for their copy out.
    const auto& oldest = outgoing[outgoing.size() - ahead - 1];
    for (std::size_t i = 0; i < ctx_.num_lanes(); ++i) last[i].push_back(oldest[i]);
  }
}

void OffloadEmitter::after_forward(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                   const std::vector<TaskId>& ids) {
  const Tier act_tier = spec_.activations;
  if (act_tier == Tier::none) return;
  // The saved tensors leave for the tier once the layer is done.
  auto sent = ctx_.copies(stage, pos, Stream::offload_out, act_tier, false, w.saved,
                          {{act_tier, MemoryUse::activations, w.saved * pinned_factor(act_tier)}},
                          {{Tier::hbm, MemoryUse::activations, w.saved}}, DagContext::frontier_of(ids));
  act_out_[{pos.chunk, pos.microbatch, pos.layer}] = sent;
  act_copies_[static_cast<std::size_t>(stage)].push_back(sent);
}

void OffloadEmitter::before_backward(int k, DagContext::Frontier& last) {
  if (spec_.activations == Tier::none) return;
  for (std::size_t i = 0; i < ctx_.num_lanes(); ++i) last[i].push_back(fetched_[static_cast<std::size_t>(k)][i]);
}

void OffloadEmitter::after_backward(int stage, int k, const std::vector<TaskId>& ids) {
  const int ahead = static_cast<int>(spec_.prefetch_layers);
  if (spec_.activations != Tier::none && k + ahead + 1 < unit_layers_)
    fetch(stage, k + ahead + 1, DagContext::frontier_of(ids));
}

void OffloadEmitter::gradient_out(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                  const DagContext::Frontier& reduced) {
  if (spec_.optimizer != Tier::none) {
    // ZeRO-Offload: each reduced gradient shard streams to host memory during the backward.
    const double shard = w.all_params * states_.gradients / static_cast<double>(ctx_.layout().shard_size());
    auto sent = ctx_.copies(stage, pos, Stream::grad_out, Tier::dram, false, shard, {}, {}, reduced);
    auto& out = grad_out_[static_cast<std::size_t>(stage)];
    out.assign(sent.begin(), sent.end());
  } else if (near_storage_) {
    // Computational SSD: the reduced gradient shard goes down in 16 bits, peer to peer.
    const double shard = (optimizer_shards_ > 1.0 ? w.all_params : w.params) * states_.weights / optimizer_shards_;
    auto sent = ctx_.copies(stage, pos, Stream::grad_out, Tier::local_ssd, false, shard, {}, {}, reduced, true);
    auto& out = grad_out_[static_cast<std::size_t>(stage)];
    out.assign(sent.begin(), sent.end());
  }
}

/// Near-storage step (computational SSD; docs/references.md, Near-storage optimizer step): once
/// the last 16-bit gradient shard is on the drives, the update reads and rewrites the fp32 states
/// on the drives' own media, and the 16-bit weights come back to the GPU peer to peer. Nothing in
/// 32 bits crosses PCIe.
std::vector<TaskId> OffloadEmitter::storage_optimizer(int stage, double params, DagContext::Frontier deps) {
  const auto& lanes = ctx_.lanes();
  const auto& sent = grad_out_[static_cast<std::size_t>(stage)];
  for (std::size_t i = 0; i < lanes.size() && i < sent.size(); ++i) deps[i].push_back(sent[i]);
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::int64_t r = ctx_.rank_of(stage, lanes[i]);
    const Device ssd = tier_device(Tier::local_ssd, ctx_.layout().node(r));
    Task t = ctx_.base(TaskKind::optimizer, Stream::host, {r}, stage);
    DagContext::set_pos(t, {0, -1, -1});
    t.flows.push_back({ssd, ssd, params * states_.optimizer, false});
    t.deps = deps[i];
    ids.push_back(ctx_.dag().add(std::move(t)));
  }
  return ctx_.copies(stage, {0, -1, -1}, Stream::upload, Tier::local_ssd, true, params * states_.weights, {}, {},
                     DagContext::frontier_of(ids), true);
}

/// ZeRO-Offload / ZeRO-Infinity step: wait for the last gradient shard to reach host memory; with
/// states on NVMe or CXL read them into DRAM and write them back; run Adam on the CPU; copy the
/// updated compute-precision shard back to the GPU (unless the parameters live on the host too).
std::vector<TaskId> OffloadEmitter::host_optimizer(int stage, Tier tier, double params, DagContext::Frontier deps) {
  const auto& lanes = ctx_.lanes();
  const RankLayout& layout = ctx_.layout();
  const auto& sent = grad_out_[static_cast<std::size_t>(stage)];
  for (std::size_t i = 0; i < lanes.size() && i < sent.size(); ++i) deps[i].push_back(sent[i]);
  const double state_bytes = states_.optimizer * params;
  auto host_stage = [&](TaskKind kind, std::optional<std::pair<Tier, Tier>> move, double bytes,
                        const DagContext::Frontier& after) {
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const std::int64_t r = ctx_.rank_of(stage, lanes[i]);
      Task t = ctx_.base(kind, Stream::host, {r}, stage);
      DagContext::set_pos(t, {0, -1, -1});
      if (move)
        t.flows.push_back(
            {tier_device(move->first, layout.node(r)), tier_device(move->second, layout.node(r)), bytes, false});
      else t.host_params = params;
      t.deps = after[i];
      ids.push_back(ctx_.dag().add(std::move(t)));
    }
    return ids;
  };
  DagContext::Frontier gate = deps;
  if (tier != Tier::dram)
    gate = DagContext::frontier_of(host_stage(TaskKind::offload, std::pair{tier, Tier::dram}, state_bytes, gate));
  std::vector<TaskId> done = host_stage(TaskKind::host_optimizer, std::nullopt, 0.0, gate);
  if (tier != Tier::dram)
    host_stage(TaskKind::offload, std::pair{Tier::dram, tier}, state_bytes, DagContext::frontier_of(done));
  const Tier params_tier = spec_.params;
  if (params_tier != Tier::none) {
    // The parameters live on the host: the updated 16-bit shard is written to their tier.
    if (params_tier == Tier::dram) return done;
    return host_stage(TaskKind::offload, std::pair{Tier::dram, params_tier}, params * states_.weights,
                      DagContext::frontier_of(done));
  }
  return ctx_.copies(stage, {0, -1, -1}, Stream::upload, Tier::dram, true, params * states_.weights, {}, {},
                     DagContext::frontier_of(done));
}

}  // namespace strata
