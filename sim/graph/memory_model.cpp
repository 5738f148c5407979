#include "sim/graph/memory_model.hpp"

#include "sim/graph/expert_sharding.hpp"
#include "sim/graph/kernel_costs.hpp"

#include <algorithm>

namespace strata {

bool kept_for_backward(const SavedTensor& t, Recompute recompute) {
  if (recompute == Recompute::full) return t.block_input;
  if (recompute == Recompute::selective) return !t.attention_core_only;
  return true;
}

int recomputed_blocks(const Scenario& sc, int blocks) {
  if (sc.memory.recompute == Recompute::none) return 0;
  const std::int64_t limit = sc.memory.recompute_layers;
  return limit > 0 ? static_cast<int>(std::min<std::int64_t>(limit, blocks)) : blocks;
}

std::vector<Recompute> block_recompute(const Scenario& sc, const PipelinePartition& part) {
  std::vector<Recompute> policy(static_cast<std::size_t>(sc.model.num_layers), Recompute::none);
  for (const ModelChunk& c : part.chunks)
    for (int l = c.first_layer; l < c.first_layer + recomputed_blocks(sc, c.num_layers); ++l)
      policy[static_cast<std::size_t>(l)] = sc.memory.recompute;
  return policy;
}

double rank_bytes(const SavedTensor& t, const ActivationPolicy& policy) {
  const double tp = static_cast<double>(policy.tp);
  const double bytes = t.weights ? t.bytes : t.bytes / static_cast<double>(policy.cp);
  switch (t.split) {
    case Split::tensor: return bytes / tp;
    case Split::sequence: return policy.sequence_parallel ? bytes / tp : bytes;
    case Split::replicated: return bytes;
  }
  return bytes;
}

double kept_bytes(const SavedTensor& t, const ActivationPolicy& policy, Recompute recompute) {
  if (!kept_for_backward(t, recompute)) return 0.0;
  const bool distributed = policy.distribute_saved_inputs && recompute == Recompute::full && t.block_input;
  return rank_bytes(t, policy) / (distributed ? static_cast<double>(policy.tp) : 1.0);
}

double per_op_selective_bytes(const Op& op, int& position, const ActivationPolicy& policy) {
  double kept = 0.0;
  for (const SavedTensor& t : op.saved)
    if (t.block_input) kept += rank_bytes(t, policy);
  if (op.kind == OpKind::attention_core) kept += rank_bytes({"", op.output_bytes, Split::tensor}, policy);
  double widths = 0.0;
  for (double w : op.native_matmuls) widths += w;
  // Column-parallel outputs divide over TP; a row-parallel one is the whole hidden state (partial
  // sums, before its reduction), with SP too.
  const bool row_parallel = op.kind == OpKind::attention_output || op.kind == OpKind::mlp_down;
  const Split split = row_parallel ? Split::replicated : Split::tensor;
  for (double w : op.native_matmuls)
    if (++position % 2 == 1) kept += rank_bytes({"", op.output_bytes * w / widths, split}, policy);
  // Under SP the reduce-scatter after a row-parallel linear is on torchtitan's save list: its output,
  // the rank's sequence shard, is kept whether the matmul's is or not.
  if (row_parallel && policy.tp > 1 && policy.sequence_parallel)
    kept += rank_bytes({"", op.output_bytes, Split::sequence}, policy);
  return kept;
}

double layer_activation_bytes(const ComputeGraph& graph, int layer, const ActivationPolicy& policy) {
  double total = 0.0;
  int position = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    const Op& op = graph[v];
    if (op.layer != layer) continue;
    if (per_op_selective(policy)) {
      total += per_op_selective_bytes(op, position, policy);
      continue;
    }
    for (const SavedTensor& t : op.saved) total += kept_bytes(t, policy, policy.recompute);
  }
  return total;
}

StateBytes state_bytes(const TrainingSpec& t) {
  StateBytes b;
  // The parameters' dtype: the compute precision's (Transformer Engine keeps fp8 models' weights in
  // 16-bit and casts per GEMM), or fp32 under autocast.
  b.weights = bytes_per_element(t.param_precision);
  b.gradients = bytes_per_element(t.grad_precision);
  // Mixed precision (16-bit or fp8 compute) keeps a master copy of the weights in the state precision
  // (Micikevicius et al. 2018); fp32 training, and autocast over fp32 parameters, update the weights in
  // place. Adam adds two moments, SGD with momentum one (ZeRO §3.1: K = 12 for fp32 Adam), so 16-bit
  // states halve K.
  const double state = bytes_per_element(t.state_precision);
  const bool needs_master = b.weights < bytes_per_element(Precision::fp32);
  const double moments = t.optimizer == Optimizer::adam ? 2.0 : 1.0;
  b.master = needs_master ? state : 0.0;
  b.optimizer = b.master + moments * state;
  return b;
}

