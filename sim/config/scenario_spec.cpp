#include "sim/config/scenario_spec.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "sim/config/policy_catalog.hpp"

namespace strata {

using nlohmann::json;

std::string to_string(Schedule s) {
  switch (s) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved: return "interleaved";
  }
  return "1f1b";
}

std::string to_string(PipelinePartitioning p) {
  switch (p) {
    case PipelinePartitioning::uniform: return "uniform";
    case PipelinePartitioning::balanced: return "balanced";
  }
  return "uniform";
}

std::string to_string(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "none";
}

std::string to_string(FailureDistribution d) {
  switch (d) {
    case FailureDistribution::exponential: return "exponential";
    case FailureDistribution::weibull: return "weibull";
  }
  return "exponential";
}

namespace {

Tier tier_from_string(const std::string& s) {
  if (s == "cpu" || s == "dram") return Tier::dram;
  if (s == "nvme" || s == "local_ssd") return Tier::local_ssd;
  if (s == "cxl") return Tier::cxl;
  if (s == "object_store") return Tier::object_store;
  return Tier::none;
}

// Upper bound of counts (GPUs, degrees, batch, sequence): far beyond any real cluster, and small
// enough that products of three of them stay inside int64.
constexpr double kMaxCount = 1e6;
/// Seeds are reported as JSON integers: keep them exact in a double.
constexpr double kMaxSeed = 9007199254740991.0;  // 2^53 - 1

std::vector<std::string> names(const char* category) { return policy_catalog().names(category); }

/// The value among `values` whose to_string is `name`; `fallback` when none is (the reader has
/// already reported the invalid choice, and reading goes on to collect every error).
template <class Enum>
Enum enum_from_name(const std::string& name, std::initializer_list<Enum> values, Enum fallback) {
  for (Enum v : values)
    if (to_string(v) == name) return v;
  return fallback;
}

const ParamTable kTop = {
    {.key = "name", .kind = ParamKind::string, .default_value = "", .doc = "scenario name"},
    {.key = "description", .kind = ParamKind::string, .default_value = "", .doc = "one line"},
    {.key = "model", .kind = ParamKind::object, .doc = "model: a name in models/, a path, or inline"},
    {.key = "hardware", .kind = ParamKind::object,
     .doc = "hardware profile: a name in hardware_profiles/, a path, or inline"},
    {.key = "gpus", .kind = ParamKind::integer, .doc = "cluster size in GPUs (or give nodes)", .min = 1, .max = kMaxCount,
     .optional = true},
    {.key = "nodes", .kind = ParamKind::integer, .doc = "cluster size in whole nodes (or give gpus)",
     .min = 1, .max = kMaxCount, .optional = true},
    {.key = "seed", .kind = ParamKind::integer, .default_value = 0, .doc = "seed of every random choice", .min = 0,
     .max = kMaxSeed},
    {.key = "training", .kind = ParamKind::object, .doc = "batch, sequence, precision"},
    {.key = "parallelism", .kind = ParamKind::object, .default_value = json::object(),
     .doc = "TP / PP / DP / ZeRO"},
    {.key = "memory", .kind = ParamKind::object, .default_value = json::object(),
     .doc = "recompute and offload"},
    {.key = "checkpoint", .kind = ParamKind::object, .doc = "checkpoint policy", .optional = true},
    {.key = "failures", .kind = ParamKind::object, .doc = "failure process", .optional = true},
    {.key = "data", .kind = ParamKind::object,
     .doc = "training-data loading (absent: the dataset is already in host memory)", .optional = true},
};

const ParamTable kTraining = {
    {.key = "seq_len", .kind = ParamKind::integer, .doc = "tokens per sequence s", .min = 1, .max = kMaxCount},
    {.key = "micro_batch_size", .kind = ParamKind::integer, .default_value = 1,
     .doc = "sequences per micro-batch b", .min = 1, .max = kMaxCount},
    {.key = "global_batch_size", .kind = ParamKind::integer, .doc = "sequences per iteration B", .min = 1, .max = kMaxCount},
    {.key = "precision", .kind = ParamKind::choice, .default_value = "bf16",
     .doc = "compute dtype (weights and activations)", .choices = precision_names()},
    {.key = "grad_precision", .kind = ParamKind::choice,
     .doc = "gradient dtype; default = precision (ZeRO: 16 B/param with Adam), fp32 = Megatron main grads (18)",
     .choices = precision_names(), .optional = true},
    {.key = "state_precision", .kind = ParamKind::choice, .default_value = "fp32",
     .doc = "optimizer master weights and moments", .choices = {"fp32", "bf16", "fp16"}},
    {.key = "param_precision", .kind = ParamKind::choice,
     .doc = "dtype the parameters are stored and gathered in; default = precision (16 bits under fp8), the "
            "optimizer keeping an fp32 master copy; fp32 under bf16/fp16 = PyTorch AMP (torch.autocast over "
            "fp32 parameters, as Lightning's bf16-mixed runs it): no master copy, ZeRO-3/FSDP gathers 4 bytes "
            "per parameter, each linear casts its weight every forward and keeps the cast for its backward, and "
            "gradients default to fp32",
     .choices = {"fp32", "bf16", "fp16"}, .optional = true},
    {.key = "optimizer", .kind = ParamKind::choice, .default_value = "adam",
     .doc = "adam: master + 2 moments; sgd: master + momentum", .choices = {"adam", "sgd"}},
    {.key = "iterations", .kind = ParamKind::integer, .default_value = 2,
     .doc = "iterations to simulate", .min = 1, .max = 1000000},
    {.key = "flash_attention", .kind = ParamKind::boolean,
     .doc = "fused attention: no s^2 score tensors saved; default from the model file", .optional = true},
    {.key = "framework", .kind = ParamKind::choice, .default_value = to_string(kDefaultFramework),
     .doc = "training framework preset: what overlaps and which attention kernel runs", .choices = names("framework")},
    {.key = "attention_kernel", .kind = ParamKind::choice,
     .doc = "fused attention kernel (when flash attention is on); default from the framework",
     .choices = names("attention_kernel"), .optional = true},
    {.key = "overlap_grad_reduce", .kind = ParamKind::boolean,
     .doc = "gradient reduction overlapped with the backward; default from the framework", .optional = true},
    {.key = "overlap_param_gather", .kind = ParamKind::boolean,
     .doc = "parameter all-gathers ahead of their layer: ZeRO-3 prefetch; below ZeRO-3 the updated weights gathered "
            "in the next forward, not after the step; default from the framework",
     .optional = true},
    {.key = "align_param_gather", .kind = ParamKind::boolean,
     .doc = "with the interleaved schedule and overlap_param_gather below ZeRO-3, each model chunk's gathers issued "
            "together ahead of it (Megatron-Core align_param_gather, from core_r0.9.0; NeMo 1's distributed Adam); false: "
            "each as the forward reaches the layer before; default from the framework",
     .optional = true},
    {.key = "overlap_tp_comm", .kind = ParamKind::boolean,
     .doc = "TP all-gathers / reduce-scatters pipelined with the GEMMs (Megatron-Core tp_comm_overlap; needs "
            "sequence parallelism); default from the framework",
     .optional = true},
    {.key = "tp_overlap_method", .kind = ParamKind::choice,
     .doc = "how overlap_tp_comm pipelines the TP collectives: userbuffers (Transformer Engine, every pass, "
            "communication on SMs) or async-tp (PyTorch's micro-pipeline TP: forward and recomputation, copy "
            "engines; the backward's block); default from the framework",
     .choices = names("tp_overlap_method"), .optional = true},
    {.key = "sequence_parallel_style", .kind = ParamKind::choice,
     .doc = "how sequence parallelism lays out and keeps the activations: megatron ([sequence, batch, hidden]; the "
            "column-parallel linears re-gather their input in the backward) or dtensor (PyTorch: [batch, sequence, "
            "hidden], a copy per collective with a batch above 1, the gathered inputs kept); default from the "
            "framework",
     .choices = names("sequence_parallel_style"), .optional = true},
    {.key = "fp8_scaling", .kind = ParamKind::choice,
     .doc = "under fp8, how an activation's scale is found: delayed (Transformer Engine's amax history) or current "
            "(the tensor's own amax, a pass of its own before the cast); default from the framework",
     .choices = names("fp8_scaling"), .optional = true},
    {.key = "fp8_param_gather", .kind = ParamKind::boolean,
     .doc = "under fp8, the fp8 linears' weights all-gathered in fp8 by ZeRO/FSDP and the distributed optimizer "
            "(torchao's enable_fsdp_float8_all_gather, Megatron-Core's fp8_param_gather, on in Megatron-Bridge's "
            "FP8 recipes); default false",
     .optional = true},
    {.key = "overlap_p2p_comm", .kind = ParamKind::boolean,
     .doc = "pipeline sends asynchronous beside the compute (Megatron overlap_p2p_comm); default from the framework",
     .optional = true},
    {.key = "async_tp_backward", .kind = ParamKind::boolean,
     .doc = "the backward's column-parallel TP collectives asynchronous beside their GEMMs (Megatron's async "
            "tensor-parallel all-reduce); default from the framework",
     .optional = true},
    {.key = "fused_elementwise", .kind = ParamKind::boolean,
     .doc = "norms, activations and rotary embeddings as fused kernels; false: eager PyTorch, one kernel per "
            "tensor op (torch.compile off); default from the framework",
     .optional = true},
    {.key = "grad_accumulation", .kind = ParamKind::choice,
     .doc = "how each micro-batch's gradients are accumulated below ZeRO-2 or with grad_sync last-microbatch: none "
            "(in the weight-gradient GEMM), add (a kernel of their own) or cast-add (cast to fp32, then added); "
            "default from the framework (add under last-microbatch where the framework has none)",
     .choices = names("grad_accumulation"), .optional = true},
    {.key = "grad_sync", .kind = ParamKind::choice,
     .doc = "when ZeRO-2/3's partitioned gradients are reduced: every-microbatch (during each backward) or "
            "last-microbatch (FSDP no_sync: accumulated unsharded, reduced once per step); default every-microbatch",
     .choices = names("grad_sync"), .optional = true},
    {.key = "selective_recompute", .kind = ParamKind::choice,
     .doc = "what memory.recompute selective reruns: attention-core (Megatron) or every-other-matmul "
            "(torchtitan's per-op checkpointing; bias-free dense blocks with flash attention, TP 1); default from "
            "the framework",
     .choices = names("selective_recompute"), .optional = true},
    {.key = "cross_entropy", .kind = ParamKind::choice,
     .doc = "how the loss's cross-entropy runs: vocab-parallel (Megatron's eager kernels, in place on the fp32 "
            "copy), vocab-parallel-fused (the same in three compiled kernels: --cross-entropy-loss-fusion), "
            "pytorch (F.cross_entropy: log_softmax beside the fp32 copy, 4 bytes per logit more) or single-kernel "
            "(flash-attn's fused kernel on the 16-bit logits, no fp32 copy); default from the framework",
     .choices = names("cross_entropy"), .optional = true},
    {.key = "logit_metrics", .kind = ParamKind::integer, .default_value = 0,
     .doc = "training metrics computed from the logits every micro-batch, each a forward-only cross-entropy over "
            "them (Composer's train metrics: llm-foundry's MPT computes two)",
     .min = 0, .max = 16},
    {.key = "moe", .kind = ParamKind::object, .default_value = json::object(),
     .doc = "mixture-of-experts routing: capacity factor and load imbalance (MoE models only)"},
};

const ParamTable kMoe = {
    {.key = "capacity_factor", .kind = ParamKind::number,
     .doc = "tokens an expert takes over the mean (GShard/Switch); those above are dropped; absent: dropless",
     .min = 1.0, .max = 1000.0, .optional = true},
    {.key = "load_imbalance", .kind = ParamKind::number, .default_value = 1.0,
     .doc = "routed tokens of the most loaded EP rank over the mean: under EP it sets the pace of the experts "
            "and the all-to-all (1: balanced, what the auxiliary loss aims at; "
            "docs/references.md, Expert parallelism)",
     .min = 1.0, .max = 1000.0},
};

const ParamTable kParallelism = {
    {.key = "tp", .kind = ParamKind::integer, .default_value = 1, .doc = "tensor-parallel degree", .min = 1, .max = kMaxCount},
    {.key = "pp", .kind = ParamKind::integer, .default_value = 1, .doc = "pipeline stages", .min = 1, .max = kMaxCount},
    {.key = "dp", .kind = ParamKind::integer,
     .doc = "data-parallel degree; default gpus / (tp·cp·pp)", .min = 1, .max = kMaxCount,
     .optional = true},
    {.key = "cp", .kind = ParamKind::integer, .default_value = 1,
     .doc = "context-parallel degree: the sequence split over cp ranks (2·cp load-balanced chunks), K/V "
            "exchanged around a ring during attention",
     .min = 1, .max = kMaxCount},
    {.key = "ep", .kind = ParamKind::integer, .default_value = 1,
     .doc = "expert-parallel degree (divides num_experts), carved out of dp (divides dp; with etp=1 folded over "
            "tp·cp·dp instead): each EP group holds num_experts/ep experts per rank and exchanges tokens by "
            "all-to-all; with tp > 1 it needs sequence_parallel (Megatron-Core); expert TP = tp unless etp says "
            "otherwise",
     .min = 1, .max = kMaxCount},
    {.key = "etp", .kind = ParamKind::integer,
     .doc = "expert tensor-parallel degree: tp (the default), each expert split over the TP group; or 1, MoE "
            "parallel folding (Megatron-Core expert_tensor_parallel_size 1): experts whole, EP groups of ep "
            "consecutive ranks over tp·cp·dp (ep divides tp·cp·dp), so dispatch stays inside a node when ep "
            "fits in one",
     .min = 1, .max = kMaxCount, .optional = true},
    {.key = "sequence_parallel", .kind = ParamKind::boolean, .default_value = false,
     .doc = "shard norms/dropout along the sequence over TP (Korthikanti et al. 2022)"},
    {.key = "schedule", .kind = ParamKind::choice, .default_value = "1f1b", .doc = "pipeline schedule",
     .choices = names("schedule")},
    {.key = "virtual_stages", .kind = ParamKind::integer, .default_value = 1,
     .doc = "model chunks per GPU (interleaved schedule)", .min = 1, .max = kMaxCount},
    {.key = "pipeline_layers", .kind = ParamKind::integer_list,
     .doc = "transformer blocks per stage (pp entries) or per model chunk in model order (pp·virtual_stages); "
            "sum = num_hidden_layers; the first and the last model chunk may be 0 (only the embedding, only the "
            "head); absent: pipeline_partition decides",
     .min = 0, .max = kMaxCount, .optional = true},
    {.key = "pipeline_partition", .kind = ParamKind::choice, .default_value = "uniform",
     .doc = "split of the blocks over stages when pipeline_layers is absent", .choices = names("pipeline_partition")},
    {.key = "zero_stage", .kind = ParamKind::integer, .default_value = 0, .doc = "ZeRO stage", .min = 0,
     .max = 3},
    {.key = "distributed_optimizer", .kind = ParamKind::boolean, .default_value = false,
     .doc = "Megatron distributed optimizer: optimizer states sharded over DP (as ZeRO-1)"},
    {.key = "dp_replicate", .kind = ParamKind::integer, .default_value = 1,
     .doc = "replicas of the sharded states (FSDP HYBRID_SHARD / HSDP, DeepSpeed MiCS): ZeRO or the distributed "
            "optimizer shards over dp·cp/dp_replicate consecutive data-parallel ranks, gradients are "
            "reduce-scattered there and all-reduced across the replicas; divides dp",
     .min = 1, .max = kMaxCount},
};

const ParamTable kMemory = {
    {.key = "recompute", .kind = ParamKind::choice, .default_value = "none",
     .doc = "activation recomputation", .choices = names("recompute")},
    {.key = "recompute_layers", .kind = ParamKind::integer,
     .doc = "with recompute full, how many blocks of each model chunk recompute, the first ones; the others keep "
            "every activation (Megatron-Core's recompute_method block, recompute_num_layers; NeMo's "
            "recompute_layers). 0 or absent: every block",
     .min = 0, .max = kMaxCount, .optional = true},
    {.key = "distribute_saved_activations", .kind = ParamKind::boolean, .default_value = false,
     .doc = "with recompute full and tp > 1, each TP rank keeps 1/tp of a block's checkpointed input and the group "
            "all-gathers it before the recomputation (Megatron-LM --distribute-saved-activations, formerly "
            "--distribute-checkpointed-activations; DeepSpeed's partition_activations); not with sequence "
            "parallelism, which splits that input already"},
    {.key = "offload", .kind = ParamKind::object, .default_value = json::object(),
     .doc = "where optimizer states, parameters, activations live"},
    {.key = "comm_buffer", .kind = ParamKind::quantity, .default_value = "25 MiB",
     .doc = "gradient-bucket buffer per GPU when dp > 1 (PyTorch DDP bucket_cap_mb default 25)",
     .dim = Dimension::bytes},
};

const ParamTable kOffload = {
    {.key = "optimizer", .kind = ParamKind::choice, .default_value = "none",
     .doc = "optimizer states (and fp32 gradients) tier", .choices = names("offload")},
    {.key = "params", .kind = ParamKind::choice, .default_value = "none",
     .doc = "parameter tier (needs zero_stage 3)", .choices = names("offload")},
    {.key = "activations", .kind = ParamKind::choice, .default_value = "none",
     .doc = "saved-activation tier", .choices = names("offload")},
    {.key = "host_buffer_factor", .kind = ParamKind::number, .default_value = 1.5,
     .doc = "offload-tier bytes per offloaded byte (pinned buffers; DeepSpeed additional_buffer_factor=1.5)",
     .min = 1.0, .max = 10.0},
    {.key = "delayed_update", .kind = ParamKind::boolean, .default_value = false,
     .doc = "with the optimizer offloaded, overlap its CPU step with the next iteration, which uses the weights "
            "of the step before (DeepSpeed ZeRO-Offload's one-step delayed parameter update)"},
    {.key = "prefetch_layers", .kind = ParamKind::integer, .default_value = 1,
     .doc = "how many layers ahead offloaded parameters and activations are fetched back", .min = 1, .max = 64},
    {.key = "gpudirect", .kind = ParamKind::boolean, .default_value = false,
     .doc = "parameters and activations offloaded to nvme move GPU <-> SSD by GPUDirect Storage, skipping the "
            "host bounce buffer (needs hardware local_ssd.gpudirect_storage)"},
};

/// The keys every strategy shares, then those of some strategies (checkpoint_policy.hpp).
const ParamTable kCheckpoint = [] {
  ParamTable table = {
    {.key = "interval_iterations", .kind = ParamKind::integer, .default_value = 100,
     .doc = "iterations between checkpoints", .min = 1, .max = 1e9},
    {.key = "strategy", .kind = ParamKind::choice, .default_value = "sync", .doc = "how to write",
     .choices = names("checkpoint_strategy")},
    {.key = "tiers", .kind = ParamKind::string_list, .default_value = json::array({"object_store"}),
     .doc = "tiers the checkpoint passes through, last = durable", .choices = names("checkpoint_tier")},
    {.key = "sharded", .kind = ParamKind::boolean, .default_value = true,
     .doc = "every DP rank writes its shard (false: one replica writes)"},
    {.key = "gpudirect", .kind = ParamKind::boolean, .default_value = false,
     .doc = "the snapshot to a local_ssd first tier, and the reload from local SSDs, go GPU <-> SSD by GPUDirect "
            "Storage, skipping the host bounce buffer (needs hardware local_ssd.gpudirect_storage)"},
  };
  for (const Param& p : checkpoint_strategy_params()) table.push_back(p);
  return table;
}();

const ParamTable kData = {
    {.key = "tier", .kind = ParamKind::choice, .default_value = "object_store", .doc = "where the dataset lives",
     .choices = names("checkpoint_tier")},
    {.key = "token_bytes", .kind = ParamKind::integer, .default_value = 0,
     .doc = "bytes per stored token id (0: 2 below a 65,500-token vocabulary, else 4, as Megatron's indexed "
            "datasets choose)", .min = 0, .max = 8},
    {.key = "sample_bytes", .kind = ParamKind::quantity, .doc = "bytes read per sample (default: seq_len x token_bytes)",
     .dim = Dimension::bytes, .min = 1, .optional = true},
    {.key = "requests_per_sample", .kind = ParamKind::integer, .default_value = 1,
     .doc = "random reads per sample", .min = 1, .max = 1000000},
    {.key = "prefetch_iterations", .kind = ParamKind::integer, .default_value = 1,
     .doc = "batches loaded ahead of the one in use (0: load when needed)", .min = 0, .max = 64},
};

/// Failures one run-level simulation may expect (it plays each one).
constexpr double kMaxExpectedFailures = 1e6;

const ParamTable kFailures = {
    {.key = "gpu_mtbf", .kind = ParamKind::quantity, .doc = "mean time between failures of one GPU",
     .dim = Dimension::seconds, .min = 1e-9},
    {.key = "node_mtbf", .kind = ParamKind::quantity,
     .doc = "mean time between failures of a node (besides GPUs): loses its DRAM, CXL and SSD copies",
     .dim = Dimension::seconds, .optional = true},
    {.key = "network_mtbf", .kind = ParamKind::quantity,
     .doc = "mean time between network failures per node (switch, cable, NIC): no copy is lost",
     .dim = Dimension::seconds, .optional = true},
    {.key = "restart_time", .kind = ParamKind::quantity, .default_value = "10 min",
     .doc = "time from failure to training resumed, before reload", .dim = Dimension::seconds},
    {.key = "horizon", .kind = ParamKind::quantity, .default_value = "24 h",
     .doc = "simulated wall time of the run", .dim = Dimension::seconds, .min = 1e-9},
    {.key = "distribution", .kind = ParamKind::choice, .default_value = "exponential",
     .doc = "time-between-failures law", .choices = names("failure_law")},
    {.key = "weibull_shape", .kind = ParamKind::number, .default_value = 1.0, .doc = "Weibull shape k",
     .min = 0.1, .max = 100.0},
    {.key = "seed", .kind = ParamKind::integer, .default_value = 1, .doc = "failure-process seed", .min = 0, .max = kMaxSeed},
    {.key = "runs", .kind = ParamKind::integer, .default_value = 64,
     .doc = "independent runs (seeds seed, seed+1, ...) behind the mean and its 95 % interval", .min = 1,
     .max = 100000},
};

/// The dtype a compute precision's parameters are kept in without autocast: fp8 training keeps 16-bit
/// weights (Transformer Engine casts per GEMM), tf32 is a compute mode over fp32.
Precision stored_precision(Precision compute) {
  if (compute == Precision::fp8) return Precision::bf16;
  return compute == Precision::tf32 ? Precision::fp32 : compute;
}

Precision precision_or(const std::string& s, Precision fallback) {
  return precision_from_string(s).value_or(fallback);
}

void check_cross_fields(Scenario& sc, ObjectReader& top, ObjectReader& tr, ObjectReader& par,
                        ObjectReader& off) {
  const ModelSpec& m = sc.model;
  const HardwareSpec& hw = sc.hardware;
  ParallelismSpec& p = sc.parallelism;
  TrainingSpec& t = sc.training;

  // Cluster size.
  bool has_gpus = top.has("gpus"), has_nodes = top.has("nodes");
  if (!has_gpus && !has_nodes) {
    top.error("gpus", "missing cluster size (expected \"gpus\" or \"nodes\")");
    return;
  }
  if (has_nodes && hw.gpus_per_node > 0) {
    std::int64_t from_nodes = sc.nodes * hw.gpus_per_node;
    if (has_gpus && sc.gpus != from_nodes) {
      top.error("gpus", fmt::format("{} disagrees with nodes·gpus_per_node = {}·{} = {}", sc.gpus,
                                    sc.nodes, hw.gpus_per_node, from_nodes));
      return;
    }
    sc.gpus = from_nodes;
  }
  if (hw.gpus_per_node > 0) sc.nodes = (sc.gpus + hw.gpus_per_node - 1) / hw.gpus_per_node;
  if (sc.checkpoint.enabled) check_checkpoint_cluster(sc.checkpoint.strategy, sc.nodes, top);
  if (sc.nodes > 1 && (hw.nic.count == 0 || hw.nic.bandwidth.value <= 0.0))
    top.error("gpus", fmt::format("{} GPUs span {} nodes, but hardware {} has no NIC to connect them (nic.count={}, "
                                  "nic.bandwidth={} B/s)", sc.gpus, sc.nodes, hw.name, hw.nic.count,
                                  hw.nic.bandwidth.value));

  // Parallel degrees: every violated constraint is reported, not only the first.
  // Latent attention splits every head's Q, K and V, so K/V heads do not constrain TP; routed and
  // shared experts split their own widths (column/row-parallel expert MLPs).
  const bool moe = m.is_moe();
  const std::pair<const char*, std::int64_t> tp_divides[] = {
      {"num_attention_heads", m.num_heads},
      {"num_key_value_heads", m.latent() ? 0 : m.num_kv_heads},
      {"intermediate_size", !moe || m.first_k_dense_replace > 0 || m.moe_intermediate_size == m.intermediate_size
                                ? m.intermediate_size : 0},
      {"moe_intermediate_size", moe && m.moe_intermediate_size != m.intermediate_size ? m.moe_intermediate_size : 0},
      {"shared_expert_intermediate_size",
       moe && m.num_shared_experts > 0 ? m.num_shared_experts * m.shared_expert_intermediate_size : 0}};
  for (const auto& [dimension, size] : tp_divides)
    if (size > 0 && size % p.tp != 0)
      par.error("tp", fmt::format("{} does not divide {}={}", p.tp, dimension, size));
  if (p.pp > m.num_layers && m.num_layers > 0)
    par.error("pp", fmt::format("{} stages exceed num_hidden_layers={}", p.pp, m.num_layers));

  // A product that misses the cluster size is blamed on the --set that changed a factor, if any.
  auto product_error = [&](std::initializer_list<const char*> keys, std::string message) {
    if (top.overridden("gpus")) top.error("gpus", std::move(message));
    else if (top.overridden("nodes")) top.error("nodes", std::move(message));
    else par.error_at_cause(keys, std::move(message));
  };
  // GPUs = tp·cp·pp·dp (Megatron-Core's rank order: tp, cp, dp, pp).
  std::int64_t tp_pp = p.tp * p.cp * p.pp;
  const bool with_cp = p.cp > 1;
  if (!par.has("dp")) {
    if (sc.gpus % tp_pp != 0) {
      if (with_cp)
        product_error({"cp", "pp", "tp"}, fmt::format("tp·cp·pp = {}·{}·{} = {} does not divide gpus={}", p.tp,
                                                      p.cp, p.pp, tp_pp, sc.gpus));
      else
        product_error({"pp", "tp"}, fmt::format("tp·pp = {}·{} = {} does not divide gpus={}", p.tp, p.pp, tp_pp, sc.gpus));
      return;
    }
    p.dp = sc.gpus / tp_pp;
  } else if (tp_pp * p.dp != sc.gpus) {
    if (with_cp)
      product_error({"dp", "cp", "tp", "pp"},
                    fmt::format("tp·cp·pp·dp = {}·{}·{}·{} = {} does not equal gpus={}", p.tp, p.cp, p.pp, p.dp,
                                tp_pp * p.dp, sc.gpus));
    else
      product_error({"dp", "tp", "pp"}, fmt::format("tp·pp·dp = {}·{}·{} = {} does not equal gpus={}", p.tp,
                                                         p.pp, p.dp, tp_pp * p.dp, sc.gpus));
    return;
  }
  // Causal load balancing (Megatron-Core): the sequence is cut into 2·cp chunks and rank i holds
  // chunks i and 2·cp−1−i, so every rank does the same attention work.
  if (with_cp && t.seq_len % (2 * p.cp) != 0)
    par.error("cp", fmt::format("2·cp = {} does not divide seq_len={} (causal load balancing gives each CP rank "
                                "two of 2·cp equal chunks)", 2 * p.cp, t.seq_len));
  // Expert parallelism is carved out of DP (an EP group is ep replicas sharing the experts out), or
  // with etp=1 folded over the stage's ranks.
  const std::int64_t etp = p.expert_tp();
  if (etp != p.tp && etp != 1)
    par.error("etp", fmt::format("{} must be 1 (experts whole, MoE parallel folding) or tp={} (each expert split "
                                 "over the TP group); Strata does not time an expert TP in between", etp, p.tp));
  else if (p.ep == 1 && etp != p.tp)
    par.error("etp", fmt::format("{} needs ep > 1 (with ep=1 every rank holds all the experts, split over "
                                 "the TP group: etp is tp={})", etp, p.tp));
  if (p.ep > 1) {
    if (!m.is_moe())
      par.error("ep", fmt::format("{} needs a mixture-of-experts model (model {} has num_local_experts=0)", p.ep,
                                  m.name));
    else if (m.num_experts % p.ep != 0)
      par.error("ep", fmt::format("{} does not divide num_local_experts={}", p.ep, m.num_experts));
    // An invalid etp is checked as the default layout, carved, so its problems still show.
    if (etp == 1 && p.tp > 1) {
      if ((p.tp * p.cp * p.dp) % p.ep != 0)
        par.error("ep", fmt::format("{} does not divide tp·cp·dp = {}·{}·{} = {} (with etp=1 the EP groups "
                                    "are folded over the stage's ranks)", p.ep, p.tp, p.cp, p.dp,
                                    p.tp * p.cp * p.dp));
    } else if (p.dp % p.ep != 0) {
      par.error("ep", fmt::format("{} does not divide dp={} (expert parallelism is carved out of data "
                                  "parallelism; etp=1 folds it over tp·cp·dp instead)", p.ep, p.dp));
    }
    // Megatron-Core's MoE guide: with expert and tensor parallelism, sequence parallelism must be on
    // (each TP rank dispatches its own sequence shard).
    if (p.tp > 1 && !p.sequence_parallel)
      par.error("sequence_parallel", fmt::format("must be true with ep={} and tp={} (Megatron-Core's MoE layers "
                                                 "need sequence parallelism with EP and TP)", p.ep, p.tp));
  }
  if (p.schedule == Schedule::interleaved) {
    if (p.virtual_stages < 2)
      par.error("virtual_stages",
                fmt::format("the interleaved schedule needs virtual_stages >= 2 (got {})", p.virtual_stages));
    else if (p.pp < 2)
      par.error("pp", fmt::format("the interleaved schedule needs pp >= 2 (got {})", p.pp));
    // Layers need not divide evenly (Llama 3 405B: 126 layers on PP 16); the partition gives the
    // spare layers to the middle chunks, so the chunks holding the embedding and the LM head get
    // fewer. Each chunk needs at least one layer but the first and the last, which may hold only
    // the embedding and only the head (Llama 3 §3.3.2: 126 layers on 16 stages of 8 chunks).
    else if (m.num_layers < p.pp * p.virtual_stages - 2)
      par.error("virtual_stages",
                fmt::format("num_hidden_layers={} is fewer than the model chunks pp·virtual_stages = {}·{} = {} "
                            "less the two that may hold only the embedding and only the head (each other chunk "
                            "needs a layer)",
                            m.num_layers, p.pp, p.virtual_stages, p.pp * p.virtual_stages));
  } else if (p.virtual_stages != 1) {
    par.error("virtual_stages", fmt::format("{} needs schedule \"interleaved\" (got \"{}\")",
                                            p.virtual_stages, to_string(p.schedule)));
  }
  if (!p.pipeline_layers.empty()) {
    const std::int64_t chunks = p.pp * p.virtual_stages;
    const auto n = static_cast<std::int64_t>(p.pipeline_layers.size());
    std::int64_t sum = 0;
    for (std::int64_t x : p.pipeline_layers) sum += x;
    if (n != p.pp && n != chunks)
      par.error("pipeline_layers",
                fmt::format("has {} entries, expected pp = {} (per stage){}", n, p.pp,
                            chunks != p.pp ? fmt::format(" or pp·virtual_stages = {} (per model chunk)", chunks) : ""));
    else if (sum != m.num_layers)
      par.error("pipeline_layers", fmt::format("sums to {}, expected num_hidden_layers={}", sum, m.num_layers));
    else if (n == p.pp && chunks != p.pp)
      for (std::size_t i = 0; i < p.pipeline_layers.size(); ++i) {
        if (p.pipeline_layers[i] < p.virtual_stages)
          par.error_at_item("pipeline_layers", i, fmt::format("{} blocks cannot fill virtual_stages={} model chunks", p.pipeline_layers[i],
                              p.virtual_stages));
      }
    else
      // Per model chunk: only the first (the embedding's) and the last (the head's) may be empty.
      for (std::size_t i = 1; i + 1 < p.pipeline_layers.size(); ++i)
        if (p.pipeline_layers[i] == 0)
          par.error_at_item("pipeline_layers", i, "0 blocks: only the first model chunk (the embedding's) and the "
                                                  "last (the head's) may hold no block (expected at least 1)");
    if (p.pipeline_partition != PipelinePartitioning::uniform)
      par.error("pipeline_partition", fmt::format("\"{}\" conflicts with explicit pipeline_layers (remove one)",
                                                  to_string(p.pipeline_partition)));
  }

  // Batch.
  std::int64_t per_step = t.micro_batch_size * p.dp;
  if (t.global_batch_size % per_step != 0) {
    tr.error("global_batch_size",
             fmt::format("{} is not divisible by micro_batch_size·dp = {}·{} = {}", t.global_batch_size,
                         t.micro_batch_size, p.dp, per_step));
  } else if (p.schedule == Schedule::interleaved && p.pp > 1 && sc.num_microbatches() % p.pp != 0) {
    // Narayanan et al. 2021 §2.2.2: the interleaved schedule needs m to be a multiple of p.
    tr.error("global_batch_size",
             fmt::format("gives {} micro-batches, which the interleaved schedule needs to be a multiple "
                         "of pp={}", sc.num_microbatches(), p.pp));
  }
  if (m.position_embedding == PositionEmbedding::learned && m.max_position_embeddings > 0 &&
      t.seq_len > m.max_position_embeddings)
    tr.error("seq_len", fmt::format("{} exceeds the model's max_position_embeddings={}", t.seq_len,
                                    m.max_position_embeddings));

  // Precision supported by the GPU.
  if (!hw.gpu.model.empty() && !hw.gpu.peak.contains(t.precision))
    tr.error("precision", fmt::format("{} is not supported by {} (no gpu.peak_tflops.{})",
                                      to_string(t.precision), hw.gpu.model, to_string(t.precision)));

  // Parameters are the compute precision's, or fp32 with autocast computing in bf16 or fp16.
  const Precision stored = stored_precision(t.precision);
  const bool sixteen_bit = t.precision == Precision::bf16 || t.precision == Precision::fp16;
  if (t.param_precision != stored && !(t.autocast() && sixteen_bit))
    tr.error("param_precision",
             fmt::format("{} does not go with precision {} (expected {}{})", to_string(t.param_precision),
                         to_string(t.precision), to_string(stored),
                         sixteen_bit ? ", or fp32 for autocast over fp32 parameters" : ""));
  else if (t.autocast() && p.ep > 1)
    tr.error("param_precision", fmt::format("fp32 (autocast over fp32 parameters) is not modelled with expert "
                                            "parallelism (ep={}; expected the default, {})", p.ep, to_string(stored)));
  else if (t.autocast() && sc.memory.offload.optimizer != Tier::none)
    tr.error("param_precision", fmt::format("fp32 (autocast over fp32 parameters) is not modelled with the "
                                            "optimizer offloaded to {} (the step would need the fp32 parameters "
                                            "there; expected the default, {})",
                                            to_string(sc.memory.offload.optimizer), to_string(stored)));
  else if (t.autocast() && sc.checkpoint.enabled && behaviour(sc.checkpoint.strategy).optimizer_on_ssd)
    tr.error("param_precision", fmt::format("fp32 (autocast over fp32 parameters) is not modelled with the "
                                            "near_storage checkpoint strategy (its optimizer step runs on the SSDs; "
                                            "expected the default, {})", to_string(stored)));
  // FSDP's no_sync keeps the whole gradient on the GPU; DeepSpeed refuses it under ZeRO-2/3
  // (engine.no_sync: "incompatible with gradient partitioning logic of ZeRO stage 2/3").
  if (t.behaviour.grad_sync == GradientSync::last_microbatch && p.zero_stage >= 2) {
    if (t.framework == Framework::deepspeed)
      tr.error("grad_sync", fmt::format("last-microbatch is refused by DeepSpeed under ZeRO stage {} (its no_sync "
                                        "is incompatible with gradient partitioning; expected every-microbatch)",
                                        p.zero_stage));
    else if (sc.memory.offload.optimizer != Tier::none)
      tr.error("grad_sync", fmt::format("last-microbatch is not modelled with the optimizer offloaded to {} "
                                        "(expected every-microbatch)",
                                        to_string(sc.memory.offload.optimizer)));
  }
  if (t.autocast() && t.behaviour.grad_accumulation == GradAccumulation::cast_add)
    tr.error("grad_accumulation", "cast-add casts 16-bit gradients to fp32 (DeepSpeed's BF16_Optimizer); under "
                                  "autocast over fp32 parameters they arrive in fp32 (expected none or add)");
  if (bytes_per_element(t.grad_precision) < bytes_per_element(t.precision))
    tr.error("grad_precision", fmt::format("{} is narrower than the compute precision {} (expected {} or wider)",
                                           to_string(t.grad_precision), to_string(t.precision),
                                           to_string(t.precision)));

  // ZeRO and its companions.
  if (p.zero_stage >= 2 && p.pp > 1)
    par.error("zero_stage", fmt::format("ZeRO stage {} cannot be combined with pp={} (DeepSpeed supports "
                                        "only ZeRO-1 with pipeline parallelism)", p.zero_stage, p.pp));
  if (p.distributed_optimizer && p.zero_stage > 0)
    par.error("distributed_optimizer", fmt::format("is Megatron's form of ZeRO-1; do not combine it with "
                                                   "zero_stage={}", p.zero_stage));
  const OffloadSpec& o = sc.memory.offload;
  if (p.dp_replicate > 1) {
    if (p.dp % p.dp_replicate != 0)
      par.error("dp_replicate", fmt::format("{} does not divide dp={} (each replica is a shard group of "
                                            "dp/dp_replicate data-parallel ranks)", p.dp_replicate, p.dp));
    if (p.zero_stage == 0 && !p.distributed_optimizer)
      par.error("dp_replicate", fmt::format("{} replicas of sharded states need zero_stage 1-3 or "
                                            "distributed_optimizer (without sharding every rank is a replica)",
                                            p.dp_replicate));
    if (p.ep > 1)
      par.error("dp_replicate", fmt::format("{} with ep={}: Strata does not model replicated shard groups with "
                                            "expert parallelism", p.dp_replicate, p.ep));
    if (o.params != Tier::none || o.optimizer != Tier::none)
      par.error("dp_replicate", fmt::format("{} with offloaded parameters or optimizer states: Strata does not "
                                            "model replicated shard groups with offload", p.dp_replicate));
  }
  if (o.params != Tier::none && p.zero_stage != 3)
    off.error("params", fmt::format("parameter offload needs zero_stage 3 (got {})", p.zero_stage));
  if (o.optimizer != Tier::none && p.zero_stage == 0 && !p.distributed_optimizer)
    off.error("optimizer", "optimizer offload needs zero_stage >= 1 (DeepSpeed offload_optimizer "
                           "applies to ZeRO stages 1-3)");
  auto check_tier = [&](const char* key, Tier tier) {
    if (tier == Tier::local_ssd && hw.local_ssd.count == 0)
      off.error(key, fmt::format("nvme offload needs local SSDs (hardware {} has local_ssd.count=0)", hw.name));
    if (tier == Tier::cxl && hw.cxl.capacity.value <= 0.0)
      off.error(key, fmt::format("cxl offload needs CXL memory (hardware {} has cxl.capacity=0)", hw.name));
  };
  if (o.delayed_update && o.optimizer == Tier::none)
    off.error("delayed_update", "needs the optimizer offloaded (memory.offload.optimizer)");
  if (o.optimizer != Tier::none && hw.host.cpu_adam_params_per_s <= 0.0)
    off.error("optimizer", fmt::format("optimizer offload runs the step on the CPU: hardware {} needs "
                                       "host.cpu_adam_params_per_s > 0", hw.name));
  check_tier("optimizer", o.optimizer);
  check_tier("params", o.params);
  check_tier("activations", o.activations);
}

}  // namespace

