#include "sim/analysis/confidence.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/units.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

namespace {

/// A band's errors as a warning quotes them: "-7 %", or "-14 to -13 %" where they round apart.
std::string percent_range(const ValidatedBand& band) {
  const std::string low = fmt::format("{:.0f}", band.low_percent), high = fmt::format("{:.0f}", band.high_percent);
  return low == high ? low + " %" : low + " to " + high + " %";
}

// The parameter counts docs/validation.md spans: the 125M MPT of llm-foundry's sweep (125.3M with its
// 2,048-row position table; tests/data/validation/llm_foundry_mpt.json) to the 1T models of
// Narayanan et al. and Korthikanti et al. (tests/data/validation/throughput.json).
constexpr double kValidatedMinParameters = 1.2e8;
constexpr double kValidatedMaxParameters = 1.1e12;

/// The parts of a MoE or long-context run the model simplifies, each a line: the answer is only as
/// good as the assumption behind it.
void warn_moe_and_long_context(const Scenario& sc, std::vector<std::string>& warnings) {
  const ParallelismSpec& p = sc.parallelism;
  if (sc.model.is_moe()) {
    warnings.push_back(fmt::format("mixture-of-experts timing is checked against {} published runs only "
                                   "(docs/validation.md: {:+.0f} % to {:+.0f} %), most optimistic on many small "
                                   "experts (Qwen3-30B-A3B dropless, the band's low end: the measured step takes "
                                   "{:.1f}x Strata's; Strata does not time the dropless dispatcher's device-to-host "
                                   "synchronisation, and the same run with token drop padded to capacity is closer)",
                                   kMoeBand.runs, kMoeBand.low_percent, kMoeBand.high_percent,
                                   100.0 / (100.0 + kMoeBand.low_percent)));
    if (p.ep > 1 && sc.training.moe.pace_factor() <= 1.0)
      warnings.push_back("expert load assumed perfectly balanced (training.moe.load_imbalance 1, as the published "
                         "MoE benchmarks force it): with real routing the most loaded EP rank sets the pace; set "
                         "your measured max/mean");
    if (p.tp > 1 && p.ep > 1 && !p.experts_folded())
      warnings.push_back(fmt::format("experts are split over TP {} like the dense layers, EP carved out of DP: if "
                                     "your framework runs expert TP 1 (Megatron-Core's MoE parallel folding, "
                                     "experts whole), set parallelism.etp=1",
                                     p.tp));
  }
  if (p.cp > 1) {
    warnings.push_back("context parallelism runs as a K/V ring (TransformerEngine); the all-gather variant "
                       "(Llama 3) is not modelled");
    if (sc.memory.recompute != Recompute::none)
      warnings.push_back("recomputation under context parallelism reruns attention without its K/V exchange: "
                         "optimistic by that traffic where it is not hidden");
  }
}

/// What NCCL reaches through one NIC when each node holds one member of the ring: 18.65 of 25 GB/s
/// (all_reduce, 2 Azure NDmv4 nodes x 1 A100; microsoft/mscclpp docs/performance-ndmv4.md; the known
/// gap of docs/validation.md's collectives table). Rings of 8 GPUs per node reach 0.92-0.94.
constexpr double kOneGpuPerNodeNicEfficiency = 18.65 / 25.0;

/// Data-parallel rings that are rail-aligned (TP x CP fills the node: one member per node, each NIC its
/// own communicator's) run slower per NIC than the 8-GPU-per-node curves efficiency.network follows.
void warn_rail_aligned_data_parallel(const Scenario& sc, const RunResult& r, std::vector<std::string>& warnings) {
  const RankLayout layout = rank_layout(sc);
  if (!r.simulation || layout.replicas() / layout.cp < 2 || layout.tp * layout.cp < layout.gpus_per_node || sc.gpus <= sc.hardware.gpus_per_node)
    return;
  const double efficiency = sc.hardware.efficiency.network;
  if (efficiency <= kOneGpuPerNodeNicEfficiency) return;
  const auto& exposed = r.simulation->analysis.breakdown.exposed_comm;
  double seconds = 0.0;
  for (TaskKind k : {TaskKind::dp_comm, TaskKind::param_gather})
    if (auto it = exposed.find(k); it != exposed.end()) seconds += it->second;
  const double iteration = r.simulation->throughput.iteration_time;
  if (iteration <= 0.0 || seconds < 0.02 * iteration) return;
  warnings.push_back(fmt::format(
      "exposed data-parallel traffic ({:.2f} s, {:.0f} % of the iteration) crosses nodes on rings with one GPU per "
      "node, where NCCL measured {:.2f} of a NIC's rate against efficiency.network {:.2f} here: it may take up to "
      "{:.0f} % longer (docs/validation.md, collectives)",
      seconds, 100.0 * seconds / iteration, kOneGpuPerNodeNicEfficiency, efficiency,
      100.0 * (efficiency / kOneGpuPerNodeNicEfficiency - 1.0)));
}

/// How much slower a ring is than NVLink SHARP's all-reduce on the measured 8x H100 curve (1-4 GiB,
/// timed as a ring at efficiency.nvlink; docs/references.md, NCCL collectives).
constexpr double kNvlinkSharpGapPercent = 30.0;

/// Exposed TP all-reduces (no SP: with SP they are all-gathers and reduce-scatters, which the switch
/// does not reduce) on a node whose switch reduces (NVLink SHARP) but whose profile states no rate
/// for it (efficiency.nvlink_sharp) are timed as rings: slow.
void warn_nvlink_sharp(const Scenario& sc, const RunResult& r, std::vector<std::string>& warnings) {
  if (!r.simulation || !sc.hardware.nvlink_sharp || sc.hardware.efficiency.nvlink_sharp > 0.0 ||
      sc.parallelism.tp < 2 || sc.parallelism.sequence_parallel)
    return;
  const auto& exposed = r.simulation->analysis.breakdown.exposed_comm;
  const auto it = exposed.find(TaskKind::tp_comm);
  const double iteration = r.simulation->throughput.iteration_time;
  if (it == exposed.end() || iteration <= 0.0 || it->second < 0.02 * iteration) return;
  warnings.push_back(fmt::format(
      "exposed TP all-reduces ({:.2f} s, {:.0f} % of the iteration) are timed as NVLink rings; NCCL's NVLink SHARP "
      "all-reduce on H100 measured up to {:.0f} % faster (docs/references.md, NCCL collectives) and {} states no rate "
      "for it (hardware.efficiency.nvlink_sharp): they may take less",
      it->second, 100.0 * it->second / iteration, kNvlinkSharpGapPercent, sc.hardware.name));
}

}  // namespace

