// Invalid input: every error names the file (or --set override), the JSON pointer and what was
// expected; all errors of a document are reported together. Messages are pinned exactly.

#include <catch2/catch.hpp>

#include <fstream>

#include "sim/core/json_file.hpp"
#include "support.hpp"

using namespace strata;
using nlohmann::json;

namespace {

// Korthikanti's GPT-3 175B case, inline, naming shipped model and hardware documents.
json base() {
  return {{"model", "gpt3-175b"},
          {"hardware", "dgx-a100-80g"},
          {"gpus", 64},
          {"training", {{"seq_len", 2048}, {"micro_batch_size", 1}, {"global_batch_size", 64}}},
          {"parallelism", {{"tp", 8}, {"pp", 8}, {"schedule", "interleaved"}, {"virtual_stages", 3}}}};
}

/// The error text of validating `doc` with `sets`, or "" when it is valid.
std::string errors_of(const json& doc, const std::vector<std::string>& sets = {}) {
  // Messages show shipped files relative to the working directory.
  std::filesystem::current_path(STRATA_SOURCE_DIR);
  try {
    test::load_inline(doc, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

json with(json doc, const std::string& pointer, json value) {
  doc[json::json_pointer(pointer)] = std::move(value);
  return doc;
}

json without(json doc, const std::string& key) {
  doc.erase(key);
  return doc;
}

}  // namespace

TEST_CASE("The base scenario of the invalid-input tests is valid", "[input]") { CHECK(errors_of(base()) == ""); }

TEST_CASE("Invalid scenarios give one pinned line per error", "[input]") {
  struct Case {
    const char* what;
    json doc;
    std::vector<std::string> sets;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"tp does not divide heads", base(), {"gpus=40", "parallelism.tp=5"},
       "--set parallelism.tp=5: /parallelism/tp: 5 does not divide num_attention_heads=96\n"
       "--set parallelism.tp=5: /parallelism/tp: 5 does not divide num_key_value_heads=96\n"
       "--set parallelism.tp=5: /parallelism/tp: 5 does not divide intermediate_size=49152"},
      {"nodes without NICs", base(), {"hardware.nic.count=0"},
       "inline.json: /gpus: 64 GPUs span 8 nodes, but hardware dgx-a100-80g has no NIC to connect them "
       "(nic.count=0, nic.bandwidth=25000000000 B/s)"},
      {"optimizer offload without a CPU-Adam rate", base(), {"parallelism.distributed_optimizer=true",
       "memory.offload.optimizer=cpu", "hardware.host.cpu_adam_params_per_s=0"},
       "--set memory.offload.optimizer=cpu: /memory/offload/optimizer: optimizer offload runs the step on the "
       "CPU: hardware dgx-a100-80g needs host.cpu_adam_params_per_s > 0"},
      {"one Triton attention pass without the other", base(), {"hardware.kernels.triton_backward=0"},
       "--set hardware.kernels.triton_backward=0: /hardware/kernels/triton_backward: must be set with "
       "triton_forward (got 0, expected a fraction of peak in (0, 1], or 0 for both)"},
      {"a point-to-point efficiency above the line rate", base(), {"hardware.efficiency.nvlink_p2p=1.5"},
       "--set hardware.efficiency.nvlink_p2p=1.5: /hardware/efficiency/nvlink_p2p: out of range (got 1.5, expected "
       "a number in [0.01, 1])"},
      {"an unknown TP overlap method", base(), {"training.tp_overlap_method=nccl"},
       "--set training.tp_overlap_method=nccl: /training/tp_overlap_method: unknown value (got \"nccl\", expected "
       "one of: userbuffers, async-tp)"},
      {"an unknown sequence-parallel style", base(), {"training.sequence_parallel_style=ulysses"},
       "--set training.sequence_parallel_style=ulysses: /training/sequence_parallel_style: unknown value (got "
       "\"ulysses\", expected one of: megatron, dtensor)"},
      {"an unknown fp8 scaling", base(), {"training.fp8_scaling=blockwise"},
       "--set training.fp8_scaling=blockwise: /training/fp8_scaling: unknown value (got \"blockwise\", expected "
       "one of: delayed, current)"},
      {"unknown unit", base(), {"hardware.gpu.hbm=80 GiBs"},
       "--set hardware.gpu.hbm=80 GiBs: /hardware/gpu/hbm: invalid quantity: unknown unit 'GiBs' "
       "(got \"80 GiBs\", expected a size like \"80 GiB\" greater than 0)"},
      {"negative size", base(), {"hardware.gpu.hbm=-5 GiB"},
       "--set hardware.gpu.hbm=-5 GiB: /hardware/gpu/hbm: must not be negative (got \"-5 GiB\", expected a size "
       "like \"80 GiB\" greater than 0)"},
      {"unit of the wrong dimension", base(), {"hardware.nic.bandwidth=200 GB"},
       "--set hardware.nic.bandwidth=200 GB: /hardware/nic/bandwidth: invalid quantity: unit 'GB' is not a "
       "bandwidth like \"25 GB/s\" (got \"200 GB\", expected a bandwidth like \"25 GB/s\")"},
      {"not a number", with(base(), "/failures", {{"gpu_mtbf", "soon"}}), {},
       "inline.json: /failures/gpu_mtbf: invalid quantity: no number (got \"soon\", expected a duration like "
       "\"10 min\" greater than 0)"},
      {"unknown key", with(base(), "/training/seq_length", 2048), {},
       "inline.json: /training/seq_length: unknown key (got \"seq_length\", expected one of: seq_len, "
       "micro_batch_size, global_batch_size, precision, grad_precision, state_precision, param_precision, "
       "optimizer, "
       "iterations, flash_attention, framework, attention_kernel, overlap_grad_reduce, overlap_param_gather, "
       "align_param_gather, overlap_tp_comm, tp_overlap_method, sequence_parallel_style, fp8_scaling, "
       "fp8_param_gather, overlap_p2p_comm, async_tp_backward, "
       "fused_elementwise, grad_accumulation, grad_sync, "
       "selective_recompute, cross_entropy, logit_metrics, moe)"},
      // Explicit pipeline partitions (base: 96 layers, pp 8, virtual_stages 3).
      {"pipeline_layers length", with(base(), "/parallelism/pipeline_layers", json::array({48, 48})), {},
       "inline.json: /parallelism/pipeline_layers: has 2 entries, expected pp = 8 (per stage) or pp·virtual_stages "
       "= 24 (per model chunk)"},
      {"pipeline_layers sum", with(base(), "/parallelism/pipeline_layers", json::array({12, 12, 12, 12, 12, 12, 12, 13})),
       {}, "inline.json: /parallelism/pipeline_layers: sums to 97, expected num_hidden_layers=96"},
      {"pipeline_layers item", with(base(), "/parallelism/pipeline_layers", json::array({12, 12, 12, -1, 12, 12, 12, 25})),
       {},
       "inline.json: /parallelism/pipeline_layers/3: out of range (got -1, expected an integer in [0, 1000000])"},
      {"pipeline_layers empty stage", with(base(), "/parallelism/pipeline_layers", json::array({12, 12, 12, 0, 12, 12, 12, 24})),
       {}, "inline.json: /parallelism/pipeline_layers/3: 0 blocks cannot fill virtual_stages=3 model chunks"},
      {"pipeline_layers empty middle chunk",
       with(base(), "/parallelism/pipeline_layers",
            json::array({4, 4, 4, 4, 4, 0, 8, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4})),
       {},
       "inline.json: /parallelism/pipeline_layers/5: 0 blocks: only the first model chunk (the embedding's) and the "
       "last (the head's) may hold no block (expected at least 1)"},
      {"pipeline_layers too few for the chunks",
       with(base(), "/parallelism/pipeline_layers", json::array({2, 14, 12, 12, 12, 12, 12, 20})), {},
       "inline.json: /parallelism/pipeline_layers/0: 2 blocks cannot fill virtual_stages=3 model chunks"},
      {"pipeline_layers with balanced", with(with(base(), "/parallelism/pipeline_layers",
                                                  json::array({12, 12, 12, 12, 12, 12, 12, 12})),
                                             "/parallelism/pipeline_partition", "balanced"),
       {}, "inline.json: /parallelism/pipeline_partition: \"balanced\" conflicts with explicit pipeline_layers (remove one)"},
      {"overlap_tp_comm without SP", with(base(), "/training/overlap_tp_comm", true), {},
       "inline.json: /training/overlap_tp_comm: needs /parallelism/sequence_parallel true (both methods pipeline the "
       "sequence-parallel all-gather and reduce-scatter)"},
      {"unknown top-level key", with(base(), "/paralelism", json::object()), {},
       "inline.json: /paralelism: unknown key (got \"paralelism\", expected one of: name, description, model, "
       "hardware, gpus, nodes, seed, training, parallelism, memory, checkpoint, failures, data)"},
      {"missing model", without(base(), "model"), {},
       "inline.json: /model: missing required key (expected a model name, path or object)"},
      {"unknown model", with(base(), "/model", "gpt5"), {},
       "inline.json: /model: unknown model (got \"gpt5\", expected one of: deepseek-v2-lite, deepseek-v3, gpt3-175b, "
       "grok-1-nemo, llama-2-13b, llama-2-7b, llama-3-70b, llama-3-8b, llama-3.1-405b, megatron-1t, megatron-22b, "
       "mixtral-8x22b, mixtral-8x7b, mlperf-llama3-1t, qwen1.5-moe-a2.7b, qwen2-57b-a14b, qwen3-30b-a3b, turing-530b)"},
      {"model file not found", with(base(), "/model", "models/nope.json"), {},
       "inline.json: /model: model file not found (got \"models/nope.json\")"},
      {"zero micro-batch size", with(base(), "/training/micro_batch_size", 0), {},
       "inline.json: /training/micro_batch_size: out of range (got 0, expected an integer in [1, 1000000])"},
      {"wrong type", with(base(), "/parallelism/tp", "eight"), {},
       "inline.json: /parallelism/tp: wrong type (got \"eight\", expected an integer in [1, 1000000])"},
      {"fractional integer", with(base(), "/training/seq_len", 2048.5), {},
       "inline.json: /training/seq_len: wrong type (got 2048.5, expected an integer in [1, 1000000])"},
      {"tp·pp·dp differs from gpus", with(base(), "/parallelism/dp", 2), {},
       "inline.json: /parallelism/dp: tp·pp·dp = 8·8·2 = 128 does not equal gpus=64"},
      {"gpus not divisible by tp·pp", with(base(), "/gpus", 100), {},
       "inline.json: /parallelism/pp: tp·pp = 8·8 = 64 does not divide gpus=100"},
      {"global batch not divisible", with(with(base(), "/gpus", 128), "/training/global_batch_size", 65), {},
       "inline.json: /training/global_batch_size: 65 is not divisible by micro_batch_size·dp = 1·2 = 2"},
      {"interleaved needs m multiple of p", with(base(), "/training/global_batch_size", 60), {},
       "inline.json: /training/global_batch_size: gives 60 micro-batches, which the interleaved schedule needs "
       "to be a multiple of pp=8"},
      {"fewer layers than chunks", with(base(), "/parallelism/virtual_stages", 13), {},
       "inline.json: /parallelism/virtual_stages: num_hidden_layers=96 is fewer than the model chunks "
       "pp·virtual_stages = 8·13 = 104 less the two that may hold only the embedding and only the head (each other "
       "chunk needs a layer)"},
      {"virtual stages without interleaving", with(base(), "/parallelism/schedule", "1f1b"), {},
       "inline.json: /parallelism/virtual_stages: 3 needs schedule \"interleaved\" (got \"1f1b\")"},
      {"unknown schedule", with(base(), "/parallelism/schedule", "zigzag"), {},
       "inline.json: /parallelism/schedule: unknown value (got \"zigzag\", expected one of: gpipe, 1f1b, "
       "interleaved)"},
      {"unsupported precision", with(base(), "/training/precision", "fp8"), {},
       "inline.json: /training/precision: fp8 is not supported by A100-SXM4-80GB (no gpu.peak_tflops.fp8)"},
      {"ZeRO-3 with pipelining", with(base(), "/parallelism/zero_stage", 3), {},
       "inline.json: /parallelism/zero_stage: ZeRO stage 3 cannot be combined with pp=8 (DeepSpeed supports "
       "only ZeRO-1 with pipeline parallelism)"},
      {"shard replicas that do not divide dp", base(),
       {"parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.zero_stage=3",
        "parallelism.dp_replicate=3"},
       "--set parallelism.dp_replicate=3: /parallelism/dp_replicate: 3 does not divide dp=8 (each replica is a shard "
       "group of dp/dp_replicate data-parallel ranks)"},
      {"shard replicas without sharding", base(),
       {"parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.dp_replicate=2"},
       "--set parallelism.dp_replicate=2: /parallelism/dp_replicate: 2 replicas of sharded states need zero_stage 1-3 "
       "or distributed_optimizer (without sharding every rank is a replica)"},
      {"shard replicas with offloaded states", with(base(), "/memory", {{"offload", {{"optimizer", "cpu"}}}}),
       {"parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.zero_stage=1",
        "parallelism.dp_replicate=2"},
       "--set parallelism.dp_replicate=2: /parallelism/dp_replicate: 2 with offloaded parameters or optimizer states: "
       "Strata does not model replicated shard groups with offload"},
      {"shard replicas with expert parallelism", base(),
       {"model=mixtral-8x7b", "parallelism.tp=1", "parallelism.pp=1", "parallelism.schedule=1f1b",
        "parallelism.virtual_stages=1", "parallelism.ep=8", "parallelism.zero_stage=1", "parallelism.dp_replicate=2"},
       "--set parallelism.dp_replicate=2: /parallelism/dp_replicate: 2 with ep=8: Strata does not model replicated "
       "shard groups with expert parallelism"},
      {"partial recomputation without full recomputation", base(), {"memory.recompute_layers=2"},
       "--set memory.recompute_layers=2: /memory/recompute_layers: recomputes whole blocks: needs "
       "/memory/recompute full (got none)"},
      {"partial recomputation of no block", base(), {"memory.recompute=full", "memory.recompute_layers=-1"},
       "--set memory.recompute_layers=-1: /memory/recompute_layers: out of range (got -1, expected an integer in "
       "[0, 1000000])"},
      {"distributed checkpoints without full recomputation", base(), {"memory.distribute_saved_activations=true"},
       "--set memory.distribute_saved_activations=true: /memory/distribute_saved_activations: distributes what full "
       "recomputation keeps: needs /memory/recompute full (got none)"},
      {"distributed checkpoints without TP", base(),
       {"memory.recompute=full", "parallelism.tp=1", "parallelism.dp=8", "memory.distribute_saved_activations=true"},
       "--set memory.distribute_saved_activations=true: /memory/distribute_saved_activations: splits the checkpointed "
       "inputs over TP: needs /parallelism/tp > 1"},
      {"distributed checkpoints under sequence parallelism", base(),
       {"memory.recompute=full", "parallelism.sequence_parallel=true", "memory.distribute_saved_activations=true"},
       "--set memory.distribute_saved_activations=true: /memory/distribute_saved_activations: sequence parallelism "
       "already splits the checkpointed inputs over TP (expected false with /parallelism/sequence_parallel true)"},
      {"param offload without ZeRO-3", with(base(), "/memory", {{"offload", {{"params", "cpu"}}}}), {},
       "inline.json: /memory/offload/params: parameter offload needs zero_stage 3 (got 0)"},
      {"CXL offload without CXL", with(base(), "/memory", {{"offload", {{"activations", "cxl"}}}}), {},
       "inline.json: /memory/offload/activations: cxl offload needs CXL memory (hardware dgx-a100-80g has "
       "cxl.capacity=0)"},
      {"tp does not divide KV heads", base(),
       {"model=llama-3-8b", "gpus=16", "parallelism.tp=16", "parallelism.pp=1", "parallelism.schedule=1f1b",
        "parallelism.virtual_stages=1", "training.global_batch_size=1"},
       "--set parallelism.tp=16: /parallelism/tp: 16 does not divide num_key_value_heads=8"},
      {"no cluster size", without(base(), "gpus"), {},
       "inline.json: /gpus: missing cluster size (expected \"gpus\" or \"nodes\")"},
      {"gpus and nodes disagree", with(base(), "/nodes", 2), {},
       "inline.json: /gpus: 64 disagrees with nodes·gpus_per_node = 2·8 = 16"},
      {"bad value inside a model file", base(), {"model.hidden_size=-1"},
       "--set model.hidden_size=-1: /model/hidden_size: out of range (got -1, expected an integer in [1, 10000000])"},
      {"unknown recompute", with(base(), "/memory", {{"recompute", "partial"}}), {},
       "inline.json: /memory/recompute: unknown value (got \"partial\", expected one of: none, selective, full)"},
      {"unknown checkpoint tier", with(base(), "/checkpoint", {{"tiers", {"dram", "tape"}}}), {},
       "inline.json: /checkpoint/tiers/1: unknown value (got \"tape\", expected one of: dram, cxl, local_ssd, "
       "object_store)"},
      {"sequence longer than learned positions", with(base(), "/training/seq_len", 4096), {},
       "inline.json: /training/seq_len: 4096 exceeds the model's max_position_embeddings=2048"},
      {"setting inside a scalar", base(), {"training.seq_len.x=1"},
       "--set training.seq_len.x=1: /training/seq_len: cannot set a key inside a non-object value"},
      {"inline model with bad head count",
       with(base(), "/model", {{"hidden_size", 100}, {"num_hidden_layers", 8}, {"num_attention_heads", 3},
                               {"vocab_size", 1000}}),
       {},
       "inline.json: /model/num_attention_heads: 3 does not divide hidden_size=100 (set head_dim)"},
      {"every error at once", with(with(base(), "/training/micro_batch_size", -1), "/parallelism/pp", "x"), {},
       "inline.json: /training/micro_batch_size: out of range (got -1, expected an integer in [1, 1000000])\n"
       "inline.json: /parallelism/pp: wrong type (got \"x\", expected an integer in [1, 1000000])"},
      {"null section", base(), {"parallelism=null"},
       "--set parallelism=null: /parallelism: wrong type (got null, expected an object)"},
      {"empty checkpoint tiers", with(base(), "/checkpoint", {{"tiers", json::array()}}), {},
       "inline.json: /checkpoint/tiers: empty list (expected at least the tier that makes a checkpoint durable)"},
      {"gradients narrower than compute", with(base(), "/training/grad_precision", "fp8"), {},
       "inline.json: /training/grad_precision: fp8 is narrower than the compute precision bf16 (expected bf16 or "
       "wider)"},
      {"parameters in another 16-bit type", with(base(), "/training/param_precision", "fp16"), {},
       "inline.json: /training/param_precision: fp16 does not go with precision bf16 (expected bf16, or fp32 for "
       "autocast over fp32 parameters)"},
      {"16-bit parameters under fp32 compute", base(), {"training.precision=fp32", "training.param_precision=bf16"},
       "--set training.param_precision=bf16: /training/param_precision: bf16 does not go with precision fp32 "
       "(expected fp32)"},
      {"autocast under fp8", base(), {"hardware=dgx-h100", "training.precision=fp8", "training.param_precision=fp32"},
       "--set training.param_precision=fp32: /training/param_precision: fp32 does not go with precision fp8 "
       "(expected bf16)"},
      {"no_sync under DeepSpeed ZeRO-3", base(),
       {"parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.zero_stage=3",
        "training.framework=deepspeed", "training.grad_sync=last-microbatch"},
       "--set training.grad_sync=last-microbatch: /training/grad_sync: last-microbatch is refused by DeepSpeed under "
       "ZeRO stage 3 (its no_sync is incompatible with gradient partitioning; expected every-microbatch)"},
      {"no_sync with the optimizer offloaded", base(),
       {"parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "parallelism.zero_stage=3",
        "training.framework=pytorch-fsdp", "memory.offload.optimizer=cpu", "training.grad_sync=last-microbatch"},
       "--set training.grad_sync=last-microbatch: /training/grad_sync: last-microbatch is not modelled with the "
       "optimizer offloaded to dram (expected every-microbatch)"},
      {"autocast with expert parallelism",
       {{"model", "mixtral-8x7b"}, {"hardware", "dgx-h100"}, {"gpus", 8},
        {"training", {{"seq_len", 2048}, {"global_batch_size", 8}, {"param_precision", "fp32"}}},
        {"parallelism", {{"ep", 8}}}},
       {},
       "inline.json: /training/param_precision: fp32 (autocast over fp32 parameters) is not modelled with expert "
       "parallelism (ep=8; expected the default, bf16)"},
      {"autocast with the optimizer offloaded", with(base(), "/parallelism/distributed_optimizer", true),
       {"memory.offload.optimizer=cpu", "training.param_precision=fp32"},
       "--set training.param_precision=fp32: /training/param_precision: fp32 (autocast over fp32 parameters) is not "
       "modelled with the optimizer offloaded to dram (the step would need the fp32 parameters there; expected the "
       "default, bf16)"},
      {"autocast with cast-add accumulation", base(), {"training.param_precision=fp32",
                                                       "training.grad_accumulation=cast-add"},
       "--set training.grad_accumulation=cast-add: /training/grad_accumulation: cast-add casts 16-bit gradients to "
       "fp32 (DeepSpeed's BF16_Optimizer); under autocast over fp32 parameters they arrive in fp32 (expected none "
       "or add)"},
      {"fp8 parameter gathers in 16-bit training", with(base(), "/parallelism/distributed_optimizer", true),
       {"training.fp8_param_gather=true"},
       "--set training.fp8_param_gather=true: /training/fp8_param_gather: needs training.precision fp8 (got bf16)"},
      {"fp8 parameter gathers without sharded parameters", base(),
       {"hardware=dgx-h100", "training.precision=fp8", "training.fp8_param_gather=true"},
       "--set training.fp8_param_gather=true: /training/fp8_param_gather: applies to parameter all-gathers: needs "
       "parallelism.zero_stage 1-3 or parallelism.distributed_optimizer"},
      {"fp8 parameter gathers under DeepSpeed", base(),
       {"hardware=dgx-h100", "parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1",
        "parallelism.zero_stage=3", "training.framework=deepspeed", "training.precision=fp8",
        "training.fp8_param_gather=true"},
       "--set training.fp8_param_gather=true: /training/fp8_param_gather: is not a DeepSpeed option (its ZeRO gathers "
       "the weights at their own width; expected false with training.framework deepspeed)"},
      {"near storage without computational SSDs",
       with(base(), "/checkpoint", {{"strategy", "near_storage"}, {"tiers", {"local_ssd", "object_store"}}}), {},
       "inline.json: /checkpoint/strategy: near_storage runs the optimizer on the SSDs: hardware dgx-a100-80g needs "
       "local_ssd.computational=true"},
      {"drain outside tiered", with(base(), "/checkpoint", {{"strategy", "async"}, {"drain", "congestion_aware"}}), {},
       "inline.json: /checkpoint/drain: applies to the tiered strategy (got strategy async)"},
      {"peer replicas outside in_memory", with(base(), "/checkpoint", {{"strategy", "tiered"}, {"replicas", 2}}), {},
       "inline.json: /checkpoint/replicas: applies to the in_memory strategy (got strategy tiered)"},
      {"chunks set with a strategy switched away from tiered",
       with(base(), "/checkpoint", {{"strategy", "tiered"}, {"chunks", 4}}),
       {"checkpoint.strategy=sync", "checkpoint.chunks=2"},
       "--set checkpoint.chunks=2: /checkpoint/chunks: applies to the tiered strategy (got strategy sync)"},
      {"more in-memory replicas than peers",
       with(base(), "/checkpoint", {{"strategy", "in_memory"}, {"tiers", {"dram"}}, {"replicas", 8}}), {},
       "inline.json: /checkpoint: in_memory with 8 peer replica(s) needs at least 9 nodes (the scenario has 8); "
       "lower checkpoint.replicas or add nodes"},
      {"bad object-store redundancy", base(), {"hardware.object_store.redundancy=ec:0+2"},
       "--set hardware.object_store.redundancy=ec:0+2: /hardware/object_store/redundancy: 'ec:0+2' is not a "
       "redundancy scheme (expected none, replication:N with N >= 1 or ec:K+M with K >= 1, M >= 0)"},
      {"dataset on a missing tier", with(base(), "/data", {{"tier", "cxl"}}), {},
       "inline.json: /data/tier: cxl needs CXL memory (hardware dgx-a100-80g has cxl.capacity=0)"},
      {"redundant computation without a pipeline", with(base(), "/checkpoint", {{"strategy", "redundant_compute"}}),
       {"parallelism.pp=1", "parallelism.schedule=1f1b", "parallelism.virtual_stages=1", "gpus=8"},
       "inline.json: /checkpoint/strategy: redundant_compute keeps each pipeline stage's replica on the stage before "
       "it: needs pp >= 2 (got pp=1)"},
      {"scenario is not an object", json::array({1, 2}), {},
       "inline.json: /: wrong type (got [1,2], expected an object)"},
  };
  CHECK(cases.size() >= 25);
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(errors_of(c.doc, c.sets) == c.expected);
  }
}

TEST_CASE("Malformed files are refused before parsing", "[input]") {
  auto dir = std::filesystem::temp_directory_path() / "strata-input-test";
  std::filesystem::create_directories(dir);
  auto message = [&](const std::string& name, const std::string& content) -> std::string {
    auto path = dir / name;
    std::ofstream(path) << content;
    try {
      read_json_file(path, name);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message("syntax.json", "{\"a\": 1,}").starts_with("syntax.json: /: invalid JSON at line 1, column 9: "));
  CHECK(message("lines.json", "{\n  \"a\": [1, 2\n}").starts_with("lines.json: /: invalid JSON at line 3, column 1: "));
  std::string deep(100, '[');
  deep += std::string(100, ']');
  CHECK(message("deep.json", deep) == "deep.json: /: nesting too deep (got depth 100, expected at most 64)");
  CHECK(message("empty.json", "").starts_with("empty.json: /: invalid JSON at line 1, column 1: "));

  // A 2 GB file (sparse, so the test costs no disk) is refused by its size alone.
  auto huge = dir / "huge.json";
  { std::ofstream(huge) << "{"; }
  std::filesystem::resize_file(huge, 2ull * 1024 * 1024 * 1024);
  try {
    read_json_file(huge, "huge.json");
    FAIL("a 2 GB file was read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "huge.json: /: file too large (got 2147483648 bytes, expected at most 67108864)");
  }
  std::filesystem::remove_all(dir);
  try {
    read_json_file(dir / "missing.json", "missing.json");
    FAIL("a missing file was read");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "missing.json: /: file not found");
  }
}

TEST_CASE("An override without '=' is an input error", "[input]") {
  try {
    parse_override("parallelism.tp");
    FAIL("accepted");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == "--set parallelism.tp: /: expected PATH=VALUE (e.g. parallelism.tp=4)");
  }
}
