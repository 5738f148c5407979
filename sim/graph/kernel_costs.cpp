#include "sim/graph/kernel_costs.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace strata {

namespace {

// FlashAttention's backward recomputes the scores and forms three gradients: 2.5x the forward's
// FLOPs, the convention its measured backward rates are quoted in (Dao 2023, FlashAttention-2,
// benchmark_flash_attention.py).
constexpr double kFlashBackwardFlops = 2.5;

/// A kernel's rate at `head_dim` relative to head dim 128: linear in log2(head_dim) from the scale at
/// 64 to 1 at 128 to the scale at 256, the end's beyond. Per score element the kernel does 4·d
/// tensor-core FLOPs and a fixed amount of softmax work, so narrow heads run below the rate measured
/// at 128; wide ones lose tile size to registers (FlashAttention-2, Dao 2023 §3.1; the profiles'
/// sources).
double head_dim_scale(const KernelSpec::HeadDimScale& scale, double head_dim) {
  if (head_dim <= 0.0) return 1.0;
  const double x = std::log2(std::clamp(head_dim, 64.0, 256.0)) - 7.0;  // -1 at 64, 0 at 128, 1 at 256
  return x < 0.0 ? 1.0 - x * (scale.at_64 - 1.0) : 1.0 + x * (scale.at_256 - 1.0);
}

/// The 16-bit rate a profile's GEMM table (gemm_efficiency, gemm_k_overhead) was measured at.
double sixteen_bit_peak(const HardwareSpec& hw) {
  for (Precision p : {Precision::bf16, Precision::fp16})
    if (auto it = hw.gpu.peak.find(p); it != hw.gpu.peak.end()) return it->second.value;
  return 0.0;
}

}  // namespace

bool runs_in_fp8(OpKind kind) {
  switch (kind) {
    case OpKind::qkv_projection:
    case OpKind::attention_output:
    case OpKind::mlp_up:
    case OpKind::mlp_down:
    case OpKind::experts: return true;
    case OpKind::embedding:
    case OpKind::norm:
    case OpKind::attention_core:
    case OpKind::mlp_activation:
    case OpKind::router:
    case OpKind::final_norm:
    case OpKind::lm_head:
    case OpKind::loss: return false;
  }
  return false;
}

OpBytes KernelCosts::operand_elements(const Op& op, double tp) const {
  OpBytes e;
  if (!fp8_ || !runs_in_fp8(op.kind)) return e;
  for (const GemmShape& g : op.gemms) {
    const double n = g.split == GemmSplit::n ? g.n / tp : g.n;
    const double k = g.split == GemmSplit::k ? g.k / tp : g.k;
    const double count = g.split == GemmSplit::count ? g.count / tp : g.count;
    e.forward += g.m * k * count;
    e.backward += g.m * n * count;
  }
  return e;
}

bool KernelCosts::norm_writes_input(const Op& op) const { return op.input_from_norm && fused_norms_; }

OpBytes KernelCosts::amax_traffic(const Op& op, double tp) const {
  if (scaling_ != Fp8Scaling::current) return {};
  // A kernel of its own reads each 16-bit operand for its amax, but where a fused norm finds it.
  const OpBytes e = operand_elements(op, tp);
  return {norm_writes_input(op) ? 0.0 : 2.0 * e.forward, 2.0 * e.backward};
}

OpBytes KernelCosts::quantization_traffic(const Op& op, double tp) const {
  // Bytes per element of the forward's input and of the backward's output gradient (the class
  // comment): cast and transposed (4) unless a fused norm writes the input in FP8 (1), or under
  // current scaling writes it in 16 bits with its amax (cast and transposed after, 4). Every
  // gradient arrives in 16 bits: the activation between the MLP's linears is Megatron's own
  // (bias_swiglu / bias_gelu, 16-bit in and out), so MLP-down's input and MLP-up's gradient are cast.
  const bool fp8_from_norm = norm_writes_input(op) && scaling_ == Fp8Scaling::delayed;
  const OpBytes e = operand_elements(op, tp), amax = amax_traffic(op, tp);
  return {(fp8_from_norm ? 1.0 : 4.0) * e.forward + amax.forward, 4.0 * e.backward + amax.backward};
}

double KernelCosts::rerun_forward_seconds(const Op& op, double tp) const {
  const OpBytes amax = amax_traffic(op, tp);
  return op_seconds(op, tp, 0.0, 0.0).forward - memory_seconds(amax.forward, amax_kernels(op).forward);
}

