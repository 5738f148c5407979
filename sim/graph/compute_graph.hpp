#pragma once

/// The model's computation graph for one micro-batch: ops (norms, projections, attention core, MLP,
/// MoE router and experts, embedding, LM head, loss) as vertices, tensors as edges (Boost.Graph).
/// Sizes are for the whole (unsharded) model; how they split over tensor/sequence parallelism is a
/// property of each weight and tensor, applied by the policies that read the graph.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "sim/config/framework.hpp"
#include "sim/config/model_spec.hpp"

namespace strata {

enum class OpKind {
  embedding,
  norm,
  qkv_projection,
  attention_core,
  attention_output,
  mlp_up,
  mlp_activation,
  mlp_down,
  router,
  experts,
  final_norm,
  lm_head,
  loss
};

std::string to_string(OpKind kind);

/// How a weight or a tensor divides over the tensor-parallel group of size t.
enum class Split {
  replicated,  ///< every TP rank holds all of it
  tensor,      ///< divided by t (column/row-parallel weights and their outputs)
  sequence     ///< replicated under plain TP, divided by t with sequence parallelism
};

/// Which dimension of a GEMM a Megatron tensor-parallel linear divides over the TP group.
enum class GemmSplit {
  none,  ///< replicated on every TP rank (the MoE router)
  n,     ///< column-parallel: output features
  k,     ///< row-parallel: input features
  count  ///< the batched copies: attention heads
};

/// One forward GEMM of an op, whole model width: (m × k) · (k × n), `count` times (experts, or the
/// batched score GEMMs of unfused attention). Its backward is dX (m × n · n × k) and dW (k × m · m × n).
struct GemmShape {
  double m = 0.0, n = 0.0, k = 0.0;
  double count = 1.0;
  GemmSplit split = GemmSplit::none;
};

/// The fused (flash) attention kernel's problem: batch × heads independent (queries × keys)
/// score blocks of head_dim; heads divide over TP.
struct AttentionShape {
  double batch = 0.0, heads = 0.0, queries = 0.0, keys = 0.0, head_dim = 0.0;
  bool causal = true;  ///< decoder self-attention: the kernel skips blocks above the diagonal
};

/// A tensor an op keeps for its backward pass.
struct SavedTensor {
  std::string name;
  double bytes = 0.0;
  Split split = Split::replicated;
  /// Read only by the attention core's backward (its s² scores; under FP8 with fused attention, the
  /// 16-bit output beside the projection's FP8 copy): Megatron's selective recompute drops it and
  /// reruns the core.
  bool attention_core_only = false;
  /// The block's input: all that full recomputation keeps.
  bool block_input = false;
  /// A copy of the op's weights (autocast's cast), not of its tokens: context parallelism does not
  /// divide it.
  bool weights = false;
};

struct Op {
  std::string name;
  OpKind kind = OpKind::norm;
  /// Transformer block index; -1 before the first block, num_layers after the last.
  int layer = 0;
  double forward_flops = 0.0;   ///< one micro-batch, whole model width
  double backward_flops = 0.0;  ///< input and weight gradients: 2× forward for GEMMs
  double params_split = 0.0;       ///< weights divided over TP
  double params_replicated = 0.0;  ///< weights every TP rank holds
  /// The LM head tied to the token embedding: counted once in the model's parameters, but held
  /// again by the last pipeline stage when it is not the first.
  bool shares_embedding = false;
  std::vector<SavedTensor> saved = {};
  double output_bytes = 0.0;
  /// HBM bytes the op holds only while its forward runs, beyond what it keeps and its output (the
  /// loss's 16-bit logits and fp32 working copy); divides over TP as traffic_split says.
  double transient_bytes = 0.0;
  /// A linear whose input is a norm's output with nothing between: Transformer Engine fuses the
  /// two (LayerNormLinear, Megatron-Core's TELayerNormColumnParallelLinear) and the norm writes the
  /// FP8 input itself under delayed scaling, or finds its amax under current scaling (KernelCosts).
  /// Set on a standard block's QKV, its MLP's up-projection, and latent attention's up-projections
  /// from Q and KV latents; not on a linear after a separate norm (MLA's down-projections and
  /// q_proj, shared experts).
  bool input_from_norm = false;
  /// HBM bytes read and written by the op's memory-bound kernels in forward (norms, softmax,
  /// dropout, bias-residual adds, activations), whole model width. See kBackwardTrafficFactor.
  double memory_traffic = 0.0;
  /// The same in backward where the op's kernels are known (the loss's cross-entropy); otherwise
  /// kBackwardTrafficFactor × memory_traffic.
  std::optional<double> backward_memory_traffic = std::nullopt;
  /// Routed experts: the bytes of one pass sorting the routed token copies by local expert
  /// (Megatron-Core's alltoall dispatcher, sort_chunks_by_idxs, after the dispatch and again before
  /// the combine), which runs only where a rank holds more than one expert: expert_shard adds it.
  double expert_sort_traffic = 0.0;
  Split traffic_split = Split::sequence;  ///< how that traffic divides over the TP group
  /// The op's matrix multiplies; their 2·m·n·k·count add up to forward_flops.
  std::vector<GemmShape> gemms = {};
  /// Set on a fused attention core (its FLOPs are not GEMMs the library tiles).
  std::optional<AttentionShape> fused_attention = std::nullopt;
  /// Every TP rank computes all of it (the MoE router, the latent-attention down-projections):
  /// divided over the TP group only by sequence parallelism.
  bool tp_replicated = false;
  /// Share of the op's weights one token uses: k of E routed experts; 1 for every other op.
  double active_fraction = 1.0;
  /// Output widths of the matmuls a PyTorch-native module runs for this op, in order (QKV: wq, wk,
  /// wv; a gated MLP-up: w1 (gate), w3 (up)): what per-op selective checkpointing counts. Set on a
  /// dense block's projections with standard attention; empty elsewhere.
  std::vector<double> native_matmuls = {};

