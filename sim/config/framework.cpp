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
  }
  return "attention";
}

FrameworkBehaviour preset(Framework f, std::int64_t zero_stage) {
  switch (f) {
    // Narayanan et al. 2021 (SC21): the data-parallel all-reduce runs after the pipeline flush.
    case Framework::megatron_lm_2021: return {.overlap_grad_reduce = false, .attention = AttentionKernel::flash_attention_2};
    // Megatron-Core with --overlap-grad-reduce, as NVIDIA's NeMo recipes run it; attention through
    // Transformer Engine's cuDNN fused kernel.
    case Framework::megatron_core: return {.overlap_grad_reduce = true, .attention = AttentionKernel::vendor_fused};
    // DeepSpeed's overlap_comm defaults to false, and to true under ZeRO-3 (DeepSpeed configuration
    // docs, zero_optimization.overlap_comm); attention through FlashAttention-2.
    case Framework::deepspeed:
      return {.overlap_grad_reduce = zero_stage >= 3, .attention = AttentionKernel::flash_attention_2};
    // FSDP's backward hooks reduce-scatter each unit's gradients while the backward goes on; SDPA
    // dispatches to FlashAttention-2.
    case Framework::pytorch_fsdp: return {.overlap_grad_reduce = true, .attention = AttentionKernel::flash_attention_2};
  }
  return {};
}

const std::vector<FrameworkDoc>& framework_docs() {
  static const std::vector<FrameworkDoc> docs = {
      {Framework::megatron_lm_2021,
       "Megatron-LM as in Narayanan et al. 2021: gradient all-reduce after the backward (not overlapped); "
       "FlashAttention-2 if flash attention is on",
       false},
      {Framework::megatron_core,
       "Megatron-Core as NeMo runs it (default): gradient reduction overlapped with the backward; attention "
       "through the vendor's fused kernel (cuDNN via Transformer Engine)",
       true},
      {Framework::deepspeed,
       "DeepSpeed: overlap_comm as its defaults set it (off below ZeRO-3: gradient reduction blocks the "
       "compute stream; on under ZeRO-3); FlashAttention-2",
       false},
      {Framework::pytorch_fsdp,
       "PyTorch FSDP: gradient reduce-scatter overlapped with the backward, parameter all-gathers prefetched; "
       "FlashAttention-2 (SDPA)",
       true},
  };
  return docs;
}

}  // namespace strata
