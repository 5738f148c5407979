#pragma once

/// What an op's kernels take on one GPU, from their shapes (the GPU's `kernels` profile section):
///   - a GEMM runs in waves of output tiles over the SMs; a wave of tiles of K-depth k takes
///     (k + k_overhead) / k times the ideal (k_overhead: a tile's fixed time, in K-steps at the
///     16-bit rate, so twice as many at fp8's), and a problem with fewer tiles than SMs splits K to fill
///     them (cuBLAS split-K) when that is faster (NVIDIA, "Matrix Multiplication Background User's
///     Guide": tile and wave quantization);
///   - fused attention runs at its measured fraction of peak over waves of query tiles, skipping
///     the blocks a causal mask hides;
///   - elementwise kernels move their bytes at efficiency.memory of the HBM bandwidth;
///   - every kernel pays a fixed launch and synchronisation cost.
/// Without a `kernels` section the roofline applies: FLOPs at efficiency.gemm of peak.

#include "sim/config/framework.hpp"
#include "sim/config/hardware_spec.hpp"
#include "sim/graph/compute_graph.hpp"

namespace strata {

/// Forward and backward seconds of one op's kernels on one tensor-parallel rank.
struct OpSeconds {
  double forward = 0.0;
  double backward = 0.0;
};

class KernelCosts {
 public:
  KernelCosts(const HardwareSpec& hw, Precision precision, AttentionKernel attention);

  /// Whether shapes matter: the profile has kernel tables.
  bool shape_aware() const { return k_.present; }
  /// One GEMM (m × k)·(k × n), `count` independent copies launched as one grouped kernel.
  double gemm_seconds(double m, double n, double k, double count = 1.0) const;
  /// Fused attention forward and backward of one shape.
  OpSeconds attention_seconds(const AttentionShape& a) const;
  /// Elementwise kernels moving `bytes` of HBM traffic, `kernels` launches.
  double memory_seconds(double bytes, double kernels) const;
  /// FLOPs with no shape (roofline at the large-GEMM rate).
  double flops_seconds(double flops) const { return flops / flops_rate_; }

  /// The op's kernels on one TP rank of a group of `tp`: its GEMMs split as Megatron splits them,
  /// attention heads divided over the group; `forward_traffic` and `backward_traffic` are the rank's
  /// elementwise HBM bytes.
  OpSeconds op_seconds(const Op& op, double tp, double forward_traffic, double backward_traffic) const;

 private:
  KernelSpec k_;
  double attention_forward_ = 1.0, attention_backward_ = 1.0;  ///< the framework's kernel
  double peak_ = 0.0;        ///< dense peak at the sustained clock
  double flops_rate_ = 0.0;  ///< large-GEMM rate
  /// The attention kernels' peak and unshaped rate: the 16-bit ones under fp8 training, whose
  /// attention stays in BF16 (Transformer Engine's recipes default to fp8_dpa = False).
  double attention_peak_ = 0.0, attention_rate_ = 0.0;
  double memory_rate_ = 0.0;
  double k_overhead_ = 0.0;  ///< gemm_k_overhead in K-steps at this precision's rate
  double operand_bytes_ = 2.0, output_bytes_ = 2.0;  ///< the roofline's memory side
};

}  // namespace strata
