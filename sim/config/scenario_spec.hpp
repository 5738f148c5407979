#pragma once

/// A validated scenario: the model, the hardware, the cluster size and every policy choice.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/checkpoint_policy.hpp"
#include "sim/config/framework.hpp"
#include "sim/config/hardware_spec.hpp"
#include "sim/config/model_spec.hpp"
#include "sim/config/precision.hpp"
#include "sim/config/tier.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/params.hpp"

namespace strata {

enum class Schedule { gpipe, one_f_one_b, interleaved };
enum class Recompute { none, selective, full };
/// How layers are split over pipeline stages when parallelism.pipeline_layers does not say.
enum class PipelinePartitioning { uniform, balanced };
enum class Optimizer { adam, sgd };
/// The law of the time between job failures.
enum class FailureDistribution { exponential, weibull };

std::string to_string(Schedule s);
std::string to_string(PipelinePartitioning p);
std::string to_string(Recompute r);
std::string to_string(FailureDistribution d);

/// How tokens meet experts in an MoE layer (ignored for dense models).
struct MoeSpec {
  /// Tokens an expert takes, as a multiple of the mean (GShard/Switch capacity factor); tokens above
  /// it are dropped. 0: dropless (Megatron-Core's default), every routed token is computed.
  double capacity_factor = 0.0;
  /// Routed tokens of the most loaded expert-parallel rank over the mean (max/mean; the most loaded
  /// expert's when each rank holds one): under EP it sets the pace of the expert computation and of
  /// the all-to-all that feeds it. 1: perfectly balanced routing.
  double load_imbalance = 1.0;
  /// What the most loaded expert computes, over the mean: the imbalance, capped by the capacity.
  double pace_factor() const {
    return capacity_factor > 0.0 && capacity_factor < load_imbalance ? capacity_factor : load_imbalance;
  }
};

struct TrainingSpec {
  std::int64_t seq_len = 0;
  std::int64_t micro_batch_size = 1;
  std::int64_t global_batch_size = 1;
  Precision precision = Precision::bf16;
  Precision grad_precision = Precision::bf16;
  Precision state_precision = Precision::fp32;
  /// The dtype the model's parameters are stored and gathered in. Its default, the compute precision
  /// (16 bits under fp8), is mixed precision as Megatron, DeepSpeed and FSDP's param_dtype run it: the
  /// optimizer keeps an fp32 master copy. fp32 under a 16-bit compute precision is PyTorch's
  /// automatic mixed precision (torch.autocast over fp32 parameters): see autocast().
  Precision param_precision = Precision::bf16;
  /// torch.autocast over parameters wider than the compute precision: the parameters are the
  /// optimizer's master copy, and each linear casts its weight for every forward and keeps the cast
  /// for its backward.
  bool autocast() const;
  Optimizer optimizer = Optimizer::adam;
  std::int64_t iterations = 2;
  bool flash_attention = true;
  Framework framework = kDefaultFramework;
  FrameworkBehaviour behaviour;  ///< the framework's preset with the scenario's overrides
  MoeSpec moe;
};

struct ParallelismSpec {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  /// Context-parallel degree: the sequence split over `cp` ranks that exchange K/V around a ring
  /// during attention (Megatron-Core context_parallel_size).
  std::int64_t cp = 1;
  /// Expert-parallel degree (Megatron-Core expert_model_parallel_size): each EP group shares the
  /// experts out, num_experts/ep each. Carved out of DP (ep divides dp: the group is ep data-parallel
  /// replicas), or with etp 1 folded over the stage's tp·cp·dp ranks (ep divides tp·cp·dp).
  std::int64_t ep = 1;
  /// Expert tensor-parallel degree (Megatron-Core expert_tensor_parallel_size): tp, each expert
  /// split over the TP group as the dense MLP is; or 1, MoE parallel folding (Liu et al. 2025):
  /// each expert whole on one rank and the EP groups formed over the stage's tp·cp·dp ranks, TP
  /// fastest, so an EP group of up to a node's GPUs stays on NVLink. 0: unset, tp (expert_tp()),
  /// so a scenario whose tp is changed in code keeps its experts split like the dense layers.
  std::int64_t etp = 0;
  bool sequence_parallel = false;
  Schedule schedule = Schedule::one_f_one_b;
  std::int64_t virtual_stages = 1;
  /// Blocks per model chunk in model order (pp·virtual_stages entries, or pp entries that the
  /// interleaved schedule spreads over each stage's chunks); empty: `pipeline_partition` decides.
  std::vector<std::int64_t> pipeline_layers;
  PipelinePartitioning pipeline_partition = PipelinePartitioning::uniform;
  std::int64_t zero_stage = 0;
  bool distributed_optimizer = false;
  /// Replicas of the sharded model states (PyTorch FSDP HYBRID_SHARD / HSDP, torchtitan's
  /// data_parallel_replicate_degree, DeepSpeed MiCS): ZeRO or the distributed optimizer shards over
  /// dp·cp / dp_replicate consecutive data-parallel ranks, and the groups hold copies of each other's
  /// shards. 1: one shard group, the whole of DP.
  std::int64_t dp_replicate = 1;

