#pragma once

/// Per-rank memory of a scenario: model states by precision and ZeRO stage, activations under the
/// recompute policy and pipeline schedule, buffers, and the offload tiers per node.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/config/scenario_spec.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

/// How activations split over a tensor-parallel group and a context-parallel group, and what
/// recomputation keeps.
struct ActivationPolicy {
  std::int64_t tp = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  /// Context parallelism gives each rank s/cp of the sequence: every activation (and the HBM traffic
  /// of the elementwise kernels) divides by cp, the s² scores of unfused attention too (s/cp query
  /// rows against s keys).
  std::int64_t cp = 1;
  /// What selective recompute keeps (the framework's implementation of it).
  SelectiveRecompute selective = SelectiveRecompute::attention_core;
  /// Full recomputation's checkpointed block inputs split over TP (memory.distribute_saved_activations).
  bool distribute_saved_inputs = false;
};

/// Whether the policy keeps a saved tensor for backward (or drops it to recompute it).
bool kept_for_backward(const SavedTensor& t, Recompute recompute);
/// The recompute policy each transformer block runs under, in model order: the scenario's, except that
/// full recomputation of `memory.recompute_layers` blocks per model chunk recomputes a chunk's first
/// blocks only and leaves its others keeping every activation (Megatron-Core's block method: the
/// count is per pipeline stage, per virtual stage when interleaved).
std::vector<Recompute> block_recompute(const Scenario& sc, const PipelinePartition& part);
/// How many blocks of a model chunk of `blocks` recompute, its first ones: all of them, or
/// memory.recompute_layers of them under full recomputation; none without recomputation.
int recomputed_blocks(const Scenario& sc, int blocks);
/// Bytes one TP (and CP) rank keeps of one saved tensor.
double rank_bytes(const SavedTensor& t, const ActivationPolicy& policy);
/// Bytes one rank keeps for the backward of a saved tensor of a block recomputed under `recompute`
/// (0 when the policy drops it): rank_bytes, a TP share of a checkpointed block input where the
/// policy distributes them.
double kept_bytes(const SavedTensor& t, const ActivationPolicy& policy, Recompute recompute);
/// Bytes one TP rank keeps for the backward pass of transformer block `layer`, one micro-batch
/// (Korthikanti et al. 2022, Table 2, generalised).
double layer_activation_bytes(const ComputeGraph& graph, int layer, const ActivationPolicy& policy);
/// Whether selective recompute runs as per-op checkpointing (every other matmul rerun).
inline bool per_op_selective(const ActivationPolicy& p) {
  return p.recompute == Recompute::selective && p.selective == SelectiveRecompute::every_other_matmul;
}
/// What per-op selective checkpointing keeps of one op of a block on one TP rank (one micro-batch):
/// the block's input, the attention kernel's output and the outputs of the block's odd-numbered
/// native matmuls (wq, wv, w1, w2 of wq, wk, wv, wo, w1, w3, w2), as torchtitan's policy saves every
/// mm but every second one. `position` counts the block's matmuls so far (start each block at 0;
/// the graph's ops come in block order). The attention kernel's logsumexp (4 bytes per head and
/// token) is left out.
double per_op_selective_bytes(const Op& op, int& position, const ActivationPolicy& policy);

/// Bytes per parameter of each model state, from the precisions and the optimizer.
struct StateBytes {
  double weights = 2.0;
  double gradients = 2.0;
  double optimizer = 12.0;
  double master = 4.0;  ///< of `optimizer`, the master copy of the weights (0 without mixed precision)
};
StateBytes state_bytes(const TrainingSpec& training);
/// HBM bytes per parameter of an Adam step on the GPU: it reads and writes its states, reads the
/// gradient and writes the compute-precision weights; where the weights are themselves the master
/// copy (fp32 training, autocast over fp32 parameters) it updates them in place, reading them too.
double adam_step_bytes(const StateBytes& states);

