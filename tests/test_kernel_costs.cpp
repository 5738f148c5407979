// Kernel-level compute costs (sim/graph/kernel_costs) against the measurements their profile
// parameters were fitted on: OpenXLA's H100 and B200 matmul tables and the published attention
// rates on each (hardware_profiles/dgx-h100.json and dgx-b200.json, kernels.source). The rates are
// compared at the boost clock the benchmarks ran at (sustained_clock 1).

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "sim/graph/kernel_costs.hpp"
#include "support.hpp"

namespace {

/// A framework's kernels as Transformer Engine runs them: attention `kernel`, fused norms, fp8
/// `scaling` (delayed: the megatron-core preset's).
strata::FrameworkBehaviour te(strata::AttentionKernel kernel,
                              strata::Fp8Scaling scaling = strata::Fp8Scaling::delayed) {
  return {.attention = kernel, .fused_elementwise = true, .fp8_scaling = scaling};
}

strata::HardwareSpec h100_at_boost() {
  strata::Scenario sc = strata::test::load("llama-3-8b-zero3-h100", {"hardware.kernels.sustained_clock=1"});
  return sc.hardware;
}

}  // namespace

TEST_CASE("GEMM tile/wave model reproduces OpenXLA's measured H100 bf16 matmuls", "[kernels][validation]") {
  // (m, n, k, TFLOP/s): tensorflow/tensorflow third_party/xla/xla/service/gpu/model/matmul_interpolator_data.h
  const double table[][4] = {
      {256, 256, 256, 6.45},       {256, 512, 512, 21.96},      {1024, 1024, 512, 145.57},
      {1024, 1024, 1024, 236.30},  {1024, 1024, 2048, 349.98},  {2048, 2048, 256, 213.04},
      {2048, 2048, 512, 345.48},   {2048, 2048, 1024, 493.90},  {2048, 2048, 2048, 631.98},
      {2048, 2048, 4096, 737.97},  {4096, 4096, 256, 392.16},   {4096, 4096, 512, 543.12},
      {4096, 4096, 2048, 738.74},  {4096, 4096, 4096, 783.33},  {4096, 2048, 4096, 758.43},
      {4096, 1024, 4096, 738.47},  {4096, 512, 4096, 649.96},   {256, 4096, 4096, 412.03},
      {256, 2048, 4096, 285.87},   {256, 256, 4096, 84.31},     {4096, 1024, 1024, 488.06},
      {4096, 1024, 256, 216.48},   {1024, 4096, 4096, 738.47}};
  const strata::KernelCosts k(h100_at_boost(), strata::Precision::bf16, te(strata::AttentionKernel::vendor_fused));
  REQUIRE(k.shape_aware());
  strata::test::Comparison c("H100 bf16 GEMM throughput (OpenXLA measured vs tile/wave model)", "TFLOP/s");
  for (const auto& row : table) {
    const double m = row[0], n = row[1], kk = row[2];
    c.add(fmt::format("{}x{}x{}", m, n, kk), row[3], 2.0 * m * n * kk / k.gemm_seconds(m, n, kk) / 1e12);
  }
  c.print();
  // The fit's own error (profile source): mean 5.1 %, max 28 % on the split-K corner 256x256x4096.
  CHECK(c.mean_error() <= 0.06);
  CHECK(c.max_error() <= 0.35);
}