double adam_step_bytes(const StateBytes& s) {
  return 2.0 * s.optimizer + s.gradients + s.weights + (s.master > 0.0 ? 0.0 : s.weights);
}

double microbatches_in_flight(const Scenario& sc, int stage) {
  const double m = static_cast<double>(sc.num_microbatches());
  const double p = static_cast<double>(sc.parallelism.pp);
  const double v = static_cast<double>(sc.parallelism.virtual_stages);
  switch (sc.parallelism.schedule) {
    case Schedule::gpipe: return m;
    case Schedule::one_f_one_b: return std::min(p - stage, m);
    case Schedule::interleaved:
      if (v > 1 && m == p) return m;  // every forward runs first (see pipeline_schedule)
      return std::min(2.0 * (p - stage - 1) + (v - 1.0) * p + 1.0, m * v) / v;
  }
  return m;
}

double cp_kv_block_bytes(const Scenario& sc) {
  const auto& tr = sc.training;
  const double act = std::max(2.0, bytes_per_element(tr.precision));
  const double tokens = static_cast<double>(tr.seq_len) / static_cast<double>(sc.parallelism.cp);
  return 2.0 * act * static_cast<double>(tr.micro_batch_size) * tokens * static_cast<double>(sc.model.kv_width()) /
         static_cast<double>(sc.parallelism.tp);
}

double cp_receive_buffer_bytes(const Scenario& sc) {
  if (sc.parallelism.cp <= 1) return 0.0;
  // Backward holds the most: two K/V blocks and two dK/dV blocks of the same size.
  return 4.0 * cp_kv_block_bytes(sc);
}

