#include "sim/dag/training_dag.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/config/checkpoint_policy.hpp"
#include "sim/dag/checkpoint_emitter.hpp"
#include "sim/dag/collectives.hpp"
#include "sim/dag/context_parallel_emitter.hpp"
#include "sim/dag/dag_context.hpp"
#include "sim/dag/expert_parallel_emitter.hpp"
#include "sim/dag/data_loading_emitter.hpp"
#include "sim/dag/data_parallel_emitter.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/offload_emitter.hpp"
#include "sim/dag/optimizer_emitter.hpp"
#include "sim/dag/pipeline_emitter.hpp"
#include "sim/dag/pipeline_schedule.hpp"
#include "sim/dag/recompute_emitter.hpp"
#include "sim/dag/redundant_compute_emitter.hpp"
#include "sim/dag/tensor_parallel_emitter.hpp"

namespace strata {

RankLayout rank_layout(const Scenario& sc) {
  return {sc.parallelism.tp, sc.parallelism.pp, sc.parallelism.dp, sc.hardware.gpus_per_node, sc.parallelism.cp,
          sc.parallelism.ep, sc.parallelism.experts_folded(), switch_all_reduce_from(sc.hardware),
          sc.parallelism.dp_replicate};
}

namespace {

/// What the data-parallel emitter needs of the scenario.
DataParallelPlan data_parallel_plan(const Scenario& sc) {
  // Without the framework's prefetch (training.overlap_param_gather) a ZeRO-3 gather waits for the
  // compute before it: none runs ahead; below ZeRO-3 the updated weights are gathered after the step.
  // Megatron-Core aligns the gathers to model chunks only in the interleaved schedule.
  const FrameworkBehaviour& b = sc.training.behaviour;
  const UpdatedGather updated = !b.overlap_param_gather                              ? UpdatedGather::after_step
                                : sc.parallelism.interleaved() && b.align_param_gather ? UpdatedGather::issued_at_step
                                                                                       : UpdatedGather::paced_by_forward;
  return {.zero_stage = sc.parallelism.zero_stage,
          .distributed_optimizer = sc.parallelism.distributed_optimizer,
          .prefetch_layers = b.overlap_param_gather ? sc.memory.offload.prefetch_layers : 0,
          .updated_gather = updated,
          .params_tier = sc.memory.offload.params,
          .states = state_bytes(sc.training),
          .fp8_param_gather = b.fp8_param_gather};
}

/// The framework's TP overlap on this GPU: one slice per TP rank, the passes its method pipelines, and
/// under userbuffers the GEMMs on the SMs the communication kernels leave (without kernel tables the
/// SM count is unknown and nothing slows).
TpOverlap tp_overlap(const Scenario& sc) {
  const FrameworkBehaviour& b = sc.training.behaviour;
  TpOverlap o;
  o.enabled = b.overlap_tp_comm;
  o.chunks = static_cast<int>(sc.parallelism.tp);
  o.backward = overlaps_tp_backward(b);
  o.per_op_rerun = overlaps_tp_backward(b);
  // Async TP moves its slices with copy engines: no SMs are taken from the GEMMs.
  const bool holds_sms = b.tp_overlap_method == TpOverlapMethod::userbuffers;
  const double sms = static_cast<double>(sc.hardware.kernels.sm_count);
  if (holds_sms && sc.hardware.kernels.present && sms > kTpOverlapCost.forward_sms) {
    o.forward_stretch = sms / (sms - kTpOverlapCost.forward_sms);
    o.backward_stretch = sms / (sms - kTpOverlapCost.backward_sms);
  }
  return o;
}

/// What the context-parallel emitter needs of the scenario.
ContextParallelPlan context_parallel_plan(const Scenario& sc) {
  return {sc.parallelism.cp, cp_kv_block_bytes(sc), cp_receive_buffer_bytes(sc)};
}

/// The schedule driver: walks each iteration's pipeline schedule unit by unit, emits each layer's
/// forward and backward compute, and asks the policy emitters for everything around it, always in
/// the same order (executors run each stream in insertion order, so the order is the schedule).
class DagBuilder {
 public:
  DagBuilder(const Scenario& sc, const ComputeGraph& graph, const PipelinePartition& part, const MemoryEstimate& mem,
             const DagOptions& opt)
      : sc_(sc), part_(part), mem_(mem),
        work_(layer_work(sc, graph, part.ends_apart() ? EndsWork::apart : EndsWork::folded,
                         block_recompute(sc, part))),
        options_(opt),
        states_(state_bytes(sc.training)), checkpoint_(behaviour(sc.checkpoint.strategy)),
        near_storage_(sc.checkpoint.enabled && checkpoint_.optimizer_on_ssd),
        redundant_(sc.checkpoint.enabled && checkpoint_.replicates_next_stage),
        m_(static_cast<int>(sc.num_microbatches())), hidden_bytes_(hidden_state_bytes(sc)),
        ctx_(rank_layout(sc), opt.fold, part.stages, sc.memory.offload.gpudirect),
        pipeline_(ctx_, part, hidden_bytes_, sc.training.behaviour.overlap_p2p_comm),
        tp_(ctx_, sc.parallelism.sequence_parallel, tp_overlap(sc)),
        cp_(ctx_, context_parallel_plan(sc)),
        ep_(ctx_),
        recompute_(ctx_, tp_, ep_, sc.training.behaviour.selective_recompute),
        dp_(ctx_, data_parallel_plan(sc), part.stages),
        offload_(ctx_, sc.memory.offload, states_, near_storage_, dp_.optimizer_shards(), work_),
        optimizer_(ctx_, {sc.memory.offload.optimizer, sc.memory.offload.params, sc.memory.offload.delayed_update,
                          near_storage_, states_},
                   mem, dp_, offload_, part.stages),
        checkpoint_emitter_(ctx_, checkpoint_plan(sc), mem),
        data_(ctx_, {sc.data, sc.training.global_batch_size, sc.hardware.object_store.max_in_flight}),
        redundant_compute_(ctx_, part, mem, work_, states_, tp_, dp_, sc.parallelism.cp > 1) {
    deferred_.resize(static_cast<std::size_t>(part.stages));
  }
  // The emitters hold references to ctx_ and to each other.
  DagBuilder(const DagBuilder&) = delete;
  DagBuilder& operator=(const DagBuilder&) = delete;

