#include "sim/dag/tensor_parallel_emitter.hpp"

#include <algorithm>
#include <map>

#include "sim/dag/collectives.hpp"

namespace strata {

DagContext::Work TensorParallelEmitter::stretched(DagContext::Work work, double core_fraction, bool forward) const {
  if (!(forward ? overlapped() : overlaps_backward()) || work.seconds <= 0.0) return work;
  const double stretch = forward ? overlap_.forward_stretch : overlap_.backward_stretch;
  const double core = work.seconds * std::clamp(core_fraction, 0.0, 1.0);
  work.seconds = core + (work.seconds - core) * stretch;
  return work;
}

/// TP collectives on the hidden-state buffer for each TP group among the lanes: one task per group,
/// depending on its members' tasks. With SP they are reduce-scatter + all-gather pairs, a ring
/// all-reduce's volume and steps on the mean of the pair's buffers (an fp8 input gathered, a 16-bit
/// output scattered; `bytes`).
DagContext::Frontier TensorParallelEmitter::collectives(int stage, int count, double bytes,
                                                        const DagContext::ChunkPos& pos,
                                                        const std::vector<TaskId>& producers,
                                                        const DagContext::Frontier* before,
                                                        std::optional<Collective> op) {
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  DagContext::Frontier out(lanes.size());
  if (layout.tp == 1 || count == 0) {
    for (std::size_t i = 0; i < lanes.size(); ++i) out[i] = {producers[i]};
    return out;
  }
  const bool overlap = overlapped() && before != nullptr && overlap_.chunks > 1;
  // Overlapped: Transformer Engine cuts each GEMM and its collective into `chunks` slices and runs
  // slice k's exchange beside slice k+1's GEMM, so every slice but one is hidden behind compute
  // (NeMo docs, Communication Overlap; docs/references.md); PyTorch's async TP decomposes them the
  // same way, one slice per TP rank.
  const double hidden_share = overlap ? 1.0 - 1.0 / static_cast<double>(overlap_.chunks) : 0.0;
  const Collective c = op.value_or(exchange_);
  for (const auto& [d, members] : groups()) {
    std::vector<std::int64_t> simulated;
    for (std::size_t i : members) simulated.push_back(ctx_.rank_of(stage, lanes[i]));
    std::vector<TaskId> after;
    for (std::size_t i : members) after.push_back(producers[i]);
    // Overlapped slices move through Transformer Engine's userbuffers or async TP's symmetric memory,
    // not NCCL calls: they do not pay NCCL's per-call cost (nvlink.collective_latency).
    if (overlap) {
      std::vector<TaskId> start;
      for (std::size_t i : members) start.insert(start.end(), (*before)[i].begin(), (*before)[i].end());
      after.push_back(
          add_collective(stage, count, bytes, hidden_share, false, pos, simulated, std::move(start), 0.0, c));
    }
    const TaskId id =
        add_collective(stage, count, bytes, 1.0 - hidden_share, !overlap, pos, simulated, std::move(after), 0.0, c);
    for (std::size_t i : members) out[i] = {id};
  }
  return out;
}

DagContext::Frontier TensorParallelEmitter::issued_within(int stage, int count, double bytes,
                                                          const DagContext::ChunkPos& pos,
                                                          const DagContext::Frontier& kernel_start, double delay_s) {
  const auto& lanes = ctx_.lanes();
  DagContext::Frontier out(lanes.size());
  if (ctx_.layout().tp == 1 || count == 0) return out;
  for (const auto& [d, members] : groups()) {
    std::vector<std::int64_t> simulated;
    std::vector<TaskId> deps;
    for (std::size_t i : members) {
      simulated.push_back(ctx_.rank_of(stage, lanes[i]));
      deps.insert(deps.end(), kernel_start[i].begin(), kernel_start[i].end());
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const TaskId id =
        add_collective(stage, count, bytes, 1.0, true, pos, simulated, std::move(deps), delay_s, exchange_);
    for (std::size_t i : members) out[i] = {id};
  }
  return out;
}

TaskId TensorParallelEmitter::add_collective(int stage, int count, double bytes, double share, bool nccl,
                                             const DagContext::ChunkPos& pos,
                                             const std::vector<std::int64_t>& simulated, std::vector<TaskId> deps,
                                             double delay_s, Collective op) {
  const RankLayout& layout = ctx_.layout();
  Task t = nccl_collective(op, layout.tp_group(simulated.front()), simulated,
                           share * bytes, TaskKind::tp_comm, Stream::tp_comm, layout);
  t.latency_steps *= count;
  t.collective_calls = nccl ? count : 0;
  t.issue_delay_s = delay_s;
  t.iteration = ctx_.iteration();
  t.stage = stage;
  DagContext::set_pos(t, pos);
  t.deps = std::move(deps);
  return ctx_.dag().add(std::move(t));
}

std::map<std::int64_t, std::vector<std::size_t>> TensorParallelEmitter::groups() const {
  std::map<std::int64_t, std::vector<std::size_t>> out;  // dp index -> lanes
  const auto& lanes = ctx_.lanes();
  for (std::size_t i = 0; i < lanes.size(); ++i) out[lanes[i].first].push_back(i);
  return out;
}

}  // namespace strata