namespace {

struct StageContents {
  double params = 0.0;         // per TP rank, before ZeRO and EP
  double expert_params = 0.0;  // the routed experts' part of params
  double fp8_params = 0.0;     // the part of params in the linears that run in fp8 (runs_in_fp8)
  double held_expert_params = 0.0;  // the experts per expert-TP rank (tp, or 1 folded), before EP
  double largest_op = 0.0;     // per TP rank
  double layer_activations = 0.0;   // one micro-batch, all blocks on the stage
  double first_stage_extra = 0.0;   // embedding tensors, one micro-batch
  double last_stage_extra = 0.0;    // head and loss tensors, one micro-batch
  double transient = 0.0;           // the largest op's bytes held only while it runs
  double rebuilt = 0.0;             // the largest block rebuilt by recomputation
  double workspace = 0.0;
};

/// Everything each stage holds, in one pass over the graph (a pass per stage or per layer would
/// make deep models quadratic).
std::vector<StageContents> stage_contents(const Scenario& sc, const ComputeGraph& graph,
                                          const PipelinePartition& part) {
  const ActivationPolicy policy{sc.parallelism.tp, sc.parallelism.sequence_parallel, sc.memory.recompute,
                                sc.parallelism.cp, sc.training.behaviour.selective_recompute,
                                sc.memory.distribute_saved_activations};
  const int last = part.stages - 1;
  const int L = static_cast<int>(sc.model.num_layers);
  const bool per_op = per_op_selective(policy);
  std::vector<int> matmuls_so_far(static_cast<std::size_t>(L), 0);
  std::vector<int> stage_of(static_cast<std::size_t>(L));
  const std::vector<Recompute> recompute = block_recompute(sc, part);
  for (const auto& chunk : part.chunks)
    for (int layer = chunk.first_layer; layer < chunk.first_layer + chunk.num_layers; ++layer)
      stage_of[static_cast<std::size_t>(layer)] = chunk.stage;
  std::vector<double> kept(static_cast<std::size_t>(L), 0.0), all(static_cast<std::size_t>(L), 0.0);
  std::vector<StageContents> out(static_cast<std::size_t>(part.stages));
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    const Op& op = graph[v];
    const bool in_block = op.layer >= 0 && op.layer < L;
    const int stage = op.layer < 0 ? 0 : in_block ? stage_of[static_cast<std::size_t>(op.layer)] : last;
    StageContents& c = out[static_cast<std::size_t>(stage)];
    // A tied LM head is a second copy of the embedding only when it sits on another stage.
    if (!(op.shares_embedding && part.stages == 1)) {
      double local = op.params_split / static_cast<double>(sc.parallelism.tp) + op.params_replicated;
      c.params += local;
      if (runs_in_fp8(op.kind)) c.fp8_params += local;
      const double experts = expert_params_per_tp_rank(op, sc.parallelism.tp);
      const double held = expert_params_per_tp_rank(op, sc.parallelism.expert_tp());
      c.expert_params += experts;
      c.held_expert_params += held;
      if (sc.parallelism.ep > 1) local += held / static_cast<double>(sc.parallelism.ep) - experts;
      c.largest_op = std::max(c.largest_op, local);
    }
    c.transient = std::max(c.transient, rank_bytes({"", op.transient_bytes, op.traffic_split}, policy));
    for (const SavedTensor& t : op.saved) {
      double bytes = rank_bytes(t, policy);
      if (!in_block) {
        (op.layer < 0 ? c.first_stage_extra : c.last_stage_extra) += bytes;
        continue;
      }
      const auto layer = static_cast<std::size_t>(op.layer);
      all[layer] += bytes;
      if (!per_op) kept[layer] += kept_bytes(t, policy, recompute[layer]);
    }
    if (per_op && in_block)
      kept[static_cast<std::size_t>(op.layer)] +=
          per_op_selective_bytes(op, matmuls_so_far[static_cast<std::size_t>(op.layer)], policy);
  }
  for (int layer = 0; layer < L; ++layer) {
    StageContents& c = out[static_cast<std::size_t>(stage_of[static_cast<std::size_t>(layer)])];
    c.layer_activations += kept[static_cast<std::size_t>(layer)];
    // Recomputation rebuilds one block (full) or one attention core (selective) at a time.
    c.rebuilt =
        std::max(c.rebuilt, std::max(0.0, all[static_cast<std::size_t>(layer)] - kept[static_cast<std::size_t>(layer)]));
  }
  // A transient and a recomputation's rebuild are not held at once (the loss runs at the end of the
  // forward, recomputation before each block's backward). Under partial recomputation a chunk's
  // backward reaches its recomputed first blocks after its later blocks have freed theirs, so adding
  // the rebuild to every activation over-counts the peak by at most one rebuilt block (0.4-0.7 % on
  // Korthikanti's 175B, tests/test_executors.cpp).
  for (StageContents& c : out) c.workspace = std::max(c.rebuilt, c.transient);
  return out;
}

}  // namespace

double tier_capacity(const HardwareSpec& hw, Tier tier) {
  switch (tier) {
    case Tier::dram: return hw.host.dram.value;
    case Tier::cxl: return hw.cxl.capacity.value;
    case Tier::local_ssd: return static_cast<double>(hw.local_ssd.count) * hw.local_ssd.capacity.value;
    case Tier::none:
    case Tier::hbm:           // per GPU, not a host tier
    case Tier::object_store:  // shared, unbounded for one job
      return 0.0;
  }
  return 0.0;
}

