#include "sim/dag/layer_work.hpp"

#include <algorithm>
#include <optional>

#include "sim/graph/expert_sharding.hpp"
#include "sim/graph/kernel_costs.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

namespace {

/// One CP rank's share of an op: its GEMMs on s/cp tokens (the M dimension; unfused attention's
/// score GEMMs have s/cp query rows against every key).
Op rank_share(const Op& op, std::int64_t cp) {
  Op out = op;
  for (GemmShape& g : out.gemms) g.m /= static_cast<double>(cp);
  out.fused_attention.reset();  // the ring steps time it
  return out;
}

struct RingSteps {
  OpSeconds diag, step;
  double diag_flops = 0.0, step_flops = 0.0;
};

/// The fused attention of one CP rank as ring steps (Megatron-Core / TransformerEngine ring
/// attention with causal load balancing: the sequence in 2·cp chunks, rank i holding chunks i and
/// 2cp−1−i). The diagonal step is the rank's queries against its own keys, an (s/cp)² causal block;
/// every other step is half a block unmasked: either both query chunks against the first key chunk
/// or the second query chunk against both key chunks, (s/cp)·(s/2cp). `rest`: with fused attention
/// the op's elementwise kernels, which run with the diagonal step; unfused, the rank's whole
/// attention (its score GEMMs on s/cp query rows).
RingSteps ring_steps_seconds(const Op& op, const KernelCosts& kernels, double tp, std::int64_t cp,
                             const OpSeconds& rest) {
  RingSteps r;
  const double c = static_cast<double>(cp);
  if (!op.fused_attention) {
    // Unfused attention: no kernel shape; the rank's work splits over the steps in proportion
    // (diagonal half a block, the others half a block each), which is cp equal shares.
    r.diag = {rest.forward / c, rest.backward / c};
    r.step = r.diag;
    r.diag_flops = r.step_flops = op.forward_flops / tp / c / c;
    return r;
  }
  AttentionShape a = *op.fused_attention;
  a.heads /= tp;
  const double q = a.queries / c;
  AttentionShape diag = a;
  diag.queries = q;
  diag.keys = std::min(a.keys, q);  // a sliding window shorter than the block bounds it
  diag.causal = true;
  AttentionShape step = a;
  step.queries = q;
  step.keys = std::min(a.keys, q / 2.0);
  step.causal = false;
  r.diag = kernels.attention_seconds(diag);
  r.step = kernels.attention_seconds(step);
  r.diag.forward += rest.forward;
  r.diag.backward += rest.backward;
  // The steps do equal work (the diagonal's mask hides half its block), so each carries 1/cp of
  // the rank's model FLOPs.
  r.diag_flops = r.step_flops = op.forward_flops / tp / c / c;
  return r;
}

}  // namespace

double hidden_state_bytes(const Scenario& sc) {
  const auto& tr = sc.training;
  const double act_bytes = std::max(2.0, bytes_per_element(tr.precision));
  // Each CP rank holds s/cp of the sequence: its TP collectives and pipeline sends carry that share.
  return act_bytes * static_cast<double>(tr.seq_len * tr.micro_batch_size * sc.model.hidden_size) /
         static_cast<double>(sc.parallelism.cp);
}

double gathered_input_bytes(const Scenario& sc) {
  if (!sc.parallelism.sequence_parallel || sc.training.precision != Precision::fp8) return hidden_state_bytes(sc);
  // hidden_state_bytes counts fp8 training's activations between its GEMMs in 16 bits.
  return hidden_state_bytes(sc) * bytes_per_element(Precision::fp8) / 2.0;
}

double gathered_output_gradient_bytes(const Scenario& sc) {
  if (!sc.training.behaviour.fp8_gathers_output_gradients) return hidden_state_bytes(sc);
  return gathered_input_bytes(sc);
}

namespace {

/// Autocast over fp32 parameters (TrainingSpec::autocast): each matmul reads its weight through a cast
/// to the compute precision every forward (read the parameter, write the cast), and the cast's
/// backward turns the weight gradient back into the parameters' dtype (read, write); per TP rank.
OpBytes autocast_weight_casts(const TrainingSpec& training, const Op& op, double tp) {
  if (!training.autocast() || op.gemms.empty()) return {};
  const double elements = op.params_split / tp + op.params_replicated;
  const double per_element = bytes_per_element(training.param_precision) + bytes_per_element(training.precision);
  return {elements * per_element, elements * per_element};
}

}  // namespace