  TaskDag build() {
    const RankLayout& layout = ctx_.layout();
    TaskDag& dag = ctx_.dag();
    dag.iterations = dag_iterations(sc_, options_);
    dag.fold_group = ctx_.fold() ? layout.tp * layout.replicas() : 1;  // ranks of one stage are alike
    add_resident_memory();
    const PipelineOrder order = pipeline_order(sc_.parallelism.schedule, part_.stages, part_.virtual_stages, m_);
    for (int it = 0; it < dag.iterations; ++it) {
      ctx_.set_iteration(it);
      pipeline_.new_iteration();
      offload_.new_iteration(part_.stages);
      dp_.new_iteration(part_.stages);
      if (sc_.data.enabled) data_.emit();
      std::vector<std::size_t> next(static_cast<std::size_t>(part_.stages), 0);
      bool pending = true;
      while (pending) {
        pending = false;
        bool progress = false;
        for (int s = 0; s < part_.stages; ++s) {
          const auto& units = order[static_cast<std::size_t>(s)];
          auto& i = next[static_cast<std::size_t>(s)];
          while (i < units.size() && pipeline_.ready(units[i])) {
            emit_unit(s, units[i]);
            ++i;
            progress = true;
          }
          if (i < units.size()) pending = true;
        }
        if (pending && !progress) throw std::logic_error("pipeline schedule deadlocks");
      }
      for (int s = 0; s < part_.stages; ++s) reduce_deferred(s);
      for (int s = 0; s < part_.stages; ++s) optimizer_.step(s);
      if (redundant_)
        for (int s = 0; s < part_.stages; ++s) redundant_compute_.step(s);
      if (it == options_.checkpoint_after) {
        ctx_.set_iteration(it + 1);
        for (int s = 0; s < part_.stages; ++s) checkpoint_emitter_.emit(s, optimizer_.in_flight(s));
      }
    }
    return ctx_.take();
  }

 private:
  using Frontier = DagContext::Frontier;

  /// The work entries a unit runs, in its direction (chunk_work_units).
  std::vector<int> chunk_units(const PipelineUnit& u) const {
    std::vector<int> units = chunk_work_units(part_, u.chunk, work_);
    if (!u.forward) std::reverse(units.begin(), units.end());
    return units;
  }

  /// The attention core's share of a layer's forward kernel seconds (what TP overlap does not slow).
  static double core_fraction(const LayerWork& w) { return w.fwd_s > 0.0 ? w.core_s / w.fwd_s : 0.0; }

