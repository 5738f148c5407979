#pragma once

/// The training framework as a policy: which communications overlap compute and which attention
/// kernel runs. Frameworks differ here more than in anything the model's shape decides: Megatron-LM
/// of 2021 reduced gradients after the backward, Megatron-Core and FSDP overlap the reduction with
/// it; Megatron-Core runs attention through cuDNN's fused kernel (Transformer Engine), PyTorch SDPA
/// and DeepSpeed through FlashAttention-2.

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

enum class Framework { megatron_lm_2021, megatron_core, deepspeed, pytorch_fsdp };

/// Which fused attention kernel a framework calls (when flash attention is on).
enum class AttentionKernel {
  flash_attention_2,  ///< FlashAttention-2 (PyTorch SDPA, DeepSpeed, Megatron-LM of 2023)
  vendor_fused,       ///< the GPU vendor's fused kernel (cuDNN through Transformer Engine)
  /// FlashAttention written in Triton (Tri Dao's flash_attn_triton, which MosaicML llm-foundry runs as
  /// attn_impl: triton): half FlashAttention-2's speed on A100 (Dao 2023, Fig. 4).
  triton_flash,
};

/// How each micro-batch's weight gradients reach the buffer the optimizer step reduces, where they
/// are not partitioned over DP or accumulated whole before the partition (GradientSync::last_microbatch);
/// under ZeRO-2/3 they are otherwise reduce-scattered every micro-batch instead.
/// A pass of its own reads and writes the whole buffer once per micro-batch: memory-bound work on
/// the compute stream, as many bytes as the stage has parameters times
/// accumulation_bytes_per_parameter (`training.grad_accumulation`).
enum class GradAccumulation {
  /// No pass over the whole buffer: Megatron's gradient_accumulation_fusion (February 2022 on,
  /// Megatron-Core) has the weight-gradient GEMM accumulate into the fp32 buffer itself (its hook
  /// still adds the few weights outside fused linears, the embedding table, norms and biases, which
  /// Strata leaves out); FSDP adds each micro-batch's reduce-scattered 1/DP shard.
  none,
  /// buffer += gradient, one elementwise kernel per parameter tensor after its backward: Megatron-LM
  /// 2021's local-DDP hook (main_grad.add_(grad)), PyTorch autograd's accumulation into .grad.
  add,
  /// The 16-bit gradient cast to the fp32 buffer's type (a temporary), then added: DeepSpeed's
  /// BF16_Optimizer (hp_grad.add_(lp_grad.to(fp32))), DeepSpeed's way to hold fp32 gradients of a
  /// bf16 model.
  cast_add,
};

/// Bytes one parameter's pass moves: the gradient read in the compute dtype (`gradient_bytes`), the
/// buffer (`buffer_bytes` wide) read and written; cast_add also writes and reads the fp32 temporary.
double accumulation_bytes_per_parameter(GradAccumulation a, double gradient_bytes, double buffer_bytes);
/// Elementwise kernels the pass launches per weight.
double accumulation_kernels_per_weight(GradAccumulation a);

/// When gradients partitioned over DP (ZeRO-2/3) are reduced across the micro-batches of a step
/// (`training.grad_sync`).
enum class GradientSync {
  /// Each micro-batch's gradients reduce-scattered into the shards as its backward produces them:
  /// DeepSpeed ZeRO-2/3, and FSDP's default.
  every_microbatch,
  /// No synchronisation before the last micro-batch (FSDP's no_sync(), Lightning's
  /// no_backward_sync): each rank accumulates the whole, unsharded gradient, reduce-scattered once
  /// after the last micro-batch's backward. One reduction instead of one per micro-batch, and an
  /// unsharded gradient buffer on every rank.
  last_microbatch,
};
std::string to_string(GradientSync s);

/// What `memory.recompute: selective` keeps, as each framework implements selective checkpointing.
enum class SelectiveRecompute {
  /// Megatron's (Korthikanti et al. 2022 §4.2): everything but the attention core, which is rerun.
  attention_core,
  /// PyTorch's per-op selective checkpointing as torchtitan applies it to each block
  /// (activation_checkpoint.mode selective, selective_ac_option "op"): the outputs of the matmuls
  /// (all but every second one of the block), of the attention kernel and the block's input are
  /// kept; the rest of the block, the other matmuls and every elementwise op, is rerun before its
  /// backward. Dense blocks with standard attention only (the matmuls in the module order wq, wk, wv,
  /// wo, w1, w3, w2).
  every_other_matmul,
};

