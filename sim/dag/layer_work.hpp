#pragma once

/// What one transformer block costs one tensor-parallel rank per micro-batch, read off the
/// computation graph once: the FLOPs and bytes of its forward, backward and recomputation, the
/// activations it keeps, its weights and its tensor-parallel collectives. Every emitter that puts
/// per-layer work in the DAG takes its numbers from here.

#include <vector>

#include "sim/config/scenario_spec.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

/// Forward TP collectives of one transformer block, in all-reduce equivalents (see layer_work).
inline constexpr int kBlockCollectives = 2;

/// With context parallelism the attention core of one rank runs as cp ring steps over blocks of
/// K/V (sim/dag/context_parallel_emitter): the diagonal step on its own K/V (a causal (s/cp)²
/// block), then cp−1 steps on the blocks received, each half a block under causal load balancing.
/// The block's other work splits around it: what runs before the attention (norm, QKV projection)
/// and what runs after (output projection, MLP).
struct CpAttentionWork {
  double diag_flops = 0.0, step_flops = 0.0;      ///< forward FLOPs of the diagonal and of each other step
  double diag_fwd_s = 0.0, diag_bwd_s = 0.0;      ///< kernel seconds of the diagonal step
  double step_fwd_s = 0.0, step_bwd_s = 0.0;      ///< kernel seconds of each other step
  double pre_flops = 0.0, pre_bytes = 0.0, pre_fwd_s = 0.0, pre_bwd_s = 0.0;  ///< ops before the attention core
  double core_bwd_flops = 0.0, core_bwd_bytes = 0.0;  ///< the attention core's backward work, all steps
  double pre_bwd_flops = 0.0, pre_bwd_bytes = 0.0;
};

/// One block's work for one micro-batch on one TP rank (and, with context parallelism, on its s/cp
/// tokens). The embedding counts with the first block and the final norm, LM head and loss with the
/// last, because they run on those blocks' stages (EndsWork::folded), or they have entries of their own.
struct LayerWork {
  /// The block's recompute policy (block_recompute): the scenario's, or none where full recomputation
  /// is limited to a chunk's first blocks. Entries of the embedding or the head alone: none.
  Recompute recompute = Recompute::none;
  double fwd_flops = 0.0, fwd_bytes = 0.0;
  double bwd_flops = 0.0, bwd_bytes = 0.0;
  double core_flops = 0.0, core_bytes = 0.0;  ///< attention core forward: what selective recompute reruns
  double block_flops = 0.0, block_bytes = 0.0;  ///< the block's own forward: what full recompute reruns
  /// What per-op selective checkpointing reruns (SelectiveRecompute::every_other_matmul): the
  /// block's even-numbered native matmuls and its elementwise ops, forward; in `rerun_s` seconds.
  double rerun_flops = 0.0, rerun_bytes = 0.0, rerun_s = 0.0;
  /// Kernel seconds on this GPU (sim/graph/kernel_costs) of the forward, backward, attention-core
  /// forward and block forward above.
  double fwd_s = 0.0, bwd_s = 0.0, core_s = 0.0, block_s = 0.0;
  double saved = 0.0;    ///< activation bytes kept for backward under the policy
  double rebuilt = 0.0;  ///< bytes recomputation rebuilds transiently before the backward
  double transient = 0.0;  ///< bytes the forward holds only while it runs (Op::transient_bytes)
  double params = 0.0;   ///< weights held by this TP rank
  double expert_params = 0.0;  ///< the routed experts' part of `params` (this rank's num_experts/ep)
  /// The part of `params` in the linears that run in fp8 under fp8 (runs_in_fp8: the projections and
  /// the experts, not the embedding, norms or LM head), whatever the precision.
  double fp8_params = 0.0;
  /// Weights with every expert (before EP): sharded states and the checkpoint divide these over dp
  /// (see StageMemory::all_parameters).
  double all_params = 0.0;
  int tp_fwd = 0, tp_bwd = 0;  ///< TP collectives on the hidden-state buffer, forward and backward
  /// The block's own forward collectives (tp_fwd without the embedding's), what full recomputation
  /// reruns: kBlockCollectives, or 1 in a folded MoE block without shared experts.
  int tp_block = 0;
  /// What those move, as the all-reduce buffer they add up to (an all-gather or a reduce-scatter of S
  /// counts S/2): tp_fwd (tp_bwd) hidden-state buffers, less what fp8 saves where the inputs are
  /// gathered as fp8 (gathered_input_bytes) and, backward, the output gradients
  /// (gathered_output_gradient_bytes). Forward, full recomputation's rerun (tp_block) and backward.
  /// The embedding's forward collective and the LM head's backward one count a whole hidden-state
  /// buffer each.
  double tp_fwd_bytes = 0.0, tp_block_bytes = 0.0, tp_bwd_bytes = 0.0;
  /// What one of the block's input all-gathers moves (their mean: an MoE sub-block gathers 16-bit
  /// tokens where a linear's input may be fp8).
  double tp_gather_bytes = 0.0;
  /// The checkpointed block input each TP rank keeps a 1/tp share of under full recomputation with
  /// memory.distribute_saved_activations, gathered whole before the recomputation (0 otherwise).
  double tp_saved_input_bytes = 0.0;
  /// All-gathers of the hidden-state buffer per-op checkpointing reruns under TP with SP, one per
  /// column-parallel input of the block: torchtitan's save list keeps the reduce-scatters' outputs,
  /// not the all-gathers' (docs/references.md). Each gathers tp_gather_bytes.
  int tp_rerun_gathers = 0;
  /// Of tp_bwd, the collectives Megatron issues asynchronously beside the column-parallel linears'
  /// backward GEMMs (the input-gradient all-reduces; with SP the input re-gathers and the gradient
  /// reduce-scatters), and the kernel seconds of those GEMMs (the weight gradients; with SP the input
  /// gradients too) that they can hide behind. Used when training.async_tp_backward is on.
  int tp_bwd_async = 0;
  double tp_bwd_async_bytes = 0.0;  ///< their volume, as tp_bwd_bytes
  double tp_bwd_hiding_s = 0.0;
  CpAttentionWork cp;          ///< the split around the ring attention (filled when cp > 1)
  /// Expert-parallel all-to-alls (dispatch before the experts, combine after), forward and backward;
  /// 0 without EP.
  int ep_fwd = 0, ep_bwd = 0;
  /// Bytes one rank hands to one all-to-all: its tokens × top-k × hidden × activation bytes (its
  /// sequence shard under SP), times the pace factor (the most loaded rank receives that much more).
  double ep_bytes = 0.0;
};

