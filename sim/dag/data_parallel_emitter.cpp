#include "sim/dag/data_parallel_emitter.hpp"

#include <algorithm>
#include <utility>

namespace strata {

DataParallelEmitter::DataParallelEmitter(DagContext& ctx, const DataParallelPlan& plan, int stages)
    : ctx_(ctx), plan_(plan) {
  gather_history_.assign(static_cast<std::size_t>(stages), {});
}

/// ZeRO-3: gather the layer's weights before its compute, `prefetch_layers` layers ahead of use
/// (DeepSpeed's prefetch); with offloaded parameters the rank's shard first comes back from its tier
/// (ZeRO-Infinity). Returns what the compute that consumes them releases.
std::vector<MemoryChange> DataParallelEmitter::param_gather(int stage, const DagContext::ChunkPos& pos,
                                                            const LayerWork& w, DagContext::Frontier& last) {
  return gather_ahead(stage, pos, w, last, static_cast<std::size_t>(plan_.prefetch_layers), true,
                      TaskKind::param_gather);
}

/// Megatron-Core's distributed optimizer with --overlap-param-gather (core_r0.8.0
/// optimizer/distrib_optimizer.py): the first bucket's all-gather is dispatched behind the step, each
/// next one when the forward pre-hook waits for the one before, so a bucket's gather runs beside the
/// compute of the bucket before it. With align_param_gather under the interleaved schedule the
/// schedule issues each model chunk's gathers together ahead of the chunk (param_sync_func), so none
/// waits for the compute. Buckets are taken as layers; into the resident weights. Data-parallel
/// traffic of the optimizer, counted as the gather after the step is.
void DataParallelEmitter::updated_gather(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                         DagContext::Frontier& last) {
  const bool issued = plan_.updated_gather == UpdatedGather::issued_at_step;
  gather_ahead(stage, pos, w, last, issued ? kIssuedAtRestart : 1, false, TaskKind::dp_comm);
}

std::vector<MemoryChange> DataParallelEmitter::gather_ahead(int stage, const DagContext::ChunkPos& pos,
                                                            const LayerWork& w, DagContext::Frontier& last,
                                                            std::size_t ahead, bool transient, TaskKind kind) {
  const RankLayout& layout = ctx_.layout();
  const std::size_t lanes = ctx_.num_lanes();
  const double full = w.params * plan_.states.weights;
  // Under EP the experts' shard is 1/expert_dp_size of this rank's experts, which comes to
  // all_params / (dp·cp) (LayerWork); HSDP (no EP) shards over the shard group.
  const double shard =
      (layout.ep > 1 ? w.all_params * plan_.states.weights : full) / static_cast<double>(layout.shard_size());
  // What the gather moves and leaves in HBM: narrower than the stored weights where the fp8
  // linears' are gathered in fp8 (each rank casts its shard before sending it).
  const double gathered = plan_.gathered_bytes(w.params, w.fp8_params);
  // history holds, per earlier gather, what had run when it was issued: waiting for the entry
  // `ahead` back lets this gather overlap that many layers of compute. Its first entry is what
  // restart_gathers left: the step the iteration's gathers follow.
  auto& history = gather_history_[static_cast<std::size_t>(stage)];
  std::vector<TaskId> waits;
  if (!history.empty() && ahead > 0) waits = history[history.size() >= ahead ? history.size() - ahead : 0];
  // Not prefetched: the gather waits for everything the stage has issued, so it and the compute
  // take turns.
  DagContext::Frontier gate = ahead == 0 ? last : DagContext::Frontier(lanes, waits);
  std::vector<MemoryChange> release;
  const Tier tier = plan_.params_tier;
  if (tier != Tier::none) {
    auto fetched = ctx_.copies(stage, pos, Stream::param_in, tier, true, shard,
                               {{Tier::hbm, MemoryUse::workspace, shard}}, {}, gate);
    release.push_back({Tier::hbm, MemoryUse::workspace, shard});
    gate = DagContext::frontier_of(fetched);
  }
  if (layout.shard_size() > 1) {
    // Under EP the dense weights come from the DP×CP group, the experts' from their expert-DP group.
    const bool experts_apart = layout.ep > 1 && w.expert_params > 0.0;
    std::vector<Task> collectives{group_collective(
        stage, Collective::all_gather,
        experts_apart ? plan_.gathered_bytes(w.params - w.expert_params, w.fp8_params - w.expert_params) : gathered,
        pos, kind, Stream::gather, Group::shard)};
    if (experts_apart && layout.expert_dp_size() > 1)
      collectives.push_back(group_collective(stage, Collective::all_gather,
                                             plan_.gathered_bytes(w.expert_params, w.expert_params), pos, kind,
                                             Stream::gather, Group::expert_data_parallel));
    for (const auto& g : gate) collectives.front().deps.insert(collectives.front().deps.end(), g.begin(), g.end());
    if (transient) {
      // The other ranks' shards, as gathered.
      const double others = full > 0.0 ? (full - shard) * gathered / full : 0.0;
      collectives.back().allocate.push_back({Tier::hbm, MemoryUse::workspace, others});
      release.push_back({Tier::hbm, MemoryUse::workspace, others});
    }
    TaskId done = 0;
    for (auto& task : collectives) done = ctx_.dag().add(std::move(task));
    for (auto& g : gate) g = {done};
  }
  if (ahead != kIssuedAtRestart) {
    std::vector<TaskId> issued;
    for (const auto& l : last) issued.insert(issued.end(), l.begin(), l.end());
    history.push_back(std::move(issued));
    if (history.size() > std::max<std::size_t>(ahead, 1)) history.erase(history.begin());
  }
  for (std::size_t i = 0; i < lanes; ++i) last[i].insert(last[i].end(), gate[i].begin(), gate[i].end());
  return release;
}

/// Returns the reduction's last task.
TaskId DataParallelEmitter::gradient_reduction(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                               const DagContext::Frontier& last) {
  const RankLayout& layout = ctx_.layout();
  const Collective c = sharded() ? Collective::reduce_scatter : Collective::all_reduce;
  const bool experts_apart = layout.ep > 1 && w.expert_params > 0.0;
  const double grads = (experts_apart ? w.params - w.expert_params : w.params) * plan_.states.gradients;
  std::vector<Task> collectives{group_collective(stage, c, grads, pos, TaskKind::dp_comm, Stream::dp_comm,
                                                 sharded() ? Group::shard : Group::data_parallel)};
  // HSDP: each shard group reduce-scatters into its shards, then the shard's copies in the other
  // groups are all-reduced (FSDP HYBRID_SHARD; MiCS's hierarchical reduction).
  if (sharded() && layout.dp_replicate > 1)
    collectives.push_back(group_collective(stage, Collective::all_reduce,
                                           grads / static_cast<double>(layout.shard_size()), pos, TaskKind::dp_comm,
                                           Stream::dp_comm, Group::replicate));
  // The experts' gradients: over the ranks holding the same experts (Megatron-Core's
  // expert-data-parallel group); nothing to reduce when it is one rank.
  if (experts_apart && layout.expert_dp_size() > 1)
    collectives.push_back(group_collective(stage, c, w.expert_params * plan_.states.gradients, pos,
                                           TaskKind::dp_comm, Stream::dp_comm, Group::expert_data_parallel));
  for (const auto& l : last) collectives.front().deps.insert(collectives.front().deps.end(), l.begin(), l.end());
  auto& tasks = dp_tasks_[static_cast<std::size_t>(stage)];
  for (auto& task : collectives) tasks.push_back(ctx_.dag().add(std::move(task)));
  return tasks.back();
}

void DataParallelEmitter::gather_updated(int stage, double parameters, double expert_parameters,
                                         double fp8_parameters, const std::vector<TaskId>& step,
                                         DagContext::Frontier& done) {
  // On the gather stream: the next iteration's reductions must not queue behind it (they do not
  // wait for it under a delayed update). Under EP the experts' shards are gathered over their
  // expert-DP group, the dense ones over DP.
  const RankLayout& layout = ctx_.layout();
  const bool experts_apart = layout.ep > 1 && expert_parameters > 0.0;
  const double dense = experts_apart ? plan_.gathered_bytes(parameters - expert_parameters,
                                                            fp8_parameters - expert_parameters)
                                     : plan_.gathered_bytes(parameters, fp8_parameters);
  std::vector<Task> collectives{group_collective(stage, Collective::all_gather, dense, {0, -1, -1},
                                                 TaskKind::dp_comm, Stream::gather, Group::shard)};
  if (experts_apart && layout.expert_dp_size() > 1)
    collectives.push_back(group_collective(stage, Collective::all_gather,
                                           plan_.gathered_bytes(expert_parameters, expert_parameters), {0, -1, -1},
                                           TaskKind::dp_comm, Stream::gather, Group::expert_data_parallel));
  for (auto& task : collectives) {
    for (TaskId id : step) task.deps.push_back(id);
    TaskId g = ctx_.dag().add(std::move(task));
    for (auto& d : done) d = {g};
  }
}

void DataParallelEmitter::restart_gathers(int stage, const DagContext::Frontier& last) {
  std::vector<TaskId> ready;
  for (const auto& l : last) ready.insert(ready.end(), l.begin(), l.end());
  gather_history_[static_cast<std::size_t>(stage)] = {ready};
}

/// One NCCL collective per lane over its data-parallel group (DP×CP) or its expert-data-parallel group,
/// as one ring over every member: across nodes NCCL spreads it over the members' NICs (rails,
/// nccl_collective), as the measured curves of docs/validation.md run (10 x 8 H100 all-gathers and
/// reduce-scatters within 11 % from 512 MiB; three phases in turn, NVLink, NICs, NVLink, were 60 % slow
/// there). ZeRO-3 gathers use the gather stream so they can run ahead of the gradient reductions
/// (DeepSpeed's prefetch).
Task DataParallelEmitter::group_collective(int stage, Collective c, double bytes, const DagContext::ChunkPos& pos,
                                           TaskKind kind, Stream stream, Group group) {
  const RankLayout& layout = ctx_.layout();
  Task merged = ctx_.base(kind, stream, {}, stage);
  DagContext::set_pos(merged, pos);
  for (const DagContext::Lane& lane : ctx_.lanes()) {
    const std::int64_t r = ctx_.rank_of(stage, lane);
    const std::vector<std::int64_t> members = group == Group::expert_data_parallel ? layout.expert_dp_group(r)
                                              : group == Group::shard                ? layout.shard_group(r)
                                              : group == Group::replicate            ? layout.replicate_group(r)
                                                                                     : layout.dp_group(r);
    Task part = nccl_collective(c, members, {r}, bytes, kind, stream, layout);
    merged.ranks.push_back(r);
    merged.latency_steps = part.latency_steps;
    merged.collective_calls = part.collective_calls;
    merged.flows.insert(merged.flows.end(), part.flows.begin(), part.flows.end());
  }
  return merged;
}

}  // namespace strata