  /// Ranks a ZeRO / distributed-optimizer shard group spans: dp·cp / dp_replicate.
  std::int64_t shard_size() const { return dp * cp / dp_replicate; }
  /// The experts' tensor-parallel degree: etp where set, tp otherwise.
  std::int64_t expert_tp() const { return etp > 0 ? etp : tp; }
  /// Expert parallelism folded over TP, CP and DP with whole experts (etp 1 where tp > 1).
  bool experts_folded() const { return ep > 1 && expert_tp() != tp; }
  /// The interleaved schedule with more than one model chunk per stage.
  bool interleaved() const { return schedule == Schedule::interleaved && virtual_stages > 1; }
};

struct OffloadSpec {
  Tier optimizer = Tier::none;
  Tier params = Tier::none;
  Tier activations = Tier::none;
  double host_buffer_factor = 1.0;
  std::int64_t prefetch_layers = 1;  ///< fetch-back distance for offloaded parameters and activations
  bool delayed_update = false;       ///< DeepSpeed's one-step delayed parameter update (DPU)
  bool gpudirect = false;            ///< GPU <-> NVMe copies by GPUDirect Storage (no host bounce)
};

struct MemorySpec {
  Recompute recompute = Recompute::none;
  /// Under full recomputation, how many blocks of each model chunk recompute (its first ones; the
  /// others keep every activation): Megatron-Core's recompute_method block. 0: every block.
  std::int64_t recompute_layers = 0;
  /// Under full recomputation with TP, each TP rank keeps 1/tp of a block's checkpointed input and the
  /// group all-gathers it before the recomputation (Megatron-LM's distribute_saved_activations).
  bool distribute_saved_activations = false;
  OffloadSpec offload;
  Bytes comm_buffer;
};

struct CheckpointSpec {
  bool enabled = false;
  std::int64_t interval_iterations = 0;
  CheckpointStrategy strategy;  ///< with the strategy's own parameters
  std::vector<Tier> tiers;
  bool sharded = true;
  bool gpudirect = false;  ///< GPU <-> local SSD hops by GPUDirect Storage (no host bounce)
};

struct FailureSpec {
  bool enabled = false;
  Seconds gpu_mtbf;
  Seconds node_mtbf;
  Seconds network_mtbf;
  Seconds restart_time;
  Seconds horizon;
  FailureDistribution distribution = FailureDistribution::exponential;
  double weibull_shape = 1.0;
  std::int64_t seed = 0;
  std::int64_t runs = 64;
};

/// Training data: each iteration the first pipeline stage reads its samples from `tier` into host
/// memory, `prefetch_iterations` batches ahead.
struct DataSpec {
  bool enabled = false;
  Tier tier = Tier::object_store;
  double sample_bytes = 0.0;
  std::int64_t requests_per_sample = 1;
  std::int64_t prefetch_iterations = 1;
};

struct Scenario {
  std::string name;
  std::string description;
  ModelSpec model;
  HardwareSpec hardware;
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;  ///< ceil(gpus / gpus_per_node)
  std::int64_t seed = 0;
  TrainingSpec training;
  ParallelismSpec parallelism;
  MemorySpec memory;
  CheckpointSpec checkpoint;
  FailureSpec failures;
  DataSpec data;

  /// Blocks PyTorch's per-op selective checkpointing (every-other-matmul) is modelled for: dense,
  /// standard attention through a flash kernel, bias-free linears (torchtitan's save list names
  /// aten.mm and SDPA's flash and efficient kernels: a biased linear is aten.addmm and eager attention
  /// is bmm and softmax, neither saved).
  bool per_op_checkpointing_blocks() const;
  /// Each rank accumulates whole gradients over the step's micro-batches before they are reduced:
  /// below ZeRO-2, or under ZeRO-2/3 with no sync before the last of several micro-batches
  /// (GradientSync::last_microbatch). The framework's grad_accumulation pass then runs.
  bool accumulates_whole_gradients() const;
  /// ... and at TP 1 or under TP with SP (torchtitan's TP: the reduce-scatters' outputs kept, the
  /// all-gathers rerun); TP without SP all-reduces, whose outputs the save list does not name.
  bool per_op_checkpointing_modelled() const {
    return per_op_checkpointing_blocks() && (parallelism.tp == 1 || parallelism.sequence_parallel);
  }

  /// Micro-batches per iteration per pipeline: global / (micro · dp).
  std::int64_t num_microbatches() const {
    return training.global_batch_size / (training.micro_batch_size * parallelism.dp);
  }
};

/// Parameter tables of each scenario section ("" is the top level), for docs.
const std::map<std::string, const ParamTable*>& scenario_param_tables();

/// Validates a composed scenario document (model and hardware already inlined). Collects every
/// error, then throws InputError.
Scenario parse_scenario(const nlohmann::json& doc, const SourceMap& sources);

}  // namespace strata