std::vector<LayerWork> layer_work(const Scenario& sc, const ComputeGraph& graph, EndsWork ends,
                                  const std::vector<Recompute>& block_policy) {
  const int L = static_cast<int>(sc.model.num_layers);
  const double t = static_cast<double>(sc.parallelism.tp);
  const bool sp = sc.parallelism.sequence_parallel;
  const std::int64_t cp = sc.parallelism.cp;
  const ActivationPolicy policy{sc.parallelism.tp, sp, sc.memory.recompute, cp,
                                sc.training.behaviour.selective_recompute, sc.memory.distribute_saved_activations};
  const bool per_op = per_op_selective(policy);
  const FrameworkBehaviour& behaviour = sc.training.behaviour;
  const bool dtensor = sp && behaviour.sequence_parallel_style == SequenceParallelStyle::dtensor;
  // Megatron's sequence-parallel linears re-gather their sharded input for the weight gradient.
  const bool regathers = sp && !dtensor;
  std::vector<int> matmuls_so_far(static_cast<std::size_t>(L), 0);
  const KernelCosts kernels(sc.hardware, sc.training.precision, sc.training.behaviour);
  const bool apart = ends == EndsWork::apart;
  std::vector<LayerWork> work(static_cast<std::size_t>(apart ? L + 2 : L));
  // Each block's policy; the embedding's and the head's entries recompute nothing.
  for (int l = 0; l < L; ++l)
    work[static_cast<std::size_t>(l)].recompute =
        block_policy.empty() ? sc.memory.recompute : block_policy[static_cast<std::size_t>(l)];
  std::vector<bool> past_core(static_cast<std::size_t>(L), false);  // vertices come in insertion order
  // Ops holding weights, per entry: each launches the accumulation pass's kernels once (a biased op's
  // bias is a second hooked tensor, a few microseconds not counted).
  std::vector<double> weight_ops(work.size(), 0.0);
  const std::int64_t ep = sc.parallelism.ep;
  const double pace = sc.training.moe.pace_factor();
  // The routed experts' TP degree: tp, or 1 folded (whole experts on a rank).
  const double etp = static_cast<double>(sc.parallelism.expert_tp());
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    const Op& whole = graph[v];
    const Op& graph_op = whole;
    // Context parallelism: each rank's GEMMs run on s/cp tokens (the M dimension); its attention
    // runs as ring steps, timed below. Expert parallelism then gives the rank its experts, each
    // seeing the tokens the whole EP group routes to it.
    std::optional<Op> share;
    if (cp > 1) share = rank_share(graph_op, cp);
    const Op op = expert_shard(share ? *share : graph_op, ep, pace, sc.parallelism.tp, sc.parallelism.expert_tp());
    // The routed experts split over their expert TP group (tp, or 1 folded), every other op over TP.
    const double op_tp = op.kind == OpKind::experts ? etp : t;
    const bool in_block = op.layer >= 0 && op.layer < L;
    const int entry = in_block || !apart ? std::clamp(op.layer, 0, L - 1)
                                         : op.layer < 0 ? embedding_unit(L) : head_unit(L);
    LayerWork& w = work[static_cast<std::size_t>(entry)];
    // The router and the latent-attention down-projections are replicated over TP (divided only by
    // sequence parallelism); every other GEMM is split over the TP group (Megatron column/row-parallel
    // linears, vocab-parallel head). Under CP each rank has s/cp of the tokens.
    const double flops_div = (op.tp_replicated ? (sp ? t : 1.0) : t) * static_cast<double>(cp);
    const double traffic = rank_bytes({"", op.memory_traffic, op.traffic_split}, policy);
    const double backward_traffic = op.backward_memory_traffic
                                        ? rank_bytes({"", *op.backward_memory_traffic, op.traffic_split}, policy)
                                        : kBackwardTrafficFactor * traffic;
    // fp8 training's quantization passes (op_seconds times them itself) and autocast's weight casts,
    // each a kernel per weight (timed below).
    const OpBytes casts = autocast_weight_casts(sc.training, op, op_tp);
    OpBytes quantization = kernels.quantization_traffic(op, op_tp);
    quantization.forward += casts.forward;
    quantization.backward += casts.backward;
    w.fwd_flops += op.forward_flops / flops_div;
    w.bwd_flops += op.backward_flops / flops_div;
    w.fwd_bytes += traffic + quantization.forward;
    w.transient = std::max(w.transient, rank_bytes({"", op.transient_bytes, op.traffic_split}, policy));
    w.bwd_bytes += backward_traffic + quantization.backward;
    OpSeconds sec = kernels.op_seconds(op, op_tp, traffic, backward_traffic);
    const double cast_kernels = casts.forward > 0.0 ? static_cast<double>(op.gemms.size()) : 0.0;
    sec.forward += kernels.memory_seconds(casts.forward, cast_kernels);
    sec.backward += kernels.memory_seconds(casts.backward, cast_kernels);
    if (cp > 1 && in_block && op.kind == OpKind::attention_core) {
      const OpSeconds rest = graph_op.fused_attention
                                 ? OpSeconds{kernels.memory_seconds(traffic, 1.0),
                                             kernels.memory_seconds(backward_traffic, 1.0)}
                                 : sec;
      const RingSteps steps = ring_steps_seconds(graph_op, kernels, t, cp, rest);
      w.cp.diag_flops = steps.diag_flops;
      w.cp.step_flops = steps.step_flops;
      w.cp.diag_fwd_s = steps.diag.forward;
      w.cp.diag_bwd_s = steps.diag.backward;
      w.cp.step_fwd_s = steps.step.forward;
      w.cp.step_bwd_s = steps.step.backward;
      w.cp.core_bwd_flops = op.backward_flops / flops_div;
      w.cp.core_bwd_bytes = backward_traffic;
      sec = {steps.diag.forward + static_cast<double>(cp - 1) * steps.step.forward,
             steps.diag.backward + static_cast<double>(cp - 1) * steps.step.backward};
      past_core[static_cast<std::size_t>(op.layer)] = true;
    } else if (cp > 1 && in_block && !past_core[static_cast<std::size_t>(op.layer)]) {
      w.cp.pre_flops += op.forward_flops / flops_div;
      w.cp.pre_bytes += traffic + quantization.forward;
      w.cp.pre_fwd_s += sec.forward;
      w.cp.pre_bwd_s += sec.backward;
      w.cp.pre_bwd_flops += op.backward_flops / flops_div;
      w.cp.pre_bwd_bytes += backward_traffic + quantization.backward;
    }
    w.fwd_s += sec.forward;
    w.bwd_s += sec.backward;
    // The column-parallel linears (QKV, MLP up): their backward is an input-gradient and a
    // weight-gradient GEMM of equal FLOPs. Megatron overlaps the input-gradient all-reduce with the
    // weight gradient; with SP the input re-gather with the input gradient and the reduce-scatter
    // with the weight gradient (megatron/mpu/layers.py, docs/references.md). Without the re-gather
    // (DTensor's SP) only the weight gradient hides.
    if (in_block && !op.tp_replicated && (op.kind == OpKind::qkv_projection || op.kind == OpKind::mlp_up))
      w.tp_bwd_hiding_s += regathers ? sec.backward : 0.5 * sec.backward;
    if (op.kind == OpKind::attention_core) {
      w.core_flops += op.forward_flops / flops_div;
      w.core_bytes += traffic;
      w.core_s += sec.forward;
    }
    if (in_block) {
      w.block_flops += op.forward_flops / flops_div;
      w.block_bytes += traffic + quantization.forward;
      w.block_s += sec.forward;
    }
    // How many of its block's native matmuls come before the op's first (per-op selective).
    int matmuls_before = 0;
    if (in_block && per_op) {
      int& so_far = matmuls_so_far[static_cast<std::size_t>(op.layer)];
      matmuls_before = so_far;
      so_far += static_cast<int>(op.native_matmuls.size());
      // Per-op selective checkpointing reruns every elementwise op of the block and its
      // even-numbered native matmuls (each a share of its op's GEMM by output width); the attention
      // kernel's output is kept.
      double widths = 0.0, rerun = 0.0;
      int position = matmuls_before;
      for (double width : op.native_matmuls) {
        widths += width;
        if (++position % 2 == 0) rerun += width;
      }
      const double share = widths > 0.0 ? rerun / widths : 0.0;
      if (op.kind != OpKind::attention_core) {
        w.rerun_flops += share * op.forward_flops / flops_div;
        // The rerun matmuls' fp8 casts run again with them, not current scaling's amax passes.
        w.rerun_bytes += traffic + share * kernels.rerun_quantization_bytes(op, t);
        w.rerun_s += share * kernels.rerun_forward_seconds(op, t) + kernels.memory_seconds(traffic, 1.0);
      }
      // Autocast's weight casts are not on the save list: every matmul's is made again before its
      // backward, the kept matmuls' too (their input gradient reads the 16-bit weight).
      w.rerun_bytes += casts.forward;
      w.rerun_s += kernels.memory_seconds(casts.forward, cast_kernels);
    }
    if (!(op.shares_embedding && sc.parallelism.pp == 1)) {
      w.params += op.params_split / op_tp + op.params_replicated;
      if (runs_in_fp8(op.kind)) w.fp8_params += op.params_split / op_tp + op.params_replicated;
      if (op.params() > 0.0) weight_ops[static_cast<std::size_t>(entry)] += 1.0;
    }
    // Per TP rank even for folded experts: whole experts on tp× fewer ranks each shard the same
    // over their tp× larger expert-data-parallel group, so all_params / (dp·cp) is still a rank's
    // shard.
    if (!(whole.shares_embedding && sc.parallelism.pp == 1))
      w.all_params += whole.params_split / t + whole.params_replicated;
    w.expert_params += expert_params_per_tp_rank(op, sc.parallelism.expert_tp());
    // Recomputation reruns transformer blocks only: the embedding's and the head's tensors stay.
    // Per-op selective checkpointing keeps tensors of its own (per_op_selective_bytes): the block's
    // others are rebuilt.
    for (const SavedTensor& s : op.saved) {
      const double bytes = rank_bytes(s, policy);
      const double kept = !in_block ? bytes : per_op ? 0.0 : kept_bytes(s, policy, w.recompute);
      w.saved += kept;
      w.rebuilt += bytes - kept;
      // A distributed checkpointed input is gathered whole before the recomputation.
      if (in_block && kept > 0.0 && kept < bytes) w.tp_saved_input_bytes += bytes;
    }
    if (in_block && per_op) {
      int position = matmuls_before;
      const double kept = per_op_selective_bytes(op, position, policy);
      w.saved += kept;
      w.rebuilt -= kept;
    }
  }
  for (LayerWork& w : work) w.rebuilt = std::max(0.0, w.rebuilt);
  // Gradient accumulation by a pass of its own (FrameworkBehaviour::grad_accumulation): every
  // micro-batch, each weight's gradient is added into the buffer the step reduces right after its
  // backward, a memory-bound kernel per weight on the compute stream. Under ZeRO-2/3 each
  // micro-batch's gradients are reduce-scattered instead (sim/dag/data_parallel_emitter).
  // Under ZeRO-2/3 without a sync before the last micro-batch the whole gradient accumulates as below
  // ZeRO-2 (Scenario::accumulates_whole_gradients).
  const GradAccumulation accumulation = sc.training.behaviour.grad_accumulation;
  if (accumulation != GradAccumulation::none && sc.accumulates_whole_gradients()) {
    // Weight gradients come out of the GEMMs in 16 bits at least (fp8 GEMMs write bf16 gradients);
    // under autocast the cast's backward has already made them fp32.
    const double produced = sc.training.autocast() ? bytes_per_element(sc.training.param_precision)
                                                   : std::max(2.0, bytes_per_element(sc.training.precision));
    const double per_param = accumulation_bytes_per_parameter(
        accumulation, produced, std::max(2.0, bytes_per_element(sc.training.grad_precision)));
    for (std::size_t e = 0; e < work.size(); ++e) {
      const double bytes = work[e].params * per_param;
      work[e].bwd_bytes += bytes;
      work[e].bwd_s += kernels.memory_seconds(bytes, weight_ops[e] * accumulation_kernels_per_weight(accumulation));
    }
  }
  // Megatron, in all-reduce equivalents of the hidden-state buffer: forward, one after each of the
  // attention and MLP row-parallel projections (with SP an all-gather before and a reduce-scatter
  // after each sub-block: the same volume). Backward without SP, the two input-gradient
  // all-reduces; with SP, Megatron's sequence-parallel linears also re-gather their sharded input
  // for the weight gradient, three all-reduce equivalents (which is why SP saves 0.5 ms of forward
  // but only 0.1 ms of backward per layer in Korthikanti et al. 2022 Table 4); DTensor's keep the
  // gathered input and have two (SequenceParallelStyle). Plus one for the
  // vocab-parallel embedding's output and one for the LM head's input gradient. They block the
  // compute stream, as the collectives of the paper's Megatron did.
  //
  // Folded expert parallelism (expert TP 1) leaves an MoE block without shared experts only the
  // attention sub-block's: each rank dispatches its own sequence shard to whole experts and gets
  // its tokens back, no TP gather or scatter around them (Megatron-Core's alltoall dispatcher with
  // expert_tensor_parallel_size 1). Its SP backward's one and a half is counted as two.
  //
  // Their volume: under fp8 with SP the column-parallel linears' inputs are gathered as fp8, 1 byte
  // an element (gathered_input_bytes), the forward's, the recomputation's and Megatron's re-gathers
  // alike; so are the row-parallel linears' output gradients in the backward where the framework's
  // linears quantize them first (Transformer Engine; gathered_output_gradient_bytes). Reduce-scatters
  // stay in 16 bits, and so do an MoE sub-block's tokens and their gradients (Megatron-Core's token
  // dispatcher gathers them before any fp8 cast).
  const double hidden = hidden_state_bytes(sc), gathered = gathered_input_bytes(sc),
               gradient_gathered = gathered_output_gradient_bytes(sc);
  const bool folded_moe = sc.parallelism.experts_folded() && sc.model.num_shared_experts == 0;
  for (int l = 0; l < L; ++l) {
    LayerWork& w = work[static_cast<std::size_t>(l)];
    const bool moe = w.expert_params > 0.0;
    const bool attention_only = folded_moe && moe;
    w.tp_block = attention_only ? 1 : kBlockCollectives;
    // Sub-blocks whose gather is a linear's input: all but an MoE block's expert sub-block.
    const int linear_gathers = moe ? 1 : w.tp_block;
    w.tp_gather_bytes = (linear_gathers * gathered + (w.tp_block - linear_gathers) * hidden) / w.tp_block;
    // An all-gather of an input and a reduce-scatter of an output (without SP, an all-reduce).
    const double pair = 0.5 * (w.tp_gather_bytes + hidden);
    w.tp_fwd = w.tp_block;
    w.tp_block_bytes = w.tp_block * pair;
    w.tp_fwd_bytes = w.tp_block_bytes;
    w.tp_rerun_gathers = w.tp_block;  // one all-gather before each sub-block's column-parallel linears
    w.tp_bwd = w.tp_block + (regathers ? 1 : 0);
    // The input gradients' reduce-scatters and the output gradients' all-gathers (without SP the
    // input gradients' all-reduces), and the re-gathers of the inputs.
    const double gradient_gather =
        (linear_gathers * gradient_gathered + (w.tp_block - linear_gathers) * hidden) / w.tp_block;
    w.tp_bwd_bytes = w.tp_block * 0.5 * (hidden + gradient_gather) + (regathers ? w.tp_gather_bytes : 0.0);
    // The all-reduces (with SP the gathers and scatters) beside the column-parallel linears: with
    // Megatron's re-gathers, each sub-block's input re-gather and input-gradient reduce-scatter;
    // otherwise every backward collective.
    w.tp_bwd_async = w.tp_block;
    w.tp_bwd_async_bytes = regathers ? w.tp_bwd_async * pair : w.tp_bwd_bytes;
  }
  // Expert parallelism: the router's tokens go to their experts' ranks and come back, one all-to-all
  // each way forward, and their gradients the same way backward (Megatron-Core's alltoall token
  // dispatcher). Under SP each TP rank dispatches its own sequence shard, under CP its s/cp tokens.
  if (ep > 1) {
    const double act_bytes = std::max(2.0, bytes_per_element(sc.training.precision));
    const double tokens = static_cast<double>(sc.training.seq_len * sc.training.micro_batch_size) /
                          (sp ? t : 1.0) / static_cast<double>(cp);
    for (auto& w : work) {
      if (w.expert_params <= 0.0) continue;
      w.ep_fwd = w.ep_bwd = 2;
      w.ep_bytes = tokens * static_cast<double>(sc.model.experts_per_token) *
                   static_cast<double>(sc.model.hidden_size) * act_bytes * pace;
    }
  }
  LayerWork& embedding = work[static_cast<std::size_t>(apart ? embedding_unit(L) : 0)];
  embedding.tp_fwd += 1;
  embedding.tp_fwd_bytes += hidden;
  LayerWork& head = work[static_cast<std::size_t>(apart ? head_unit(L) : L - 1)];
  head.tp_bwd += 1;
  head.tp_bwd_bytes += hidden;
  // DTensor's sequence-parallel collectives with a batch above 1 (SequenceParallelStyle::dtensor):
  // NCCL gathers along dim 0, so each all-gather's result is copied into [batch, sequence, hidden]
  // order and each reduce-scatter's input out of it, one pass over the buffer it moved (read and
  // write) on the compute stream, two per all-reduce equivalent (an all-reduce equivalent's volume
  // counts each of its buffers half: 4 bytes copied per byte of volume). Async TP's fused matmuls
  // read and write the forward's and full recomputation's shards in place: those need no layout
  // copy (their own passes are below). The embedding's reduce-scatter (no matmul to fuse with), the
  // backward's collectives and per-op checkpointing's rerun all-gathers are not fused (they block),
  // and userbuffers pipeline collectives without changing the layout: they copy.
  const bool fused = behaviour.overlap_tp_comm && behaviour.tp_overlap_method == TpOverlapMethod::async_tp;
  if (dtensor && t > 1.0 && sc.training.micro_batch_size > 1) {
    const auto add = [&](double& bytes, double& seconds, double copied, int copies) {
      bytes += copied;
      seconds += kernels.memory_seconds(copied, copies);
    };
    for (std::size_t e = 0; e < work.size(); ++e) {
      LayerWork& w = work[e];
      const bool block = e < static_cast<std::size_t>(L);
      if (fused) add(w.fwd_bytes, w.fwd_s, 4.0 * (w.tp_fwd_bytes - w.tp_block_bytes), 2 * (w.tp_fwd - w.tp_block));
      else add(w.fwd_bytes, w.fwd_s, 4.0 * w.tp_fwd_bytes, 2 * w.tp_fwd);
      // What full recomputation reruns: the block's forward with its collectives (tp_block).
      if (!fused && block) add(w.block_bytes, w.block_s, 4.0 * w.tp_block_bytes, 2 * w.tp_block);
      add(w.bwd_bytes, w.bwd_s, 4.0 * w.tp_bwd_bytes, 2 * w.tp_bwd);
      add(w.rerun_bytes, w.rerun_s, 2.0 * w.tp_rerun_gathers * w.tp_gather_bytes, w.tp_rerun_gathers);
    }
  }
  // Async TP's fused ops pass over memory of their own on the compute stream, whatever the layout
  // (pytorch/pytorch torch/distributed/_symmetric_memory/__init__.py): the all-gather-matmul first
  // copies the rank's shard into its symmetric-memory buffer, before its first matmul (the "mv" it
  // does not overlap); the matmul-reduce-scatter pulls every rank's partial output and sums them in
  // one kernel after the last (reduce_partials), reading the whole hidden-state buffer and writing a
  // shard. One of each per all-reduce equivalent of a block's forward and of full recomputation's
  // rerun (the embedding's collective is not fused). The all-gather's copy of the shard into its own
  // output runs beside the last matmul: not charged.
  if (fused && t > 1.0) {
    for (int l = 0; l < L; ++l) {
      LayerWork& w = work[static_cast<std::size_t>(l)];
      const double shard_copy = 2.0 * w.tp_gather_bytes / t, partial_sum = hidden * (1.0 + 1.0 / t);
      const double bytes = w.tp_block * (shard_copy + partial_sum);
      const double seconds =
          w.tp_block * (kernels.memory_seconds(shard_copy, 1.0) + kernels.memory_seconds(partial_sum, 1.0));
      w.fwd_bytes += bytes;
      w.fwd_s += seconds;
      w.block_bytes += bytes;
      w.block_s += seconds;
    }
  }
  return work;
}

