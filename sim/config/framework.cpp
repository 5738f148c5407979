#include "sim/config/framework.hpp"

namespace strata {

std::string to_string(Framework f) {
  switch (f) {
    case Framework::megatron_lm_2021: return "megatron-lm-2021";
    case Framework::megatron_core: return "megatron-core";
    case Framework::deepspeed: return "deepspeed";
    case Framework::pytorch_fsdp: return "pytorch-fsdp";
  }
  return "framework";
}

std::string to_string(AttentionKernel k) {
  switch (k) {
    case AttentionKernel::flash_attention_2: return "flash-attention-2";
    case AttentionKernel::vendor_fused: return "vendor-fused";
    case AttentionKernel::triton_flash: return "triton-flash-attention";
  }
  return "attention";
}

std::string to_string(GradAccumulation a) {
  switch (a) {
    case GradAccumulation::none: return "none";
    case GradAccumulation::add: return "add";
    case GradAccumulation::cast_add: return "cast-add";
  }
  return "grad_accumulation";
}

std::string to_string(CrossEntropy c) {
  switch (c) {
    case CrossEntropy::vocab_parallel: return "vocab-parallel";
    case CrossEntropy::vocab_parallel_fused: return "vocab-parallel-fused";
    case CrossEntropy::pytorch: return "pytorch";
    case CrossEntropy::single_kernel: return "single-kernel";
  }
  return "cross_entropy";
}

std::string to_string(TpOverlapMethod m) {
  switch (m) {
    case TpOverlapMethod::userbuffers: return "userbuffers";
    case TpOverlapMethod::async_tp: return "async-tp";
  }
  return "tp_overlap_method";
}

std::string to_string(SequenceParallelStyle s) {
  switch (s) {
    case SequenceParallelStyle::megatron: return "megatron";
    case SequenceParallelStyle::dtensor: return "dtensor";
  }
  return "sequence_parallel_style";
}

std::string to_string(Fp8Scaling s) {
  switch (s) {
    case Fp8Scaling::delayed: return "delayed";
    case Fp8Scaling::current: return "current";
  }
  return "fp8_scaling";
}

std::string to_string(SelectiveRecompute r) {
  switch (r) {
    case SelectiveRecompute::attention_core: return "attention-core";
    case SelectiveRecompute::every_other_matmul: return "every-other-matmul";
  }
  return "selective_recompute";
}

std::string to_string(GradientSync s) {
  switch (s) {
    case GradientSync::every_microbatch: return "every-microbatch";
    case GradientSync::last_microbatch: return "last-microbatch";
  }
  return "grad_sync";
}

double accumulation_bytes_per_parameter(GradAccumulation a, double gradient_bytes, double buffer_bytes) {
  switch (a) {
    case GradAccumulation::none: return 0.0;
    case GradAccumulation::add: return gradient_bytes + 2.0 * buffer_bytes;
    // The cast reads the gradient and writes the temporary; the add reads the temporary and the
    // buffer and writes the buffer.
    case GradAccumulation::cast_add: return gradient_bytes + 4.0 * buffer_bytes;
  }
  return 0.0;
}

double accumulation_kernels_per_weight(GradAccumulation a) {
  switch (a) {
    case GradAccumulation::none: return 0.0;
    case GradAccumulation::add: return 1.0;
    case GradAccumulation::cast_add: return 2.0;  // the cast, then the add
  }
  return 0.0;
}

FrameworkBehaviour preset(Framework f, const PresetInputs& in) {
  // Sources for each switch: docs/references.md, Framework behaviour.
  switch (f) {
    // Narayanan et al. 2021 (SC21): the data-parallel all-reduce runs after the pipeline flush; no
    // ZeRO-3, tensor-parallel all-reduces and pipeline sends block the compute stream.
    // Its local DDP adds each gradient into main_grad in a backward hook, every micro-batch (gradient
    // accumulation fusion came in February 2022).
    case Framework::megatron_lm_2021:
      return {.overlap_grad_reduce = false, .overlap_param_gather = false, .overlap_tp_comm = false,
              .overlap_p2p_comm = false, .attention = AttentionKernel::flash_attention_2,
              .grad_accumulation = GradAccumulation::add};
    // Megatron-Core with --overlap-grad-reduce and --overlap-param-gather, as NVIDIA's NeMo recipes
    // run it. The distributed optimizer's gather of the updated weights then runs in the next
    // forward: each bucket's dispatched by the forward pre-hook of the bucket before (core_r0.8.0
    // distrib_optimizer.py), or under the interleaved schedule with align_param_gather (the CLI's
    // default from core_r0.9.0; NeMo's MegatronCommOverlapCallback sets it with vp > 1, and NeMo
    // 1's distributed Adam issues the same way) each model chunk's issued together ahead of the
    // chunk (param_sync_func in pipeline_parallel/schedules.py). core_r0.8.0 has no such flag (its
    // --delay-param-gather, off by default, instead waits for each chunk's gathers ahead of it):
    // its runs set training.align_param_gather false. tp_comm_overlap stays off unless asked for
    // (--tp-comm-overlap; the NeMo GPT-3 175B recipe asks, so its scenario sets
    // training.overlap_tp_comm). overlap_p2p_comm: Megatron-Bridge turns it on with the interleaved
    // schedule only (comm_overlap: vp > 1). Attention through Transformer Engine's cuDNN fused
    // kernel. Its linears are Transformer Engine's, which under FP8 keep the FP8 copy of their
    // input for the weight gradient (module/linear.py, layernorm_linear.py) and, with SP, gather
    // the output gradient in FP8 (module/base.py grad_output_preprocess).
    case Framework::megatron_core:
      return {.overlap_grad_reduce = true, .overlap_param_gather = true,
              .align_param_gather = true, .overlap_tp_comm = false, .overlap_p2p_comm = in.interleaved,
              .async_tp_backward = true,
              .attention = AttentionKernel::vendor_fused, .fp8_saves_quantized_inputs = true,
              .fp8_gathers_output_gradients = true};
    // DeepSpeed's overlap_comm defaults to false, and to true under ZeRO-3 (DeepSpeed configuration
    // docs, zero_optimization.overlap_comm); ZeRO-3 prefetches parameters (stage3_prefetch_bucket_size
    // defaults to 5e7), while ZeRO-1/2 all-gather the updated weights inside the step
    // (stage_1_and_2.py step: all_gather_dp_groups), before the next forward can start, so nothing
    // of theirs is overlapped; its pipeline engine sends and receives in the schedule's own
    // instructions (blocking); attention through FlashAttention-2. fp32 gradients of a bf16 model
    // without an offloaded optimizer are its BF16_Optimizer's (the engine picks it for bf16 below
    // ZeRO-2 unless the optimizer is offloaded), which casts and adds every micro-batch; otherwise
    // autograd accumulates .grad.
    case Framework::deepspeed: {
      const bool bf16_optimizer = in.bf16 && in.fp32_gradients && !in.optimizer_offloaded;
      return {.overlap_grad_reduce = in.zero_stage >= 3, .overlap_param_gather = in.zero_stage >= 3,
              .overlap_tp_comm = false,
              .overlap_p2p_comm = false, .attention = AttentionKernel::flash_attention_2,
              .grad_accumulation = bf16_optimizer ? GradAccumulation::cast_add : GradAccumulation::add};
    }
    // FSDP's backward hooks reduce-scatter each unit's gradients while the backward goes on, and
    // backward_prefetch (default BACKWARD_PRE) issues the next unit's all-gather before the current
    // unit's gradient computation; SDPA dispatches to FlashAttention-2. Below ZeRO-3
    // (SHARD_GRAD_OP) the weights resharded after the step are gathered at their first use in the next
    // forward, each unit's issued while the one before computes (the CPU runs ahead of the GPU).
    // Its modules run eagerly, as torchtitan and transformers write them (no torch.compile).
    // Selective checkpointing is PyTorch's per-op one, as torchtitan applies it (every other matmul
    // rerun; torchtitan/distributed/activation_checkpoint.py). Its TP overlap, when asked for, is
    // PyTorch's async TP (torchtitan's enable_async_tensor_parallel). Its sequence parallelism is
    // DTensor's, sharded on dim 1 of [batch, sequence, hidden] (torchtitan's parallelize plans). Its
    // fp8 is torchao's Float8Linear, tensor-wise dynamic scaling (torchtitan's Float8 default).
    case Framework::pytorch_fsdp:
      return {.overlap_grad_reduce = true, .overlap_param_gather = true, .overlap_tp_comm = false,
              .tp_overlap_method = TpOverlapMethod::async_tp,
              .sequence_parallel_style = SequenceParallelStyle::dtensor,
              .overlap_p2p_comm = false, .attention = AttentionKernel::flash_attention_2,
              .fused_elementwise = false,
              .selective_recompute = in.per_op_checkpointing ? SelectiveRecompute::every_other_matmul
                                                             : SelectiveRecompute::attention_core,
              .cross_entropy = CrossEntropy::pytorch,
              .fp8_scaling = Fp8Scaling::current};
  }
  return {};
}

const std::vector<AttentionKernelDoc>& attention_kernel_docs() {
  static const std::vector<AttentionKernelDoc> docs = {
      {AttentionKernel::flash_attention_2,
       "FlashAttention-2 (Dao 2023): PyTorch SDPA, DeepSpeed, Megatron-LM before Transformer Engine; at "
       "kernels.flash2_forward / flash2_backward of peak"},
      {AttentionKernel::vendor_fused,
       "the GPU vendor's fused kernel (cuDNN through Transformer Engine, Megatron-Core); at kernels.vendor_forward / "
       "vendor_backward of peak"},
      {AttentionKernel::triton_flash,
       "FlashAttention in Triton (flash_attn_triton; MosaicML llm-foundry's attn_impl: triton); at "
       "kernels.triton_forward / triton_backward of peak, FlashAttention-2's rates where the profile has no "
       "measurement (the report says so)"},
  };
  return docs;
}

const std::vector<FrameworkDoc>& framework_docs() {
  static const std::vector<FrameworkDoc> docs = {
      {Framework::megatron_lm_2021,
       "Megatron-LM as in Narayanan et al. 2021: gradient all-reduce after each stage's whole backward (after the "
       "pipeline schedule); no parameter "
       "prefetch, TP collectives and pipeline sends block the compute stream (nothing overlapped); each "
       "micro-batch's gradients added into the main-grad buffer by a kernel of their own; FlashAttention-2 "
       "if flash attention is on",
       true},
      {Framework::megatron_core,
       "Megatron-Core as NeMo runs it (default): gradient reduction overlapped; the distributed optimizer's "
       "parameter gathers in the next forward, each layer's beside the compute of the one before (with the "
       "interleaved schedule each chunk's issued together ahead of it: training.align_param_gather); pipeline "
       "sends asynchronous with the interleaved schedule only; the backward's column-parallel TP collectives "
       "asynchronous beside their GEMMs, the rest blocking unless training.overlap_tp_comm (--tp-comm-overlap); "
       "attention through the vendor's fused kernel (cuDNN via Transformer Engine); vocab-parallel cross-entropy "
       "in place on the fp32 copy of the logits, as eager kernels (Megatron-LM's default; training.cross_entropy "
       "vocab-parallel-fused for --cross-entropy-loss-fusion, on in NeMo 2.0 and Megatron-Bridge); under fp8 "
       "the linears keep their inputs' FP8 copies and, with SP, gather their output gradients in FP8 (Transformer "
       "Engine), scaled as delayed (NeMo 24.x's recipe; "
       "training.fp8_scaling current for Megatron-Bridge's FP8-CS)",
       true},
      {Framework::deepspeed,
       "DeepSpeed: overlap_comm as its defaults set it (off below ZeRO-3: gradient reduction blocks the "
       "compute stream; on under ZeRO-3); ZeRO-3 parameters prefetched; TP collectives and pipeline sends "
       "blocking; below ZeRO-2 each micro-batch's gradients accumulated by a pass of their own (cast to fp32 "
       "and added, BF16_Optimizer, for fp32 gradients of bf16 with the optimizer on the GPU); FlashAttention-2; "
       "Megatron-DeepSpeed's vocab-parallel cross-entropy (training.cross_entropy pytorch for transformers' "
       "models)",
       true},
      {Framework::pytorch_fsdp,
       "PyTorch FSDP: gradient reduce-scatter overlapped with the backward, parameter all-gathers prefetched (below "
       "ZeRO-3, in the next forward, one unit ahead); "
       "TP collectives and pipeline sends blocking; FlashAttention-2 (SDPA); norms, activations and rotary "
       "embeddings eager, one kernel per tensor op (no torch.compile); selective recompute as torchtitan's "
       "per-op checkpointing (every other matmul rerun) on bias-free dense blocks with flash attention at TP 1 or with "
       "SP; the loss's log-softmax beside the fp32 "
       "copy of the logits (F.cross_entropy); training.overlap_tp_comm as PyTorch's async TP (forward and "
       "recomputation only); sequence parallelism as DTensor's (a copy of the whole tensor per all-gather and "
       "reduce-scatter with a batch above 1, the column-parallel linears' gathered inputs kept); fp8 as torchao's "
       "Float8Linear, scaled by each tensor's current amax",
       true},
  };
  return docs;
}

}  // namespace strata