  CheckpointPlan checkpoint_plan(const Scenario& sc) const {
    const std::int64_t gpn = sc.hardware.gpus_per_node;
    return {checkpoint_, sc.checkpoint.tiers, options_.persist, near_storage_, sc.memory.offload.params,
            sc.memory.offload.optimizer, (sc.gpus + gpn - 1) / gpn, states_, sc.checkpoint.gpudirect};
  }

  void add_resident_memory() {
    const RankLayout& layout = ctx_.layout();
    for (int s = 0; s < part_.stages; ++s) {
      const StageMemory& sm = mem_.stages[static_cast<std::size_t>(s)];
      std::vector<MemoryChange> resident = {{Tier::hbm, MemoryUse::params, sm.hbm.params},
                                            {Tier::hbm, MemoryUse::gradients, sm.hbm.gradients},
                                            {Tier::hbm, MemoryUse::optimizer, sm.hbm.optimizer},
                                            {Tier::hbm, MemoryUse::buffers, sm.hbm.buffers}};
      // Host tiers hold offloaded model states (activations come and go with their copies).
      for (const auto& [tier, bytes] : sm.offloaded_states)
        resident.push_back({tier, MemoryUse::optimizer, bytes * offload_.pinned_factor(tier)});
      for (const DagContext::Lane& lane : ctx_.lanes()) {
        const std::int64_t r = ctx_.rank_of(s, lane);
        ctx_.dag().resident[r] = resident;
        ctx_.dag().represents[r] = ctx_.fold() ? layout.tp * layout.replicas() : 1;
      }
    }
  }

  /// One unit of the schedule: per layer, in the unit's direction, the ZeRO-3 gather (or, in the first
  /// forward, the overlapped gather of the updated weights), the compute
  /// with the activation copies around it and its TP collectives, and backward the recomputation
  /// before and the gradient reduction and shard copy after; then the send to the next stage and
  /// the redundant forward.
  void emit_unit(int stage, const PipelineUnit& u) {
    const ModelChunk& chunk = part_.chunks[static_cast<std::size_t>(u.chunk)];
    auto& last = ctx_.last(stage);
    pipeline_.receive(stage, u);
    const bool last_microbatch = u.microbatch == m_ - 1;
    const std::vector<int> units = chunk_units(u);
    offload_.begin_unit(stage, u, chunk);
    int k = -1;  // the unit's blocks in its direction: what the activation copies count
    for (const int layer : units) {
      const bool block = layer < static_cast<int>(sc_.model.num_layers);
      if (block) ++k;
      const LayerWork& w = work_[static_cast<std::size_t>(layer)];
      const DagContext::ChunkPos pos{u.chunk, u.microbatch, layer};
      std::vector<MemoryChange> gathered_release;
      if (dp_.gathers_params()) {
        gathered_release = dp_.param_gather(stage, pos, w, last);
      } else if (u.forward && u.microbatch == 0 && dp_.gathers_updated_in_forward()) {
        // The last step's updated weights, gathered as the iteration's first forward reaches them.
        dp_.updated_gather(stage, pos, w, last);
      }
      if (u.forward) {
        std::vector<MemoryChange> alloc = {{Tier::hbm, MemoryUse::activations, w.saved}};
        std::vector<MemoryChange> release = gathered_release;
        if (w.transient > 0.0) {
          alloc.push_back({Tier::hbm, MemoryUse::workspace, w.transient});
          release.push_back({Tier::hbm, MemoryUse::workspace, w.transient});
        }
        if (block) offload_.before_forward(stage, last);
        const Frontier before = last;
        // With CP the forward is the ring's steps (sim/dag/context_parallel_emitter); the TP overlap's
        // slowdown applies to the plain forward only.
        auto ids = cp_.active() && block
                       ? forward_with_cp(stage, pos, w, alloc, release, last)
                       : ctx_.per_lane(stage, TaskKind::forward, pos,
                                       tp_.stretched({w.fwd_flops, w.fwd_bytes, w.fwd_s}, core_fraction(w), true),
                                       alloc, release, last);
        if (block) offload_.after_forward(stage, pos, w, ids);
        last = ep_.all_to_alls(stage, w.ep_fwd, w.ep_bytes, pos,
                               tp_.collectives(stage, w.tp_fwd, w.tp_fwd_bytes, pos, ids, &before));
        continue;
      }
      if (block) offload_.before_backward(k, last);
      std::vector<MemoryChange> release = {{Tier::hbm, MemoryUse::activations, w.saved}};
      release.insert(release.end(), gathered_release.begin(), gathered_release.end());
      recompute_.before_backward(stage, pos, w, last, release);
      const Frontier before = last;
      std::vector<TaskId> ids;
      if (cp_.active() && block) {
        ids = backward_with_cp(stage, pos, w, release, last);
        last = tp_.collectives(stage, w.tp_bwd, w.tp_bwd_bytes, pos, ids,
                               tp_.overlaps_backward() ? &before : nullptr);
      } else {
        const DagContext::Work work = tp_.stretched({w.bwd_flops, w.bwd_bytes, w.bwd_s}, core_fraction(w), false);
        if (async_tp_backward(w, work)) {
          ids = backward_with_async_tp(stage, pos, w, work, release, last);
        } else {
          ids = ctx_.per_lane(stage, TaskKind::backward, pos, work, {}, release, last);
          last = tp_.collectives(stage, w.tp_bwd, w.tp_bwd_bytes, pos, ids,
                                 tp_.overlaps_backward() ? &before : nullptr);
        }
      }
      last = ep_.all_to_alls(stage, w.ep_bwd, w.ep_bytes, pos, last);
      if (block) offload_.after_backward(stage, k, ids);
      // ZeRO-2/3 reduce-scatter every micro-batch into their gradient partitions, unless told not to
      // sync before the last (GradientSync::last_microbatch); otherwise the accumulated gradients are
      // reduced once, after the last micro-batch.
      const bool every_microbatch =
          dp_.partitioned_grads() && sc_.training.behaviour.grad_sync == GradientSync::every_microbatch;
      if (!(every_microbatch || last_microbatch)) continue;
      Frontier reduced = DagContext::frontier_of(ids);
      if (ctx_.layout().replicas() > 1) {
        // Not overlapped (training.overlap_grad_reduce) and reduced once: after the stage's whole
        // backward (Megatron-LM 2021's local DDP all-reduces after the pipeline schedule, DeepSpeed's
        // pipeline engine at the end of its schedule), so it delays the stage's optimizer step, not
        // the gradients it sends to the previous stage (reduce_deferred).
        if (!sc_.training.behaviour.overlap_grad_reduce && !dp_.partitioned_grads()) {
          deferred_[static_cast<std::size_t>(stage)].push_back({pos, &w});
          continue;
        }
        const TaskId done = dp_.gradient_reduction(stage, pos, w, last);
        for (auto& f : reduced) f = {done};
        // Not overlapped, partitioned (ZeRO-2/3 without overlap_comm; every micro-batch, or with
        // grad_sync last-microbatch the last one's): the compute stream waits.
        if (!sc_.training.behaviour.overlap_grad_reduce)
          for (auto& f : last) f = {done};
      }
      offload_.gradient_out(stage, pos, w, reduced);
    }
    pipeline_.send_onward(stage, u);
    if (redundant_ && u.forward) redundant_compute_.forward(stage, u);
  }