double KernelCosts::rerun_quantization_bytes(const Op& op, double tp) const {
  return quantization_traffic(op, tp).forward - amax_traffic(op, tp).forward;
}

OpBytes KernelCosts::amax_kernels(const Op& op) const {
  if (scaling_ != Fp8Scaling::current) return {};
  const double gemms = static_cast<double>(op.gemms.size());
  return {norm_writes_input(op) ? 0.0 : gemms, gemms};
}

KernelCosts::KernelCosts(const HardwareSpec& hw, Precision precision, const FrameworkBehaviour& behaviour)
    : k_(hw.kernels), scaling_(behaviour.fp8_scaling), fused_norms_(behaviour.fused_elementwise) {
  const AttentionKernel attention = behaviour.attention;
  attention_forward_ = k_.flash2_forward;
  attention_backward_ = k_.flash2_backward;
  attention_head_dim_ = k_.flash2_head_dim;
  switch (attention) {
    case AttentionKernel::flash_attention_2: break;
    case AttentionKernel::vendor_fused:
      attention_forward_ = k_.vendor_forward;
      attention_backward_ = k_.vendor_backward;
      attention_head_dim_ = k_.vendor_head_dim;
      break;
    case AttentionKernel::triton_flash:
      // Not measured on this GPU: FlashAttention-2's rates stand in (the report warns).
      if (k_.triton_forward > 0.0 && k_.triton_backward > 0.0) {
        attention_forward_ = k_.triton_forward;
        attention_backward_ = k_.triton_backward;
        attention_head_dim_ = k_.triton_head_dim;
      }
      break;
  }
  auto peak = hw.gpu.peak.find(precision);
  if (peak == hw.gpu.peak.end()) throw std::logic_error("GPU has no peak for the compute dtype");
  fp8_ = precision == Precision::fp8;
  const double reference = sixteen_bit_peak(hw);
  const double clock = sustained_clock(hw);
  const double efficiency = k_.present ? k_.gemm_efficiency : hw.efficiency.gemm;
  auto rate_at = [&](double dense_peak, double operand_bytes) {
    GemmRate r;
    r.flops_rate = dense_peak * clock * efficiency;
    // A tile's prologue and epilogue (filling its pipeline, writing its output) take the same time
    // whatever the operands' type: gemm_k_overhead is that time in K-steps at the 16-bit rate the
    // table was measured at, so at fp8's doubled rate it is twice as many K-steps (tile-ai's H800
    // FP16 and FP8 sweeps: the FP8/FP16 ratio grows from 1.47 at K = 256 to 2.0 at 16K;
    // docs/references.md, Kernel-level compute costs).
    r.k_overhead = k_.k_overhead * (reference > 0.0 ? dense_peak / reference : 1.0);
    r.operand_bytes = operand_bytes;
    // Transformer Engine's FP8 GEMMs write BF16 (its recipes' output type).
    r.output_bytes = std::max(2.0, operand_bytes);
    return r;
  };
  quantized_ = rate_at(peak->second.value, bytes_per_element(precision));
  sixteen_bit_ = fp8_ && reference > 0.0 ? rate_at(reference, 2.0) : quantized_;
  attention_peak_ = (fp8_ && reference > 0.0 ? reference : peak->second.value) * clock;
  memory_rate_ = hw.gpu.hbm_bandwidth.value * hw.efficiency.memory;
}

double KernelCosts::gemm_seconds(double m, double n, double k, double count) const {
  return gemm_seconds(quantized_, m, n, k, count);
}

double KernelCosts::gemm_seconds(const GemmRate& rate, double m, double n, double k, double count) const {
  if (m <= 0.0 || n <= 0.0 || k <= 0.0 || count <= 0.0) return 0.0;
  if (!k_.present) return 2.0 * m * n * k * count / rate.flops_rate;
  const double sms = static_cast<double>(k_.sm_count);
  const double tile_m = static_cast<double>(k_.tile_m), tile_n = static_cast<double>(k_.tile_n);
  const double tiles = count * std::ceil(m / tile_m) * std::ceil(n / tile_n);
  // One SM's share of the large-GEMM rate computes a tile; a wave is every SM busy once.
  const double tile_seconds_per_k = 2.0 * tile_m * tile_n / (rate.flops_rate / sms);
  // Split-K: when the tiles leave SMs idle, cut K into `split` slices (each written in fp32 and
  // summed afterwards) while the split tiles fit in two waves and a slice keeps two tiles of depth.
  double best = 0.0;
  for (double split = 1.0;; split *= 2.0) {
    const double waves = std::ceil(tiles * split / sms);
    const double compute = waves * tile_seconds_per_k * (k / split + rate.k_overhead);
    double bytes = count * (rate.operand_bytes * (m * k + k * n) + rate.output_bytes * m * n);
    if (split > 1.0) bytes += 4.0 * 2.0 * count * m * n * split;  // fp32 partials out and back in
    const double t = std::max(compute, bytes / memory_rate_);
    if (split == 1.0 || t < best) best = t;
    if (tiles * split * 2.0 > 2.0 * sms || k / (split * 2.0) < 2.0 * tile_n) break;
  }
  return k_.launch.value + best;
}