struct MemoryBreakdown {
  double params = 0.0;
  double gradients = 0.0;
  double optimizer = 0.0;
  double activations = 0.0;  ///< saved for backward, all micro-batches in flight
  double workspace = 0.0;    ///< transient: one layer rebuilt by recomputation (or the loss's transient), ZeRO-3 gathered weights
  double buffers = 0.0;      ///< runtime, communication buckets, fragmentation
  double total() const { return params + gradients + optimizer + activations + workspace + buffers; }
};

/// One pipeline stage's representative rank (all tp·dp ranks of a stage are alike).
struct StageMemory {
  int stage = 0;
  std::int64_t first_rank = 0;
  std::int64_t num_ranks = 0;
  double parameters = 0.0;  ///< parameters this rank holds (before ZeRO sharding)
  double expert_parameters = 0.0;  ///< the routed experts' part of `parameters` (num_experts/ep of them)
  /// The part of `parameters` in the linears that run in fp8 under fp8 (runs_in_fp8), experts included.
  double fp8_parameters = 0.0;
  /// The stage's parameters per TP rank with every expert (before EP). Sharded states divide these
  /// over dp: dense ones over dp, experts over the expert-data-parallel group of dp/ep ranks holding
  /// the same ones, and dense/dp + (experts/ep)/(dp/ep) = (dense + experts)/dp.
  double all_parameters = 0.0;
  int layers = 0;
  double microbatches_in_flight = 0.0;
  MemoryBreakdown hbm;
  /// Of hbm.workspace, what the largest op holds only while it runs (the loss's 16-bit logits and,
  /// under PyTorch's cross-entropy, their fp32 copy: Op::transient_bytes) where that exceeds
  /// recomputation's rebuild.
  double transient = 0.0;
  std::map<Tier, double> offloaded;  ///< bytes this rank keeps in each offload tier
  std::map<Tier, double> offloaded_states;  ///< the model-state part of `offloaded` (no activations)
};

struct TierUsage {
  double capacity_per_node = 0.0;
  double peak_per_node = 0.0;  ///< the most loaded node
  std::int64_t peak_node = 0;
};

struct Overflow {
  std::string device;  ///< "gpu" or "node"
  std::int64_t index = 0;  ///< rank or node
  Tier tier = Tier::hbm;
  double need = 0.0;
  double capacity = 0.0;
};

struct MemoryEstimate {
  std::vector<StageMemory> stages;
  double gpu_peak = 0.0;
  int most_loaded_stage = 0;
  std::map<Tier, TierUsage> tiers;  ///< dram, cxl, local_ssd
  std::vector<Overflow> overflows;
  bool fits = true;
};

/// Micro-batches whose activations a stage holds at its peak, as a multiple of one micro-batch of
/// all its layers. 1F1B: min(p-s, m); GPipe: m; interleaved: Megatron's warm-up count
/// (2(p-s-1) + (v-1)p + 1 chunk-micro-batches) over v chunks, which for s=0 is p(1+(p-1)/(pv)), or m
/// when m = p (every forward first)
/// (Korthikanti et al. 2022 §4.2.3).
double microbatches_in_flight(const Scenario& sc, int stage);

/// Bytes of the ring-attention receive buffers one rank holds while a layer's attention runs with
/// context parallelism: ping-pong buffers of one K/V block for forward, and for backward of one K/V
/// block and one dK/dV block (TransformerEngine's AttnFuncWithCPAndKVP2P keeps two of each); a K/V
/// block is the s/cp tokens' K and V, kv_heads·head_dim wide each, divided over TP. 0 when cp = 1.
double cp_receive_buffer_bytes(const Scenario& sc);

/// Bytes of one K/V block a rank sends per ring step: 2 (K and V) · act · b · (s/cp) · kv_width / tp.
double cp_kv_block_bytes(const Scenario& sc);

/// Capacity of a host tier on one node (DRAM, CXL, all local SSDs); 0 for others.
double tier_capacity(const HardwareSpec& hw, Tier tier);

MemoryEstimate estimate_memory(const Scenario& sc, const ComputeGraph& graph, const PipelinePartition& partition);

}  // namespace strata
