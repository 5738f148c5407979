#pragma once

/// How sure a run's answer is: whether the GPU's compute comes from measured kernel tables, whether
/// the GPU, framework and model size fall inside what docs/validation.md reproduces, and any number
/// beyond what a published run ever reached. Each doubt is one line of `warnings`.

#include <string>
#include <vector>

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

/// How a regime fared in docs/validation.md's throughput table: the runs reproduced and their
/// errors on the time an iteration takes (negative: Strata optimistic), in percent. The validation
/// test fails when the table and these stop agreeing.
struct ValidatedBand {
  int runs = 0;
  double low_percent = 0.0, high_percent = 0.0;
};
/// Mixture-of-experts models (Mixtral 8x22B, Qwen2-57B-A14B, Grok-1, Qwen3-30B-A3B ×2, DeepSeek-V3 ×2;
/// Megatron-Core on H100; Mixtral 8x7B, NeMo 25.02 on B200), in every precision: the FP8 and
/// narrow-model bands below are dense runs'.
inline constexpr ValidatedBand kMoeBand{8, -58.5, 5.7};
/// A regime's band on one GPU family, with its mean absolute error in percent.
struct GpuBand {
  const char* family;  ///< the GPU model's name up to its first '-' (gpu_family)
  ValidatedBand band;
  double mean_abs_percent = 0.0;
};
/// The pytorch-fsdp framework per GPU: MosaicML llm-foundry's MPT benchmark sweep (docs/validation.md,
/// llm-foundry; tests/test_validation_foundry.cpp checks these against it).
inline constexpr GpuBand kFsdpBands[] = {{"A100", {139, -29.6, 12.0}, 5.3}, {"H100", {70, -31.1, -4.1}, 17.1}};
/// "A100-SXM4-80GB" -> "A100": the family a band is kept for.
std::string gpu_family(const std::string& gpu_model);
/// The deepspeed framework without pipeline parallelism (the ZeRO-Offload tutorial's 10B run and
/// ZeRO-Infinity's runs on one DGX-2).
inline constexpr ValidatedBand kDeepspeedBand{6, -29.6, 28.4};
/// The deepspeed framework with pipeline parallelism, DeepSpeed's pipeline engine as Megatron-DeepSpeed
/// and GPT-NeoX drive it (BLOOM 176B on 384 A100, Megatron-Turing NLG 530B on 2240-3360 A100, GPT-NeoX-20B
/// on 96 A100-40GB): optimistic on all.
inline constexpr ValidatedBand kDeepspeedPipelineBand{5, -22.3, -9.1};
/// Runs with parameters, optimizer states or activations offloaded (ZeRO-Offload, ZeRO-Infinity; V100).
inline constexpr ValidatedBand kOffloadBand{5, -29.6, 28.4};
/// Dense FP8 training on H100, H200 and B200. On H100: MLPerf Training's GPT-3 175B (NVIDIA's v3.1, NeMo 23.09, 512 to
/// 10,752 GPUs, and Azure's on 10,752; v4.0, NeMo 24.04, 512 and 10,752; v4.1, NeMo 24.09, 256 and 512, and Oracle's on
/// 1,536 and 3,072; v5.0's Llama 3.1 405B, NeMo 25.01, 512 to 8,192; v5.1's Llama 3.1 8B on Cisco's 64 and 128 over
/// Ethernet, the band's low end), NeMo 24.07 (GPT-3 5B to 175B, Llama 2 and 3) and 24.09 (Llama 3.1 8B, 70B, 405B),
/// Megatron-Bridge 25.11 (Llama 3 8B and 70B, Llama 3.1 405B) and 26.02 (the 70B and 405B at larger batches),
/// torchtitan's Float8 Llama 3.1 8B under FSDP on 8 and 128 GPUs (December 2024), 70B with and without AsyncTP
/// (December 2024 and June 2025) and 8B at TP 8 (June 2025); on H200, torchtitan's 8B under FSDP on 32 and 64 GPUs
/// (Trainy, June 2025) and MLPerf v5.0's Llama 3.1 405B on Nebius's 512 and 1,024; on B200, MLPerf's GPT-3 175B (v4.1
/// preview, 64 GPUs), Llama 3.1 8B (v5.1, 8, 64 and 256) and 405B (v5.1, 256 and 448), NeMo 25.02 (Llama 3 8B, 70B,
/// 405B, GPT-3 175B), Megatron-Bridge 25.11 (Llama 3 8B, Llama 3.1 405B) and Together AI's run of its 26.02 recipe
/// (Llama 3.1 8B).
/// Optimistic most on narrow models and with NeMo before 24.09 (GPT-3 5B on H100, Llama 3 8B on B200;
/// MLPerf's GPT-3 175B on Eos: kMlperfGpt3EosBands) and at 10,752 GPUs.
inline constexpr ValidatedBand kFp8Band{61, -34.7, 6.3};
/// One NeMo release's band.
struct ReleaseBand {
  const char* release;  ///< NeMo's container release, as the rows' framework names it ("NeMo 23.09")
  ValidatedBand band;
};
/// NVIDIA's MLPerf GPT-3 175B in FP8 on Eos (DGX H100) below kLargeScaleGpus by NeMo release, the same
/// benchmark and model on the same cluster, so what moves between them is the software (23.09: 512, 768,
/// 4,096 and 6,144 GPUs; 24.04: 512; 24.09: 256 and 512).
inline constexpr ReleaseBand kMlperfGpt3EosBands[] = {
    {"23.09", {4, -13.6, -13.1}}, {"24.04", {1, -7.2, -7.2}}, {"24.09", {2, -4.9, -3.3}}};
