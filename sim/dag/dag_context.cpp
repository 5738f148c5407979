#include "sim/dag/dag_context.hpp"

namespace strata {

DagContext::DagContext(const RankLayout& layout, bool fold, int stages, bool offload_gpudirect)
    : layout_(layout), fold_(fold), offload_gpudirect_(offload_gpudirect) {
  for (std::int64_t d = 0; d < (fold_ ? 1 : layout_.replicas()); ++d)
    for (std::int64_t t = 0; t < (fold_ ? 1 : layout_.tp); ++t) lanes_.push_back({d, t});
  last_.assign(static_cast<std::size_t>(stages), Frontier(lanes_.size()));
}

std::vector<TaskId> DagContext::per_lane(int stage, TaskKind kind, const ChunkPos& pos, const Work& work,
                                         std::vector<MemoryChange> alloc, std::vector<MemoryChange> release,
                                         const Frontier& deps) {
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    Task t = base(kind, Stream::compute, {rank_of(stage, lanes_[i])}, stage);
    t.flops = work.flops;
    t.memory_bytes = work.bytes;
    t.kernel_seconds = work.seconds;
    t.allocate = alloc;
    t.release = release;
    set_pos(t, pos);
    t.deps = deps[i];
    ids.push_back(dag_.add(std::move(t)));
  }
  return ids;
}

std::vector<TaskId> DagContext::copies(int stage, const ChunkPos& pos, Stream stream, Tier tier, bool to_gpu,
                                       double bytes, std::vector<MemoryChange> alloc,
                                       std::vector<MemoryChange> release, const Frontier& deps, bool direct) {
  std::vector<TaskId> ids;
  for (std::size_t i = 0; i < lanes_.size(); ++i) {
    const std::int64_t r = rank_of(stage, lanes_[i]);
    Task t = base(TaskKind::offload, stream, {r}, stage);
    set_pos(t, pos);
    const Device gpu = Device::gpu(r), host = tier_device(tier, layout_.node(r));
    const bool dma = direct || (offload_gpudirect_ && tier == Tier::local_ssd);
    t.flows.push_back({to_gpu ? host : gpu, to_gpu ? gpu : host, bytes, false, dma});
    t.allocate = alloc;
    t.release = release;
    t.deps = deps[i];
    ids.push_back(dag_.add(std::move(t)));
  }
  return ids;
}

}  // namespace strata
