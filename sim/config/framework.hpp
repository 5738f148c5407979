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
};

struct FrameworkBehaviour {
  /// Gradient reduction runs on its own stream beside the backward; false: the compute stream waits
  /// for each reduction (Megatron-LM before --overlap-grad-reduce, DeepSpeed with overlap_comm off).
  bool overlap_grad_reduce = true;
  AttentionKernel attention = AttentionKernel::flash_attention_2;
};

inline constexpr Framework kDefaultFramework = Framework::megatron_core;

std::string to_string(Framework f);
std::string to_string(AttentionKernel k);
/// Every framework with its name, what it sets, and why.
struct FrameworkDoc {
  Framework framework;
  std::string doc;
  bool validated = false;  ///< measured runs of this framework are in docs/validation.md
};
const std::vector<FrameworkDoc>& framework_docs();
/// The preset's behaviour for a ZeRO stage (before the scenario's own overrides).
FrameworkBehaviour preset(Framework f, std::int64_t zero_stage);

}  // namespace strata