/// GPUs run below their rated power (gpu.power_limit < gpu.tdp), whose SM clock comes from the f³
/// power law (sustained_clock): torchtitan's runs on H100 at 500 W (Llama 3.1 8B eager, compiled and
/// compiled with Float8; 70B Float8 with and without AsyncTP, December 2024; 8B at TP 8 and 70B, bf16
/// and Float8, with and without it, June 2025).
inline constexpr ValidatedBand kPowerLimitBand{16, -9.5, 6.3};
/// Narrow dense models on H100: hidden size kNarrowHidden or less, every framework (Megatron-LM's
/// 1.7B and 7.1B, NVIDIA's NeMo Llama 3/3.1 8B, Llama 2 7B and GPT-3 5B, Megatron-Bridge's Llama 3
/// 8B, torchtitan's Llama 3.1 8B at TP 1 (bf16 and Float8) and 8, llm-foundry's MPT-7B, IBM's HSDP
/// Llama 2 7B eager and compiled, MLPerf v5.1's Llama 3.1 8B on Cisco's Ethernet-connected H100 at TP 1
/// and 2, the low end): optimistic on all but one, most on the narrowest and the older releases. MoE
/// models are kMoeBand's.
inline constexpr double kNarrowHidden = 4096;
inline constexpr ValidatedBand kNarrowH100Band{25, -34.7, 4.5};
/// Whether the scenario is in that regime.
bool narrow_on_h100(const Scenario& sc);
/// Wider dense models on H100 in 16 bits with the megatron-core preset (NVIDIA's dgxc NeMo 24.09 GPT-3
/// 175B and Llama 3.1 70B and 405B, Megatron-LM's Megatron-Core r0.8.0 GPT 16B to 462B, its 177B
/// strong-scaled over 96 to 4,608 GPUs): r0.8.0 the most optimistic where compute dominates, NeMo 24.09
/// within 8 %.
inline constexpr ValidatedBand kWideMegatronCoreH100Band{15, -17.4, 7.3};
/// Whether the scenario is in that regime.
bool wide_megatron_core_on_h100(const Scenario& sc);
/// TP communication pipelined with the GEMMs by Transformer Engine's userbuffers at TP 8 and more: the
/// Megatron-LM r0.8.0 TP-8 rows (GPT 32B to 462B, --tp-comm-overlap) and MLPerf v5.0's Llama 3.1 405B
/// (NeMo 25.01), all optimistic. Timed with the collectives blocking, the 405B on 512 GPUs comes out
/// +2.1 % and the Megatron-LM 32B, 177B (96 GPUs) and 462B +4.7, -9.2 and -7.8 % (all: kUserbuffersTp8BlockingBand):
/// the overlap's SM cost is TP 4's configuration (kTpOverlapCost), where NVIDIA's overlapped GPT-3 175B rows
/// with NeMo 24.09 (dgxc, MLPerf v4.1 on Eos) are within 6 %.
inline constexpr ValidatedBand kUserbuffersTp8Band{11, -19.2, -9.5};
/// The same runs timed with their TP collectives blocking (training.overlap_tp_comm false).
inline constexpr ValidatedBand kUserbuffersTp8BlockingBand{11, -9.3, 4.7};
/// Whether the scenario is in that regime.
bool userbuffers_at_tp8(const Scenario& sc);
/// Runs on kLargeScaleGpus GPUs and more, every GPU and framework: Llama 3 405B on 8,192 and 16,384 H100 (within 4 %),
/// MegaScale's Megatron-LM 175B on 8,192 and 12,288 A100 (-9 %), MLPerf's GPT-3 175B on 10,752 H100 (v3.1 NVIDIA's
/// -13 % and Azure's -15 %, v4.0 -17 %) and v3.1's on 8,192 and 10,240 (-14 and -13 %, as v3.1's 512 to 6,144), MLPerf
/// v5.0's Llama 3.1 405B on 8,192 H100 (-19 %, userbuffers at TP 8: kUserbuffersTp8Band): the error follows the
/// software more than the micro-batches per pipeline the data-parallel replicas leave at a fixed global batch: v3.1's
/// GPT-3 runs are flat from 128 to 8, Meta's Llama 3 405B at 16,384 GPUs is within 1 % at 16 over 16 stages, v4.0's
/// 6 are -17 %.
inline constexpr double kLargeScaleGpus = 8192;
inline constexpr ValidatedBand kLargeScaleBand{11, -19.2, 0.5};
/// Checkpoint saves and restores through the object store, given the store's stated or rated bandwidth:
/// the MLPerf Storage v3.0 runs of docs/validation.md's Measured checkpoints (NVIDIA's AIStore, UBIX,
/// TTA, Azure Managed Lustre), errors on the time (negative: Strata faster). tests/test_validation_checkpoints.cpp
/// fails when the table and this stop agreeing.
inline constexpr ValidatedBand kCheckpointStoreBand{18, -28.6, 31.4};
/// PyTorch's async TP (training.tp_overlap_method async-tp): throughput gained over blocking TP on
/// torchtitan's measured pairs (Llama 3.1 70B Float8 on 256 H100, December 2024; 8B on 64 and 70B on
/// 256, bf16 and Float8, June 2025), measured and Strata's (runs = pairs; tests/test_validation.cpp
/// checks both against the table).
inline constexpr ValidatedBand kAsyncTpMeasuredGain{5, 5.7, 16.4};
inline constexpr ValidatedBand kAsyncTpStrataGain{5, 10.6, 15.8};

Confidence assess_confidence(const Scenario& sc, const RunResult& r);

}  // namespace strata