const std::map<std::string, const ParamTable*>& scenario_param_tables() {
  static const std::map<std::string, const ParamTable*> tables = {
      {"", &kTop},           {"training", &kTraining},     {"training.moe", &kMoe}, {"parallelism", &kParallelism},
      {"memory", &kMemory},  {"memory.offload", &kOffload}, {"checkpoint", &kCheckpoint},
      {"failures", &kFailures}, {"data", &kData}};
  return tables;
}

Scenario parse_scenario(const json& doc, const SourceMap& sources) {
  Diagnostics diag(&sources);
  Scenario sc;
  // "model" and "hardware" are objects by now (the loader inlines named documents); the reader only
  // checks they exist, the specs read them.
  ObjectReader top(doc, "", kTop, diag);
  if (!top.ok()) {
    if (doc.is_null()) diag.add("", "wrong type (got null, expected an object)");
    diag.throw_if_any();
  }
  sc.name = top.string("name");
  sc.description = top.string("description");
  sc.seed = top.integer("seed");
  if (top.has("model")) sc.model = parse_model(doc.at("model"), "/model", diag);
  else top.error("model", "missing required key (expected a model name, path or object)");
  if (top.has("model") && sc.model.name.empty()) {
    // A HuggingFace config.json without _name_or_path names no model: take its file's name (its
    // folder's for a file called config.json, as the hub lays them out).
    const auto [file, inner] = sources.locate("/model");
    const std::filesystem::path path = file;
    if (inner.empty() && file != sources.root_file())
      sc.model.name = path.stem() == "config" && path.has_parent_path() ? path.parent_path().filename().string()
                                                                         : path.stem().string();
  }
  if (top.has("hardware")) sc.hardware = parse_hardware(doc.at("hardware"), "/hardware", diag);
  else top.error("hardware", "missing required key (expected a hardware profile name, path or object)");
  sc.gpus = top.has("gpus") ? top.integer("gpus") : 0;
  sc.nodes = top.has("nodes") ? top.integer("nodes") : 0;

  ObjectReader tr(top.object("training"), "/training", kTraining, diag);
  TrainingSpec& t = sc.training;
  t.seq_len = tr.integer("seq_len");
  t.micro_batch_size = tr.integer("micro_batch_size");
  t.global_batch_size = tr.integer("global_batch_size");
  t.precision = precision_or(tr.choice("precision"), Precision::bf16);
  const Precision stored = stored_precision(t.precision);
  t.param_precision = tr.has("param_precision") ? precision_or(tr.choice("param_precision"), stored) : stored;
  // Autocast's gradients land in the parameters' dtype.
  const Precision gradients = t.autocast() ? t.param_precision : t.precision;
  t.grad_precision = tr.has("grad_precision") ? precision_or(tr.choice("grad_precision"), gradients) : gradients;
  t.state_precision = precision_or(tr.choice("state_precision"), Precision::fp32);
  t.optimizer = tr.choice("optimizer") == "sgd" ? Optimizer::sgd : Optimizer::adam;
  t.iterations = tr.integer("iterations");
  t.flash_attention = tr.has("flash_attention") ? tr.boolean("flash_attention") : sc.model.flash_attention;
  t.framework = enum_from_name(tr.choice("framework"), {Framework::megatron_lm_2021, Framework::megatron_core,
                                                        Framework::deepspeed, Framework::pytorch_fsdp},
                               kDefaultFramework);
  ObjectReader moe(tr.object("moe"), "/training/moe", kMoe, diag);
  t.moe.capacity_factor = moe.has("capacity_factor") ? moe.number("capacity_factor") : 0.0;
  t.moe.load_imbalance = moe.number("load_imbalance");

  ObjectReader par(top.object("parallelism"), "/parallelism", kParallelism, diag);
  ParallelismSpec& p = sc.parallelism;
  p.tp = par.integer("tp");
  p.pp = par.integer("pp");
  p.dp = par.has("dp") ? par.integer("dp") : 1;
  p.cp = par.integer("cp");
  p.ep = par.integer("ep");
  p.etp = par.has("etp") ? par.integer("etp") : 0;
  p.sequence_parallel = par.boolean("sequence_parallel");
  p.schedule = enum_from_name(par.choice("schedule"), {Schedule::gpipe, Schedule::one_f_one_b, Schedule::interleaved},
                              Schedule::one_f_one_b);
  p.virtual_stages = par.integer("virtual_stages");
  if (par.has("pipeline_layers")) {
    p.pipeline_layers = par.integer_list("pipeline_layers");
    // A refused entry is already reported: the list's own checks would only repeat it.
    const json& raw = doc.at("parallelism").at("pipeline_layers");
    if (!raw.is_array() || p.pipeline_layers.size() != raw.size()) p.pipeline_layers.clear();
  }
  p.pipeline_partition = enum_from_name(par.choice("pipeline_partition"),
                                        {PipelinePartitioning::uniform, PipelinePartitioning::balanced},
                                        PipelinePartitioning::uniform);
  p.zero_stage = par.integer("zero_stage");
  p.distributed_optimizer = par.boolean("distributed_optimizer");
  p.dp_replicate = par.integer("dp_replicate");

  ObjectReader mem(top.object("memory"), "/memory", kMemory, diag);
  sc.memory.recompute = enum_from_name(mem.choice("recompute"), {Recompute::none, Recompute::selective, Recompute::full},
                                       Recompute::none);
  if (mem.has("recompute_layers")) {
    sc.memory.recompute_layers = mem.integer("recompute_layers");
    if (sc.memory.recompute_layers > 0 && sc.memory.recompute != Recompute::full)
      mem.error_at_cause({"recompute_layers", "recompute"},
                         fmt::format("recomputes whole blocks: needs /memory/recompute full (got {})",
                                     to_string(sc.memory.recompute)));
  }
  sc.memory.distribute_saved_activations = mem.boolean("distribute_saved_activations");
  // Megatron-LM refuses it without TP or full recomputation (validate_args) and with sequence
  // parallelism (TransformerConfig), which already splits the checkpointed input over TP.
  if (sc.memory.distribute_saved_activations) {
    if (sc.memory.recompute != Recompute::full)
      mem.error_at_cause({"distribute_saved_activations", "recompute"},
                         fmt::format("distributes what full recomputation keeps: needs /memory/recompute full "
                                     "(got {})", to_string(sc.memory.recompute)));
    else if (sc.parallelism.tp <= 1)
      mem.error("distribute_saved_activations", "splits the checkpointed inputs over TP: needs /parallelism/tp > 1");
    else if (sc.parallelism.sequence_parallel)
      mem.error("distribute_saved_activations", "sequence parallelism already splits the checkpointed inputs over "
                                                "TP (expected false with /parallelism/sequence_parallel true)");
  }
  sc.memory.comm_buffer = Bytes(mem.quantity("comm_buffer"));
  ObjectReader off(mem.object("offload"), "/memory/offload", kOffload, diag);
  sc.memory.offload.optimizer = tier_from_string(off.choice("optimizer"));
  sc.memory.offload.params = tier_from_string(off.choice("params"));
  sc.memory.offload.activations = tier_from_string(off.choice("activations"));
  sc.memory.offload.host_buffer_factor = off.number("host_buffer_factor");
  sc.memory.offload.prefetch_layers = off.integer("prefetch_layers");
  sc.memory.offload.delayed_update = off.boolean("delayed_update");
  sc.memory.offload.gpudirect = off.boolean("gpudirect");
  // The framework preset, then the scenario's own overrides of it.
  t.behaviour = preset(t.framework, {.zero_stage = p.zero_stage,
                                     .interleaved = p.interleaved(),
                                     // Weights kept in bf16 (DeepSpeed's BF16_Optimizer); not autocast's.
                                     .bf16 = t.param_precision == Precision::bf16,
                                     .fp32_gradients = t.grad_precision == Precision::fp32,
                                     .optimizer_offloaded = sc.memory.offload.optimizer != Tier::none,
                                     .per_op_checkpointing = sc.per_op_checkpointing_modelled()});
  if (tr.has("attention_kernel"))
    t.behaviour.attention = enum_from_name(tr.choice("attention_kernel"),
                                           {AttentionKernel::flash_attention_2, AttentionKernel::vendor_fused,
                                            AttentionKernel::triton_flash},
                                           t.behaviour.attention);
  if (tr.has("overlap_grad_reduce")) t.behaviour.overlap_grad_reduce = tr.boolean("overlap_grad_reduce");
  if (tr.has("overlap_param_gather")) t.behaviour.overlap_param_gather = tr.boolean("overlap_param_gather");
  if (tr.has("align_param_gather")) t.behaviour.align_param_gather = tr.boolean("align_param_gather");
  if (tr.has("overlap_p2p_comm")) t.behaviour.overlap_p2p_comm = tr.boolean("overlap_p2p_comm");
  if (tr.has("async_tp_backward")) t.behaviour.async_tp_backward = tr.boolean("async_tp_backward");
  if (tr.has("fused_elementwise")) t.behaviour.fused_elementwise = tr.boolean("fused_elementwise");
  if (tr.has("grad_sync"))
    t.behaviour.grad_sync = enum_from_name(tr.choice("grad_sync"),
                                           {GradientSync::every_microbatch, GradientSync::last_microbatch},
                                           t.behaviour.grad_sync);
  // Partitioned gradients accumulated whole (no sync before the last micro-batch) are added into
  // .grad by autograd where the framework has no pass of its own.
  if (t.behaviour.grad_sync == GradientSync::last_microbatch && p.zero_stage >= 2 &&
      t.behaviour.grad_accumulation == GradAccumulation::none)
    t.behaviour.grad_accumulation = GradAccumulation::add;
  if (tr.has("grad_accumulation"))
    t.behaviour.grad_accumulation = enum_from_name(
        tr.choice("grad_accumulation"), {GradAccumulation::none, GradAccumulation::add, GradAccumulation::cast_add},
        t.behaviour.grad_accumulation);
  if (tr.has("selective_recompute")) {
    t.behaviour.selective_recompute = enum_from_name(
        tr.choice("selective_recompute"),
        {SelectiveRecompute::attention_core, SelectiveRecompute::every_other_matmul}, t.behaviour.selective_recompute);
    if (t.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul && !sc.per_op_checkpointing_blocks())
      tr.error_at_cause({"selective_recompute"}, "every-other-matmul is modelled for dense blocks with standard "
                                                 "flash attention and bias-free linears; this model has experts, "
                                                 "latent attention, biases or attention without a flash kernel");
    else if (t.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul && p.tp > 1 &&
             !p.sequence_parallel)
      tr.error_at_cause({"selective_recompute"}, "every-other-matmul is modelled at /parallelism/tp 1 or with "
                                                 "/parallelism/sequence_parallel true (TP without SP all-reduces, "
                                                 "whose outputs torchtitan's save list does not keep); use "
                                                 "attention-core");
  }
  t.behaviour.logit_metrics = static_cast<int>(tr.integer("logit_metrics"));
  if (tr.has("cross_entropy"))
    t.behaviour.cross_entropy = enum_from_name(tr.choice("cross_entropy"),
                                               {CrossEntropy::vocab_parallel, CrossEntropy::vocab_parallel_fused,
                                                CrossEntropy::pytorch, CrossEntropy::single_kernel},
                                               t.behaviour.cross_entropy);
  if (tr.has("tp_overlap_method"))
    t.behaviour.tp_overlap_method = enum_from_name(tr.choice("tp_overlap_method"),
                                                   {TpOverlapMethod::userbuffers, TpOverlapMethod::async_tp},
                                                   t.behaviour.tp_overlap_method);
  if (tr.has("sequence_parallel_style"))
    t.behaviour.sequence_parallel_style =
        enum_from_name(tr.choice("sequence_parallel_style"),
                       {SequenceParallelStyle::megatron, SequenceParallelStyle::dtensor},
                       t.behaviour.sequence_parallel_style);
  if (tr.has("fp8_scaling"))
    t.behaviour.fp8_scaling =
        enum_from_name(tr.choice("fp8_scaling"), {Fp8Scaling::delayed, Fp8Scaling::current}, t.behaviour.fp8_scaling);
  if (tr.has("fp8_param_gather")) {
    t.behaviour.fp8_param_gather = tr.boolean("fp8_param_gather");
    if (t.behaviour.fp8_param_gather && t.precision != Precision::fp8)
      tr.error("fp8_param_gather", fmt::format("needs training.precision fp8 (got {})", to_string(t.precision)));
    else if (t.behaviour.fp8_param_gather && p.zero_stage == 0 && !p.distributed_optimizer)
      tr.error("fp8_param_gather", "applies to parameter all-gathers: needs parallelism.zero_stage 1-3 or "
                                   "parallelism.distributed_optimizer");
    else if (t.behaviour.fp8_param_gather && t.framework == Framework::deepspeed)
      tr.error("fp8_param_gather", "is not a DeepSpeed option (its ZeRO gathers the weights at their own width; "
                                   "expected false with training.framework deepspeed)");
  }
  if (tr.has("overlap_tp_comm")) {
    t.behaviour.overlap_tp_comm = tr.boolean("overlap_tp_comm");
    // Transformer Engine overlaps the sequence-parallel all-gather and reduce-scatter; Megatron-Bridge
    // refuses tp_comm_overlap without sequence parallelism.
    if (t.behaviour.overlap_tp_comm && p.tp > 1 && !p.sequence_parallel)
      tr.error_at_cause({"overlap_tp_comm"}, "needs /parallelism/sequence_parallel true (both methods pipeline the "
                                            "sequence-parallel all-gather and reduce-scatter)");
  }
  if (sc.memory.offload.gpudirect) {
    if (!sc.hardware.local_ssd.gpudirect_storage)
      off.error("gpudirect", fmt::format("needs GPUDirect Storage on the drives (hardware {} has "
                                         "local_ssd.gpudirect_storage=false)", sc.hardware.name));
    if (sc.memory.offload.params != Tier::local_ssd && sc.memory.offload.activations != Tier::local_ssd)
      off.error("gpudirect", "applies to parameters or activations offloaded to nvme (expected params or "
                             "activations nvme)");
  }

  if (top.has("checkpoint")) {
    ObjectReader ck(top.object("checkpoint"), "/checkpoint", kCheckpoint, diag);
    sc.checkpoint.enabled = true;
    sc.checkpoint.interval_iterations = ck.integer("interval_iterations");
    const std::string strategy = ck.choice("strategy");
    for (const auto& s : ck.string_list("tiers")) sc.checkpoint.tiers.push_back(tier_from_string(s));
    const json& raw = doc.at("checkpoint");
    if (raw.is_object() && raw.contains("tiers") && raw.at("tiers").is_array() && raw.at("tiers").empty())
      ck.error("tiers", "empty list (expected at least the tier that makes a checkpoint durable)");
    // Tiers must exist on this hardware, each at most once, the object store only last.
    const auto& tiers = sc.checkpoint.tiers;
    for (std::size_t k = 0; k < tiers.size(); ++k) {
      const Tier t = tiers[k];
      if (std::count(tiers.begin(), tiers.end(), t) > 1)
        ck.error("tiers", fmt::format("{} appears more than once (expected each tier at most once)", to_string(t)));
      if (t == Tier::object_store && k + 1 != tiers.size())
        ck.error("tiers", "object_store must be the last tier (nothing comes back from it during a checkpoint)");
      if (t == Tier::cxl && sc.hardware.cxl.capacity.value <= 0.0)
        ck.error("tiers", fmt::format("cxl needs CXL memory (hardware {} has cxl.capacity=0)", sc.hardware.name));
      if (t == Tier::local_ssd && sc.hardware.local_ssd.count == 0)
        ck.error("tiers", fmt::format("local_ssd needs local SSDs (hardware {} has local_ssd.count=0)",
                                      sc.hardware.name));
      if (t == Tier::object_store && sc.hardware.nic.count == 0)
        ck.error("tiers", fmt::format("object_store is reached over NICs (hardware {} has nic.count=0)",
                                      sc.hardware.name));
    }
    sc.checkpoint.sharded = ck.boolean("sharded");
    sc.checkpoint.gpudirect = ck.boolean("gpudirect");
    if (sc.checkpoint.gpudirect) {
      if (!sc.hardware.local_ssd.gpudirect_storage)
        ck.error("gpudirect", fmt::format("needs GPUDirect Storage on the drives (hardware {} has "
                                          "local_ssd.gpudirect_storage=false)", sc.hardware.name));
      if (std::find(tiers.begin(), tiers.end(), Tier::local_ssd) == tiers.end())
        ck.error("gpudirect", "applies to checkpoints through local SSDs (expected local_ssd in checkpoint.tiers)");
    }
    CheckpointContext context;
    context.tiers = tiers;
    context.pp = sc.parallelism.pp;
    context.optimizer_offload = sc.memory.offload.optimizer;
    context.computational_ssd = sc.hardware.local_ssd.computational;
    context.has_nic = sc.hardware.nic.count > 0;
    context.hardware = sc.hardware.name;
    sc.checkpoint.strategy = read_checkpoint_strategy(ck, strategy, context);
  }
  if (top.has("failures")) {
    ObjectReader fr(top.object("failures"), "/failures", kFailures, diag);
    FailureSpec& f = sc.failures;
    f.enabled = true;
    f.gpu_mtbf = Seconds(fr.quantity("gpu_mtbf"));
    if (fr.has("node_mtbf")) f.node_mtbf = Seconds(fr.quantity("node_mtbf"));
    if (fr.has("network_mtbf")) f.network_mtbf = Seconds(fr.quantity("network_mtbf"));
    f.restart_time = Seconds(fr.quantity("restart_time"));
    f.horizon = Seconds(fr.quantity("horizon"));
    f.distribution = enum_from_name(fr.choice("distribution"),
                                    {FailureDistribution::exponential, FailureDistribution::weibull},
                                    FailureDistribution::exponential);
    f.weibull_shape = fr.number("weibull_shape");
    f.runs = fr.integer("runs");
    // Each expected failure is an event of the run-level simulation, per run.
    double rate = f.gpu_mtbf.value > 0 ? static_cast<double>(sc.gpus) / f.gpu_mtbf.value : 0.0;
    if (f.node_mtbf.value > 0) rate += static_cast<double>(sc.nodes) / f.node_mtbf.value;
    if (f.network_mtbf.value > 0) rate += static_cast<double>(sc.nodes) / f.network_mtbf.value;
    const double expected = rate * f.horizon.value;
    if (expected > kMaxExpectedFailures)
      fr.error("horizon", fmt::format("{:.3g} expected failures over the horizon (expected at most {:.0e}: shorten "
                                      "the horizon or raise the MTBF)", expected, kMaxExpectedFailures));
    f.seed = fr.integer("seed");
  }

  if (top.has("data")) {
    ObjectReader dr(top.object("data"), "/data", kData, diag);
    DataSpec& d = sc.data;
    d.enabled = true;
    d.tier = tier_from_string(dr.choice("tier"));
    std::int64_t token_bytes = dr.integer("token_bytes");
    // Megatron's indexed datasets store token ids as uint16 below a 65,500-token vocabulary, else int32.
    if (token_bytes == 0) token_bytes = sc.model.vocab_size < 65500 ? 2 : 4;
    d.sample_bytes = dr.has("sample_bytes") ? dr.quantity("sample_bytes")
                                            : static_cast<double>(token_bytes * sc.training.seq_len);
    d.requests_per_sample = dr.integer("requests_per_sample");
    d.prefetch_iterations = dr.integer("prefetch_iterations");
    if (d.tier == Tier::cxl && sc.hardware.cxl.capacity.value <= 0.0)
      dr.error("tier", fmt::format("cxl needs CXL memory (hardware {} has cxl.capacity=0)", sc.hardware.name));
    if (d.tier == Tier::local_ssd && sc.hardware.local_ssd.count == 0)
      dr.error("tier", fmt::format("local_ssd needs local SSDs (hardware {} has local_ssd.count=0)", sc.hardware.name));
    if (d.tier == Tier::object_store && sc.hardware.nic.count == 0)
      dr.error("tier", fmt::format("object_store is reached over NICs (hardware {} has nic.count=0)",
                                   sc.hardware.name));
  }

  // Cross-field checks only make sense on individually valid fields.
  if (diag.empty())
    check_cross_fields(sc, top, tr, par, off);
  diag.throw_if_any();
  return sc;
}

bool TrainingSpec::autocast() const {
  return bytes_per_element(param_precision) > std::max(2.0, bytes_per_element(precision));
}

bool Scenario::accumulates_whole_gradients() const {
  return parallelism.zero_stage < 2 ||
         (training.behaviour.grad_sync == GradientSync::last_microbatch && num_microbatches() > 1);
}

bool Scenario::per_op_checkpointing_blocks() const {
  return !model.is_moe() && !model.latent() && !model.attention_bias && !model.attention_output_bias &&
         !model.mlp_bias && training.flash_attention;
}

}  // namespace strata