  /// The stage's gradient reductions held back until its backward is done (not overlapped, reduced
  /// once), in the order the layers finished; the compute stream waits for them, as the optimizer does.
  void reduce_deferred(int stage) {
    auto& pending = deferred_[static_cast<std::size_t>(stage)];
    auto& last = ctx_.last(stage);
    for (const auto& [pos, w] : pending) {
      const TaskId done = dp_.gradient_reduction(stage, pos, *w, last);
      Frontier reduced(last.size(), {done});
      offload_.gradient_out(stage, pos, *w, reduced);
    }
    if (!pending.empty()) {
      const TaskId done = dp_.reductions(stage).back();
      for (auto& f : last) f = {done};
    }
    pending.clear();
  }

  /// A layer's forward with context parallelism: the work before the attention (it allocates the
  /// layer's activations), the ring attention, then the rest; returns the rest's tasks.
  std::vector<TaskId> forward_with_cp(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                      std::vector<MemoryChange> alloc, std::vector<MemoryChange> release,
                                      const Frontier& last) {
    const CpAttentionWork& c = w.cp;
    auto pre = ctx_.per_lane(stage, TaskKind::forward, pos, {c.pre_flops, c.pre_bytes, c.pre_fwd_s}, std::move(alloc),
                             {}, last);
    const Frontier attention = cp_.attention(stage, pos, w, true, pre);
    const double core_s = c.diag_fwd_s + static_cast<double>(sc_.parallelism.cp - 1) * c.step_fwd_s;
    const DagContext::Work rest{w.fwd_flops - c.pre_flops - c.diag_flops -
                                    static_cast<double>(sc_.parallelism.cp - 1) * c.step_flops,
                                w.fwd_bytes - c.pre_bytes - w.core_bytes, w.fwd_s - c.pre_fwd_s - core_s};
    return ctx_.per_lane(stage, TaskKind::forward, pos, rest, {}, std::move(release), attention);
  }

