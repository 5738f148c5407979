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
///   - every kernel pays a fixed launch and synchronisation cost;
///   - under fp8 training the GEMMs of Transformer Engine's linears (QKV, attention output, MLP,
///     experts) run at the fp8 rate and quantize their activation operands in passes of their own
///     (quantization_traffic); the LM head, the MoE router and the attention core stay in 16 bits.
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

/// Forward and backward HBM bytes of one op's memory-bound kernels on one tensor-parallel rank.
struct OpBytes {
  double forward = 0.0;
  double backward = 0.0;
};

/// Whether an op's GEMMs run in fp8 under fp8 training: Transformer Engine's linears do (Megatron-Core
/// builds QKV, the attention output and the MLP from them; experts from its GroupedLinear). The LM
/// head is Megatron-Core's own ColumnParallelLinear and torchtitan's Float8 conversion leaves
/// `output` out; the router is a plain linear; the attention core stays in BF16 (fp8_dpa off by default).
bool runs_in_fp8(OpKind kind);

class KernelCosts {
 public:
  /// `behaviour`: the framework's attention kernel, fp8 scaling recipe and whether its norms are fused
  /// kernels (fused_elementwise: Transformer Engine's, or torch.compile's; eager norms neither write
  /// fp8 nor find an amax).
  KernelCosts(const HardwareSpec& hw, Precision precision, const FrameworkBehaviour& behaviour);

  /// Whether shapes matter: the profile has kernel tables.
  bool shape_aware() const { return k_.present; }
  /// One GEMM (m × k)·(k × n), `count` independent copies launched as one grouped kernel, in the
  /// training precision (op_seconds runs the ops runs_in_fp8 leaves out at the 16-bit rate).
  double gemm_seconds(double m, double n, double k, double count = 1.0) const;
  /// Fused attention forward and backward of one shape.
  OpSeconds attention_seconds(const AttentionShape& a) const;
  /// Elementwise kernels moving `bytes` of HBM traffic, `kernels` launches.
  double memory_seconds(double bytes, double kernels) const;
  /// The bytes fp8 training's quantization passes add to the op's memory-bound kernels on one rank of
  /// a TP group of `tp` (zero unless the precision is fp8 and the op runs_in_fp8). Hopper's fp8 tensor
  /// cores take both operands K-major, so Transformer Engine writes every 16-bit activation operand as
  /// fp8 twice, row-wise and transposed (fp8_cast_transpose_fused: read 2 bytes, write 1 + 1): the
  /// forward's input and the backward's output gradient. Where a fused norm writes the input
  /// (Op::input_from_norm with fused norms: Megatron-Core's TELayerNormColumnParallelLinear before
  /// QKV and MLP-up) its
  /// output is 1 byte narrower and only the transposed copy costs a pass (read 1, write 1): net 1
  /// byte. MLP-down's input and every output gradient come from Megatron's own 16-bit kernels (the
  /// activation, its backward) and are cast: 4. Weights are cast once per step, not per micro-batch,
  /// and are left out. Under current scaling (Fp8Scaling::current) every operand's amax comes first:
  /// a kernel of its own reads the 16-bit operand (2 more bytes, one more kernel), except where a
  /// fused norm computes it while writing its 16-bit output, which is then cast and transposed (4).
  OpBytes quantization_traffic(const Op& op, double tp) const;
  /// Per-op checkpointing's rerun of the op's forward on one TP rank (op_seconds' forward with no
  /// elementwise traffic) and its quantization bytes, without current scaling's amax passes: the
  /// checkpoint keeps their results (torchtitan's save list has aten.max).
  double rerun_forward_seconds(const Op& op, double tp) const;
  double rerun_quantization_bytes(const Op& op, double tp) const;

  /// The op's kernels on one TP rank of a group of `tp`: its GEMMs split as Megatron splits them,
  /// attention heads divided over the group; `forward_traffic` and `backward_traffic` are the rank's
  /// elementwise HBM bytes, to which the op's quantization_traffic is added.
  OpSeconds op_seconds(const Op& op, double tp, double forward_traffic, double backward_traffic) const;

 private:
  /// What a GEMM's time follows from at one operand type.
  struct GemmRate {
    double flops_rate = 0.0;  ///< large-GEMM rate: dense peak at the sustained clock × gemm_efficiency
    double k_overhead = 0.0;  ///< gemm_k_overhead in K-steps at this rate
    double operand_bytes = 2.0, output_bytes = 2.0;  ///< the roofline's memory side
  };
  double gemm_seconds(const GemmRate& rate, double m, double n, double k, double count) const;

  /// Per fp8 GEMM of the op, its activation operands' elements on one TP rank: the forward's input
  /// and the backward's output gradient (zero unless the op runs in fp8).
  OpBytes operand_elements(const Op& op, double tp) const;
  /// Whether a fused norm writes the op's input (Op::input_from_norm, with fused norms).
  bool norm_writes_input(const Op& op) const;
  /// Current scaling's amax passes over the operands, bytes and kernels, forward and backward.
  OpBytes amax_traffic(const Op& op, double tp) const;
  OpBytes amax_kernels(const Op& op) const;

  KernelSpec k_;
  bool fp8_ = false;
  Fp8Scaling scaling_ = Fp8Scaling::delayed;
  bool fused_norms_ = true;
  double attention_forward_ = 1.0, attention_backward_ = 1.0;  ///< the framework's kernel
  KernelSpec::HeadDimScale attention_head_dim_;                 ///< its rate by head dim
  /// The training precision's GEMMs, and the 16-bit ones (the same unless the precision is fp8).
  GemmRate quantized_, sixteen_bit_;
  /// The attention kernels' peak (the 16-bit one under fp8 training: its attention stays in BF16).
  double attention_peak_ = 0.0;
  double memory_rate_ = 0.0;
};

}  // namespace strata
