#include "sim/report/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/units.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/report/report.hpp"

namespace strata {

namespace {

using json = nlohmann::json;
using P = MetricPresence;
using U = MetricUnit;

// Shorthands for the table: what each section's values are read from. The writer only calls a
// metric when its presence holds, so the optional parts are there when these dereference them.
const Scenario& S(const ReportInputs& in) { return *in.scenario; }
const RunResult& R(const ReportInputs& in) { return *in.result; }
const SimulationResult& Sim(const ReportInputs& in) { return *in.result->simulation; }
const CheckpointResult& Ck(const ReportInputs& in) { return *in.result->checkpoint; }
const RunLevelResult& Run(const ReportInputs& in) { return *in.result->run; }
const DataResult& Data(const ReportInputs& in) { return *in.result->data; }
const ModelSpec& M(const ReportInputs& in) { return *in.model; }

Metric one(std::string key, U unit, P presence, std::string meaning, std::function<json(const ReportInputs&)> f) {
  return Metric{std::move(key), unit, std::move(meaning), presence,
                [f = std::move(f)](const ReportInputs& in) { return MetricValues{{"", f(in)}}; }, {}, false};
}

/// A key present only in some reports of its section (nullopt: absent).
Metric maybe(std::string key, U unit, P presence, std::string meaning,
             std::function<std::optional<json>(const ReportInputs&)> f) {
  return Metric{std::move(key), unit, std::move(meaning), presence,
                [f = std::move(f)](const ReportInputs& in) {
                  auto v = f(in);
                  return v ? MetricValues{{"", *v}} : MetricValues{};
                },
                {}, false};
}

Metric family(std::string key, U unit, P presence, std::string meaning, std::vector<std::string> names,
              std::function<MetricValues(const ReportInputs&)> f) {
  return Metric{std::move(key), unit, std::move(meaning), presence, std::move(f), std::move(names), false};
}

/// A key of the model description: read from the model alone.
Metric model(std::string key, U unit, std::string meaning, std::function<json(const ReportInputs&)> f) {
  Metric m = one(std::move(key), unit, P::always, std::move(meaning), std::move(f));
  m.describes_model = true;
  return m;
}

template <class E>
std::vector<std::string> enum_names(std::initializer_list<E> values) {
  std::vector<std::string> out;
  for (E v : values) out.push_back(to_string(v));
  return out;
}

const std::vector<std::string> kHostTiers = enum_names({Tier::dram, Tier::cxl, Tier::local_ssd});
const std::vector<TaskKind> kExposedKinds = {TaskKind::tp_comm, TaskKind::cp_comm, TaskKind::pp_transfer,
                                             TaskKind::dp_comm, TaskKind::param_gather, TaskKind::ep_comm};
const std::vector<std::string> kFailureKinds = {"gpu", "network", "node"};

std::vector<std::string> all_task_kinds() {
  std::vector<std::string> out;
  for (int k = 0; k < kNumTaskKinds; ++k) out.push_back(to_string(static_cast<TaskKind>(k)));
  return out;
}

double exposed(const ReportInputs& in, TaskKind k) {
  const auto& m = Sim(in).analysis.breakdown.exposed_comm;
  auto it = m.find(k);
  return it == m.end() ? 0.0 : it->second;
}

/// Interval advice needs a checkpoint cost; without checkpoints (or with redundant computation
/// instead) it is absent (null), not zero.
bool has_advice(const ReportInputs& in) {
  return R(in).checkpoint.has_value() && behaviour(S(in).checkpoint.strategy).writes_checkpoints;
}

json advice(const ReportInputs& in, double v) { return has_advice(in) ? json(v) : json(nullptr); }

/// The HBM peak of one stage's representative rank in the executed timeline, if it was simulated.
const RankMemory* executed_rank(const ReportInputs& in, std::int64_t rank) {
  if (!R(in).simulation) return nullptr;
  const auto& tm = Sim(in).analysis.memory;
  auto it = tm.find(rank);
  return it == tm.end() ? nullptr : &it->second;
}

json breakdown_json(const MemoryBreakdown& b) {
  return {{"params", b.params},         {"gradients", b.gradients}, {"optimizer", b.optimizer},
          {"activations", b.activations}, {"workspace", b.workspace}, {"buffers", b.buffers}};
}

json gpus_json(const ReportInputs& in) {
  json gpus = json::array();
  for (const auto& st : R(in).memory.stages) {
    json offloaded = json::object();
    for (const auto& [tier, bytes] : st.offloaded) offloaded[to_string(tier)] = bytes;
    json timeline = nullptr;
    if (const RankMemory* rm = executed_rank(in, st.first_rank)) {
      json at_peak = json::object();
      for (int u = 0; u < kNumMemoryUses; ++u)
        at_peak[to_string(static_cast<MemoryUse>(u))] = rm->at_peak[static_cast<std::size_t>(u)];
      const double peak = rm->peak.count(Tier::hbm) ? rm->peak.at(Tier::hbm) : 0.0;
      timeline = {{"peak_bytes", peak}, {"peak_time_s", rm->peak_time}, {"breakdown_at_peak", at_peak}};
    }
    gpus.push_back({{"rank", st.first_rank},
                    {"timeline", timeline},
                    {"stage", st.stage},
                    {"identical_ranks", st.num_ranks},
                    {"layers", st.layers},
                    {"parameters", st.parameters},
                    {"microbatches_in_flight", st.microbatches_in_flight},
                    {"peak_bytes", st.hbm.total()},
                    {"breakdown", breakdown_json(st.hbm)},
                    {"offloaded_bytes", offloaded}});
  }
  return gpus;
}

/// Each overflow names who found it: the static memory model, the executed timeline or the
/// checkpoint's staging, and for the latter two when it happened.
json overflows_json(const ReportInputs& in) {
  json overflows = json::array();
  for (const FoundOverflow& found : R(in).verdict.overflows) {
    const Overflow& o = found.overflow;
    json j = {{"device", o.device},
              {o.device == "gpu" ? "rank" : "node", o.index},
              {"tier", to_string(o.tier)},
              {"need_bytes", o.need},
              {"capacity_bytes", o.capacity},
              {"excess_bytes", o.need - o.capacity},
              {"found_by", found.found_by}};
    if (found.time_s) j["time_s"] = *found.time_s;
    overflows.push_back(j);
  }
  return overflows;
}

template <class Map, class Get>
MetricValues tier_values(const Map& m, Get get) {
  MetricValues out;
  for (const auto& [tier, v] : m) out.emplace_back(to_string(tier), get(v));
  return out;
}

std::vector<Metric> build_table() {
  std::vector<Metric> t;
  auto add = [&](Metric m) { t.push_back(std::move(m)); };

  // --- identity and the scenario as run
  add(one("schema", U::text, P::always, "report format and version", [](auto&) { return json(kReportSchema); }));
  add(one("strata_version", U::text, P::always, "the Strata that wrote it", [](auto&) { return json(STRATA_VERSION); }));
  add(one("scenario.name", U::text, P::always, "scenario name", [](auto& in) { return json(S(in).name); }));
  add(one("scenario.seed", U::count, P::always, "the scenario's random seed", [](auto& in) { return json(S(in).seed); }));
  add(one("scenario.hardware", U::text, P::always, "hardware profile name",
          [](auto& in) { return json(S(in).hardware.name); }));
  add(one("scenario.gpus", U::count, P::always, "GPUs in the cluster", [](auto& in) { return json(S(in).gpus); }));
  add(one("scenario.nodes", U::count, P::always, "nodes (ceil(gpus / gpus_per_node))",
          [](auto& in) { return json(S(in).nodes); }));
  add(one("scenario.parallelism.tp", U::count, P::always, "tensor-parallel degree",
          [](auto& in) { return json(S(in).parallelism.tp); }));
  add(one("scenario.parallelism.pp", U::count, P::always, "pipeline-parallel degree (stages)",
          [](auto& in) { return json(S(in).parallelism.pp); }));
  add(one("scenario.parallelism.dp", U::count, P::always, "data-parallel degree (replicas)",
          [](auto& in) { return json(S(in).parallelism.dp); }));
  add(one("scenario.parallelism.cp", U::count, P::always,
          "context-parallel degree (the sequence split over cp ranks, K/V exchanged around a ring)",
          [](auto& in) { return json(S(in).parallelism.cp); }));
  add(one("scenario.parallelism.ep", U::count, P::always,
          "expert-parallel degree (carved out of dp: EP groups of ep replicas share the experts; with etp 1 "
          "folded over tp·cp·dp)",
          [](auto& in) { return json(S(in).parallelism.ep); }));
  add(one("scenario.parallelism.etp", U::count, P::always,
          "expert tensor-parallel degree: tp (experts split over TP) or 1 (MoE parallel folding: experts whole, "
          "EP groups over tp·cp·dp)",
          [](auto& in) { return json(S(in).parallelism.expert_tp()); }));
  add(one("scenario.moe.capacity_factor", U::count, P::always,
          "tokens an expert takes over the mean (training.moe.capacity_factor); null: dropless",
          [](auto& in) {
            const double c = S(in).training.moe.capacity_factor;
            return c > 0.0 ? json(c) : json(nullptr);
          }));
  add(one("scenario.moe.load_imbalance", U::count, P::always,
          "routed tokens of the most loaded EP rank over the mean (training.moe.load_imbalance)",
          [](auto& in) { return json(S(in).training.moe.load_imbalance); }));
  add(one("scenario.parallelism.sequence_parallel", U::flag, P::always, "sequence parallelism with TP",
          [](auto& in) { return json(S(in).parallelism.sequence_parallel); }));
  add(one("scenario.parallelism.schedule", U::text, P::always, "pipeline schedule",
          [](auto& in) { return json(to_string(S(in).parallelism.schedule)); }));
  add(one("scenario.parallelism.virtual_stages", U::count, P::always, "model chunks per pipeline stage (interleaved)",
          [](auto& in) { return json(S(in).parallelism.virtual_stages); }));
  add(one("scenario.parallelism.pipeline_partition", U::text, P::always,
          "how blocks were split over stages: uniform, balanced (by kernel time within memory) or explicit "
          "(parallelism.pipeline_layers)",
          [](auto& in) {
            const auto& p = S(in).parallelism;
            return json(p.pipeline_layers.empty() ? to_string(p.pipeline_partition) : std::string("explicit"));
          }));
  add(one("scenario.parallelism.pipeline_layers", U::list, P::always,
          "transformer blocks per model chunk in model order (chunk c on stage c mod pp), as run",
          [](auto& in) { return json(chunk_layers(R(in).partition)); }));
  add(one("scenario.parallelism.zero_stage", U::index, P::always, "ZeRO stage (0-3)",
          [](auto& in) { return json(S(in).parallelism.zero_stage); }));
  add(one("scenario.parallelism.distributed_optimizer", U::flag, P::always,
          "Megatron distributed optimizer (optimizer states sharded over DP)",
          [](auto& in) { return json(S(in).parallelism.distributed_optimizer); }));
  add(one("scenario.parallelism.dp_replicate", U::count, P::always,
          "replicas of the sharded states (HSDP): ZeRO shards over dp·cp/dp_replicate ranks; 1: over all of DP",
          [](auto& in) { return json(S(in).parallelism.dp_replicate); }));
  add(one("scenario.microbatches", U::count, P::always, "micro-batches per iteration per pipeline",
          [](auto& in) { return json(S(in).num_microbatches()); }));
  add(one("scenario.recompute", U::text, P::always, "activation recomputation policy",
          [](auto& in) { return json(to_string(S(in).memory.recompute)); }));
  add(one("scenario.distribute_saved_activations", U::flag, P::always,
          "full recomputation's checkpointed block inputs split over TP, gathered before each rerun",
          [](auto& in) { return json(S(in).memory.distribute_saved_activations); }));
  add(one("scenario.recomputed_layers", U::list, P::always,
          "transformer blocks per model chunk that recompute, in model order: a chunk's every block under "
          "scenario.recompute, or its first memory.recompute_layers under full; 0 without recompute",
          [](auto& in) {
            std::vector<int> counts;
            for (const ModelChunk& c : R(in).partition.chunks) counts.push_back(recomputed_blocks(S(in), c.num_layers));
            return json(counts);
          }));
  add(one("scenario.offload_gpudirect", U::flag, P::always, "offload copies to NVMe skip the host (GPUDirect Storage)",
          [](auto& in) { return json(S(in).memory.offload.gpudirect); }));
  add(one("scenario.flash_attention", U::flag, P::always, "attention without materialised scores",
          [](auto& in) { return json(S(in).training.flash_attention); }));
  add(one("scenario.framework", U::text, P::always, "training framework preset (training.framework)",
          [](auto& in) { return json(to_string(S(in).training.framework)); }));
  add(one("scenario.overlap_grad_reduce", U::flag, P::always, "gradient reduction overlapped with the backward",
          [](auto& in) { return json(S(in).training.behaviour.overlap_grad_reduce); }));
  add(one("scenario.overlap_param_gather", U::flag, P::always,
          "parameter all-gathers ahead of their layer: ZeRO-3 prefetch, or below ZeRO-3 the updated weights in the "
          "next forward (training.overlap_param_gather)",
          [](auto& in) { return json(S(in).training.behaviour.overlap_param_gather); }));
  add(one("scenario.align_param_gather", U::flag, P::always,
          "with the interleaved schedule, each model chunk's gathers of the updated weights issued together ahead of "
          "it (training.align_param_gather)",
          [](auto& in) { return json(S(in).training.behaviour.align_param_gather); }));
  add(one("scenario.overlap_tp_comm", U::flag, P::always,
          "TP collectives pipelined with their GEMMs (training.overlap_tp_comm, Megatron-Core tp_comm_overlap)",
          [](auto& in) { return json(S(in).training.behaviour.overlap_tp_comm); }));
  add(one("scenario.tp_overlap_method", U::text, P::always,
          "how overlapped TP collectives are pipelined: userbuffers (every pass) or async-tp (forward and "
          "recomputation) (training.tp_overlap_method)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.tp_overlap_method)); }));
  add(one("scenario.sequence_parallel_style", U::text, P::always,
          "how sequence parallelism lays out and keeps the activations: megatron or dtensor "
          "(training.sequence_parallel_style)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.sequence_parallel_style)); }));
  add(one("scenario.fp8_scaling", U::text, P::always,
          "under fp8, how an activation's scale is found: delayed or current (training.fp8_scaling)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.fp8_scaling)); }));
  add(one("scenario.fp8_param_gather", U::flag, P::always,
          "under fp8, the fp8 linears' weights all-gathered in fp8 (training.fp8_param_gather)",
          [](auto& in) { return json(S(in).training.behaviour.fp8_param_gather); }));
  add(one("scenario.overlap_p2p_comm", U::flag, P::always,
          "pipeline sends asynchronous beside the compute (training.overlap_p2p_comm)",
          [](auto& in) { return json(S(in).training.behaviour.overlap_p2p_comm); }));
  add(one("scenario.async_tp_backward", U::flag, P::always,
          "the backward's column-parallel TP collectives asynchronous beside their GEMMs (training.async_tp_backward)",
          [](auto& in) { return json(S(in).training.behaviour.async_tp_backward); }));
  add(one("scenario.fused_elementwise", U::flag, P::always,
          "norms, activations and rotary embeddings as fused kernels; false: eager PyTorch (training.fused_elementwise)",
          [](auto& in) { return json(S(in).training.behaviour.fused_elementwise); }));
  add(one("scenario.attention_kernel", U::text, P::always, "fused attention kernel the framework calls",
          [](auto& in) { return json(to_string(S(in).training.behaviour.attention)); }));
  add(one("scenario.grad_accumulation", U::text, P::always,
          "how each micro-batch's gradients are accumulated below ZeRO-2 or with grad_sync last-microbatch "
          "(training.grad_accumulation)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.grad_accumulation)); }));
  add(one("scenario.grad_sync", U::text, P::always,
          "when ZeRO-2/3's partitioned gradients are reduced: every micro-batch or once after the last "
          "(training.grad_sync)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.grad_sync)); }));
  add(one("scenario.param_precision", U::text, P::always,
          "the parameters' dtype; fp32 under a 16-bit precision is autocast over fp32 parameters "
          "(training.param_precision)",
          [](auto& in) { return json(to_string(S(in).training.param_precision)); }));
  add(one("scenario.selective_recompute", U::text, P::always,
          "what selective recompute keeps, as the framework implements it (training.selective_recompute)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.selective_recompute)); }));
  add(one("scenario.cross_entropy", U::text, P::always,
          "how the loss's cross-entropy runs: its passes over the logits and what it holds while it runs, as the "
          "framework implements it (training.cross_entropy)",
          [](auto& in) { return json(to_string(S(in).training.behaviour.cross_entropy)); }));
  add(one("scenario.logit_metrics", U::count, P::always,
          "training metrics computed from the logits every micro-batch, each a forward cross-entropy "
          "(training.logit_metrics)",
          [](auto& in) { return json(S(in).training.behaviour.logit_metrics); }));

  // --- how sure the answer is (sim/analysis/confidence)
  add(one("calibration.kernel_tables", U::flag, P::always,
          "compute from the profile's kernel tables (GEMM tile/wave model, fused-attention rates); false: a roofline "
          "at efficiency.gemm",
          [](auto& in) { return json(R(in).confidence.kernel_tables); }));
  add(one("calibration.validated_gpu", U::flag, P::always, "the GPU has measured runs in docs/validation.md",
          [](auto& in) { return json(R(in).confidence.validated_gpu); }));
  add(one("calibration.validated_framework", U::flag, P::always,
          "the framework preset has measured runs in docs/validation.md",
          [](auto& in) { return json(R(in).confidence.validated_framework); }));
  add(one("calibration.store_placeholder", U::flag, P::always,
          "hardware.object_store.bandwidth is the profile's placeholder (hardware.object_store.placeholder), "
          "not a stated store: checkpoint times through the store are then illustrations",
          [](auto& in) { return json(R(in).confidence.store_placeholder); }));
  add(one("warnings", U::list, P::always,
          "one line per reason to doubt the answer: no kernel tables, a GPU, framework or size outside the validated "
          "range, an MFU above any published on the GPU",
          [](auto& in) { return json(R(in).confidence.warnings); }));

  // --- the model: how its document was read (also `strata describe models NAME`)
  add(model("model.format", U::text, "document format read (strata, or huggingface config.json)",
            [](auto& in) { return json(M(in).format); }));
  add(model("model.model_type", U::text, "HuggingFace model_type, null for a Strata model file",
            [](auto& in) { return M(in).model_type.empty() ? json(nullptr) : json(M(in).model_type); }));
  add(model("model.mlp", U::text, "MLP kind (plain, gated)", [](auto& in) { return json(to_string(M(in).mlp)); }));
  add(model("model.activation", U::text, "activation function (hidden_act)", [](auto& in) { return json(M(in).hidden_act); }));
  add(model("model.norm", U::text, "normalisation (rmsnorm, layernorm)",
            [](auto& in) { return json(M(in).norm == NormKind::rmsnorm ? "rmsnorm" : "layernorm"); }));
  add(model("model.norms_per_layer", U::count, "norms per transformer layer (4 with sandwich norms)",
            [](auto& in) { return json(M(in).sandwich_norm ? 4 : 2); }));
  add(model("model.position_embedding", U::text, "position embedding (learned, rotary)",
            [](auto& in) {
              return json(M(in).position_embedding == PositionEmbedding::learned ? "learned" : "rotary");
            }));
  add(model("model.hidden_size", U::count, "hidden size", [](auto& in) { return json(M(in).hidden_size); }));
  add(model("model.heads", U::count, "attention heads", [](auto& in) { return json(M(in).num_heads); }));
  add(model("model.kv_heads", U::count, "key/value heads (fewer than heads: grouped-query attention)",
            [](auto& in) { return json(M(in).num_kv_heads); }));
  add(model("model.head_dim", U::count, "width of one head", [](auto& in) { return json(M(in).head_dim); }));
  add(model("model.intermediate_size", U::count, "MLP inner width", [](auto& in) { return json(M(in).intermediate_size); }));
  add(model("model.vocab_size", U::count, "vocabulary size", [](auto& in) { return json(M(in).vocab_size); }));
  add(model("model.experts", U::count, "MoE experts per layer (0: dense)", [](auto& in) { return json(M(in).num_experts); }));
  add(model("model.experts_per_token", U::count, "MoE experts each token is routed to",
            [](auto& in) { return json(M(in).experts_per_token); }));
  add(model("model.active_params", U::count,
            "parameters one token uses: all but the routed experts it is not sent to (= the total for a dense model)",
            [](auto& in) { return json(in.parameters->active); }));
  add(model("model.moe_intermediate_size", U::count, "width of one routed expert's MLP (0: dense)",
            [](auto& in) { return json(M(in).is_moe() ? M(in).moe_intermediate_size : 0); }));
  add(model("model.shared_experts", U::count, "experts every token passes through besides the routed ones",
            [](auto& in) { return json(M(in).is_moe() ? M(in).num_shared_experts : 0); }));
  add(model("model.shared_expert_intermediate_size", U::count, "width of one shared expert (0: none)",
            [](auto& in) {
              return json(M(in).is_moe() && M(in).num_shared_experts > 0 ? M(in).shared_expert_intermediate_size : 0);
            }));
  add(model("model.moe_layers", U::count, "blocks with experts; the first first_k_dense_replace blocks have a dense MLP",
            [](auto& in) { return json(M(in).moe_layers()); }));
  add(model("model.mtp_layers_not_simulated", U::count,
            "multi-token-prediction modules in the checkpoint (DeepSeek-V3), left out of parameters, work and memory",
            [](auto& in) { return json(M(in).mtp_layers); }));
  add(model("model.attention", U::text, "attention kind: multi_head (MHA/GQA) or latent (DeepSeek multi-head latent)",
            [](auto& in) { return json(to_string(M(in).attention)); }));
  add(model("model.kv_elements_per_token", U::count,
            "K/V elements a token leaves per layer: 2·kv_heads·head_dim, or kv_lora_rank + qk_rope_head_dim for latent "
            "attention (what a KV cache keeps)",
            [](auto& in) { return json(M(in).kv_elements_per_token()); }));
  add(model("model.tied_embeddings", U::flag, "output head shares the embedding's weights",
            [](auto& in) { return json(M(in).tie_word_embeddings); }));
  add(model("model.parallel_residual", U::flag, "attention and MLP read the same input (GPT-J style)",
            [](auto& in) { return json(M(in).parallel_residual); }));
  add(model("model.sliding_window", U::count, "attention window in tokens (0: full attention)",
            [](auto& in) { return json(M(in).sliding_window); }));
  add(model("model.sliding_window_layers", U::text, "layers with the window (all, alternate), null without one",
            [](auto& in) {
              return M(in).sliding_window == 0
                         ? json(nullptr)
                         : json(M(in).sliding_window_layers == WindowLayers::all ? "all" : "alternate");
            }));
  {
    Metric m = family("model.parameters_by_kind.{kind}", U::count, P::always, "parameters by kind",
                      {"embedding", "attention", "mlp", "norms", "lm_head"}, [](const ReportInputs& in) {
                        const ParameterBreakdown& p = *in.parameters;
                        return MetricValues{{"embedding", p.embedding}, {"attention", p.attention}, {"mlp", p.mlp},
                                            {"norms", p.norms}, {"lm_head", p.lm_head}};
                      });
    m.describes_model = true;
    add(std::move(m));
  }
  add(one("model.name", U::text, P::always, "model name", [](auto& in) { return json(S(in).model.name); }));
  add(one("model.parameters", U::count, P::always, "total parameters", [](auto& in) { return json(R(in).parameters); }));
  add(one("model.layers", U::count, P::always, "transformer layers", [](auto& in) { return json(S(in).model.num_layers); }));
  add(one("model.flops_per_iteration", U::flops, P::always, "model FLOPs of one iteration, whole cluster, no recompute",
          [](auto& in) { return json(R(in).flops_per_iteration); }));

  // --- memory
  add(one("fits", U::flag, P::always, "everything fits in every tier (else memory.overflows lists what does not)",
          [](auto& in) { return json(R(in).verdict.fits); }));
  add(one("memory.gpu_peak_bytes", U::bytes, P::always, "HBM peak of the most loaded GPU (static memory model)",
          [](auto& in) { return json(R(in).memory.gpu_peak); }));
  add(one("memory.gpu_capacity_bytes", U::bytes, P::always, "HBM per GPU",
          [](auto& in) { return json(S(in).hardware.gpu.hbm.value); }));
  add(one("memory.timeline_gpu_peak_bytes", U::bytes, P::simulated, "HBM peak of the most loaded GPU in the executed timeline",
          [](auto& in) {
            double peak = 0.0;
            for (const auto& st : R(in).memory.stages)
              if (const RankMemory* rm = executed_rank(in, st.first_rank))
                peak = std::max(peak, rm->peak.count(Tier::hbm) ? rm->peak.at(Tier::hbm) : 0.0);
            return json(peak);
          }));
  auto most = [](const ReportInputs& in) -> const StageMemory& {
    return R(in).memory.stages.at(static_cast<std::size_t>(R(in).memory.most_loaded_stage));
  };
  add(one("memory.most_loaded.stage", U::index, P::always, "pipeline stage with the highest HBM peak",
          [most](auto& in) { return json(most(in).stage); }));
  add(one("memory.most_loaded.first_rank", U::index, P::always, "its first rank",
          [most](auto& in) { return json(most(in).first_rank); }));
  add(one("memory.most_loaded.last_rank", U::index, P::always, "its last rank",
          [most](auto& in) { return json(most(in).first_rank + most(in).num_ranks - 1); }));
  add(one("memory.gpus", U::list, P::always,
          "per pipeline stage: rank, stage, identical_ranks, layers, parameters, microbatches_in_flight, peak_bytes, "
          "breakdown {params, gradients, optimizer, activations, workspace, buffers} (bytes), offloaded_bytes per "
          "tier, timeline {peak_bytes, peak_time_s, breakdown_at_peak} when simulated",
          gpus_json));
  add(family("memory.tiers.{tier}.capacity_bytes", U::bytes, P::always, "host tier capacity per node", kHostTiers,
             [](const ReportInputs& in) {
               return tier_values(R(in).memory.tiers, [](const TierUsage& u) { return json(u.capacity_per_node); });
             }));
  add(family("memory.tiers.{tier}.peak_bytes", U::bytes, P::always, "host tier peak of the most loaded node (static)",
             kHostTiers, [](const ReportInputs& in) {
               return tier_values(R(in).memory.tiers, [](const TierUsage& u) { return json(u.peak_per_node); });
             }));
  add(family("memory.tiers.{tier}.peak_node", U::index, P::always, "the node with that peak", kHostTiers,
             [](const ReportInputs& in) {
               return tier_values(R(in).memory.tiers, [](const TierUsage& u) { return json(u.peak_node); });
             }));
  add(family("memory.tiers.{tier}.timeline.peak_bytes", U::bytes, P::simulated,
             "host tier peak per node in the executed timeline", kHostTiers, [](const ReportInputs& in) {
               return tier_values(Sim(in).analysis.node_tiers, [](const NodeTierPeak& p) { return json(p.bytes); });
             }));
  add(family("memory.tiers.{tier}.timeline.peak_node", U::index, P::simulated, "the node with that peak", kHostTiers,
             [](const ReportInputs& in) {
               return tier_values(Sim(in).analysis.node_tiers, [](const NodeTierPeak& p) { return json(p.node); });
             }));
  add(family("memory.tiers.{tier}.timeline.peak_time_s", U::seconds, P::simulated, "when it peaked (simulated time)",
             kHostTiers, [](const ReportInputs& in) {
               return tier_values(Sim(in).analysis.node_tiers, [](const NodeTierPeak& p) { return json(p.time); });
             }));
  add(one("memory.overflows", U::list, P::always,
          "what does not fit: device (gpu, node), rank or node, tier, need_bytes, capacity_bytes, excess_bytes, "
          "found_by (static, timeline, checkpoint), time_s",
          overflows_json));

  // --- the simulated iteration
  auto tp = [](auto f) { return [f](const ReportInputs& in) { return json(f(Sim(in).throughput)); }; };
  add(one("throughput.iteration_time_s", U::seconds, P::simulated, "steady-state iteration time",
          tp([](const Throughput& t) { return t.iteration_time; })));
  add(one("throughput.tokens_per_s", U::tokens_per_s, P::simulated, "training tokens per second, whole cluster",
          tp([](const Throughput& t) { return t.tokens_per_s; })));
  add(one("throughput.samples_per_s", U::samples_per_s, P::simulated, "sequences per second, whole cluster",
          tp([](const Throughput& t) { return t.samples_per_s; })));
  add(one("throughput.tflops_per_gpu", U::tflops_per_s, P::simulated, "model FLOPs (no recompute) / time / GPUs",
          tp([](const Throughput& t) { return t.flops_per_gpu / 1e12; })));
  add(one("throughput.hw_tflops_per_gpu", U::tflops_per_s, P::simulated, "FLOPs executed, recomputation included",
          tp([](const Throughput& t) { return t.hw_flops_per_gpu / 1e12; })));
  add(one("throughput.mfu", U::fraction, P::simulated, "model FLOPs utilisation: tflops_per_gpu / peak",
          tp([](const Throughput& t) { return t.mfu; })));
  add(one("throughput.hfu", U::fraction, P::simulated, "hardware FLOPs utilisation: hw_tflops_per_gpu / peak",
          tp([](const Throughput& t) { return t.hfu; })));
  add(one("throughput.bubble_fraction", U::fraction, P::simulated, "pipeline idle fraction",
          tp([](const Throughput& t) { return t.bubble_fraction; })));
  auto bd = [](auto f) { return [f](const ReportInputs& in) { return json(f(Sim(in).analysis.breakdown)); }; };
  add(one("time_breakdown.compute_s", U::seconds, P::simulated, "per iteration: GPU compute (mean over GPUs)",
          bd([](const TimeBreakdown& b) { return b.compute; })));
  add(one("time_breakdown.recompute_s", U::seconds, P::simulated, "per iteration: recomputation",
          bd([](const TimeBreakdown& b) { return b.recompute; })));
  add(one("time_breakdown.exposed_comm_s", U::seconds, P::simulated, "per iteration: communication not hidden by compute",
          bd([](const TimeBreakdown& b) { return b.exposed_total(); })));
  add(one("time_breakdown.exposed_offload_s", U::seconds, P::simulated, "per iteration: offload copies not hidden",
          bd([](const TimeBreakdown& b) { return b.exposed_offload(); })));
  add(one("time_breakdown.bubble_s", U::seconds, P::simulated, "per iteration: pipeline bubble",
          bd([](const TimeBreakdown& b) { return b.bubble; })));
  {
    std::vector<std::string> names;
    for (TaskKind k : kExposedKinds) names.push_back(to_string(k));
    add(family("time_breakdown.exposed_{kind}_s", U::seconds, P::simulated, "per iteration: exposed time of one kind of transfer",
               names, [](const ReportInputs& in) {
                 MetricValues out;
                 for (TaskKind k : kExposedKinds) out.emplace_back(to_string(k), exposed(in, k));
                 return out;
               }));
  }
  add(one("time_breakdown.data_stall_s", U::seconds, P::simulated, "per iteration: GPU idle while only its next batch loads",
          [](auto& in) { return json(exposed(in, TaskKind::data_load)); }));
  add(one("time_breakdown.checkpoint_stall_s", U::seconds, P::checkpoint,
          "checkpoint stall amortised per iteration over the interval (not in iteration_time_s)",
          [](auto& in) { return json(Ck(in).stall_s / static_cast<double>(S(in).checkpoint.interval_iterations)); }));
  add(family("critical_path.by_task_kind.{kind}_s", U::seconds, P::simulated, "time on the critical path by task kind",
             all_task_kinds(), [](const ReportInputs& in) {
               MetricValues out;
               for (const auto& [k, sec] : Sim(in).analysis.critical_path.seconds) out.emplace_back(to_string(k), sec);
               return out;
             }));
  add(family("critical_path.by_link.{link}_s", U::seconds, P::simulated,
             "transfer time on the critical path by bottleneck link class", {}, [](const ReportInputs& in) {
               MetricValues out;
               for (const auto& [l, sec] : Sim(in).analysis.critical_path.links) out.emplace_back(l, sec);
               return out;
             }));
  add(one("critical_path.bound_by", U::text, P::simulated,
          "the resource with the most critical-path time (compute, or a kind of transfer)", [](auto& in) {
            // GPU kernels of every kind count as one resource, each kind of transfer as its own.
            std::map<std::string, double> by_resource;
            for (const auto& [k, sec] : Sim(in).analysis.critical_path.seconds)
              by_resource[is_compute(k) ? "compute" : to_string(k)] += sec;
            std::string bound = "compute";
            double most_s = -1.0;
            for (const auto& [name, sec] : by_resource)
              if (sec > most_s) {
                most_s = sec;
                bound = name;
              }
            return json(bound);
          }));
  add(one("simulation.executor", U::text, P::simulated,
          "des (SimGrid) or list (screening: the same bandwidth sharing as a fluid model in this process)",
          [](auto& in) { return json(Sim(in).executor); }));
  add(one("simulation.checkpoint_window", U::count, P::simulated,
          "iterations simulated behind the checkpoint before the background hops' steady pace is extrapolated "
          "(the DES 4, screening 1, or --checkpoint-window; null without checkpoints)",
          [](auto& in) { return R(in).checkpoint ? json(Sim(in).checkpoint_window) : json(nullptr); }));
  add(one("simulation.folded", U::flag, P::simulated, "one rank simulated per group of identical ranks",
          [](auto& in) { return json(Sim(in).folded); }));
  add(one("simulation.tasks", U::count, P::simulated, "tasks in the simulated DAG", [](auto& in) { return json(Sim(in).tasks); }));
  add(one("simulation.simulated_gpus", U::count, P::simulated, "GPUs simulated",
          [](auto& in) { return json(Sim(in).simulated_gpus); }));
  add(one("simulation.contention_free_iteration_time_s", U::seconds, P::simulated,
          "iteration time of the contention-free list scheduler on the same DAG",
          [](auto& in) { return json(Sim(in).contention_free_iteration_time); }));
  add(one("simulation.contention_s", U::seconds, P::simulated, "what bandwidth sharing added (DES − list)",
          [](auto& in) { return json(Sim(in).contention_time); }));

  // --- the run over the failure horizon
  auto rn = [](auto f) { return [f](const ReportInputs& in) { return json(f(Run(in))); }; };
  add(one("run.goodput", U::fraction, P::failures, "useful training time / wall time over the horizon",
          rn([](const RunLevelResult& g) { return g.goodput; })));
  add(one("run.goodput_ci95", U::fraction, P::failures, "95 % half-width of goodput over the seeded runs",
          rn([](const RunLevelResult& g) { return g.goodput_ci95; })));
  add(one("run.runs", U::count, P::failures, "seeded runs averaged", rn([](const RunLevelResult& g) { return g.runs; })));
  add(one("run.job_mtbf_s", U::seconds, P::failures, "mean time between failures of the whole job",
          rn([](const RunLevelResult& g) { return g.job_mtbf_s; })));
  add(one("run.failures", U::count, P::failures, "failures over the horizon (mean)",
          rn([](const RunLevelResult& g) { return g.failures; })));
  add(one("run.lost_work_s", U::seconds, P::failures, "training redone after failures (mean)",
          rn([](const RunLevelResult& g) { return g.lost_work_s; })));
  add(one("run.restart_s", U::seconds, P::failures, "time restarting after failures (mean)",
          rn([](const RunLevelResult& g) { return g.restart_s; })));
  add(one("run.restore_s", U::seconds, P::failures, "time reloading checkpoints after failures (mean)",
          rn([](const RunLevelResult& g) { return g.restore_s; })));
  add(one("run.checkpoint_s", U::seconds, P::failures, "training time lost to checkpoints over the horizon (mean)",
          rn([](const RunLevelResult& g) { return g.checkpoint_s; })));
  add(one("run.effective_tokens_per_s", U::tokens_per_s, P::failures, "tokens/s × goodput",
          rn([](const RunLevelResult& g) { return g.effective_tokens_per_s; })));
  add(one("run.first_order_goodput", U::fraction, P::failures,
          "goodput by the first-order formula (null without checkpoints)",
          [](auto& in) { return R(in).checkpoint ? json(Run(in).first_order_goodput) : json(nullptr); }));
  add(one("run.young_interval_s", U::seconds, P::failures, "Young's optimal checkpoint interval (null without checkpoints)",
          [](auto& in) { return advice(in, Run(in).young_interval_s); }));
  add(one("run.daly_interval_s", U::seconds, P::failures, "Daly's optimal checkpoint interval",
          [](auto& in) { return advice(in, Run(in).daly_interval_s); }));
  add(one("run.goodput_at_young", U::fraction, P::failures, "goodput at Young's interval",
          [](auto& in) { return advice(in, Run(in).goodput_at_young); }));
  add(one("run.goodput_at_daly", U::fraction, P::failures, "goodput at Daly's interval",
          [](auto& in) { return advice(in, Run(in).goodput_at_daly); }));
  add(one("run.young_daly_delta_s", U::seconds, P::failures, "the checkpoint cost δ Young and Daly were given (the stall)",
          [](auto& in) { return advice(in, Run(in).young_daly_delta_s); }));
  add(one("run.best_interval_s", U::seconds, P::failures, "interval maximising goodput on the simulated cost",
          [](auto& in) { return advice(in, Run(in).best_interval_s); }));
  add(one("run.best_interval_iterations", U::iterations, P::failures, "the same in iterations",
          [](auto& in) { return advice(in, Run(in).best_interval_iterations); }));
  add(one("run.goodput_at_best", U::fraction, P::failures, "goodput at the best interval",
          [](auto& in) { return advice(in, Run(in).goodput_at_best); }));
  add(one("run.backpressure_at_best_s", U::seconds, P::failures,
          "per checkpoint at the best interval: the wait for the previous persist",
          [](auto& in) { return advice(in, Run(in).backpressure_at_best_s); }));

  // --- training data
  add(one("data.tier", U::text, P::data, "where samples are read from", [](auto& in) { return json(to_string(S(in).data.tier)); }));
  add(one("data.sample_bytes", U::bytes, P::data, "bytes per sample", [](auto& in) { return json(S(in).data.sample_bytes); }));
  add(one("data.bytes_per_iteration", U::bytes, P::data, "bytes read per iteration, whole cluster",
          [](auto& in) { return json(Data(in).bytes_per_iteration); }));
  add(one("data.prefetch_iterations", U::iterations, P::data, "batches read ahead",
          [](auto& in) { return json(S(in).data.prefetch_iterations); }));
  add(one("data.read_s", U::seconds, P::data, "the steady iteration's read, longest over ranks",
          [](auto& in) { return json(Data(in).read_s); }));
  add(one("data.stall_s", U::seconds, P::data, "per iteration: a reading GPU idle, waiting for its batch",
          [](auto& in) { return json(Data(in).stall_s); }));
  add(one("data.startup_read_s", U::seconds, P::data, "until every rank has its first batch",
          [](auto& in) { return json(Data(in).startup_read_s); }));

  // --- checkpoints
  add(one("checkpoint.strategy", U::text, P::checkpoint, "checkpoint strategy",
          [](auto& in) { return json(to_string(S(in).checkpoint.strategy)); }));
  add(one("checkpoint.tiers", U::list, P::checkpoint, "the tiers a checkpoint passes through, in order", [](auto& in) {
        json tiers = json::array();
        for (Tier t : S(in).checkpoint.tiers) tiers.push_back(to_string(t));
        return tiers;
      }));
  add(one("checkpoint.interval_iterations", U::iterations, P::checkpoint, "iterations between checkpoints",
          [](auto& in) { return json(S(in).checkpoint.interval_iterations); }));
  auto ck = [](auto f) { return [f](const ReportInputs& in) { return json(f(Ck(in))); }; };
  add(one("checkpoint.size_bytes", U::bytes, P::checkpoint, "total bytes of one checkpoint",
          ck([](const CheckpointResult& c) { return c.size_bytes; })));
  add(one("checkpoint.max_rank_bytes", U::bytes, P::checkpoint, "the most one GPU writes",
          ck([](const CheckpointResult& c) { return c.max_rank_bytes; })));
  add(one("checkpoint.stall_s", U::seconds, P::checkpoint, "training time lost per checkpoint (back-pressure included)",
          ck([](const CheckpointResult& c) { return c.stall_s; })));
  add(one("checkpoint.snapshot_stall_s", U::seconds, P::checkpoint, "the iteration with the checkpoint minus one without",
          ck([](const CheckpointResult& c) { return c.snapshot_stall_s; })));
  add(one("checkpoint.interference_s", U::seconds, P::checkpoint, "training slowed by background hops sharing its links",
          ck([](const CheckpointResult& c) { return c.interference_s; })));
  add(one("checkpoint.backpressure_s", U::seconds, P::checkpoint, "waiting for the previous persist to free staging",
          ck([](const CheckpointResult& c) { return c.backpressure_s; })));
  add(one("checkpoint.persist_s", U::seconds, P::checkpoint, "until the checkpoint is durable in its last tier",
          ck([](const CheckpointResult& c) { return c.persist_s; })));
  add(one("checkpoint.overhead_fraction", U::fraction, P::checkpoint, "stall / (interval × iteration time)",
          ck([](const CheckpointResult& c) { return c.overhead_fraction; })));
  add(one("checkpoint.restore_s", U::seconds, P::checkpoint, "every GPU reloading after a GPU failure (nearest copy)",
          ck([](const CheckpointResult& c) { return c.restore_s; })));
  add(one("checkpoint.gpudirect", U::flag, P::checkpoint, "GPU <-> NVMe copies skip the host bounce",
          [](auto& in) { return json(S(in).checkpoint.gpudirect); }));
  add(family("checkpoint.staging_peaks.{tier}.peak_bytes", U::bytes, P::checkpoint,
             "per node: the most a tier held while checkpointing", kHostTiers, [](const ReportInputs& in) {
               return tier_values(Ck(in).staging, [](const NodeTierPeak& p) { return json(p.bytes); });
             }));
  add(family("checkpoint.staging_peaks.{tier}.peak_node", U::index, P::checkpoint, "the node with that peak", kHostTiers,
             [](const ReportInputs& in) {
               return tier_values(Ck(in).staging, [](const NodeTierPeak& p) { return json(p.node); });
             }));
  add(family("checkpoint.staging_peaks.{tier}.peak_time_s", U::seconds, P::checkpoint, "when it peaked", kHostTiers,
             [](const ReportInputs& in) {
               return tier_values(Ck(in).staging, [](const NodeTierPeak& p) { return json(p.time); });
             }));
  add(maybe("checkpoint.replicate_s", U::seconds, P::checkpoint, "in-memory checkpoints: until the peers hold their copies",
            [](const ReportInputs& in) -> std::optional<json> {
              if (behaviour(S(in).checkpoint.strategy).peer_replicas <= 0) return std::nullopt;
              return json(Ck(in).replicate_s);
            }));
  add(maybe("checkpoint.redundant_overhead_s", U::seconds, P::checkpoint,
            "redundant computation: what the replicas add to each iteration",
            [](const ReportInputs& in) -> std::optional<json> {
              if (!behaviour(S(in).checkpoint.strategy).replicates_next_stage) return std::nullopt;
              return json(Ck(in).redundant_overhead_s);
            }));
  add(maybe("checkpoint.drain", U::text, P::checkpoint, "tiered checkpoints: how background hops drain",
            [](const ReportInputs& in) -> std::optional<json> {
              const auto* tiered = std::get_if<TieredCheckpoint>(&S(in).checkpoint.strategy);
              if (!tiered) return std::nullopt;
              return json(to_string(tiered->drain));
            }));
  // MLPerf Storage's checkpointing definitions (Submission_guidelines.md §2.2.3; DLIO's statscounter;
  // docs/references.md, MLPerf Storage checkpointing): duration = the slowest rank's, here the save
  // until every byte is durable and the restore of every rank at once; throughput = the whole
  // checkpoint's bytes / duration; sizes in 1024^3 bytes, which the benchmark's summary labels "GB"
  // (checkpoint_size_GB) and its log "GiB". Only for strategies that write checkpoints.
  auto mlperf = [](const char* key, U unit, const char* meaning, auto f) {
    return maybe(key, unit, P::checkpoint, meaning, [f](const ReportInputs& in) -> std::optional<json> {
      if (!behaviour(S(in).checkpoint.strategy).writes_checkpoints) return std::nullopt;
      return f(Ck(in));
    });
  };
  auto rate = [](double gib, double seconds) { return seconds > 0.0 ? json(gib / seconds) : json(nullptr); };
  add(mlperf("checkpoint.mlperf.size_gib", U::gib, "MLPerf Storage: checkpoint size in GiB",
             [](const CheckpointResult& c) { return json(c.size_bytes / kGiB); }));
  add(mlperf("checkpoint.mlperf.save_duration_s", U::seconds, "MLPerf Storage: save duration (slowest rank, until durable)",
             [](const CheckpointResult& c) { return json(c.persist_s); }));
  add(mlperf("checkpoint.mlperf.save_throughput_gib_per_s", U::gib_per_s, "MLPerf Storage: size / save duration",
             [rate](const CheckpointResult& c) { return rate(c.size_bytes / kGiB, c.persist_s); }));
  add(mlperf("checkpoint.mlperf.load_duration_s", U::seconds, "MLPerf Storage: load duration (every rank at once)",
             [](const CheckpointResult& c) { return json(c.restore_s); }));
  add(mlperf("checkpoint.mlperf.load_throughput_gib_per_s", U::gib_per_s, "MLPerf Storage: size / load duration",
             [rate](const CheckpointResult& c) { return rate(c.size_bytes / kGiB, c.restore_s); }));
  auto recovery = [](auto f) {
    return [f](const ReportInputs& in) {
      MetricValues out;
      for (const auto& [kind, rec] : Ck(in).recovery) out.emplace_back(kind, f(rec));
      return out;
    };
  };
  add(family("checkpoint.recovery.{failure}.survives", U::flag, P::checkpoint,
             "some copy of the checkpoint outlives this kind of failure", kFailureKinds,
             recovery([](const Recovery& r) { return json(r.survives); })));
  add(family("checkpoint.recovery.{failure}.durable_s", U::seconds, P::checkpoint,
             "from the checkpoint's start until that copy exists (null if none survives)", kFailureKinds,
             recovery([](const Recovery& r) { return r.survives ? json(r.durable_s) : json(nullptr); })));
  add(family("checkpoint.recovery.{failure}.restore_s", U::seconds, P::checkpoint,
             "every GPU reloading from that copy (null if none survives)", kFailureKinds,
             recovery([](const Recovery& r) { return r.survives ? json(r.restore_s) : json(nullptr); })));
  return t;
}

bool present(const Metric& m, const ReportInputs& in) {
  const RunResult& r = *in.result;
  switch (m.presence) {
    case P::always: return true;
    case P::simulated: return r.simulation.has_value();
    case P::failures: return r.run.has_value();
    case P::data: return r.data.has_value();
    case P::checkpoint: return r.checkpoint.has_value();
  }
  return false;
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

/// Whether flattened `key` is an instance of metric key `pattern` (its placeholder one name without dots).
bool matches(const std::string& pattern, std::string_view key) {
  const auto open = pattern.find('{');
  if (open == std::string::npos) return key == pattern;
  const auto close = pattern.find('}', open);
  const std::string_view prefix = std::string_view(pattern).substr(0, open);
  const std::string_view suffix = std::string_view(pattern).substr(close + 1);
  if (key.size() <= prefix.size() + suffix.size() || !key.starts_with(prefix) || !key.ends_with(suffix)) return false;
  const std::string_view name = key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
  return name.find('.') == std::string_view::npos;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

const std::vector<Metric>& report_metrics() {
  static const std::vector<Metric> table = build_table();
  return table;
}

void write_metrics(const ReportInputs& in, json& report, bool model_only) {
  for (const Metric& m : report_metrics()) {
    if (model_only ? !m.describes_model : !present(m, in)) continue;
    const std::vector<std::string> parts = split_key(m.key);
    const MetricValues values = m.values(in);
    if (values.empty() && m.is_family()) {
      // A family with no members still shows its (empty) object, e.g. critical_path.by_link on one GPU.
      json* node = &report;
      for (const std::string& part : parts) {
        if (part.find('{') != std::string::npos) break;
        node = &(*node)[part];
      }
      if (node->is_null()) *node = json::object();
    }
    for (const auto& [name, value] : values) {
      json* node = &report;
      for (const std::string& part : parts) {
        const auto open = part.find('{');
        const std::string concrete =
            open == std::string::npos ? part : part.substr(0, open) + name + part.substr(part.find('}') + 1);
        node = &(*node)[concrete];
      }
      *node = value;
    }
  }
}

const Metric* find_metric(std::string_view key) {
  for (const Metric& m : report_metrics())
    if (matches(m.key, key)) return &m;
  return nullptr;
}

std::optional<std::string> metric_key_problem(const std::string& key) {
  const Metric* m = find_metric(key);
  if (m && m->comparable()) return std::nullopt;
  if (m)
    return fmt::format("'{}' is a {} metric, not a number or a flag (expected a numeric or true/false report key; "
                       "list them with strata describe metrics)",
                       key, unit_name(m->unit));
  const Metric* nearest = nullptr;
  std::size_t best = 0;
  for (const Metric& c : report_metrics()) {
    if (!c.comparable()) continue;
    const std::size_t d = edit_distance(key, c.key);
    if (!nearest || d < best) {
      nearest = &c;
      best = d;
    }
  }
  return fmt::format("'{}' is not a report metric ({}list them with strata describe metrics)", key,
                     nearest && best <= key.size() / 2 ? fmt::format("did you mean {}? ", nearest->key) : "");
}

std::optional<double> metric_number(const json& flat, const std::string& key) {
  if (!flat.contains(key)) return std::nullopt;
  const json& v = flat.at(key);
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  if (v.is_number()) return v.get<double>();
  return std::nullopt;
}

std::string unit_name(MetricUnit unit) {
  switch (unit) {
    case U::bytes: return "bytes";
    case U::seconds: return "s";
    case U::fraction: return "fraction (0-1)";
    case U::count: return "count";
    case U::tokens_per_s: return "tokens/s";
    case U::samples_per_s: return "samples/s";
    case U::tflops_per_s: return "TFLOP/s";
    case U::gib: return "GiB";
    case U::gib_per_s: return "GiB/s";
    case U::flops: return "FLOP";
    case U::iterations: return "iterations";
    case U::index: return "index";
    case U::flag: return "true/false";
    case U::text: return "text";
    case U::list: return "list";
  }
  return "";
}

std::string format_metric(MetricUnit unit, double v) {
  switch (unit) {
    case U::bytes: return format_bytes(v);
    case U::seconds: return format_seconds(v);
    case U::fraction: return unsigned_zero(fmt::format("{:.2f} %", 100.0 * v));
    case U::count: return v == std::floor(v) && std::fabs(v) < 1e4 ? fmt::format("{:.0f}", v) : format_count(v);
    case U::tokens_per_s: return format_count(v) + " tokens/s";
    case U::samples_per_s: return unsigned_zero(fmt::format("{:.4g} samples/s", v));
    case U::tflops_per_s: return unsigned_zero(fmt::format("{:.1f} TFLOP/s", v));
    case U::gib: return unsigned_zero(fmt::format("{:.2f} GiB", v));
    case U::gib_per_s: return unsigned_zero(fmt::format("{:.2f} GiB/s", v));
    case U::flops: return format_count(v) + " FLOP";
    case U::iterations: return unsigned_zero(fmt::format("{:.0f} iterations", v));
    case U::index: return fmt::format("{:.0f}", v);
    case U::flag: return v != 0.0 ? "true" : "false";
    case U::text:
    case U::list: break;
  }
  return unsigned_zero(fmt::format("{:.6g}", v));
}

std::string format_metric(const std::string& key, double value) {
  const Metric* m = find_metric(key);
  return m ? format_metric(m->unit, value) : unsigned_zero(fmt::format("{:.6g}", value));
}

std::string presence_text(MetricPresence presence) {
  switch (presence) {
    case P::always: return "always";
    case P::simulated: return "when simulated";
    case P::failures: return "with failures";
    case P::data: return "with data";
    case P::checkpoint: return "with checkpoint";
  }
  return "";
}

}  // namespace strata