TEST_CASE("FP8 GEMMs gain on FP16 as K grows, as tile-ai measured on H800", "[kernels][validation]") {
  // M = N = 8192, K swept (TFLOP/s), one H800 SXM, tile-ai's benchmark_matmul.py: the FP16 and FP8
  // READMEs of xwhzz/tilelang benchmark/matmul{,_fp8} (commit b2acfc37). Their ratio isolates what
  // the operand type changes; absolute rates are tilelang's kernels, not cuBLAS.
  const double sweep[][3] = {{256, 386, 569},   {512, 520, 858},    {1024, 628, 1129}, {2048, 705, 1343},
                             {4096, 736, 1467}, {8192, 758, 1507}, {16384, 766, 1541}};
  const strata::HardwareSpec hw = h100_at_boost();
  const strata::KernelCosts fp16(hw, strata::Precision::bf16, te(strata::AttentionKernel::vendor_fused));
  const strata::KernelCosts fp8(hw, strata::Precision::fp8, te(strata::AttentionKernel::vendor_fused));
  strata::test::Comparison c("H800 FP8 / FP16 GEMM throughput, 8192 x 8192 x K (tilelang measured vs model)", "x");
  strata::test::Comparison held("", "x");
  for (const auto& row : sweep) {
    const double kk = row[0];
    const double ratio = fp16.gemm_seconds(8192, 8192, kk) / fp8.gemm_seconds(8192, 8192, kk);
    c.add(fmt::format("K = {}", kk), row[2] / row[1], ratio);
    if (kk >= 512) held.add("", row[2] / row[1], ratio);
  }
  c.print();
  // At K = 256 writing the 8192 x 8192 BF16 output (134 MB) bounds the FP8 kernel in the model
  // (52 us at efficiency.memory; tilelang measured 60 us), while tilelang's FP16 kernel runs 26 %
  // below the profile's cuBLAS-fitted rate (386 against 520 TFLOP/s): the ratio there compares two
  // libraries, and
  // only K >= 512 is held. A tile's fixed time taken as the same K-steps at either rate would give
  // 2.0 at every K (+21 % at K = 512). The upstream README (tile-ai/tilelang, commit 9fcebdcf)
  // holds a slower FP8 run of the same sweep (376-1,523 TFLOP/s) with no FP16 run beside it; it
  // is not used.
  CHECK(held.mean_error() <= 0.03);
  CHECK(held.max_error() <= 0.05);
}
TEST_CASE("FP8 GEMMs at the sustained clock reproduce Azure ND H100 v5's cuBLASLt table", "[kernels][validation]") {
  // (m, n, k, TFLOP/s): samuel-bohman/AI-benchmarking-guide Azure_Results/ND_H100_v5_results.md
  // (commit 26d18e94), "GEMM CuBLASLt", FP8, random initialisation, 10,000 warm-up iterations, CUDA
  // 12.6. Independent of the fit (OpenXLA's BF16 table at boost clock, tile-ai's FP8/FP16 ratio): a
  // benchmark warmed that long holds the GPU at its power limit, so the model runs at the profile's
  // sustained clock (0.795).
  const double table[][4] = {{1024, 1024, 1024, 274.1},    {2048, 2048, 2048, 1011.3},  {4096, 4096, 4096, 1216.9},
                             {8192, 8192, 8192, 1290.1},   {16384, 16384, 16384, 1377.3}, {32768, 32768, 32768, 1382.2},
                             {1024, 2145, 1024, 410.7},    {6144, 12288, 12288, 1351.4}, {802816, 192, 768, 663.8}};
  const strata::Scenario sc = strata::test::load("llama-3-8b-zero3-h100");
  const strata::KernelCosts k(sc.hardware, strata::Precision::fp8, te(strata::AttentionKernel::vendor_fused));
  strata::test::Comparison c("H100 FP8 GEMM throughput at the sustained clock (Azure ND H100 v5 measured vs model)",
                             "TFLOP/s");
  for (const auto& row : table) {
    const double m = row[0], n = row[1], kk = row[2];
    c.add(fmt::format("{}x{}x{}", m, n, kk), row[3], 2.0 * m * n * kk / k.gemm_seconds(m, n, kk) / 1e12);
  }
  c.print();
  // The largest error is 2048^3 (-17 %): there the tile's fixed time (gemm_k_overhead, 256 K-steps
  // at fp8's rate) costs the model 11 % of a K of 2048 and its fourth wave of tiles is 88 % full;
  // cuBLASLt's choice of tile for that shape is not in the model.
  CHECK(c.mean_error() <= 0.06);
  CHECK(c.max_error() <= 0.2);
}