std::string gpu_family(const std::string& gpu_model) { return gpu_model.substr(0, gpu_model.find('-')); }

bool narrow_on_h100(const Scenario& sc) {
  return gpu_family(sc.hardware.gpu.model) == "H100" && static_cast<double>(sc.model.hidden_size) <= kNarrowHidden &&
         !sc.model.is_moe();
}

bool userbuffers_at_tp8(const Scenario& sc) {
  const FrameworkBehaviour& b = sc.training.behaviour;
  return b.overlap_tp_comm && b.tp_overlap_method == TpOverlapMethod::userbuffers && sc.parallelism.tp >= 8;
}

bool wide_megatron_core_on_h100(const Scenario& sc) {
  return gpu_family(sc.hardware.gpu.model) == "H100" && static_cast<double>(sc.model.hidden_size) > kNarrowHidden &&
         !sc.model.is_moe() &&
         (sc.training.precision == Precision::bf16 || sc.training.precision == Precision::fp16) &&
         sc.training.framework == Framework::megatron_core;
}

Confidence assess_confidence(const Scenario& sc, const RunResult& r) {
  Confidence c;
  const KernelSpec& k = sc.hardware.kernels;
  c.kernel_tables = k.present;
  c.store_placeholder = sc.hardware.object_store.placeholder;
  c.validated_gpu = k.present && k.validated;
  for (const auto& f : framework_docs())
    if (f.framework == sc.training.framework) c.validated_framework = f.validated;

  if (!k.present)
    c.warnings.push_back(fmt::format("{} has no kernel tables: compute is a roofline at efficiency.gemm {:.2f}, not "
                                     "validated against measurements",
                                     sc.hardware.gpu.model, sc.hardware.efficiency.gemm));
  else if (!k.validated)
    c.warnings.push_back(fmt::format("{} is outside the validated GPUs (docs/validation.md): its kernel tables are "
                                     "borrowed or unmeasured",
                                     sc.hardware.gpu.model));
  // How the framework fared on this GPU in the published sweep: by how much, and which way.
  if (sc.training.framework == Framework::pytorch_fsdp) {
    const std::string family = gpu_family(sc.hardware.gpu.model);
    const GpuBand* band = nullptr;
    for (const GpuBand& b : kFsdpBands)
      if (family == b.family) band = &b;
    if (!band)
      c.warnings.push_back(fmt::format("pytorch-fsdp's published sweep (llm-foundry, docs/validation.md) ran on A100 "
                                       "and H100, not on {}: its error band does not apply",
                                       sc.hardware.gpu.model));
    else if (band->band.high_percent < 0.0)
      c.warnings.push_back(fmt::format("with pytorch-fsdp on {} Strata's iterations were {:.0f}-{:.0f} % shorter "
                                       "than measured in all {} published runs it reproduces (mean {:.0f} %; "
                                       "docs/validation.md, llm-foundry sweep): expect slower",
                                       family, -band->band.high_percent, -band->band.low_percent, band->band.runs,
                                       band->mean_abs_percent));
    else
      c.warnings.push_back(fmt::format("with pytorch-fsdp on {} Strata's iterations were {:.0f} % shorter to {:.0f} % "
                                       "longer than measured in the {} published runs it reproduces (mean |error| "
                                       "{:.1f} %; docs/validation.md, llm-foundry sweep)",
                                       family, -band->band.low_percent, band->band.high_percent, band->band.runs,
                                       band->mean_abs_percent));
  }
  // Every pipelined DeepSpeed run reproduced was slower than Strata: the line says so and which way.
  static_assert(kDeepspeedPipelineBand.high_percent < 0.0, "the pipeline band's line says 'expect slower'");
  if (sc.training.framework == Framework::deepspeed && sc.parallelism.pp > 1)
    c.warnings.push_back(fmt::format("with deepspeed's pipeline engine Strata's iterations were {:.0f}-{:.0f} % shorter "
                                     "than measured in all {} published runs of it that it reproduces (BLOOM 176B, "
                                     "MT-NLG 530B, GPT-NeoX-20B, on A100; docs/validation.md): expect slower",
                                     -kDeepspeedPipelineBand.high_percent, -kDeepspeedPipelineBand.low_percent,
                                     kDeepspeedPipelineBand.runs));
  else if (sc.training.framework == Framework::deepspeed)
    c.warnings.push_back(fmt::format("with deepspeed Strata's iterations were {:.0f} % shorter to {:.0f} % longer than "
                                     "measured in the {} published runs it reproduces (docs/validation.md)",
                                     -kDeepspeedBand.low_percent, kDeepspeedBand.high_percent, kDeepspeedBand.runs));
  const OffloadSpec& o = sc.memory.offload;
  if (o.optimizer != Tier::none || o.params != Tier::none || o.activations != Tier::none)
    c.warnings.push_back(fmt::format("offloaded runs came out {:.0f} % shorter to {:.0f} % longer than measured in the "
                                     "{} published ZeRO-Offload/ZeRO-Infinity runs (V100) Strata reproduces",
                                     -kOffloadBand.low_percent, kOffloadBand.high_percent, kOffloadBand.runs));
  // MoE runs have their own band (warn_moe_and_long_context).
  if (sc.training.precision == Precision::fp8 && !sc.model.is_moe()) {
    std::vector<std::string> releases;
    for (const ReleaseBand& r : kMlperfGpt3EosBands)
      releases.push_back(fmt::format("{} {}", r.release, percent_range(r.band)));
    c.warnings.push_back(fmt::format("fp8 runs came out {:.0f} % shorter to {:.0f} % longer than measured in the {} "
                                     "published FP8 runs (H100: NeMo, Megatron-Bridge, torchtitan, MLPerf; H200: "
                                     "torchtitan; B200: NeMo, Megatron-Bridge, MLPerf) Strata reproduces, most "
                                     "optimistic on models of hidden size 5120 and less and with NeMo before 24.09 "
                                     "(MLPerf's GPT-3 175B on one H100 cluster, by NeMo release: {})",
                                     -kFp8Band.low_percent, kFp8Band.high_percent, kFp8Band.runs,
                                     fmt::join(releases, ", ")));
  }
  const FrameworkBehaviour& b = sc.training.behaviour;
  if (b.overlap_tp_comm && sc.parallelism.tp > 1 && b.tp_overlap_method == TpOverlapMethod::async_tp)
    c.warnings.push_back(fmt::format("async TP is timed as pipelining the forward's and the recomputation's TP "
                                     "collectives, the backward's blocking: on the {} measured pairs (torchtitan, "
                                     "Llama 3.1 8B and 70B on H100, docs/validation.md) that gives +{:.0f} to "
                                     "+{:.0f} % throughput over blocking TP where async TP measured +{:.0f} to "
                                     "+{:.0f} %",
                                     kAsyncTpStrataGain.runs, kAsyncTpStrataGain.low_percent,
                                     kAsyncTpStrataGain.high_percent, kAsyncTpMeasuredGain.low_percent,
                                     kAsyncTpMeasuredGain.high_percent));
  else if (b.overlap_tp_comm && sc.parallelism.tp > 1 && sc.training.framework != Framework::megatron_core)
    c.warnings.push_back(fmt::format("overlapped TP communication is timed as Transformer Engine's userbuffers "
                                     "pipeline it (training.tp_overlap_method userbuffers), measured with "
                                     "megatron-core only: not validated with {}",
                                     to_string(sc.training.framework)));
  // Autocast's parameters are fp32 (TrainingSpec::autocast: wider than 16 bits).
  if (sc.training.autocast())
    c.warnings.push_back(fmt::format("autocast over fp32 parameters is checked on one published run only (TinyLlama "
                                     "1.1B, docs/validation.md); its residual stream is counted in fp32, as where the "
                                     "embedding's output stays fp32 (transformers, lit-gpt), each norm's output cast "
                                     "once for the fused linear after it: separate q/k/v or gate/up linears "
                                     "(transformers) each cast and keep their own, more than Strata counts; pipeline "
                                     "sends and TP collectives of the stream are counted in {}",
                                     to_string(sc.training.precision)));
  if (narrow_on_h100(sc))
    c.warnings.push_back(fmt::format("dense models of hidden size {:g} and less on H100 came out {:.0f} % shorter to "
                                     "{:.0f} % longer than measured in the {} published runs Strata reproduces "
                                     "(docs/validation.md), the most optimistic on a run that checks every gradient "
                                     "bucket for NaN on the host, one bucket per weight (MLPerf v5.1's Llama 3.1 8B on "
                                     "Cisco's Ethernet-connected nodes; not modelled) and, elsewhere, on the narrowest "
                                     "models: expect slower",
                                     kNarrowHidden, -kNarrowH100Band.low_percent, kNarrowH100Band.high_percent,
                                     kNarrowH100Band.runs));
  if (wide_megatron_core_on_h100(sc))
    c.warnings.push_back(fmt::format("16-bit dense runs of models wider than {:g} on H100 with megatron-core came out "
                                     "{:.0f} % shorter to {:.0f} % longer than measured in the {} published runs "
                                     "Strata reproduces (docs/validation.md), Megatron-Core r0.8.0's the most "
                                     "optimistic where compute dominates: expect slower with older releases",
                                     kNarrowHidden, -kWideMegatronCoreH100Band.low_percent,
                                     kWideMegatronCoreH100Band.high_percent, kWideMegatronCoreH100Band.runs));
  if (userbuffers_at_tp8(sc))
    c.warnings.push_back(fmt::format("TP communication overlapped by userbuffers at TP {}: Strata's iterations were "
                                     "{:.0f}-{:.0f} % shorter than measured in all {} published runs that overlap "
                                     "it at TP 8 (docs/validation.md), where the same runs timed with blocking "
                                     "collectives (training.overlap_tp_comm false) come out {:.0f} % shorter to "
                                     "{:.0f} % longer: expect slower",
                                     sc.parallelism.tp, -kUserbuffersTp8Band.high_percent,
                                     -kUserbuffersTp8Band.low_percent, kUserbuffersTp8Band.runs,
                                     -kUserbuffersTp8BlockingBand.low_percent,
                                     kUserbuffersTp8BlockingBand.high_percent));
  if (static_cast<double>(sc.gpus) >= kLargeScaleGpus)
    c.warnings.push_back(fmt::format("at {:g} GPUs and more Strata's iterations were {:.0f} % shorter to {:.1f} % "
                                     "longer than measured in the {} published runs of that scale it reproduces "
                                     "(docs/validation.md), most optimistic on MLPerf's NeMo runs (GPT-3 175B, Llama "
                                     "3.1 405B) and least on Meta's Llama 3 405B, whatever the micro-batches per "
                                     "pipeline",
                                     kLargeScaleGpus, -kLargeScaleBand.low_percent, kLargeScaleBand.high_percent,
                                     kLargeScaleBand.runs));
  if (power_limited(sc.hardware))
    c.warnings.push_back(fmt::format("at its {:g} W power limit (rated {:g} W) the GPU's SM clock is taken as {:.3f} of "
                                     "boost by the f³ power law, checked on {} published runs only (torchtitan, H100 "
                                     "at 500 W: {:.0f} % shorter to {:.0f} % longer than measured)",
                                     sc.hardware.gpu.power_limit.value, sc.hardware.gpu.tdp.value,
                                     sustained_clock(sc.hardware), kPowerLimitBand.runs, -kPowerLimitBand.low_percent,
                                     kPowerLimitBand.high_percent));
  // The pytorch-fsdp preset falls back to Megatron's selective where per-op checkpointing is not modelled.
  if (sc.training.framework == Framework::pytorch_fsdp && sc.memory.recompute == Recompute::selective &&
      sc.training.behaviour.selective_recompute == SelectiveRecompute::attention_core &&
      !sc.per_op_checkpointing_modelled())
    c.warnings.push_back("selective recompute is timed as Megatron's (the attention core rerun), not as PyTorch's "
                         "per-op checkpointing, which is modelled on bias-free dense blocks with flash attention at "
                         "TP 1 or with sequence parallelism and keeps less and reruns more");
  // Partial recomputation: some chunk keeps some of its blocks whole. No published run in
  // docs/validation.md uses it; each block is timed as a validated fully recomputed or plain block.
  const auto& chunks = r.partition.chunks;
  if (sc.memory.recompute == Recompute::full &&
      std::any_of(chunks.begin(), chunks.end(),
                  [&](const ModelChunk& m) { return recomputed_blocks(sc, m.num_layers) < m.num_layers; }))
    c.warnings.push_back(fmt::format("partial recomputation (memory.recompute_layers {}: the first blocks of each "
                                     "model chunk) has no published run in docs/validation.md: each block is timed "
                                     "as a fully recomputed or a plain one, both checked there, not the mix",
                                     sc.memory.recompute_layers));
  if (!c.validated_framework)
    c.warnings.push_back(fmt::format("framework {} has no measured runs in docs/validation.md",
                                     to_string(sc.training.framework)));
  if (r.parameters < kValidatedMinParameters || r.parameters > kValidatedMaxParameters)
    c.warnings.push_back(fmt::format("{:.3g}B parameters is outside the validated sizes ({:.3g}B to {:.3g}T)",
                                     r.parameters / 1e9, kValidatedMinParameters / 1e9, kValidatedMaxParameters / 1e12));
  if (r.simulation && k.max_published_mfu > 0.0 && r.simulation->throughput.mfu > k.max_published_mfu)
    c.warnings.push_back(fmt::format("MFU {:.1f} % is above the highest published on {} ({:.1f} %): likely optimistic",
                                     100.0 * r.simulation->throughput.mfu, sc.hardware.gpu.model,
                                     100.0 * k.max_published_mfu));
  if (sc.training.flash_attention && sc.training.behaviour.attention == AttentionKernel::triton_flash && k.present &&
      !(k.triton_forward > 0.0 && k.triton_backward > 0.0))
    c.warnings.push_back(fmt::format("FlashAttention in Triton is not measured on {}: timed at FlashAttention-2's "
                                     "rates (on A100 it runs at about half of them: docs/references.md)",
                                     sc.hardware.gpu.model));
  // A checkpoint through the object store takes as long as its bandwidth says: that input decides it.
  const auto& tiers = sc.checkpoint.tiers;
  const bool through_store = std::find(tiers.begin(), tiers.end(), Tier::object_store) != tiers.end();
  const bool checkpoint_in_store = r.checkpoint && through_store;
  const bool data_from_store = r.data && sc.data.tier == Tier::object_store;
  // The shipped profiles' store is no store at all: an answer that goes through it is an illustration.
  if (c.store_placeholder && (checkpoint_in_store || data_from_store))
    c.warnings.push_back(fmt::format(
        "{} through the profile's placeholder object store ({}, no real store's figure): state yours with "
        "--set hardware.object_store.bandwidth=RATE",
        checkpoint_in_store && data_from_store ? "checkpoints and training data go"
        : checkpoint_in_store                  ? "checkpoints go"
                                               : "training data is read",
        format_quantity(sc.hardware.object_store.bandwidth.value, Dimension::bytes_per_second)));
  if (checkpoint_in_store)
    c.warnings.push_back(fmt::format(
        "checkpoint times follow hardware.object_store.bandwidth ({} here): given the stated or rated "
        "bandwidth of their stores, Strata's saves and loads came out {:.0f} % shorter to {:.0f} % longer than the "
        "{} MLPerf Storage runs it reproduces (docs/validation.md); set your store's sustained rate, not its "
        "line rate",
        format_quantity(sc.hardware.object_store.bandwidth.value, Dimension::bytes_per_second),
        -kCheckpointStoreBand.low_percent,
        kCheckpointStoreBand.high_percent, kCheckpointStoreBand.runs));
  warn_moe_and_long_context(sc, c.warnings);
  warn_rail_aligned_data_parallel(sc, r, c.warnings);
  warn_nvlink_sharp(sc, r, c.warnings);
  return c;
}

}  // namespace strata