  /// A layer's backward with context parallelism, in reverse: the work after the attention, the
  /// ring attention (K/V and dK/dV), then the work before it (it releases the activations).
  std::vector<TaskId> backward_with_cp(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                       std::vector<MemoryChange> release, const Frontier& last) {
    const CpAttentionWork& c = w.cp;
    const double core_s = c.diag_bwd_s + static_cast<double>(sc_.parallelism.cp - 1) * c.step_bwd_s;
    const DagContext::Work rest{w.bwd_flops - c.pre_bwd_flops - c.core_bwd_flops,
                                w.bwd_bytes - c.pre_bwd_bytes - c.core_bwd_bytes, w.bwd_s - c.pre_bwd_s - core_s};
    auto post = ctx_.per_lane(stage, TaskKind::backward, pos, rest, {}, {}, last);
    const Frontier attention = cp_.attention(stage, pos, w, false, post);
    return ctx_.per_lane(stage, TaskKind::backward, pos, {c.pre_bwd_flops, c.pre_bwd_bytes, c.pre_bwd_s}, {},
                         std::move(release), attention);
  }

  /// Whether this layer's backward runs its TP collectives asynchronously (training.async_tp_backward,
  /// where the TP overlap does not pipeline the backward's already).
  bool async_tp_backward(const LayerWork& w, const DagContext::Work& work) const {
    return sc_.training.behaviour.async_tp_backward && !tp_.overlaps_backward() && ctx_.layout().tp > 1 &&
           w.tp_bwd_async > 0 && w.tp_bwd_hiding_s > 0.0 && work.seconds > 0.0;
  }

  /// A layer's backward with Megatron's asynchronous TP collectives: one compute task; the
  /// asynchronous exchange is issued once the part before the column-parallel linears' hiding GEMMs
  /// is done and runs beside them, and the collectives that still block (with SP, the gradient
  /// all-gathers) follow the compute. Returns the compute tasks; `last` becomes everything the next
  /// layer's backward waits for. At layer granularity the two linears' collectives share both
  /// linears' GEMMs (an upper bound on the overlap when one linear's exchange outlasts its own GEMMs).
  std::vector<TaskId> backward_with_async_tp(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                                             const DagContext::Work& work, std::vector<MemoryChange> release,
                                             Frontier& last) {
    const double hiding = std::min(w.tp_bwd_hiding_s, work.seconds);
    // The exchange is ready when the kernel may start: its dependencies and the compute stream's
    // previous task (the kernel waits for both).
    Frontier kernel_start = last;
    for (std::size_t i = 0; i < kernel_start.size(); ++i) {
      const TaskId previous = ctx_.dag().last_compute(ctx_.rank_of(stage, ctx_.lanes()[i]));
      if (previous != kNoTask) kernel_start[i].push_back(previous);
    }
    const auto ids = ctx_.per_lane(stage, TaskKind::backward, pos, work, {}, std::move(release), last);
    const Frontier exchanged =
        tp_.issued_within(stage, w.tp_bwd_async, w.tp_bwd_async_bytes, pos, kernel_start, work.seconds - hiding);
    last = tp_.collectives(stage, w.tp_bwd - w.tp_bwd_async, w.tp_bwd_bytes - w.tp_bwd_async_bytes, pos, ids);
    for (std::size_t i = 0; i < last.size(); ++i) last[i].insert(last[i].end(), exchanged[i].begin(), exchanged[i].end());
    return ids;
  }