TEST_CASE("Under fp8 the linears quantize their operands and the LM head stays in 16 bits", "[kernels]") {
  const strata::Scenario sc = strata::test::load("llama-3-8b-zero3-h100");
  const strata::KernelCosts fp8(sc.hardware, strata::Precision::fp8, te(strata::AttentionKernel::vendor_fused));
  const strata::KernelCosts bf16(sc.hardware, strata::Precision::bf16, te(strata::AttentionKernel::vendor_fused));
  const double m = 8192, h = 4096, ffn = 14336;
  auto op = [&](strata::OpKind kind, double n, double k, strata::GemmSplit split) {
    strata::Op o;
    o.kind = kind;
    o.gemms = {{m, n, k, 1.0, split}};
    o.forward_flops = 2.0 * m * n * k;
    return o;
  };
  using strata::GemmSplit;
  using strata::OpKind;
  // A fused norm casts QKV's input (1 byte net: the transposed copy's pass less the narrower write);
  // the attention output casts and transposes its own input (4 bytes); both cast their output gradient.
  strata::Op qkv = op(OpKind::qkv_projection, 6144, h, GemmSplit::n);
  qkv.input_from_norm = true;
  CHECK(fp8.quantization_traffic(qkv, 1).forward == Approx(1.0 * m * h));
  CHECK(fp8.quantization_traffic(qkv, 1).backward == Approx(4.0 * m * 6144));
  // Under TP 2 the column-parallel output (and its gradient) halves, its input does not.
  CHECK(fp8.quantization_traffic(qkv, 2).forward == Approx(1.0 * m * h));
  CHECK(fp8.quantization_traffic(qkv, 2).backward == Approx(4.0 * m * 3072));
  const strata::Op out = op(OpKind::attention_output, h, h, GemmSplit::k);
  CHECK(fp8.quantization_traffic(out, 1).forward == Approx(4.0 * m * h));
  // The same projection after a separate norm (MLA's down-projection) casts its input itself.
  strata::Op unfused = qkv;
  unfused.input_from_norm = false;
  CHECK(fp8.quantization_traffic(unfused, 1).forward == Approx(4.0 * m * h));
  // MLP-up's output gradient comes from the activation's 16-bit backward: cast and transposed.
  strata::Op up = op(OpKind::mlp_up, 2 * ffn, h, GemmSplit::n);
  up.input_from_norm = true;
  CHECK(fp8.quantization_traffic(up, 1).backward == Approx(4.0 * m * 2 * ffn));
  // Nothing to quantize in 16-bit training, nor for the LM head, which runs at the BF16 rate.
  CHECK(bf16.quantization_traffic(qkv, 1).forward == 0.0);
  const strata::Op head = op(OpKind::lm_head, 128256, h, GemmSplit::n);
  CHECK(fp8.quantization_traffic(head, 1).forward == 0.0);
  CHECK(fp8.op_seconds(head, 1, 0.0, 0.0).forward == Approx(bf16.op_seconds(head, 1, 0.0, 0.0).forward));
  CHECK(fp8.op_seconds(head, 1, 0.0, 0.0).backward == Approx(bf16.op_seconds(head, 1, 0.0, 0.0).backward));
  // The linears themselves run faster in fp8 even with their quantization passes.
  const strata::Op mlp = op(OpKind::mlp_down, h, ffn, GemmSplit::k);
  const auto fast = fp8.op_seconds(mlp, 1, 0.0, 0.0), slow = bf16.op_seconds(mlp, 1, 0.0, 0.0);
  CHECK(fast.forward < slow.forward);
  CHECK(fast.backward < slow.backward);
  // MLP-down's input is the activation's 16-bit output: cast and transposed, 4 bytes per element.
  const auto q = fp8.quantization_traffic(mlp, 1);
  CHECK(q.forward == Approx(4.0 * m * ffn));
  CHECK(q.backward == Approx(4.0 * m * h));
  // The passes move their bytes at the memory rate, one launch per GEMM operand.
  const auto with = fp8.op_seconds(mlp, 1, 0.0, 0.0);
  strata::Op fused = mlp;
  fused.input_from_norm = true;  // same GEMM with its input cast by the producer: 3 bytes fewer
  CHECK(with.forward - fp8.op_seconds(fused, 1, 0.0, 0.0).forward ==
        Approx(fp8.memory_seconds(q.forward, 1.0) - fp8.memory_seconds(1.0 * m * ffn, 1.0)).epsilon(1e-9));
  // Current scaling (Transformer Engine's FP8-CS, torchao's tensor-wise Float8): each operand's amax
  // read by a kernel of its own first (2 bytes more), except QKV's, which the fused norm finds as it
  // writes its 16-bit output, then cast and transposed by a second kernel (4 bytes, net 3 more).
  const strata::KernelCosts current(sc.hardware, strata::Precision::fp8,
                                    te(strata::AttentionKernel::vendor_fused, strata::Fp8Scaling::current));
  CHECK(current.quantization_traffic(qkv, 1).forward == Approx(4.0 * m * h));
  CHECK(current.quantization_traffic(qkv, 1).backward == Approx(6.0 * m * 6144));
  CHECK(current.quantization_traffic(mlp, 1).forward == Approx(6.0 * m * ffn));
  CHECK(current.quantization_traffic(mlp, 1).backward == Approx(6.0 * m * h));
  // Two kernels per operand where the amax has its own: MLP-down's input and gradient.
  const double rate = sc.hardware.gpu.hbm_bandwidth.value * sc.hardware.efficiency.memory;
  const double launch = sc.hardware.kernels.launch.value;
  CHECK(current.op_seconds(mlp, 1, 0.0, 0.0).forward - fp8.op_seconds(mlp, 1, 0.0, 0.0).forward ==
        Approx(2.0 * m * ffn / rate + launch));
  CHECK(current.op_seconds(mlp, 1, 0.0, 0.0).backward - fp8.op_seconds(mlp, 1, 0.0, 0.0).backward ==
        Approx(2.0 * m * h / rate + launch));
  // QKV's norm finds the amax: 3 bytes more forward than delayed's fused norm, no kernel more; its
  // gradient gets the amax kernel.
  CHECK(current.op_seconds(qkv, 1, 0.0, 0.0).forward - fp8.op_seconds(qkv, 1, 0.0, 0.0).forward ==
        Approx(3.0 * m * h / rate));
  CHECK(current.op_seconds(qkv, 1, 0.0, 0.0).backward - fp8.op_seconds(qkv, 1, 0.0, 0.0).backward ==
        Approx(2.0 * m * 6144 / rate + launch));
  // Eager norms (torchtitan without torch.compile) neither write fp8 nor find the amax: QKV's input
  // is cast like any other, 4 bytes delayed and 6 current.
  strata::FrameworkBehaviour eager = te(strata::AttentionKernel::vendor_fused);
  eager.fused_elementwise = false;
  const strata::KernelCosts eager_delayed(sc.hardware, strata::Precision::fp8, eager);
  eager.fp8_scaling = strata::Fp8Scaling::current;
  const strata::KernelCosts eager_current(sc.hardware, strata::Precision::fp8, eager);
  CHECK(eager_delayed.quantization_traffic(qkv, 1).forward == Approx(4.0 * m * h));
  CHECK(eager_current.quantization_traffic(qkv, 1).forward == Approx(6.0 * m * h));
  // Per-op checkpointing keeps the amax (torchtitan's save list has aten.max): its rerun casts again
  // without the amax pass, as delayed scaling does.
  CHECK(current.rerun_quantization_bytes(mlp, 1) == Approx(4.0 * m * ffn));
  CHECK(current.rerun_forward_seconds(mlp, 1) == Approx(fp8.op_seconds(mlp, 1, 0.0, 0.0).forward));
  CHECK(fp8.rerun_forward_seconds(mlp, 1) == Approx(fp8.op_seconds(mlp, 1, 0.0, 0.0).forward));
  // The presets: torchao's tensor-wise Float8 for pytorch-fsdp, Transformer Engine's delayed scaling
  // for megatron-core; either overridden by training.fp8_scaling.
  CHECK(strata::test::load("llama-3-8b-zero3-h100", {"training.framework=\"pytorch-fsdp\""})
            .training.behaviour.fp8_scaling == strata::Fp8Scaling::current);
  CHECK(strata::test::load("llama-3-8b-zero3-h100", {"training.framework=\"megatron-core\""})
            .training.behaviour.fp8_scaling == strata::Fp8Scaling::delayed);
  CHECK(strata::test::load("llama-3-8b-zero3-h100",
                           {"training.framework=\"megatron-core\"", "training.fp8_scaling=current"})
            .training.behaviour.fp8_scaling == strata::Fp8Scaling::current);
}