RerunWork rerun_work(const LayerWork& w, Recompute recompute, SelectiveRecompute selective) {
  switch (recompute) {
    case Recompute::none: return {};
    case Recompute::full: return {w.block_flops, w.block_bytes, w.block_s};
    case Recompute::selective:
      switch (selective) {
        case SelectiveRecompute::attention_core: return {w.core_flops, w.core_bytes, w.core_s};
        case SelectiveRecompute::every_other_matmul:
          return {w.rerun_flops, w.rerun_bytes, w.rerun_s, w.tp_rerun_gathers, w.tp_rerun_gathers * w.tp_gather_bytes};
      }
  }
  return {};
}

std::vector<int> chunk_work_units(const PipelinePartition& part, int chunk, const std::vector<LayerWork>& work) {
  const ModelChunk& c = part.chunks[static_cast<std::size_t>(chunk)];
  const ModelChunk& tail = part.chunks.back();
  const int blocks = tail.first_layer + tail.num_layers;
  const bool apart = work.size() > static_cast<std::size_t>(blocks);
  std::vector<int> units;
  if (apart && chunk == 0) units.push_back(embedding_unit(blocks));
  for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l) units.push_back(l);
  if (apart && chunk + 1 == static_cast<int>(part.chunks.size())) units.push_back(head_unit(blocks));
  return units;
}

}  // namespace strata