  const Scenario& sc_;
  const PipelinePartition& part_;
  const MemoryEstimate& mem_;
  std::vector<LayerWork> work_;
  /// Per stage, this iteration's gradient reductions waiting for the stage's backward to end.
  std::vector<std::vector<std::pair<DagContext::ChunkPos, const LayerWork*>>> deferred_;
  DagOptions options_;
  StateBytes states_;
  CheckpointBehaviour checkpoint_;
  bool near_storage_ = false;  ///< the optimizer runs on computational SSDs
  bool redundant_ = false;     ///< each stage keeps and updates a replica of the next stage
  int m_ = 1;
  double hidden_bytes_ = 0.0;
  DagContext ctx_;
  PipelineEmitter pipeline_;
  TensorParallelEmitter tp_;
  ContextParallelEmitter cp_;
  ExpertParallelEmitter ep_;
  RecomputeEmitter recompute_;
  DataParallelEmitter dp_;
  OffloadEmitter offload_;
  OptimizerEmitter optimizer_;
  CheckpointEmitter checkpoint_emitter_;
  DataLoadingEmitter data_;
  RedundantComputeEmitter redundant_compute_;
};

}  // namespace

DagSizeEstimate estimate_dag_size(const Scenario& sc, bool fold) {
  // Measured on the shipped scenarios: 4 to 6 tasks per layer, micro-batch and simulated GPU
  // (forward, backward, recompute and their collectives); 8 bounds it from above, offload adds copies.
  constexpr double kTasksPerLayerAndMicrobatch = 8.0;
  const auto& p = sc.parallelism;
  // Context parallelism splits each layer's compute in three around cp attention steps and adds the
  // ring's sends: cp−1 forward, cp backward, so 4·cp more per layer and micro-batch bound it. Expert
  // parallelism adds the dispatch and combine all-to-alls, forward and backward.
  const double per_layer = kTasksPerLayerAndMicrobatch + (p.cp > 1 ? 4.0 * static_cast<double>(p.cp) : 0.0) +
                           (p.ep > 1 ? 4.0 : 0.0);
  const double iterations = static_cast<double>(std::max<std::int64_t>(sc.training.iterations, 3));
  const double microbatches = static_cast<double>(std::max<std::int64_t>(sc.num_microbatches(), 1));
  const double layers = std::ceil(static_cast<double>(sc.model.num_layers) / static_cast<double>(std::max<std::int64_t>(p.pp, 1)));
  const double ranks = static_cast<double>(fold ? p.pp : sc.gpus);
  DagSizeEstimate e;
  e.tasks = iterations * ranks * (microbatches + 1.0) * layers * per_layer;
  e.factors = fmt::format("{} iterations x {} micro-batches x {} layers per GPU x {} simulated GPUs", iterations,
                          microbatches, layers, ranks);
  // The factor most out of the ordinary is named: a long run, an unfolded cluster, or a big batch.
  if (sc.training.iterations > 16) e.driver = "/training/iterations";
  else if (!fold && sc.gpus > p.pp) e.driver = "";
  else e.driver = "/training/global_batch_size";
  return e;
}

int dag_iterations(const Scenario& sc, const DagOptions& options) {
  // A delayed update first holds an iteration back two steps later: three iterations reach its
  // steady state.
  const bool delayed = sc.memory.offload.optimizer != Tier::none && sc.memory.offload.delayed_update;
  int n = static_cast<int>(std::max<std::int64_t>(sc.training.iterations, delayed ? 3 : 1));
  n = std::max(n, options.min_iterations);
  if (options.checkpoint_after >= 0) n = std::max(n, options.checkpoint_after + 2);
  return n;
}

std::vector<double> checkpoint_bytes_per_rank(const Scenario& sc, const MemoryEstimate& memory) {
  // 16-bit weights plus the optimizer states (fp32 master + moments): 14 B/param for mixed-precision
  // Adam (docs/references.md, Checkpoint sizes); gradients are not saved. Near storage saves the
  // states alone (the fp32 master stands for the weights).
  const StateBytes b = state_bytes(sc.training);
  const bool near = behaviour(sc.checkpoint.strategy).optimizer_on_ssd;
  std::vector<double> out;
  for (const auto& sm : memory.stages)
    // Dense states divided over the DP×CP replicas, experts' over their expert-DP replicas: all/(dp·cp).
    // Under HSDP the replicas of a shard share its writes (docs/references.md, Model-state memory).
    out.push_back(sm.all_parameters * ((near ? 0.0 : b.weights) + b.optimizer) / static_cast<double>(sc.parallelism.dp * sc.parallelism.cp));
  return out;
}

TaskDag build_training_dag(const Scenario& sc, const ComputeGraph& graph, const PipelinePartition& partition,
                           const MemoryEstimate& memory, const DagOptions& options) {
  // No cycle check here: TaskDag::add takes dependencies on earlier tasks only and streams run in
  // insertion order, so insertion order is topological by construction (tests/test_schedule.cpp
  // checks the shipped scenarios' DAGs with Boost.Graph).
  return DagBuilder(sc, graph, partition, memory, options).build();
}

}  // namespace strata