/// How the loss's softmax cross-entropy runs: which passes it makes over the logits (its memory
/// traffic; the class's kernel sequences in compute_graph.cpp) and how it holds them while it runs
/// (the LM head's 16-bit logits are alive until it returns; all keep an fp32 softmax for the backward).
enum class CrossEntropy {
  /// Megatron's vocab-parallel cross-entropy as eager kernels (tensor_parallel/cross_entropy.py;
  /// Megatron-LM's default, Megatron-DeepSpeed's mpu alike): the fp32 copy of the logits is shifted,
  /// exponentiated and normalised in place, one pass each, and kept as the softmax, so only the
  /// 16-bit logits are transient.
  vocab_parallel,
  /// The same in place, its steps compiled into three kernels (Megatron-Core's
  /// cross_entropy_loss_fusion, fusions/fused_cross_entropy.py; on in NeMo 2.0's GPTConfig and
  /// Megatron-Bridge).
  vocab_parallel_fused,
  /// PyTorch's F.cross_entropy on logits.float() (torchtitan, transformers): log_softmax writes a new
  /// fp32 tensor beside the fp32 copy, so the copy and the 16-bit logits are transient.
  pytorch,
  /// One CUDA kernel each way on the 16-bit logits (flash-attn's CrossEntropyLoss over apex's
  /// xentropy: llm-foundry's default loss_fn fused_crossentropy): it keeps the logits themselves for
  /// the backward, no fp32 copy.
  single_kernel,
};

/// How overlapped TP communication (`training.overlap_tp_comm`) meets the GEMMs.
enum class TpOverlapMethod {
  /// Transformer Engine's userbuffers (Megatron-Core tp_comm_overlap): each GEMM and its collective cut
  /// into ring-exchanged slices in every pass, forward, recomputation and backward; the communication
  /// kernels hold SMs the GEMMs lose (kTpOverlapCost).
  userbuffers,
  /// PyTorch's async TP (torch.compile's micro-pipeline TP pass, torchtitan's
  /// enable_async_tensor_parallel): an all-gather fused with the matmuls it feeds and a matmul with the
  /// reduce-scatter it feeds, the slices moved by copy engines (no SMs held); each fused op passes over
  /// memory on the compute stream (its shard copied into symmetric memory, the partials summed;
  /// layer_work). Measured, it speeds up the forward and its recomputation and not the backward
  /// (Llama 3 8B: the time outside the forward 1,854 ms with and without; docs/references.md): the
  /// backward's TP collectives block.
  async_tp,
};

/// How sequence parallelism lays out the activations it shards, and what its linears keep.
enum class SequenceParallelStyle {
  /// Megatron's: activations [sequence, batch, hidden], so a rank's sequence shard is contiguous and
  /// the collectives move it in place. The column-parallel linears keep their input's sequence shard
  /// and all-gather it again in the backward for the weight gradient (tensor_parallel/layers.py,
  /// LinearWithGradAccumulationAndAsyncCommunication): three all-reduce equivalents per block backward.
  megatron,
  /// PyTorch DTensor's (torchtitan's SequenceParallel and PrepareModuleInput plans): activations
  /// [batch, sequence, hidden] sharded on dim 1. NCCL gathers and scatters along dim 0, so with a
  /// batch above 1 each all-gather is followed by a copy of the gathered tensor into place and each
  /// reduce-scatter preceded by one of its input (the functional collectives' chunk + cat), except
  /// where async TP's fused matmuls read the shards in place. Autograd saves what a column-parallel
  /// matmul read, the gathered input: its backward gathers nothing again (two all-reduce equivalents
  /// per block), and the input is kept whole on every TP rank.
  dtensor,
};