TEST_CASE("Fused attention rates reproduce the published H100 FlashAttention measurements", "[kernels][validation]") {
  const strata::HardwareSpec hw = h100_at_boost();
  // FlashAttention benchmark shapes: batch x seq = 16k tokens, 16 heads of 128; non-causal.
  auto rate = [&](strata::AttentionKernel kernel, double seq, bool backward) {
    const strata::KernelCosts k(hw, strata::Precision::bf16, te(kernel));
    const strata::AttentionShape a{16384.0 / seq, 16, seq, seq, 128, false};
    const double flops = 4.0 * a.batch * a.heads * a.queries * a.keys * a.head_dim;
    const auto s = k.attention_seconds(a);
    return backward ? 2.5 * flops / s.backward / 1e12 : flops / s.forward / 1e12;
  };
  strata::test::Comparison c("H100 attention (published vs model)", "TFLOP/s");
  using strata::AttentionKernel;
  // cuDNN's forward is fitted on its causal curve, the mask training runs (the head-dim test below).
  c.add("cuDNN backward, 512 (FlashAttention-3 paper)", 305, rate(AttentionKernel::vendor_fused, 512, true));
  c.add("cuDNN backward, 8k (FlashAttention-3 paper)", 518, rate(AttentionKernel::vendor_fused, 8192, true));
  c.add("FlashAttention-2 forward, 8k (pytorch/benchmark #2296, sdpa)", 287.7, rate(AttentionKernel::flash_attention_2, 8192, false));
  c.add("FlashAttention-2 backward, 8k (FlashAttention-3 paper)", 318, rate(AttentionKernel::flash_attention_2, 8192, true));
  c.print();
  CHECK(c.max_error() <= 0.15);
}