  double params() const { return params_split + params_replicated; }
};

/// A tensor flowing from one op to another.
struct TensorEdge {
  double bytes = 0.0;
};

using ComputeGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Op, TensorEdge>;
using OpId = ComputeGraph::vertex_descriptor;

/// Shape of the micro-batch the graph is built for.
struct GraphShape {
  std::int64_t seq_len = 0;
  std::int64_t micro_batch = 1;
  double activation_bytes = 2.0;  ///< bytes per activation element
  bool flash_attention = true;
  /// Memory-bound ops run as eager PyTorch runs them (one kernel per tensor op, RMSNorm in fp32 and
  /// rotary embeddings as their decomposition) rather than as fused kernels (Megatron, Transformer
  /// Engine); see the kernel sequences in compute_graph.cpp.
  bool eager_elementwise = false;
  /// How the loss's cross-entropy runs (its passes over the logits, and whether its softmax is a new
  /// fp32 tensor beside the fp32 copy of the logits: PyTorch's F.cross_entropy on logits.float()).
  CrossEntropy cross_entropy = CrossEntropy::vocab_parallel;
  /// Forward-only cross-entropies of the logits computed as training metrics (FrameworkBehaviour).
  int logit_metrics = 0;
  /// FP8 training whose linears save for the weight gradient the FP8 copy of the input their GEMM
  /// read (Transformer Engine's Linear and LayerNormLinear), 1 byte per element, rather than the
  /// 16-bit input (torchao's Float8Linear saves the high-precision one). Not a MoE block's MLP
  /// input, which the router reads too and keeps in 16 bits.
  bool fp8_saved_linear_inputs = false;
  /// The column-parallel linears keep their all-gathered input, whole on every TP rank, rather than
  /// its sequence shard (SequenceParallelStyle::dtensor: autograd saves what the matmul read).
  bool gathered_linear_inputs = false;
  /// Autocast over fp32 parameters (TrainingSpec::autocast): bytes per parameter of the copy of its
  /// weight each linear casts to the compute precision and keeps for its backward; 0 without autocast.
  double autocast_weight_bytes = 0.0;
  /// Bytes per element of the residual stream (the embedding's output, each block's input and its
  /// pre-norms), where it differs from activation_bytes: under autocast the fp32 embedding's output
  /// stays fp32, the linears' bf16 outputs are added to it in fp32, and each linear after a norm
  /// casts the norm's fp32 output; 0: activation_bytes.
  double residual_bytes = 0.0;
};

/// Builds the graph and checks it is acyclic (an internal invariant).
ComputeGraph build_compute_graph(const ModelSpec& model, const GraphShape& shape);

/// Ops in topological order (Boost.Graph). Throws std::logic_error on a cycle.
std::vector<OpId> topological_order(const ComputeGraph& graph);

/// Total parameters of the model (a tied LM head counted once).
double total_parameters(const ComputeGraph& graph);

/// Parameters one token uses in a forward pass (a tied LM head counted once): all but the routed
/// experts the token is not sent to. The embedding and LM head count in full, as Mistral's 12.9B of
/// Mixtral 8x7B does (docs/references.md, "MoE models").
double active_parameters(const ComputeGraph& graph);

/// Parameters by the part of the model that holds them; they add up to total_parameters().
struct ParameterBreakdown {
  double embedding = 0.0;  ///< token (and position) embedding
  double attention = 0.0;  ///< Q/K/V and output projections with their biases
  double mlp = 0.0;        ///< MLP or experts (routed and shared) and router
  double norms = 0.0;
  double lm_head = 0.0;    ///< 0 when tied to the embedding
  /// Not a part: the parameters one token uses (active_parameters()); the total for dense models.
  double active = 0.0;
};
ParameterBreakdown parameter_breakdown(const ComputeGraph& graph);

/// Model FLOPs of forward + backward for one micro-batch, without recomputation.
double model_flops(const ComputeGraph& graph);

/// Backward memory traffic as a multiple of forward: an elementwise kernel's forward reads its input
/// and writes its output (2 tensors); its backward reads the saved input (or output) and the output
/// gradient and writes the input gradient (3 tensors), as for GeLU, softmax and LayerNorm.
inline constexpr double kBackwardTrafficFactor = 1.5;

}  // namespace strata