MemoryEstimate estimate_memory(const Scenario& sc, const ComputeGraph& graph, const PipelinePartition& part) {
  const ParallelismSpec& par = sc.parallelism;
  const OffloadSpec& off = sc.memory.offload;
  // ZeRO and the distributed optimizer shard over the ranks holding the same weights: DP × CP
  // (Megatron-Core shards over its data-parallel group with context parallelism), or over a shard
  // group of them when HSDP replicates the shards (parallelism.dp_replicate).
  const double shards = static_cast<double>(par.shard_size()), ep = static_cast<double>(par.ep);
  const StateBytes bytes = state_bytes(sc.training);
  const int zero = static_cast<int>(par.zero_stage);
  const bool shard_optimizer = zero >= 1 || par.distributed_optimizer;
  const double m = static_cast<double>(sc.num_microbatches());
  // Activation offload keeps the block being computed and the `prefetch_layers` blocks fetched ahead
  // of it on the GPU (vDNN, Rhu et al. 2016, prefetches one layer ahead); the executed schedule
  // throttles copy-outs to the same number.
  const double resident_layers_when_offloaded = static_cast<double>(sc.memory.offload.prefetch_layers) + 1.0;

  MemoryEstimate est;
  const std::vector<StageContents> contents = stage_contents(sc, graph, part);
  for (int s = 0; s < part.stages; ++s) {
    const StageContents& c = contents[static_cast<std::size_t>(s)];
    StageMemory sm;
    sm.stage = s;
    sm.num_ranks = par.tp * par.cp * par.dp;
    sm.first_rank = static_cast<std::int64_t>(s) * sm.num_ranks;
    // Expert parallelism: this rank holds num_experts/ep of the experts (whole when folded, else
    // split over TP); sharded states divide the dense part over the shard group and the experts over
    // the ranks holding the same ones (Megatron-Core's expert-data-parallel group), which comes to
    // every parameter of the stage per TP rank over dp (no HSDP with EP).
    const auto rank_params = [&](const StageContents& x) {
      return par.ep == 1 ? x.params : x.params - x.expert_params + x.held_expert_params / ep;
    };
    sm.parameters = rank_params(c);
    sm.expert_parameters = c.held_expert_params / ep;
    // The experts run in fp8: their held share replaces their per-TP one as in rank_params.
    sm.fp8_parameters = par.ep == 1 ? c.fp8_params : c.fp8_params - c.expert_params + c.held_expert_params / ep;
    sm.all_parameters = c.params;
    sm.layers = part.layers_on_stage(s);
    sm.microbatches_in_flight = microbatches_in_flight(sc, s);
    const double N = sm.parameters, all = c.params;  // all / shards: a fully sharded rank's parameters

    // Model states (ZeRO §5: P_os shards optimizer states, P_g gradients, P_p parameters).
    double weights = zero >= 3 ? bytes.weights * all / shards : bytes.weights * N;
    // Without a sync before the last micro-batch (FSDP no_sync) every rank accumulates the whole
    // gradient until the step's reduce-scatter (its 1/shards result, produced layer by layer as the whole
    // is freed, is left out).
    const bool accumulates_whole = sc.accumulates_whole_gradients();
    double grads = !accumulates_whole ? bytes.gradients * all / shards : bytes.gradients * N;
    // DeepSpeed's BF16_Optimizer keeps the compute-dtype gradients it casts from (lp.grad) beside its
    // fp32 buffer (training.grad_accumulation cast-add; docs/references.md, Framework behaviour).
    if (sc.training.behaviour.grad_accumulation == GradAccumulation::cast_add && accumulates_whole)
      grads += bytes.weights * N;
    double optim = shard_optimizer ? bytes.optimizer * all / shards : bytes.optimizer * N;
    // ZeRO-3 gathers one op's full weights and produces its full gradient in the compute dtype
    // (DeepSpeed estimate_zero3_model_states_mem_needs: largest_layer_memory = 4·largest_layer_params).
    // PyTorch FSDP runs a shard group of one rank as NO_SHARD: it holds every weight already and
    // gathers nothing (docs/references.md). DeepSpeed's ZeRO-3 still gathers into a buffer of its own
    // (its estimator counts 4·largest layer on one GPU, tests/test_deepspeed_estimator.cpp).
    const bool no_shard = shards == 1.0 && off.params == Tier::none && sc.training.framework == Framework::pytorch_fsdp;
    const bool gathers = zero >= 3 && !no_shard;
    double gathered = gathers ? c.largest_op * 2.0 * bytes.weights : 0.0;
    if (off.optimizer != Tier::none) {
      // ZeRO-Offload: gradients stream to the tier as fp32 and the optimizer step runs there.
      sm.offloaded[off.optimizer] += (bytes.optimizer + bytes_per_element(Precision::fp32)) * all / shards;
      sm.offloaded_states[off.optimizer] += (bytes.optimizer + bytes_per_element(Precision::fp32)) * all / shards;
      optim = 0.0;
      // With sharded gradients (ZeRO-2/3) each bucket leaves as soon as it is reduced; below that the
      // full 16-bit gradients stay until the step.
      if (zero >= 2) grads = 0.0;
    }
    if (sc.checkpoint.enabled && behaviour(sc.checkpoint.strategy).optimizer_on_ssd) {
      // Computational SSDs hold the optimizer states (fp32 master and moments) and receive the 16-bit
      // gradients; the step runs there (SK hynix's checkpoint-offload design, FMS 2025;
      // docs/references.md, Near-storage optimizer step).
      const double on_ssd =
          (bytes.optimizer + bytes.weights) * (shard_optimizer ? all : N) / (shard_optimizer ? shards : 1.0);
      sm.offloaded[Tier::local_ssd] += on_ssd;
      sm.offloaded_states[Tier::local_ssd] += on_ssd;
      optim = 0.0;
    }
    if (off.params != Tier::none) {
      sm.offloaded[off.params] += bytes.weights * all / shards;
      sm.offloaded_states[off.params] += bytes.weights * all / shards;
      weights = 0.0;
    }
    if (sc.checkpoint.enabled && behaviour(sc.checkpoint.strategy).replicates_next_stage && part.stages > 1) {
      // Bamboo: the stage also holds the next stage's weights and optimizer states (its replica).
      const StageContents& next = contents[static_cast<std::size_t>((s + 1) % part.stages)];
      weights += bytes.weights * (zero >= 3 ? next.params : rank_params(next)) / (zero >= 3 ? shards : 1.0);
      optim += bytes.optimizer * (shard_optimizer ? next.params : rank_params(next)) / (shard_optimizer ? shards : 1.0);
    }
    sm.hbm.params = weights;
    sm.hbm.gradients = grads;
    sm.hbm.optimizer = optim;

    // Activations of every micro-batch in flight; the embedding's for as many, the head's for one
    // (the last stage runs each micro-batch's backward right after its forward) unless GPipe.
    double in_flight = sm.microbatches_in_flight;
    double head_in_flight = par.schedule == Schedule::gpipe ? m : 1.0;
    double acts = in_flight * c.layer_activations + in_flight * c.first_stage_extra +
                  head_in_flight * c.last_stage_extra;
    if (off.activations != Tier::none && sm.layers > 0) {
      double per_layer = c.layer_activations / sm.layers;
      double resident = std::min(acts, resident_layers_when_offloaded * per_layer);
      sm.offloaded[off.activations] += acts - resident;
      acts = resident;
    }
    sm.hbm.activations = acts;
    sm.hbm.workspace = c.workspace + gathered + (sm.layers > 0 ? cp_receive_buffer_bytes(sc) : 0.0);
    sm.transient = std::max(0.0, c.transient - c.rebuilt);
    double allocated = sm.hbm.params + sm.hbm.gradients + sm.hbm.optimizer + sm.hbm.activations + sm.hbm.workspace;
    sm.hbm.buffers = sc.hardware.overheads.runtime_reserved.value + (par.dp * par.cp > 1 ? sc.memory.comm_buffer.value : 0.0) +
                     sc.hardware.overheads.fragmentation * allocated;
    est.stages.push_back(sm);
  }

  // Peak HBM and overflows per stage.
  for (const auto& sm : est.stages) {
    if (sm.hbm.total() > est.gpu_peak) {
      est.gpu_peak = sm.hbm.total();
      est.most_loaded_stage = sm.stage;
    }
    if (sm.hbm.total() > sc.hardware.gpu.hbm.value)
      est.overflows.push_back({"gpu", sm.first_rank, Tier::hbm, sm.hbm.total(), sc.hardware.gpu.hbm.value});
  }

  // Offload tiers per node: ranks are numbered tp fastest, then cp, dp, pp (Megatron's order), and
  // fill nodes in rank order. Pinned host buffers scale DRAM and CXL use.
  const std::int64_t per_stage = par.tp * par.cp * par.dp;
  const std::int64_t gpn = sc.hardware.gpus_per_node;
  for (Tier tier : {Tier::dram, Tier::cxl, Tier::local_ssd}) {
    TierUsage u;
    u.capacity_per_node = tier_capacity(sc.hardware, tier);
    const double factor = tier == Tier::local_ssd ? 1.0 : off.host_buffer_factor;
    for (std::int64_t node = 0; node < sc.nodes; ++node) {
      double used = 0.0;
      std::int64_t end = std::min(sc.gpus, (node + 1) * gpn);
      for (std::int64_t rank = node * gpn; rank < end;) {
        const auto& sm = est.stages[static_cast<std::size_t>(rank / per_stage)];
        std::int64_t stage_end = std::min(end, (rank / per_stage + 1) * per_stage);
        auto it = sm.offloaded.find(tier);
        if (it != sm.offloaded.end()) used += static_cast<double>(stage_end - rank) * it->second * factor;
        rank = stage_end;
      }
      if (used > u.peak_per_node) {
        u.peak_per_node = used;
        u.peak_node = node;
      }
    }
    if (u.peak_per_node > u.capacity_per_node)
      est.overflows.push_back({"node", u.peak_node, tier, u.peak_per_node, u.capacity_per_node});
    est.tiers[tier] = u;
  }
  est.fits = est.overflows.empty();
  return est;
}

}  // namespace strata