namespace {

/// OpenXLA's measured B200 matmul table (tests/data/kernels/openxla-b200-matmul.csv): batch, m, n,
/// k and the bf16 and fp8 (e4m3 x e4m3 -> bf16) rates in FLOP/s.
struct MeasuredMatmul {
  double batch, m, n, k, bf16, fp8;
};

std::vector<MeasuredMatmul> openxla_b200_matmuls() {
  std::ifstream in(strata::test::source_path("tests/data/kernels/openxla-b200-matmul.csv"));
  std::vector<MeasuredMatmul> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == 'b') continue;  // comments and the header
    MeasuredMatmul r{};
    char comma = 0;
    std::istringstream fields(line);
    fields >> r.batch >> comma >> r.m >> comma >> r.n >> comma >> r.k >> comma >> r.bf16 >> comma >> r.fp8;
    rows.push_back(r);
  }
  return rows;
}

strata::HardwareSpec b200_at_boost() {
  return strata::test::load("llama-3-8b-zero3-h100", {"hardware=dgx-b200", "hardware.kernels.sustained_clock=1"})
      .hardware;
}

}  // namespace

TEST_CASE("GEMM tile/wave model reproduces OpenXLA's measured B200 matmuls", "[kernels][validation]") {
  const std::vector<MeasuredMatmul> table = openxla_b200_matmuls();
  REQUIRE(table.size() == 375);  // 5 x 5 x 5 shapes at batch 1, 2 and 4
  const strata::HardwareSpec hw = b200_at_boost();
  const strata::KernelCosts bf16(hw, strata::Precision::bf16, te(strata::AttentionKernel::vendor_fused));
  const strata::KernelCosts fp8(hw, strata::Precision::fp8, te(strata::AttentionKernel::vendor_fused));
  REQUIRE(bf16.shape_aware());
  // The profile's GEMM parameters are fitted on the single-batch bf16 points; the batched ones (the
  // tiles of `batch` GEMMs share the waves) and the FP8 points are not fitted.
  strata::test::Comparison fitted("B200 bf16 GEMM throughput, batch 1 (OpenXLA measured vs tile/wave model)",
                                  "TFLOP/s");
  strata::test::Comparison batched("B200 bf16 GEMM throughput, batch 2 and 4 (not fitted)", "TFLOP/s");
  strata::test::Comparison quantized("B200 fp8 GEMM throughput, batch 1 (not fitted)", "TFLOP/s");
  for (const MeasuredMatmul& r : table) {
    const std::string shape = fmt::format("batch {} {}x{}x{}", r.batch, r.m, r.n, r.k);
    const double flops = 2.0 * r.batch * r.m * r.n * r.k;
    const double model = flops / bf16.gemm_seconds(r.m, r.n, r.k, r.batch) / 1e12;
    (r.batch == 1 ? fitted : batched).add(shape, r.bf16 / 1e12, model);
    if (r.batch == 1) quantized.add(shape, r.fp8 / 1e12, flops / fp8.gemm_seconds(r.m, r.n, r.k) / 1e12);
  }
  fitted.print();
  batched.print();
  quantized.print();
  // The fit's own error (profile source): mean 7.7 %, max 43 % on the split-K corner 256x256x4096.
  CHECK(fitted.mean_error() <= 0.08);
  CHECK(fitted.max_error() <= 0.45);
  CHECK(batched.mean_error() <= 0.06);
  // FP8's tile overhead at the 16-bit rate (kernel_costs), checked on H800 and H100 before, holds here.
  CHECK(quantized.mean_error() <= 0.07);
}

