#pragma once

/// Tensor (and sequence) parallelism inside a layer: the collectives on the hidden-state buffer
/// that follow a layer's compute in each TP group, one task per group waiting for its members.
/// Forward, backward, recomputation and redundant computation all end in them. With the framework's
/// TP overlap (training.overlap_tp_comm) they run beside the GEMMs they are chunked with.

#include <map>
#include <optional>
#include <vector>

#include "sim/dag/collectives.hpp"
#include "sim/dag/dag_context.hpp"

namespace strata {

/// How TP collectives meet the compute.
struct TpOverlap {
  bool enabled = false;
  /// Slices each GEMM and its collective are cut into (Transformer Engine's ring exchange: one per
  /// TP rank): the last slice's communication has no GEMM left to hide behind.
  int chunks = 1;
  /// The backward's collectives pipelined too (userbuffers); false: only the forward's and the
  /// recomputation's (PyTorch's async TP), the backward's block.
  bool backward = true;
  /// The all-gathers per-op selective checkpointing reruns pipelined with the rerun GEMMs
  /// (userbuffers); false: they block (async TP: measured, its gain is the forward's alone on
  /// torchtitan's per-op-checkpointed Llama 3 8B; docs/references.md).
  bool per_op_rerun = true;
  /// Compute-time factor of the overlapped GEMMs, forward and backward: the SMs the communication
  /// kernels hold are lost to them (sm_count / (sm_count - comm SMs)).
  double forward_stretch = 1.0, backward_stretch = 1.0;
};

class TensorParallelEmitter {
 public:
  /// `sequence_parallel`: a sub-block's exchange is a reduce-scatter and an all-gather (else an
  /// all-reduce, which a switch with NVLink SHARP reduces; collectives.hpp).
  TensorParallelEmitter(DagContext& ctx, bool sequence_parallel, TpOverlap overlap = {})
      : ctx_(ctx), exchange_(sequence_parallel ? Collective::scatter_gather : Collective::all_reduce),
        overlap_(overlap) {}

  /// Whether a layer's collectives are overlapped with its GEMMs.
  bool overlapped() const { return overlap_.enabled && ctx_.layout().tp > 1; }
  /// Whether a layer's backward collectives are overlapped with its GEMMs.
  bool overlaps_backward() const { return overlapped() && overlap_.backward; }
  /// Whether the all-gathers per-op checkpointing reruns are overlapped with the rerun GEMMs.
  bool overlaps_per_op_rerun() const { return overlapped() && overlap_.per_op_rerun; }
  /// The layer's compute with its GEMM part (everything but the attention core, `core_fraction` of
  /// the seconds; the backward's taken as the forward's) slowed by the overlap's SMs; unchanged when
  /// that pass is not overlapped or without kernel seconds.
  DagContext::Work stretched(DagContext::Work work, double core_fraction, bool forward) const;

  /// `count` exchanges (all-reduces, with SP their reduce-scatter + all-gather pairs; or `op`s) on
  /// `bytes` (their buffers summed; LayerWork::tp_fwd_bytes)
  /// after `producers` (one per lane); returns the new frontier. Overlapped (and `before`, the frontier
  /// the producers started from, given): all but one chunk of them starts with the producers and runs
  /// beside them; the last chunk follows both.
  DagContext::Frontier collectives(int stage, int count, double bytes, const DagContext::ChunkPos& pos,
                                   const std::vector<TaskId>& producers,
                                   const DagContext::Frontier* before = nullptr,
                                   std::optional<Collective> op = std::nullopt);

  /// `count` exchanges on `bytes` issued from inside a kernel that is running (Megatron's
  /// asynchronous TP backward): per TP group, ready when the kernel may start (`kernel_start`: per
  /// lane what the kernel waits for, its stream predecessor included) and moving bytes `delay_s`
  /// into it. The kernel does not wait for them; returns the frontier of the exchange.
  DagContext::Frontier issued_within(int stage, int count, double bytes, const DagContext::ChunkPos& pos,
                                     const DagContext::Frontier& kernel_start, double delay_s);

 private:
  /// One task for a TP group (`simulated`: its simulated members): `share` of `count` `op`s on
  /// `bytes` after `deps`; `nccl` says whether each pays NCCL's call latency.
  TaskId add_collective(int stage, int count, double bytes, double share, bool nccl, const DagContext::ChunkPos& pos,
                        const std::vector<std::int64_t>& simulated, std::vector<TaskId> deps, double delay_s,
                        Collective op);
  /// Lane indices per TP group (keyed by replica index).
  std::map<std::int64_t, std::vector<std::size_t>> groups() const;

  DagContext& ctx_;
  Collective exchange_;  ///< a sub-block's own exchange
  TpOverlap overlap_;
};

}  // namespace strata