OpSeconds KernelCosts::attention_seconds(const AttentionShape& a) const {
  const double flops = 4.0 * a.batch * a.heads * a.queries * a.keys * a.head_dim;
  if (!k_.present) return {flops / sixteen_bit_.flops_rate, 2.0 * flops / sixteen_bit_.flops_rate};
  // Thread blocks own a tile of query rows of one head; they run in waves over the SMs.
  const double blocks = a.batch * a.heads * std::ceil(a.queries / static_cast<double>(k_.attention_tile));
  const double sms = static_cast<double>(k_.sm_count);
  const double fill = blocks / (std::ceil(blocks / sms) * sms);
  // Each block walks the keys; its fixed work (loading its queries, writing its output) costs as
  // much as attention_k_overhead more keys.
  const double depth = a.keys / (a.keys + k_.attention_k_overhead);
  const double work = a.causal ? 0.5 * flops : flops;
  const double rate = attention_peak_ * fill * depth * head_dim_scale(attention_head_dim_, a.head_dim);
  return {k_.launch.value + work / (rate * attention_forward_),
          k_.launch.value + kFlashBackwardFlops * work / (rate * attention_backward_)};
}

double KernelCosts::memory_seconds(double bytes, double kernels) const {
  if (bytes <= 0.0) return 0.0;
  return bytes / memory_rate_ + (k_.present ? kernels * k_.launch.value : 0.0);
}

OpSeconds KernelCosts::op_seconds(const Op& op, double tp, double forward_traffic, double backward_traffic) const {
  OpSeconds s;
  const GemmRate& rate = runs_in_fp8(op.kind) ? quantized_ : sixteen_bit_;
  double shaped_flops = 0.0;
  for (const GemmShape& g : op.gemms) {
    const double n = g.split == GemmSplit::n ? g.n / tp : g.n;
    const double k = g.split == GemmSplit::k ? g.k / tp : g.k;
    const double count = g.split == GemmSplit::count ? g.count / tp : g.count;
    s.forward += gemm_seconds(rate, g.m, n, k, count);
    // Input gradient dX = dY·Wᵀ and weight gradient dW = Xᵀ·dY.
    s.backward += gemm_seconds(rate, g.m, k, n, count) + gemm_seconds(rate, k, n, g.m, count);
    shaped_flops += 2.0 * g.m * n * k * count;
  }
  if (op.fused_attention) {
    AttentionShape a = *op.fused_attention;
    a.heads /= tp;
    const OpSeconds at = attention_seconds(a);
    s.forward += at.forward;
    s.backward += at.backward;
    shaped_flops += 4.0 * a.batch * a.heads * a.queries * a.keys * a.head_dim;
  }
  // FLOPs no shape describes run at the large-GEMM rate.
  const double rest = std::max(0.0, op.forward_flops / (op.tp_replicated ? 1.0 : tp) - shaped_flops);
  if (op.gemms.empty() && !op.fused_attention && rest > 0.0) {
    s.forward += rest / rate.flops_rate;
    s.backward += 2.0 * rest / rate.flops_rate;
  }
  // One elementwise kernel forward and one backward per op that moves memory-bound bytes, and per
  // fp8 GEMM operand a cast-transpose kernel, under current scaling with an amax kernel before it
  // (but where a fused norm finds the amax).
  const OpBytes q = quantization_traffic(op, tp), amax = amax_kernels(op);
  const double gemms = fp8_ && runs_in_fp8(op.kind) ? static_cast<double>(op.gemms.size()) : 0.0;
  s.forward += memory_seconds(forward_traffic, 1.0) + memory_seconds(q.forward, gemms + amax.forward);
  s.backward += memory_seconds(backward_traffic, 1.0) + memory_seconds(q.backward, gemms + amax.backward);
  return s;
}

}  // namespace strata
