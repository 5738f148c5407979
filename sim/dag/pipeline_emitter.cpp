#include "sim/dag/pipeline_emitter.hpp"

namespace strata {

PipelineEmitter::PipelineEmitter(DagContext& ctx, const PipelinePartition& part, double hidden_bytes, bool overlap)
    : ctx_(ctx), part_(part), hidden_bytes_(hidden_bytes), overlap_(overlap),
      chunks_(part.stages * part.virtual_stages) {}

void PipelineEmitter::receive(int stage, const PipelineUnit& u) {
  if (first(u)) return;
  auto& last = ctx_.last(stage);
  const auto& incoming = p2p_.at({u.forward ? u.chunk - 1 : u.chunk + 1, u.microbatch, u.forward});
  for (std::size_t i = 0; i < ctx_.num_lanes(); ++i) last[i].push_back(incoming[i]);
}

void PipelineEmitter::send_onward(int stage, const PipelineUnit& u) {
  const int to_chunk = u.forward ? u.chunk + 1 : u.chunk - 1;
  if (to_chunk >= 0 && to_chunk < chunks_) send(stage, u, to_chunk);
}

/// The unit's output (activation or input gradient) to the stage of the next chunk.
void PipelineEmitter::send(int stage, const PipelineUnit& u, int to_chunk) {
  auto& last = ctx_.last(stage);
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  const int to_stage = part_.chunks[static_cast<std::size_t>(to_chunk)].stage;
  std::vector<TaskId> sends;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::int64_t src = ctx_.rank_of(stage, lanes[i]), dst = ctx_.rank_of(to_stage, lanes[i]);
    // Blocking on the sender's compute stream: Megatron's 2022 schedules wait for each p2p exchange.
    // Overlapped (Megatron's overlap_p2p_comm): an asynchronous isend on its own stream; only the
    // receiver waits for it.
    Task t = ctx_.base(TaskKind::pp_transfer, overlap_ ? Stream::p2p : Stream::compute, {src}, stage);
    DagContext::set_pos(t, {u.chunk, u.microbatch, -1});
    // Megatron's scatter/gather optimisation: each TP rank sends only its 1/t slice.
    t.flows.push_back({Device::gpu(src), Device::gpu(dst), hidden_bytes_ / static_cast<double>(layout.tp),
                       layout.node(src) != layout.node(dst)});
    t.deps = last[i];
    sends.push_back(ctx_.dag().add(std::move(t)));
  }
  p2p_[{u.chunk, u.microbatch, u.forward}] = sends;
}

}  // namespace strata
