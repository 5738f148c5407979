#include "sim/dag/checkpoint_emitter.hpp"

#include <algorithm>
#include <utility>

namespace strata {

/// One checkpoint of the stage's ranks through `checkpoint.tiers`. The first hop (the snapshot)
/// blocks training; `sync` blocks for every hop; `async` persists the later hops in the background,
/// one after the other; `tiered` cuts the checkpoint into `checkpoint.chunks` pieces that stream
/// through the hops as a pipeline, its last hop yielding to training traffic when the drain is
/// congestion-aware; `in_memory` copies the snapshot to `replicas` peer nodes' DRAM and, when
/// `options.persist`, on to the later tiers; `near_storage` has nothing to snapshot (the states
/// live on the SSDs) and only persists the later tiers from there. States already on the host
/// (offloaded) join at the first tier from where they are instead of leaving HBM. Each staging tier
/// holds the bytes until the next hop has passed them on.
void CheckpointEmitter::emit(int stage, const DagContext::Frontier& in_flight) {
  using Frontier = DagContext::Frontier;
  const auto& lanes = ctx_.lanes();
  const RankLayout& layout = ctx_.layout();
  const auto& sm = mem_.stages[static_cast<std::size_t>(stage)];
  const double shards = static_cast<double>(layout.replicas());
  const CheckpointBehaviour& policy = plan_.policy;
  const bool sync = policy.blocks_until_durable, near = plan_.near_storage, in_memory = policy.peer_replicas > 0;
  // Near storage: the fp32 master on the SSDs stands for the 16-bit weights.
  // Experts are divided over their expert-DP replicas: all_parameters / dp (see StageMemory). Under
  // HSDP each rank writes its share of the shard its group replicates, the same bytes.
  const double weights = near ? 0.0 : sm.all_parameters * plan_.states.weights / shards;
  const double optimizer = sm.all_parameters * plan_.states.optimizer / shards, total = weights + optimizer;
  const int chunks = static_cast<int>(policy.chunks);
  std::vector<Tier> tiers = plan_.tiers;
  if (in_memory && !plan_.persist) tiers.resize(1);
  const bool yields = policy.background_yields;
  auto device = [&](Tier tier, std::int64_t rank) { return tier_device(tier, layout.node(rank)); };
  const Tier weights_at = plan_.weights_at;
  const Tier states_at = near ? Tier::local_ssd : plan_.optimizer_at;
  auto& last = ctx_.last(stage);
  Frontier start = last;
  // Under a delayed update the step of this iteration is still running: wait for it.
  for (std::size_t i = 0; i < lanes.size() && i < in_flight.size(); ++i)
    start[i].insert(start[i].end(), in_flight[i].begin(), in_flight[i].end());
  const Stream background[] = {Stream::checkpoint, Stream::checkpoint_2, Stream::checkpoint_3};
  const double share = 1.0 / static_cast<double>(chunks);
  Frontier blocking_end = start;
  auto add_hop = [&](Stream stream, const Frontier& deps, auto&& fill) {
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      const std::int64_t r = ctx_.rank_of(stage, lanes[i]);
      Task t = ctx_.base(TaskKind::checkpoint, stream, {r}, stage);
      t.deps = deps[i];
      fill(t, r);
      ids.push_back(ctx_.dag().add(std::move(t)));
    }
    return DagContext::frontier_of(ids);
  };
  for (int c = 0; c < chunks; ++c) {
    Frontier prev = c == 0 ? start : blocking_end;
    for (std::size_t hop = 0; hop < tiers.size(); ++hop) {
      const bool blocks = hop == 0 || sync;
      const Stream stream = blocks ? Stream::compute : background[std::min<std::size_t>(hop - 1, 2)];
      const bool resident = near && hop == 0;  // the states already sit there
      prev = add_hop(stream, prev, [&](Task& t, std::int64_t r) {
        DagContext::set_pos(t, {0, c, -1});
        const Device dst = device(tiers[hop], r);
        if (hop == 0) {
          for (const auto& [bytes, at] : {std::pair{weights, weights_at}, std::pair{optimizer, states_at}}) {
            const Device src = at == Tier::none ? Device::gpu(r) : device(at, r);
            const bool dma = plan_.gpudirect && src.kind == DeviceKind::gpu && dst.kind == DeviceKind::local_ssd;
            if (!(src == dst) && bytes > 0) t.flows.push_back({src, dst, bytes * share, false, dma, false, r});
          }
        } else {
          Flow f{device(tiers[hop - 1], r), dst, total * share, false};
          f.background = yields;
          f.rail = r;
          t.flows.push_back(f);
        }
        if (tiers[hop] != Tier::object_store && !resident)
          t.allocate.push_back({tiers[hop], MemoryUse::buffers, total * share});
        if (hop > 0 && tiers[hop - 1] != Tier::object_store && !(near && hop == 1))
          t.release.push_back({tiers[hop - 1], MemoryUse::buffers, total * share});
      });
      if (blocks) blocking_end = prev;
      if (in_memory && hop == 0) prev = replicate(stage, prev, total);
    }
  }
  last = blocking_end;  // training waits for the blocking hops
}

/// In-memory checkpoint (Gemini): each node's snapshot also goes to the DRAM of the next
/// `replicas` nodes over the NICs, in the background; the peers hold it until the next one.
DagContext::Frontier CheckpointEmitter::replicate(int stage, const DagContext::Frontier& after, double bytes) {
  const auto& lanes = ctx_.lanes();
  const RankLayout& layout = ctx_.layout();
  const std::int64_t nodes = plan_.nodes;
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::int64_t r = ctx_.rank_of(stage, lanes[i]), node = layout.node(r);
    Task t = ctx_.base(TaskKind::checkpoint, Stream::checkpoint, {r}, stage);
    DagContext::set_pos(t, {0, 0, -1});
    const std::int64_t replicas = plan_.policy.peer_replicas;
    for (std::int64_t j = 1; j <= replicas; ++j) {
      const Device peer = tier_device(Tier::dram, (node + j) % nodes);
      Flow f{tier_device(Tier::dram, node), peer, bytes, true};
      f.rail = r;
      t.flows.push_back(f);
    }
    // The peers' copies of this node's snapshot, counted where the rank is (the nodes are alike).
    t.allocate.push_back({Tier::dram, MemoryUse::buffers, bytes * static_cast<double>(replicas)});
    t.deps = after[i];
    ids.push_back(ctx_.dag().add(std::move(t)));
  }
  return DagContext::frontier_of(ids);
}

}  // namespace strata