/// Where the embedding's and the head's work goes. Folded: with the first and the last block (one
/// entry per block). Apart: in entries of their own after the blocks, embedding_unit(L) and
/// head_unit(L), for a pipeline whose first model chunk holds only the embedding or whose last only
/// the head (Llama 3 §3.3.2: 126 layers on 16 stages of 8 chunks).
enum class EndsWork { folded, apart };
inline constexpr int embedding_unit(int num_layers) { return num_layers; }
inline constexpr int head_unit(int num_layers) { return num_layers + 1; }

/// One micro-batch's hidden-state buffer on one rank (its s/cp tokens under CP), in the activation
/// dtype: what a TP collective reduces and a pipeline send carries.
double hidden_state_bytes(const Scenario& sc);
/// What one all-gather of a column-parallel linear's input moves under SP: the hidden-state buffer,
/// in fp8 when the precision is (Transformer Engine's LayerNormLinear quantizes before gathering;
/// torchao's Float8Linear gathers float8 for TP by default; docs/references.md).
double gathered_input_bytes(const Scenario& sc);
/// What one all-gather of a row-parallel linear's output gradient moves under SP, backward: the
/// hidden-state buffer, in fp8 when the precision is and the framework's linears quantize the
/// gradient before gathering it (Transformer Engine's grad_output_preprocess;
/// FrameworkBehaviour::fp8_gathers_output_gradients).
double gathered_output_gradient_bytes(const Scenario& sc);

/// `block_policy`: each block's recompute policy (block_recompute, which needs the partition); empty,
/// the scenario's for every block.
std::vector<LayerWork> layer_work(const Scenario& sc, const ComputeGraph& graph, EndsWork ends = EndsWork::folded,
                                  const std::vector<Recompute>& block_policy = {});

/// What recomputation reruns of one block before its backward under `recompute` (the block's own is
/// LayerWork::recompute): the whole block (full), the attention core (selective as Megatron's) or the
/// block's elementwise ops and every other matmul (selective as per-op checkpointing); nothing without
/// recompute.
struct RerunWork {
  double flops = 0.0, bytes = 0.0, seconds = 0.0;
  int tp_all_gathers = 0;  ///< TP all-gathers per-op checkpointing's rerun repeats (full recomputation: tp_block)
  double tp_all_gather_bytes = 0.0;  ///< the buffers they gather, summed
};
RerunWork rerun_work(const LayerWork& w, Recompute recompute, SelectiveRecompute selective);

/// The entries of `work` (layer_work's result) model chunk `chunk` runs, in forward order: its blocks,
/// and when the embedding and the head have entries of their own, the embedding before the first
/// chunk's blocks and the head after the last chunk's.
std::vector<int> chunk_work_units(const PipelinePartition& part, int chunk, const std::vector<LayerWork>& work);

}  // namespace strata