TEST_CASE("Fused attention rates reproduce cudnn-frontend's B200 measurements", "[kernels][validation]") {
  const strata::HardwareSpec hw = b200_at_boost();
  // NVIDIA/cudnn-frontend benchmark/sdpa_benchmark_training/artifacts (commit 0b1577c8): one B200,
  // causal, batch 1, 128 query heads of 128. TFLOP/s in FlashAttention's convention (causal halved).
  const double seqs[] = {512, 1024, 2048, 4096, 8192, 16384, 32768};
  const double cudnn_forward[] = {244.143, 561.287, 907.547, 1141.140, 1384.231, 1475.253, 1514.764};
  const double cudnn_backward[] = {200.594, 376.937, 545.088, 832.907, 994.850, 1151.690, 1180.250};
  const double flash2_forward[] = {63.936, 154.417, 254.381, 342.990, 399.925, 425.128, 435.762};
  const double flash2_backward[] = {81.393, 104.860, 198.845, 273.484, 318.004, 336.635, 345.634};
  auto add = [&](strata::test::Comparison& c, strata::AttentionKernel kernel, const double* forward,
                 const double* backward) {
    const strata::KernelCosts k(hw, strata::Precision::bf16, te(kernel));
    for (std::size_t i = 0; i < std::size(seqs); ++i) {
      const strata::AttentionShape a{1, 128, seqs[i], seqs[i], 128, true};
      const double work = 0.5 * 4.0 * a.batch * a.heads * a.queries * a.keys * a.head_dim;
      const auto s = k.attention_seconds(a);
      c.add(fmt::format("forward, {}", seqs[i]), forward[i], work / s.forward / 1e12);
      c.add(fmt::format("backward, {}", seqs[i]), backward[i], 2.5 * work / s.backward / 1e12);
    }
  };
  strata::test::Comparison cudnn("B200 cuDNN attention (cudnn-frontend measured vs model)", "TFLOP/s");
  add(cudnn, strata::AttentionKernel::vendor_fused, cudnn_forward, cudnn_backward);
  cudnn.print();
  strata::test::Comparison flash2("B200 FlashAttention-2 2.7.4 (cudnn-frontend's benchmark vs model)", "TFLOP/s");
  add(flash2, strata::AttentionKernel::flash_attention_2, flash2_forward, flash2_backward);
  flash2.print();
  // The fits' own errors (profile source).
  CHECK(cudnn.mean_error() <= 0.05);
  CHECK(cudnn.max_error() <= 0.12);
  CHECK(flash2.mean_error() <= 0.09);
  CHECK(flash2.max_error() <= 0.25);
}

TEST_CASE("Op GEMM shapes account for every FLOP the graph counts", "[kernels]") {
  for (const char* name : {"llama-3-8b-zero3-h100", "korthikanti-175b-selective", "mixtral-8x7b-h100"}) {
    const strata::Scenario sc = strata::test::load(name);
    const strata::ComputeGraph g = strata::build_compute_graph(
        sc.model, {sc.training.seq_len, sc.training.micro_batch_size, 2.0, sc.training.flash_attention});
    for (auto v : boost::make_iterator_range(boost::vertices(g))) {
      const strata::Op& op = g[v];
      double shaped = 0.0;
      for (const auto& s : op.gemms) shaped += 2.0 * s.m * s.n * s.k * s.count;
      if (op.fused_attention) {
        const auto& a = *op.fused_attention;
        shaped += 4.0 * a.batch * a.heads * a.queries * a.keys * a.head_dim;
      }
      INFO(name << " " << op.name);
      CHECK(shaped == Approx(op.forward_flops).epsilon(1e-9));
    }
  }
}