/// How fp8 training scales a 16-bit activation before casting it (with training.precision fp8).
enum class Fp8Scaling {
  /// Transformer Engine's delayed scaling (its DelayedScaling recipe, NeMo's default through 24.x):
  /// the scale comes from the amax history, so the cast needs no pass of its own to find it and a
  /// fused norm writes its output in fp8 directly (normalization.cpp: Float8Quantizer, FULLY_FUSED).
  delayed,
  /// Current (dynamic, tensor-wise) scaling: the scale comes from this tensor's amax, computed by a
  /// kernel of its own before the cast (Transformer Engine's Float8CurrentScalingQuantizer, Megatron-
  /// Bridge's FP8-CS; torchao's Float8Linear with tensorwise scaling, torchtitan's Float8). A fused norm
  /// writes 16 bits and its amax, and a second kernel casts (normalization.cpp: FUSED_NORM_AMAX_FP8).
  current,
};

struct FrameworkBehaviour {
  /// Gradient reduction runs on its own stream beside the backward; false: it does not overlap the
  /// compute. Gradients reduced once per step are reduced after the stage's whole backward (Megatron-LM
  /// before --overlap-grad-reduce all-reduces after the pipeline schedule); gradients reduced every
  /// micro-batch (ZeRO-2/3, DeepSpeed with overlap_comm off) make the compute stream wait for each.
  bool overlap_grad_reduce = true;
  /// ZeRO-3 / FSDP parameter all-gathers issued ahead of the layer that uses them (on their own
  /// stream); false: each gather starts when the previous layer's compute is done and the compute
  /// waits for it. Below ZeRO-3, the updated weights gathered in the next forward, not after the step.
  bool overlap_param_gather = true;
  /// Under the interleaved schedule, with overlap_param_gather below ZeRO-3: the updated weights'
  /// gathers issued together ahead of each model chunk (Megatron-Core align_param_gather); false:
  /// each dispatched as the forward reaches the layer before (its forward pre-hooks).
  bool align_param_gather = false;
  /// Tensor-parallel all-gathers and reduce-scatters pipelined with the GEMMs they feed (Megatron-Core
  /// tp_comm_overlap through Transformer Engine's userbuffers, PyTorch's async TP: tp_overlap_method);
  /// false: they block the compute stream.
  bool overlap_tp_comm = false;
  /// How they are pipelined when overlap_tp_comm is on.
  TpOverlapMethod tp_overlap_method = TpOverlapMethod::userbuffers;
  /// How sequence parallelism moves and keeps the activations (with parallelism.sequence_parallel).
  SequenceParallelStyle sequence_parallel_style = SequenceParallelStyle::megatron;
  /// Pipeline sends and receives asynchronous beside the compute (Megatron's overlap_p2p_comm);
  /// false: each send blocks the sender's compute stream.
  bool overlap_p2p_comm = false;
  /// The backward's TP collectives of the column-parallel linears issued asynchronously beside their
  /// weight-gradient GEMMs (with SP, the input re-gather beside the input-gradient GEMM too):
  /// Megatron's async tensor-model-parallel all-reduce; false: they block the compute stream.
  bool async_tp_backward = false;
  AttentionKernel attention = AttentionKernel::flash_attention_2;
  /// Norms, activations and rotary embeddings as fused kernels (Megatron, Transformer Engine, apex);
  /// false: as eager PyTorch runs a model's modules, one kernel per tensor op (RMSNorm's fp32
  /// decomposition, SwiGLU's activation and product apart).
  bool fused_elementwise = true;
  GradAccumulation grad_accumulation = GradAccumulation::none;
  GradientSync grad_sync = GradientSync::every_microbatch;
  SelectiveRecompute selective_recompute = SelectiveRecompute::attention_core;
  CrossEntropy cross_entropy = CrossEntropy::vocab_parallel;
  /// Training metrics computed from the logits every micro-batch, each a forward-only PyTorch
  /// cross-entropy over them under autocast (Composer evaluates its model's train metrics after each
  /// micro-batch's backward: llm-foundry's MPT has two, LanguageCrossEntropy and LanguagePerplexity).
  int logit_metrics = 0;
  /// Under fp8, the linears keep the FP8 copy of their input for the weight gradient (Transformer
  /// Engine's modules, Megatron-Core) rather than the 16-bit input.
  bool fp8_saves_quantized_inputs = false;
  /// Under fp8 with SP, the row-parallel linears quantize their output gradient before the backward
  /// all-gathers it, so it moves in FP8 (Transformer Engine's grad_output_preprocess, v1.5 and 2.x);
  /// false: in 16 bits.
  bool fp8_gathers_output_gradients = false;
  /// Under fp8, how the activations' scales are found.
  Fp8Scaling fp8_scaling = Fp8Scaling::delayed;
  /// Under fp8, the weights of the linears that run in fp8 all-gathered in fp8, 1 byte each: by ZeRO-3
  /// before each layer and by the distributed optimizer after the step (torchao's
  /// enable_fsdp_float8_all_gather under FSDP2, Megatron-Core's fp8_param_gather); false: at the
  /// weights' own width. Every preset leaves it off, as torchao and Megatron-Core default (Megatron-
  /// Bridge's FP8 recipes turn it on: a scenario of theirs sets it).
  bool fp8_param_gather = false;
};

/// Whether the backward's TP collectives are pipelined with its GEMMs (training.overlap_tp_comm with
/// userbuffers; async TP leaves them blocking).
inline bool overlaps_tp_backward(const FrameworkBehaviour& b) {
  return b.overlap_tp_comm && b.tp_overlap_method == TpOverlapMethod::userbuffers;
}

/// What overlapping TP communication with the GEMMs costs (Transformer Engine's userbuffers;
/// docs/references.md, Framework behaviour).
struct TpOverlapCost {
  /// SMs the communication kernels hold while a layer's GEMMs run, weighted by the GEMMs' FLOPs,
  /// forward and backward: the GEMMs run on the rest (set_sm_margin).
  double forward_sms = 0.0, backward_sms = 0.0;
};
/// The userbuffers configuration of NVIDIA's GPT-3 175B H100 benchmark (dgxc-benchmarking
/// gpt3_175b_hydra.yaml, TP 4). Per-layer GEMM FLOPs are QKV 3, projection 1, FC1 4, FC2 4 (units of
/// h²). Forward: QKV and FC1 ring exchange (1 SM), projection pipelined on 24 SMs, FC2 on 20:
/// (3·1 + 1·24 + 4·1 + 4·20) / 12 = 111/12. Backward (dgrad and wgrad each as big as the forward
/// GEMM): QKV dgrad 4 and wgrad 8 SMs, projection dgrad 1, FC1 dgrad 2 and wgrad 4, FC2 dgrad 1, the
/// projection's and FC2's wgrad none: (12 + 24 + 1 + 8 + 16 + 4) / 24 = 65/24.
inline constexpr TpOverlapCost kTpOverlapCost{111.0 / 12.0, 65.0 / 24.0};

inline constexpr Framework kDefaultFramework = Framework::megatron_core;

std::string to_string(Framework f);
std::string to_string(AttentionKernel k);
std::string to_string(GradAccumulation a);
std::string to_string(SelectiveRecompute r);
std::string to_string(CrossEntropy c);
std::string to_string(TpOverlapMethod m);
std::string to_string(SequenceParallelStyle s);
std::string to_string(Fp8Scaling s);
/// Every attention kernel with its name and what it is (`training.attention_kernel`).
struct AttentionKernelDoc {
  AttentionKernel kernel;
  std::string doc;
};
const std::vector<AttentionKernelDoc>& attention_kernel_docs();
/// Every framework with its name, what it sets, and why.
struct FrameworkDoc {
  Framework framework;
  std::string doc;
  bool validated = false;  ///< measured runs of this framework are in docs/validation.md
};
const std::vector<FrameworkDoc>& framework_docs();
/// What a preset depends on besides the framework.
struct PresetInputs {
  std::int64_t zero_stage = 0;
  bool interleaved = false;  ///< the interleaved pipeline schedule with more than one chunk per stage
  bool bf16 = false;            ///< training.precision bf16
  bool fp32_gradients = false;  ///< training.grad_precision fp32
  bool optimizer_offloaded = false;  ///< memory.offload.optimizer off the GPU
  /// Per-op selective checkpointing is modelled for the scenario (Scenario::per_op_checkpointing_modelled).
  bool per_op_checkpointing = true;
};
/// The preset's behaviour (before the scenario's own overrides).
FrameworkBehaviour preset(Framework f, const PresetInputs& in);

}  // namespace strata