TEST_CASE("A lower power limit slows the SM clock by the f^3 power law, never the memory", "[kernels][config]") {
  const strata::Scenario rated = strata::test::load("llama-3-8b-zero3-h100");
  // Without a limit (or at the rated 700 W) the profile's sustained clock holds.
  CHECK(strata::sustained_clock(rated.hardware) == rated.hardware.kernels.sustained_clock);
  CHECK_FALSE(strata::power_limited(rated.hardware));
  const strata::Scenario at_tdp = strata::test::load("llama-3-8b-zero3-h100", {"hardware.gpu.power_limit=\"700 W\""});
  CHECK(strata::sustained_clock(at_tdp.hardware) == rated.hardware.kernels.sustained_clock);
  // At 500 W the power above idle (142.5 W of 700 W) is (500 - 142.5) / (700 - 142.5) of the rated;
  // the clock follows its cube root.
  const strata::Scenario capped = strata::test::load("llama-3-8b-zero3-h100", {"hardware.gpu.power_limit=\"500 W\""});
  const double expected = 0.795 * std::cbrt((500.0 - 142.5) / (700.0 - 142.5));
  INFO("clock at 500 W " << strata::sustained_clock(capped.hardware) << ", f^3 law " << expected);
  CHECK(strata::power_limited(capped.hardware));
  CHECK(strata::sustained_clock(capped.hardware) == Approx(expected).epsilon(1e-12));
  // GEMMs slow by the clock (their launch cost aside); memory-bound kernels keep the HBM rate.
  const auto vendor = strata::AttentionKernel::vendor_fused;
  const strata::KernelCosts fast(rated.hardware, strata::Precision::bf16, te(vendor));
  const strata::KernelCosts slow(capped.hardware, strata::Precision::bf16, te(vendor));
  const double launch = rated.hardware.kernels.launch.value;
  CHECK((slow.gemm_seconds(8192, 4096, 4096, 1) - launch) / (fast.gemm_seconds(8192, 4096, 4096, 1) - launch) ==
        Approx(0.795 / expected).epsilon(1e-9));
  CHECK(slow.memory_seconds(1e9, 1.0) == fast.memory_seconds(1e9, 1.0));
  // Above the rated power the clock may rise, but never past boost.
  const strata::Scenario raised = strata::test::load("llama-3-8b-zero3-h100", {"hardware.gpu.power_limit=\"2000 W\""});
  CHECK(strata::sustained_clock(raised.hardware) == 1.0);
  // A GPU without kernel tables (the roofline) slows by the same law, not silently at full clock.
  const strata::Scenario roofline = strata::test::load(
      "llama-3-8b-zero3-h100", {"hardware=rtx4090-pcie-8x", "hardware.gpu.tdp=\"450 W\"",
                                "hardware.gpu.idle_power=\"50 W\"", "hardware.gpu.power_limit=\"350 W\""});
  REQUIRE_FALSE(roofline.hardware.kernels.present);
  CHECK(strata::sustained_clock(roofline.hardware) == Approx(std::cbrt(300.0 / 400.0)).epsilon(1e-12));
}

TEST_CASE("A power limit the profile cannot model is refused with its path", "[kernels][config]") {
  const auto why = [](const std::vector<std::string>& sets) {
    try {
      strata::test::load("llama-3-8b-zero3-h100", sets);
    } catch (const strata::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(why({"hardware.gpu.power_limit=\"100 W\""}),
             Catch::Contains("/gpu/power_limit") && Catch::Contains("must be above gpu.idle_power (142.5 W)"));
  CHECK_THAT(why({"hardware.gpu.power_limit=\"500 W\"", "hardware.gpu.tdp=0"}),
             Catch::Contains("/gpu/power_limit") && Catch::Contains("needs gpu.tdp"));
  CHECK_THAT(why({"hardware.gpu.idle_power=\"800 W\""}), Catch::Contains("must be below gpu.tdp (700 W)"));
  CHECK_THAT(why({"hardware.gpu.power_limit=500"}), Catch::Contains("power_limit") && Catch::Contains("no unit"));
}

TEST_CASE("Fused attention slows with narrow heads as FlashAttention's head-dim benchmarks measured",
          "[kernels][validation]") {
  // Causal, batch x seq = 16k tokens, 2048 / head_dim heads (the benchmarks' shapes), at boost
  // clock. Measured: FlashAttention-2 forward + backward on A100-80GB (Dao 2023, Fig. 4, the repository's
  // assets/flash2_a100_fwd_bwd_benchmark.png) and on H100 (assets/flash2_h100_fwd_bwd_benchmark.png);
  // cuDNN forward on H100 (FlashAttention-3 paper, assets/flash3_fp16_fwd.png). Both head dims per
  // sequence are checked, so the curve's level and the head-dim ratio are held together.
  auto rate = [](const strata::HardwareSpec& hw, strata::AttentionKernel kernel, double head_dim, double seq,
                 bool forward_only) {
    const strata::KernelCosts k(hw, strata::Precision::bf16, te(kernel));
    const strata::AttentionShape a{16384.0 / seq, 2048.0 / head_dim, seq, seq, head_dim, true};
    const double forward_flops = 2.0 * a.batch * a.heads * a.queries * a.keys * a.head_dim;  // causal: half
    const auto s = k.attention_seconds(a);
    return forward_only ? forward_flops / s.forward / 1e12
                        : 3.5 * forward_flops / (s.forward + s.backward) / 1e12;
  };
  using strata::AttentionKernel;
  const strata::HardwareSpec a100 =
      strata::test::load("llama-3-8b-zero3-h100", {"hardware=\"dgx-a100-80g\""}).hardware;
  const strata::HardwareSpec h100 = h100_at_boost();
  const double seqs[] = {1024, 2048, 4096, 8192, 16384};
  const double a100_fa2_64[] = {119, 140, 156, 165, 171}, a100_fa2_128[] = {133, 155, 173, 182, 189};
  const double h100_fa2_64[] = {192, 232, 257, 273, 284}, h100_fa2_128[] = {221, 265, 294, 308, 328};
  const double h100_cudnn_64[] = {288, 334, 363, 379, 388}, h100_cudnn_128[] = {410, 484, 518, 529, 539};
  strata::test::Comparison c("Attention by head dim (published vs model)", "TFLOP/s");
  double ratio_error = 0.0;
  for (int i = 0; i < 5; ++i) {
    const std::string at = fmt::format(", {}k", seqs[i] / 1024);
    c.add("A100 FlashAttention-2 fwd+bwd, d64" + at, a100_fa2_64[i],
          rate(a100, AttentionKernel::flash_attention_2, 64, seqs[i], false));
    c.add("A100 FlashAttention-2 fwd+bwd, d128" + at, a100_fa2_128[i],
          rate(a100, AttentionKernel::flash_attention_2, 128, seqs[i], false));
    c.add("H100 FlashAttention-2 fwd+bwd, d64" + at, h100_fa2_64[i],
          rate(h100, AttentionKernel::flash_attention_2, 64, seqs[i], false));
    c.add("H100 cuDNN forward, d64" + at, h100_cudnn_64[i], rate(h100, AttentionKernel::vendor_fused, 64, seqs[i], true));
    c.add("H100 cuDNN forward, d128" + at, h100_cudnn_128[i],
          rate(h100, AttentionKernel::vendor_fused, 128, seqs[i], true));
    // The ratio alone, where the d128 level is fitted elsewhere (H100 FlashAttention-2: the test above).
    const double model = rate(h100, AttentionKernel::flash_attention_2, 64, seqs[i], false) /
                         rate(h100, AttentionKernel::flash_attention_2, 128, seqs[i], false);
    ratio_error = std::max(ratio_error, std::fabs(model / (h100_fa2_64[i] / h100_fa2_128[i]) - 1.0));
  }
  c.print();
  std::cout << fmt::format("H100 FlashAttention-2 d64/d128 ratio: max error {:.1f} %\n", 100.0 * ratio_error);
  CHECK(ratio_error <= 0.03);
  CHECK(c.mean_error() <= 0.10);
  CHECK(c.max_error() <= 0.15);
}
