#include "sim/dag/training_dag.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "sim/dag/collectives.hpp"
#include "sim/dag/pipeline_schedule.hpp"

namespace strata {

RankLayout rank_layout(const Scenario& sc) {
  return {sc.parallelism.tp, sc.parallelism.pp, sc.parallelism.dp, sc.hardware.gpus_per_node};
}

namespace {

/// Forward TP collectives of one transformer block, in all-reduce equivalents (see layer_work).
constexpr int kBlockCollectives = 2;

/// One block's work for one micro-batch on one TP rank. The embedding counts with the first block
/// and the final norm, LM head and loss with the last, because they run on those blocks' stages.
struct LayerWork {
  double fwd_flops = 0.0, fwd_bytes = 0.0;
  double bwd_flops = 0.0, bwd_bytes = 0.0;
  double core_flops = 0.0, core_bytes = 0.0;  ///< attention core forward: what selective recompute reruns
  double block_flops = 0.0, block_bytes = 0.0;  ///< the block's own forward: what full recompute reruns
  double saved = 0.0;    ///< activation bytes kept for backward under the policy
  double rebuilt = 0.0;  ///< bytes recomputation rebuilds transiently before the backward
  double params = 0.0;   ///< weights held by this TP rank
  int tp_fwd = 0, tp_bwd = 0;  ///< TP collectives on the hidden-state buffer, forward and backward
};

std::vector<LayerWork> layer_work(const Scenario& sc, const ComputeGraph& graph) {
  const int L = static_cast<int>(sc.model.num_layers);
  const double t = static_cast<double>(sc.parallelism.tp);
  const bool sp = sc.parallelism.sequence_parallel;
  const ActivationPolicy policy{sc.parallelism.tp, sp, sc.memory.recompute};
  std::vector<LayerWork> work(static_cast<std::size_t>(L));
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    const Op& op = graph[v];
    LayerWork& w = work[static_cast<std::size_t>(std::clamp(op.layer, 0, L - 1))];
    const bool in_block = op.layer >= 0 && op.layer < L;
    // The router is replicated over TP (divided only by sequence parallelism); every other GEMM is
    // split over the TP group (Megatron column/row-parallel linears, vocab-parallel head).
    const double flops_div = op.kind == OpKind::router ? (sp ? t : 1.0) : t;
    const double traffic = rank_bytes({"", op.memory_traffic, op.traffic_split}, policy);
    w.fwd_flops += op.forward_flops / flops_div;
    w.bwd_flops += op.backward_flops / flops_div;
    w.fwd_bytes += traffic;
    w.bwd_bytes += kBackwardTrafficFactor * traffic;
    if (op.kind == OpKind::attention_core) {
      w.core_flops += op.forward_flops / flops_div;
      w.core_bytes += traffic;
    }
    if (in_block) {
      w.block_flops += op.forward_flops / flops_div;
      w.block_bytes += traffic;
    }
    if (!(op.shares_embedding && sc.parallelism.pp == 1)) w.params += op.params_split / t + op.params_replicated;
    // Recomputation reruns transformer blocks only: the embedding's and the head's tensors stay.
    for (const SavedTensor& s : op.saved) {
      const double bytes = rank_bytes(s, policy);
      if (!in_block || kept_for_backward(s, policy.recompute)) w.saved += bytes;
      else w.rebuilt += bytes;
    }
  }
  // Megatron, in all-reduce equivalents of the hidden-state buffer: forward, one after each of the
  // attention and MLP row-parallel projections (with SP an all-gather before and a reduce-scatter
  // after each sub-block: the same volume). Backward without SP, the two input-gradient
  // all-reduces; with SP, Megatron's sequence-parallel linears also re-gather their sharded input
  // for the weight gradient, three all-reduce equivalents (which is why SP saves 0.5 ms of forward
  // but only 0.1 ms of backward per layer in Korthikanti et al. 2022 Table 4). Plus one for the
  // vocab-parallel embedding's output and one for the LM head's input gradient. They block the
  // compute stream, as the collectives of the paper's Megatron did.
  for (auto& w : work) {
    w.tp_fwd = kBlockCollectives;
    w.tp_bwd = sp ? 3 : 2;
  }
  work.front().tp_fwd += 1;
  work.back().tp_bwd += 1;
  return work;
}

/// Builds the DAG stage by stage. Ranks are "lanes": in folded mode one lane per stage (the
/// representative), otherwise every (dp, tp) pair.
class DagBuilder {
 public:
  DagBuilder(const Scenario& sc, const ComputeGraph& graph, const PipelinePartition& part, const MemoryEstimate& mem,
             const DagOptions& opt)
      : sc_(sc), part_(part), mem_(mem), layout_(rank_layout(sc)), work_(layer_work(sc, graph)), fold_(opt.fold),
        checkpoint_after_(opt.checkpoint_after), options_(opt) {
    const auto& tr = sc.training;
    act_bytes_ = std::max(2.0, bytes_per_element(tr.precision));
    hidden_bytes_ = act_bytes_ * static_cast<double>(tr.seq_len * tr.micro_batch_size * sc.model.hidden_size);
    states_ = state_bytes(tr);
    const CheckpointBehaviour checkpoint = behaviour(sc.checkpoint.strategy);
    near_storage_ = sc.checkpoint.enabled && checkpoint.optimizer_on_ssd;
    redundant_ = sc.checkpoint.enabled && checkpoint.replicates_next_stage;
    m_ = static_cast<int>(sc.num_microbatches());
    chunks_ = part.stages * part.virtual_stages;
    for (std::int64_t d = 0; d < (fold_ ? 1 : layout_.dp); ++d)
      for (std::int64_t t = 0; t < (fold_ ? 1 : layout_.tp); ++t) lanes_.push_back({d, t});
  }

  TaskDag build() {
    dag_.iterations = dag_iterations(sc_, options_);
    dag_.fold_group = fold_ ? layout_.tp * layout_.dp : 1;  // ranks of one stage are alike
    add_resident_memory();
    const PipelineOrder order = pipeline_order(sc_.parallelism.schedule, part_.stages, part_.virtual_stages, m_);
    last_.assign(static_cast<std::size_t>(part_.stages), Frontier(lanes_.size()));
    gather_history_.assign(static_cast<std::size_t>(part_.stages), {});
    delayed_step_.assign(static_cast<std::size_t>(part_.stages), {});
    for (int it = 0; it < dag_.iterations; ++it) {
      iteration_ = it;
      p2p_.clear();
      act_out_.clear();
      grad_out_.assign(static_cast<std::size_t>(part_.stages), {});
      act_copies_.assign(static_cast<std::size_t>(part_.stages), {});
      dp_tasks_.assign(static_cast<std::size_t>(part_.stages), {});
      if (sc_.data.enabled) emit_data_load();
      std::vector<std::size_t> next(static_cast<std::size_t>(part_.stages), 0);
      bool pending = true;
      while (pending) {
        pending = false;
        bool progress = false;
        for (int s = 0; s < part_.stages; ++s) {
          const auto& units = order[static_cast<std::size_t>(s)];
          auto& i = next[static_cast<std::size_t>(s)];
          while (i < units.size() && ready(units[i])) {
            emit_unit(s, units[i]);
            ++i;
            progress = true;
          }
          if (i < units.size()) pending = true;
        }
        if (pending && !progress) throw std::logic_error("pipeline schedule deadlocks");
      }
      for (int s = 0; s < part_.stages; ++s) emit_optimizer(s);
      if (redundant_)
        for (int s = 0; s < part_.stages; ++s) {
          const int next = part_.chunks[static_cast<std::size_t>(successor(s))].stage;
          emit_redundant_step(s, mem_.stages[static_cast<std::size_t>(next)].parameters / optimizer_shards());
        }
      if (it == checkpoint_after_) {
        iteration_ = it + 1;
        for (int s = 0; s < part_.stages; ++s) emit_checkpoint(s);
      }
    }
    return std::move(dag_);
  }

 private:
  using Lane = std::pair<std::int64_t, std::int64_t>;  // (dp index, tp index)
  using UnitKey = std::tuple<int, int, bool>;          // (chunk, micro-batch, forward)
  /// Per lane, the tasks its next task must wait for.
  using Frontier = std::vector<std::vector<TaskId>>;

  /// Where a task sits in the schedule, for the trace.
  struct ChunkPos {
    int chunk = 0, microbatch = 0, layer = 0;
  };

  std::int64_t rank_of(int stage, const Lane& lane) const { return layout_.rank(stage, lane.first, lane.second); }

  Task base(TaskKind kind, Stream stream, std::vector<std::int64_t> ranks, int stage) const {
    Task t;
    t.kind = kind;
    t.stream = stream;
    t.ranks = std::move(ranks);
    t.iteration = iteration_;
    t.stage = stage;
    return t;
  }

  void add_resident_memory() {
    for (int s = 0; s < part_.stages; ++s) {
      const StageMemory& sm = mem_.stages[static_cast<std::size_t>(s)];
      std::vector<MemoryChange> resident = {{Tier::hbm, MemoryUse::params, sm.hbm.params},
                                            {Tier::hbm, MemoryUse::gradients, sm.hbm.gradients},
                                            {Tier::hbm, MemoryUse::optimizer, sm.hbm.optimizer},
                                            {Tier::hbm, MemoryUse::buffers, sm.hbm.buffers}};
      // Host tiers hold offloaded model states (activations come and go with their copies).
      for (const auto& [tier, bytes] : sm.offloaded_states)
        resident.push_back({tier, MemoryUse::optimizer, bytes * pinned_factor(tier)});
      for (const Lane& lane : lanes_) {
        const std::int64_t r = rank_of(s, lane);
        dag_.resident[r] = resident;
        dag_.represents[r] = fold_ ? layout_.tp * layout_.dp : 1;
      }
    }
  }

  /// Pinned host buffers: DRAM and CXL hold host_buffer_factor bytes per offloaded byte.
  double pinned_factor(Tier tier) const {
    return tier == Tier::local_ssd ? 1.0 : sc_.memory.offload.host_buffer_factor;
  }

  /// One copy per lane between HBM and an offload tier of the lane's node.
  std::vector<TaskId> copies(int stage, const ChunkPos& pos, Stream stream, Tier tier, bool to_gpu, double bytes,
                             std::vector<MemoryChange> alloc, std::vector<MemoryChange> release, const Frontier& deps,
                             bool direct = false) {
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::int64_t r = rank_of(stage, lanes_[i]);
      Task t = base(TaskKind::offload, stream, {r}, stage);
      set_pos(t, pos);
      const Device gpu = Device::gpu(r), host = tier_device(tier, layout_.node(r));
      t.flows.push_back({to_gpu ? host : gpu, to_gpu ? gpu : host, bytes, false, direct});
      t.allocate = alloc;
      t.release = release;
      t.deps = deps[i];
      ids.push_back(dag_.add(std::move(t)));
    }
    return ids;
  }

  static Frontier frontier_of(const std::vector<TaskId>& ids) {
    Frontier f(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) f[i] = {ids[i]};
    return f;
  }

  bool ready(const PipelineUnit& u) const {
    const bool first = u.forward ? u.chunk == 0 : u.chunk == chunks_ - 1;
    if (first) return true;
    return p2p_.count({u.forward ? u.chunk - 1 : u.chunk + 1, u.microbatch, u.forward}) > 0;
  }

  /// One task per lane (or per TP group for collectives), each waiting for its lane's last task.
  std::vector<TaskId> per_lane(int stage, TaskKind kind, const ChunkPos& pos, double flops, double bytes,
                               std::vector<MemoryChange> alloc, std::vector<MemoryChange> release,
                               const Frontier& deps) {
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      Task t = base(kind, Stream::compute, {rank_of(stage, lanes_[i])}, stage);
      t.flops = flops;
      t.memory_bytes = bytes;
      t.allocate = alloc;
      t.release = release;
      set_pos(t, pos);
      t.deps = deps[i];
      ids.push_back(dag_.add(std::move(t)));
    }
    return ids;
  }

  static void set_pos(Task& t, const ChunkPos& pos) {
    t.chunk = pos.chunk;
    t.microbatch = pos.microbatch;
    t.layer = pos.layer;
  }

  /// TP collectives on the hidden-state buffer for each TP group among the lanes: one task per group,
  /// depending on its members' tasks. With SP they are reduce-scatter + all-gather pairs of the same
  /// volume and step count, so they are modelled as the equivalent all-reduces.
  Frontier tp_collectives(int stage, int count, const ChunkPos& pos, const std::vector<TaskId>& producers) {
    Frontier out(lanes_.size());
    if (layout_.tp == 1 || count == 0) {
      for (std::size_t i = 0; i < lanes_.size(); ++i) out[i] = {producers[i]};
      return out;
    }
    std::map<std::int64_t, std::vector<std::size_t>> groups;  // dp index -> lanes
    for (std::size_t i = 0; i < lanes_.size(); ++i) groups[lanes_[i].first].push_back(i);
    for (const auto& [d, members] : groups) {
      std::vector<std::int64_t> simulated;
      for (std::size_t i : members) simulated.push_back(rank_of(stage, lanes_[i]));
      Task t = ring_collective(Collective::all_reduce, layout_.tp_group(simulated.front()), simulated,
                               count * hidden_bytes_, TaskKind::tp_comm, Stream::tp_comm, layout_);
      t.latency_steps *= count;
      t.iteration = iteration_;
      t.stage = stage;
      set_pos(t, pos);
      for (std::size_t i : members) t.deps.push_back(producers[i]);
      TaskId id = dag_.add(std::move(t));
      for (std::size_t i : members) out[i] = {id};
    }
    return out;
  }

  void emit_unit(int stage, const PipelineUnit& u) {
    const ModelChunk& chunk = part_.chunks[static_cast<std::size_t>(u.chunk)];
    auto& last = last_[static_cast<std::size_t>(stage)];
    if (!(u.forward ? u.chunk == 0 : u.chunk == chunks_ - 1)) {
      const auto& incoming = p2p_.at({u.forward ? u.chunk - 1 : u.chunk + 1, u.microbatch, u.forward});
      for (std::size_t i = 0; i < lanes_.size(); ++i) last[i].push_back(incoming[i]);
    }
    const bool last_microbatch = u.microbatch == m_ - 1;
    const int n = chunk.num_layers;
    auto layer_at = [&](int k) { return u.forward ? chunk.first_layer + k : chunk.first_layer + n - 1 - k; };
    // Offloaded activations come back `prefetch_layers` layers before their backward needs them.
    const Tier act_tier = sc_.memory.offload.activations;
    const int ahead = static_cast<int>(sc_.memory.offload.prefetch_layers);
    std::vector<std::vector<TaskId>> fetched(static_cast<std::size_t>(n));
    auto fetch = [&](int k, Frontier gate) {
      const int layer = layer_at(k);
      const double saved = work_[static_cast<std::size_t>(layer)].saved;
      const auto& sent = act_out_.at({u.chunk, u.microbatch, layer});
      for (std::size_t i = 0; i < lanes_.size(); ++i) gate[i].push_back(sent[i]);
      fetched[static_cast<std::size_t>(k)] =
          copies(stage, {u.chunk, u.microbatch, layer}, Stream::offload_in, act_tier, true, saved,
                 {{Tier::hbm, MemoryUse::activations, saved}},
                 {{act_tier, MemoryUse::activations, saved * pinned_factor(act_tier)}}, gate);
    };
    if (!u.forward && act_tier != Tier::none)
      for (int k = 0; k <= ahead && k < n; ++k) fetch(k, last);
    for (int k = 0; k < n; ++k) {
      const int layer = layer_at(k);
      const LayerWork& w = work_[static_cast<std::size_t>(layer)];
      const ChunkPos pos{u.chunk, u.microbatch, layer};
      std::vector<MemoryChange> gathered_release;
      if (sc_.parallelism.zero_stage >= 3 && (layout_.dp > 1 || sc_.memory.offload.params != Tier::none))
        gathered_release = emit_param_gather(stage, pos, w, last);
      if (u.forward) {
        std::vector<MemoryChange> alloc = {{Tier::hbm, MemoryUse::activations, w.saved}};
        auto& outgoing = act_copies_[static_cast<std::size_t>(stage)];
        if (act_tier != Tier::none && outgoing.size() > static_cast<std::size_t>(ahead)) {
          // Back-pressure: at most prefetch_layers + 1 layers wait in HBM for their copy out.
          const auto& oldest = outgoing[outgoing.size() - static_cast<std::size_t>(ahead) - 1];
          for (std::size_t i = 0; i < lanes_.size(); ++i) last[i].push_back(oldest[i]);
        }
        auto ids = per_lane(stage, TaskKind::forward, pos, w.fwd_flops, w.fwd_bytes, alloc, gathered_release, last);
        if (act_tier != Tier::none) {  // the saved tensors leave for the tier once the layer is done
          auto sent = copies(stage, pos, Stream::offload_out, act_tier, false, w.saved,
                             {{act_tier, MemoryUse::activations, w.saved * pinned_factor(act_tier)}},
                             {{Tier::hbm, MemoryUse::activations, w.saved}}, frontier_of(ids));
          act_out_[{u.chunk, u.microbatch, layer}] = sent;
          outgoing.push_back(sent);
        }
        last = tp_collectives(stage, w.tp_fwd, pos, ids);
        continue;
      }
      if (act_tier != Tier::none)
        for (std::size_t i = 0; i < lanes_.size(); ++i) last[i].push_back(fetched[static_cast<std::size_t>(k)][i]);
      std::vector<MemoryChange> release = {{Tier::hbm, MemoryUse::activations, w.saved}};
      release.insert(release.end(), gathered_release.begin(), gathered_release.end());
      if (sc_.memory.recompute != Recompute::none) {
        const bool full = sc_.memory.recompute == Recompute::full;
        std::vector<MemoryChange> alloc = {{Tier::hbm, MemoryUse::workspace, w.rebuilt}};
        auto ids = per_lane(stage, TaskKind::recompute, pos, full ? w.block_flops : w.core_flops,
                            full ? w.block_bytes : w.core_bytes, alloc, {}, last);
        last = tp_collectives(stage, full ? kBlockCollectives : 0, pos, ids);
        release.push_back({Tier::hbm, MemoryUse::workspace, w.rebuilt});
      }
      auto ids = per_lane(stage, TaskKind::backward, pos, w.bwd_flops, w.bwd_bytes, {}, release, last);
      last = tp_collectives(stage, w.tp_bwd, pos, ids);
      if (act_tier != Tier::none && k + ahead + 1 < n) fetch(k + ahead + 1, frontier_of(ids));
      // ZeRO-2/3 reduce-scatter every micro-batch into their gradient partitions; otherwise the
      // accumulated gradients are reduced once, after the last micro-batch.
      const bool partitioned_grads = sc_.parallelism.zero_stage >= 2;
      if (!(partitioned_grads || last_microbatch)) continue;
      Frontier reduced = frontier_of(ids);
      if (layout_.dp > 1) {
        const TaskId done = emit_gradient_reduction(stage, pos, w, last);
        for (auto& f : reduced) f = {done};
      }
      if (sc_.memory.offload.optimizer != Tier::none) {
        // ZeRO-Offload: each reduced gradient shard streams to host memory during the backward.
        const double shard = w.params * states_.gradients / static_cast<double>(layout_.dp);
        auto sent = copies(stage, pos, Stream::grad_out, Tier::dram, false, shard, {}, {}, reduced);
        auto& out = grad_out_[static_cast<std::size_t>(stage)];
        out.assign(sent.begin(), sent.end());
      } else if (near_storage_) {
        // Computational SSD: the reduced gradient shard goes down in 16 bits, peer to peer.
        const double shard = w.params * states_.weights / optimizer_shards();
        auto sent = copies(stage, pos, Stream::grad_out, Tier::local_ssd, false, shard, {}, {}, reduced, true);
        auto& out = grad_out_[static_cast<std::size_t>(stage)];
        out.assign(sent.begin(), sent.end());
      }
    }
    const int to_chunk = u.forward ? u.chunk + 1 : u.chunk - 1;
    if (to_chunk >= 0 && to_chunk < chunks_) send(stage, u, to_chunk);
    if (redundant_ && u.forward) emit_redundant_forward(stage, u);
  }

  /// The unit's output (activation or input gradient) to the stage of the next chunk.
  void send(int stage, const PipelineUnit& u, int to_chunk) {
    auto& last = last_[static_cast<std::size_t>(stage)];
    const int to_stage = part_.chunks[static_cast<std::size_t>(to_chunk)].stage;
    std::vector<TaskId> sends;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::int64_t src = rank_of(stage, lanes_[i]), dst = rank_of(to_stage, lanes_[i]);
      // Blocking on the sender's compute stream: Megatron's 2022 schedules wait for each p2p exchange.
      Task t = base(TaskKind::pp_transfer, Stream::compute, {src}, stage);
      set_pos(t, {u.chunk, u.microbatch, -1});
      // Megatron's scatter/gather optimisation: each TP rank sends only its 1/t slice.
      t.flows.push_back({Device::gpu(src), Device::gpu(dst), hidden_bytes_ / static_cast<double>(layout_.tp),
                         layout_.node(src) != layout_.node(dst)});
      t.deps = last[i];
      sends.push_back(dag_.add(std::move(t)));
    }
    p2p_[{u.chunk, u.microbatch, u.forward}] = sends;
  }

  /// The model chunk whose replica a chunk's stage keeps (redundant computation): the next one.
  int successor(int chunk) const { return (chunk + 1) % chunks_; }

  /// Redundant computation (Bamboo, Thorpe et al. NSDI 2023; docs/references.md, Redundant
  /// computation): after its own forward and send, the stage runs the forward of the successor
  /// chunk's layers on the same input, with their TP collectives, so that it can take over if the
  /// successor fails. Its activations are not kept (Bamboo's lazy backward runs only after a
  /// failure).
  void emit_redundant_forward(int stage, const PipelineUnit& u) {
    const ModelChunk& next = part_.chunks[static_cast<std::size_t>(successor(u.chunk))];
    double flops = 0.0, bytes = 0.0;
    int collectives = 0;
    for (int l = next.first_layer; l < next.first_layer + next.num_layers; ++l) {
      const LayerWork& w = work_[static_cast<std::size_t>(l)];
      flops += w.fwd_flops;
      bytes += w.fwd_bytes;
      collectives += w.tp_fwd;
    }
    auto& last = last_[static_cast<std::size_t>(stage)];
    const ChunkPos pos{u.chunk, u.microbatch, -1};
    auto ids = per_lane(stage, TaskKind::redundant, pos, flops, bytes, {}, {}, last);
    last = tp_collectives(stage, collectives, pos, ids);
  }

  /// Redundant computation keeps the successor's replica current: after the successor's gradients
  /// are reduced they come over (its shard, in the gradient precision) and this stage runs the
  /// successor's optimizer step on its copy of the states.
  void emit_redundant_step(int stage, double params) {
    const int next_stage = part_.chunks[static_cast<std::size_t>(successor(stage))].stage;
    const auto& reduced = dp_tasks_[static_cast<std::size_t>(next_stage)];
    const auto& next_last = last_[static_cast<std::size_t>(next_stage)];
    auto& last = last_[static_cast<std::size_t>(stage)];
    std::vector<TaskId> received;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::int64_t src = rank_of(next_stage, lanes_[i]), dst = rank_of(stage, lanes_[i]);
      Task t = base(TaskKind::pp_transfer, Stream::p2p, {dst}, stage);
      set_pos(t, {0, -1, -1});
      t.flows.push_back({Device::gpu(src), Device::gpu(dst), params * states_.gradients,
                         layout_.node(src) != layout_.node(dst)});
      t.deps = reduced.empty() ? next_last[i] : std::vector<TaskId>{reduced.back()};
      received.push_back(dag_.add(std::move(t)));
    }
    Frontier deps = last;
    for (std::size_t i = 0; i < lanes_.size(); ++i) deps[i].push_back(received[i]);
    const double per_param = 2.0 * states_.optimizer + states_.gradients + states_.weights;
    last = frontier_of(per_lane(stage, TaskKind::redundant, {0, -1, -1}, 0.0, per_param * params, {}, {}, deps));
  }

  /// ZeRO-3: gather the layer's weights before its compute, `prefetch_layers` layers ahead of use
  /// (DeepSpeed's prefetch); with offloaded parameters the rank's shard first comes back from its tier
  /// (ZeRO-Infinity). Returns what the compute that consumes them releases.
  std::vector<MemoryChange> emit_param_gather(int stage, const ChunkPos& pos, const LayerWork& w, Frontier& last) {
    const double full = w.params * states_.weights;
    const double shard = full / static_cast<double>(layout_.dp);
    // history holds, per earlier gather, what had run when it was issued: waiting for the entry
    // `prefetch_layers` back lets this gather overlap that many layers of compute.
    auto& history = gather_history_[static_cast<std::size_t>(stage)];
    const auto ahead = static_cast<std::size_t>(sc_.memory.offload.prefetch_layers);
    std::vector<TaskId> waits;
    if (!history.empty()) waits = history[history.size() >= ahead ? history.size() - ahead : 0];
    Frontier gate(lanes_.size(), waits);
    std::vector<MemoryChange> release;
    const Tier tier = sc_.memory.offload.params;
    if (tier != Tier::none) {
      auto fetched =
          copies(stage, pos, Stream::param_in, tier, true, shard, {{Tier::hbm, MemoryUse::workspace, shard}}, {}, gate);
      release.push_back({Tier::hbm, MemoryUse::workspace, shard});
      gate = frontier_of(fetched);
    }
    if (layout_.dp > 1) {
      auto phases = dp_collective(stage, Collective::all_gather, full, TaskKind::param_gather, pos, Stream::gather);
      for (const auto& g : gate) phases.front().deps.insert(phases.front().deps.end(), g.begin(), g.end());
      phases.back().allocate.push_back({Tier::hbm, MemoryUse::workspace, full - shard});
      release.push_back({Tier::hbm, MemoryUse::workspace, full - shard});
      TaskId done = 0;
      for (auto& task : phases) done = dag_.add(std::move(task));
      for (auto& g : gate) g = {done};
    }
    std::vector<TaskId> issued;
    for (const auto& l : last) issued.insert(issued.end(), l.begin(), l.end());
    history.push_back(std::move(issued));
    if (history.size() > ahead) history.erase(history.begin());
    for (std::size_t i = 0; i < lanes_.size(); ++i) last[i].insert(last[i].end(), gate[i].begin(), gate[i].end());
    return release;
  }

  /// Returns the reduction's last task.
  TaskId emit_gradient_reduction(int stage, const ChunkPos& pos, const LayerWork& w, const Frontier& last) {
    const bool sharded = sc_.parallelism.zero_stage >= 1 || sc_.parallelism.distributed_optimizer;
    const double grads = w.params * states_.gradients;
    auto phases = dp_collective(stage, sharded ? Collective::reduce_scatter : Collective::all_reduce, grads,
                                TaskKind::dp_comm, pos);
    for (const auto& l : last) phases.front().deps.insert(phases.front().deps.end(), l.begin(), l.end());
    for (auto& task : phases) dp_tasks_[static_cast<std::size_t>(stage)].push_back(dag_.add(std::move(task)));
    return dp_tasks_[static_cast<std::size_t>(stage)].back();
  }

  /// A data-parallel collective. When whole groups of replicas share each node (NVLink) it is
  /// hierarchical: an intra-node phase over NVLink, then the inter-node phase over the NICs on 1/g of
  /// the buffer (NCCL's tree/ring split); otherwise one flat ring over every replica. ZeRO-3 gathers
  /// use the gather stream so they can run ahead of the gradient reductions (DeepSpeed's prefetch).
  /// Returns the phases in order; stream order serialises them.
  std::vector<Task> dp_collective(int stage, Collective c, double bytes, TaskKind kind, const ChunkPos& pos,
                                  Stream stream = Stream::dp_comm) {
    const std::int64_t gpn = layout_.gpus_per_node, tp = layout_.tp, dp = layout_.dp;
    const std::int64_t per_node = gpn % tp == 0 ? std::min(gpn / tp, dp) : 1;
    const bool hierarchical = per_node > 1 && dp % per_node == 0 && (tp * dp) % gpn == 0 && dp / per_node > 1;
    enum class Scope { intra, inter, flat };
    std::vector<std::pair<Collective, Scope>> phases;
    if (!hierarchical) {
      phases = {{c, Scope::flat}};
    } else if (c == Collective::all_reduce) {
      phases = {{Collective::reduce_scatter, Scope::intra}, {Collective::all_reduce, Scope::inter},
                {Collective::all_gather, Scope::intra}};
    } else if (c == Collective::reduce_scatter) {
      phases = {{Collective::reduce_scatter, Scope::intra}, {Collective::reduce_scatter, Scope::inter}};
    } else {
      phases = {{Collective::all_gather, Scope::inter}, {Collective::all_gather, Scope::intra}};
    }
    std::vector<Task> out;
    for (const auto& [phase, scope] : phases) {
      Task merged = base(kind, stream, {}, stage);
      set_pos(merged, pos);
      for (const Lane& lane : lanes_) {
        const std::int64_t r = rank_of(stage, lane);
        const std::vector<std::int64_t> full = layout_.dp_group(r);
        const std::int64_t d = layout_.dp_index(r);
        std::vector<std::int64_t> ring;
        for (std::int64_t i = 0; i < dp; ++i) {
          const bool member = scope == Scope::flat || (scope == Scope::intra ? i / per_node == d / per_node
                                                                             : i % per_node == d % per_node);
          if (member) ring.push_back(full[static_cast<std::size_t>(i)]);
        }
        const double share = scope == Scope::inter ? bytes / static_cast<double>(per_node) : bytes;
        Task part = ring_collective(phase, ring, {r}, share, kind, stream, layout_);
        merged.ranks.push_back(r);
        merged.latency_steps = part.latency_steps;
        merged.flows.insert(merged.flows.end(), part.flows.begin(), part.flows.end());
      }
      out.push_back(std::move(merged));
    }
    return out;
  }

  void emit_optimizer(int stage) {
    const StageMemory& sm = mem_.stages[static_cast<std::size_t>(stage)];
    const bool sharded = sc_.parallelism.zero_stage >= 1 || sc_.parallelism.distributed_optimizer;
    const double shard = sharded ? static_cast<double>(layout_.dp) : 1.0;
    const double params = sm.parameters / shard;
    auto& last = last_[static_cast<std::size_t>(stage)];
    Frontier deps = last;
    const auto& dp = dp_tasks_[static_cast<std::size_t>(stage)];
    if (!dp.empty())
      for (auto& d : deps) d.push_back(dp.back());
    std::vector<TaskId> ids;
    const Tier tier = sc_.memory.offload.optimizer;
    const Tier params_tier = sc_.memory.offload.params;
    if (near_storage_) {
      ids = emit_storage_optimizer(stage, params, deps);
    } else if (tier == Tier::none) {
      // Adam reads and writes its states, reads the gradient and writes the compute-precision weights.
      const double per_param = 2.0 * states_.optimizer + states_.gradients + states_.weights;
      ids = per_lane(stage, TaskKind::optimizer, {0, -1, -1}, 0.0, per_param * params, {}, {}, deps);
      if (params_tier != Tier::none)  // the updated shard goes back to where the parameters live
        ids = copies(stage, {0, -1, -1}, Stream::upload, params_tier, false, params * states_.weights, {}, {},
                     frontier_of(ids));
    } else {
      ids = emit_host_optimizer(stage, tier, params, deps);
    }
    Frontier done = frontier_of(ids);
    if (sharded && sc_.parallelism.zero_stage < 3 && layout_.dp > 1) {
      // On the gather stream: the next iteration's reductions must not queue behind it (they do not
      // wait for it under a delayed update).
      for (auto& task : dp_collective(stage, Collective::all_gather, sm.parameters * states_.weights, TaskKind::dp_comm,
                                      {0, -1, -1}, Stream::gather)) {
        for (TaskId id : ids) task.deps.push_back(id);
        TaskId g = dag_.add(std::move(task));
        for (auto& d : done) d = {g};
      }
    }
    if (tier != Tier::none && sc_.memory.offload.delayed_update) {
      // DPU: the next iteration runs on the weights of the step before this one, so it waits only for
      // that step while this one overlaps it.
      auto& previous = delayed_step_[static_cast<std::size_t>(stage)];
      for (std::size_t i = 0; i < lanes_.size() && i < previous.size(); ++i)
        last[i].insert(last[i].end(), previous[i].begin(), previous[i].end());
      previous = done;
    } else {
      last = done;
    }
    // The next iteration's first ZeRO-3 gathers fetch the weights it will use.
    std::vector<TaskId> ready;
    for (const auto& l : last) ready.insert(ready.end(), l.begin(), l.end());
    gather_history_[static_cast<std::size_t>(stage)] = {ready};
  }

  double optimizer_shards() const {
    const bool sharded = sc_.parallelism.zero_stage >= 1 || sc_.parallelism.distributed_optimizer;
    return sharded ? static_cast<double>(layout_.dp) : 1.0;
  }

  /// Near-storage step (computational SSD; docs/references.md, Near-storage optimizer step): once
  /// the last 16-bit gradient shard is on the drives, the update reads and rewrites the fp32 states
  /// on the drives' own media, and the 16-bit weights come back to the GPU peer to peer. Nothing in
  /// 32 bits crosses PCIe.
  std::vector<TaskId> emit_storage_optimizer(int stage, double params, Frontier deps) {
    const auto& sent = grad_out_[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < lanes_.size() && i < sent.size(); ++i) deps[i].push_back(sent[i]);
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::int64_t r = rank_of(stage, lanes_[i]);
      const Device ssd = tier_device(Tier::local_ssd, layout_.node(r));
      Task t = base(TaskKind::optimizer, Stream::host, {r}, stage);
      set_pos(t, {0, -1, -1});
      t.flows.push_back({ssd, ssd, params * states_.optimizer, false});
      t.deps = deps[i];
      ids.push_back(dag_.add(std::move(t)));
    }
    return copies(stage, {0, -1, -1}, Stream::upload, Tier::local_ssd, true, params * states_.weights, {}, {},
                  frontier_of(ids), true);
  }

  /// ZeRO-Offload / ZeRO-Infinity step: wait for the last gradient shard to reach host memory; with
  /// states on NVMe or CXL read them into DRAM and write them back; run Adam on the CPU; copy the
  /// updated compute-precision shard back to the GPU (unless the parameters live on the host too).
  std::vector<TaskId> emit_host_optimizer(int stage, Tier tier, double params, Frontier deps) {
    const auto& sent = grad_out_[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < lanes_.size() && i < sent.size(); ++i) deps[i].push_back(sent[i]);
    const double state_bytes = states_.optimizer * params;
    auto host_stage = [&](TaskKind kind, std::optional<std::pair<Tier, Tier>> move, double bytes, const Frontier& after) {
      std::vector<TaskId> ids;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        const std::int64_t r = rank_of(stage, lanes_[i]);
        Task t = base(kind, Stream::host, {r}, stage);
        set_pos(t, {0, -1, -1});
        if (move) t.flows.push_back({tier_device(move->first, layout_.node(r)), tier_device(move->second, layout_.node(r)), bytes, false});
        else t.host_params = params;
        t.deps = after[i];
        ids.push_back(dag_.add(std::move(t)));
      }
      return ids;
    };
    Frontier gate = deps;
    if (tier != Tier::dram) gate = frontier_of(host_stage(TaskKind::offload, std::pair{tier, Tier::dram}, state_bytes, gate));
    std::vector<TaskId> done = host_stage(TaskKind::host_optimizer, std::nullopt, 0.0, gate);
    if (tier != Tier::dram) host_stage(TaskKind::offload, std::pair{Tier::dram, tier}, state_bytes, frontier_of(done));
    const Tier params_tier = sc_.memory.offload.params;
    if (params_tier != Tier::none) {
      // The parameters live on the host: the updated 16-bit shard is written to their tier.
      if (params_tier == Tier::dram) return done;
      return host_stage(TaskKind::offload, std::pair{Tier::dram, params_tier}, params * states_.weights,
                        frontier_of(done));
    }
    return copies(stage, {0, -1, -1}, Stream::upload, Tier::dram, true, params * states_.weights, {}, {},
                  frontier_of(done));
  }

  /// This iteration's training samples: each rank of the first stage reads its share (its replica's
  /// samples over the TP group) from the data tier into host memory, on its data stream, as
  /// requests_per_sample random reads per sample. The read waits until the batch `prefetch_iterations`
  /// before it is in use (its first forward has run); without prefetching, until the previous
  /// iteration ends. The first iteration's forward waits for the read. The first reads of a run
  /// start together: every node's start-up burst.
  void emit_data_load() {
    const DataSpec& d = sc_.data;
    auto& last = last_[0];
    auto& first_forward = first_forward_;
    // The first forward of each iteration on stage 0, found after the fact (stage 0's first task).
    if (iteration_ > 0 && first_forward.size() < static_cast<std::size_t>(iteration_)) {
      std::vector<TaskId> ids(lanes_.size());
      for (std::size_t i = 0; i < lanes_.size(); ++i)
        for (TaskId id = iteration_start_; id < dag_.tasks.size(); ++id) {
          const Task& t = dag_.tasks[id];
          if (t.kind == TaskKind::forward && t.rank() == rank_of(0, lanes_[i])) {
            ids[i] = id;
            break;
          }
        }
      first_forward.push_back(ids);
    }
    iteration_start_ = static_cast<TaskId>(dag_.tasks.size());
    if (d.tier == Tier::dram) return;  // already in host memory
    const double samples = static_cast<double>(sc_.training.global_batch_size) / static_cast<double>(layout_.dp) /
                           static_cast<double>(layout_.tp);
    const double bytes = samples * d.sample_bytes;
    const double requests = std::ceil(samples * static_cast<double>(d.requests_per_sample));
    const std::int64_t ahead = d.prefetch_iterations;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::int64_t r = rank_of(0, lanes_[i]);
      Task t = base(TaskKind::data_load, Stream::data, {r}, 0);
      set_pos(t, {0, -1, -1});
      Flow f{tier_device(d.tier, layout_.node(r)), tier_device(Tier::dram, layout_.node(r)), bytes, false};
      f.rail = r;
      t.flows.push_back(f);
      // Requests keep max_in_flight outstanding; each round pays the request latency.
      t.latency_steps = static_cast<int>(
          std::ceil(requests / static_cast<double>(sc_.hardware.object_store.max_in_flight)));
      if (ahead == 0) t.deps = last[i];
      else if (iteration_ - ahead >= 0) t.deps = {first_forward[static_cast<std::size_t>(iteration_ - ahead)][i]};
      const TaskId id = dag_.add(std::move(t));
      last[i].push_back(id);
    }
  }

  /// One checkpoint of the stage's ranks through `checkpoint.tiers`. The first hop (the snapshot)
  /// blocks training; `sync` blocks for every hop; `async` persists the later hops in the background,
  /// one after the other; `tiered` cuts the checkpoint into `checkpoint.chunks` pieces that stream
  /// through the hops as a pipeline, its last hop yielding to training traffic when the drain is
  /// congestion-aware; `in_memory` copies the snapshot to `replicas` peer nodes' DRAM and, when
  /// `options.persist`, on to the later tiers; `near_storage` has nothing to snapshot (the states
  /// live on the SSDs) and only persists the later tiers from there. States already on the host
  /// (offloaded) join at the first tier from where they are instead of leaving HBM. Each staging tier
  /// holds the bytes until the next hop has passed them on.
  void emit_checkpoint(int stage) {
    const auto& sm = mem_.stages[static_cast<std::size_t>(stage)];
    const double shards = static_cast<double>(layout_.dp);
    const CheckpointBehaviour policy = behaviour(sc_.checkpoint.strategy);
    const bool sync = policy.blocks_until_durable, near = near_storage_, in_memory = policy.peer_replicas > 0;
    // Near storage: the fp32 master on the SSDs stands for the 16-bit weights.
    const double weights = near ? 0.0 : sm.parameters * states_.weights / shards;
    const double optimizer = sm.parameters * states_.optimizer / shards, total = weights + optimizer;
    const int chunks = static_cast<int>(policy.chunks);
    std::vector<Tier> tiers = sc_.checkpoint.tiers;
    if (in_memory && !options_.persist) tiers.resize(1);
    const bool yields = policy.background_yields;
    auto device = [&](Tier tier, std::int64_t rank) { return tier_device(tier, layout_.node(rank)); };
    const Tier weights_at = sc_.memory.offload.params;
    const Tier states_at = near ? Tier::local_ssd : sc_.memory.offload.optimizer;
    auto& last = last_[static_cast<std::size_t>(stage)];
    Frontier start = last;
    // Under a delayed update the step of this iteration is still running: wait for it.
    const auto& in_flight = delayed_step_[static_cast<std::size_t>(stage)];
    for (std::size_t i = 0; i < lanes_.size() && i < in_flight.size(); ++i)
      start[i].insert(start[i].end(), in_flight[i].begin(), in_flight[i].end());
    const Stream background[] = {Stream::checkpoint, Stream::checkpoint_2, Stream::checkpoint_3};
    const double share = 1.0 / static_cast<double>(chunks);
    Frontier blocking_end = start;
    auto add_hop = [&](Stream stream, const Frontier& deps, auto&& fill) {
      std::vector<TaskId> ids;
      for (std::size_t i = 0; i < lanes_.size(); ++i) {
        const std::int64_t r = rank_of(stage, lanes_[i]);
        Task t = base(TaskKind::checkpoint, stream, {r}, stage);
        t.deps = deps[i];
        fill(t, r);
        ids.push_back(dag_.add(std::move(t)));
      }
      return frontier_of(ids);
    };
    for (int c = 0; c < chunks; ++c) {
      Frontier prev = c == 0 ? start : blocking_end;
      for (std::size_t hop = 0; hop < tiers.size(); ++hop) {
        const bool blocks = hop == 0 || sync;
        const Stream stream = blocks ? Stream::compute : background[std::min<std::size_t>(hop - 1, 2)];
        const bool resident = near && hop == 0;  // the states already sit there
        prev = add_hop(stream, prev, [&](Task& t, std::int64_t r) {
          set_pos(t, {0, c, -1});
          const Device dst = device(tiers[hop], r);
          if (hop == 0) {
            for (const auto& [bytes, at] : {std::pair{weights, weights_at}, std::pair{optimizer, states_at}}) {
              const Device src = at == Tier::none ? Device::gpu(r) : device(at, r);
              if (!(src == dst) && bytes > 0) t.flows.push_back({src, dst, bytes * share, false, false, false, r});
            }
          } else {
            Flow f{device(tiers[hop - 1], r), dst, total * share, false};
            f.background = yields;
            f.rail = r;
            t.flows.push_back(f);
          }
          if (tiers[hop] != Tier::object_store && !resident)
            t.allocate.push_back({tiers[hop], MemoryUse::buffers, total * share});
          if (hop > 0 && tiers[hop - 1] != Tier::object_store && !(near && hop == 1))
            t.release.push_back({tiers[hop - 1], MemoryUse::buffers, total * share});
        });
        if (blocks) blocking_end = prev;
        if (in_memory && hop == 0) prev = replicate(stage, prev, total);
      }
    }
    last = blocking_end;  // training waits for the blocking hops
  }

  /// In-memory checkpoint (Gemini): each node's snapshot also goes to the DRAM of the next
  /// `replicas` nodes over the NICs, in the background; the peers hold it until the next one.
  Frontier replicate(int stage, const Frontier& after, double bytes) {
    const std::int64_t nodes = (sc_.gpus + layout_.gpus_per_node - 1) / layout_.gpus_per_node;
    std::vector<TaskId> ids;
    for (std::size_t i = 0; i < lanes_.size(); ++i) {
      const std::int64_t r = rank_of(stage, lanes_[i]), node = layout_.node(r);
      Task t = base(TaskKind::checkpoint, Stream::checkpoint, {r}, stage);
      set_pos(t, {0, 0, -1});
      const std::int64_t replicas = behaviour(sc_.checkpoint.strategy).peer_replicas;
      for (std::int64_t j = 1; j <= replicas; ++j) {
        const Device peer = tier_device(Tier::dram, (node + j) % nodes);
        Flow f{tier_device(Tier::dram, node), peer, bytes, true};
        f.rail = r;
        t.flows.push_back(f);
      }
      // The peers' copies of this node's snapshot, counted where the rank is (the nodes are alike).
      t.allocate.push_back({Tier::dram, MemoryUse::buffers, bytes * static_cast<double>(replicas)});
      t.deps = after[i];
      ids.push_back(dag_.add(std::move(t)));
    }
    return frontier_of(ids);
  }

  const Scenario& sc_;
  const PipelinePartition& part_;
  const MemoryEstimate& mem_;
  RankLayout layout_;
  std::vector<LayerWork> work_;
  bool fold_;
  int checkpoint_after_ = -1;
  DagOptions options_;
  bool near_storage_ = false;  ///< the optimizer runs on computational SSDs
  bool redundant_ = false;     ///< each stage keeps and updates a replica of the next stage
  std::vector<std::vector<TaskId>> first_forward_;  ///< per iteration, stage 0's first forward per lane
  TaskId iteration_start_ = 0;                       ///< the first task of the current iteration
  double act_bytes_ = 2.0, hidden_bytes_ = 0.0;
  StateBytes states_;
  int m_ = 1, chunks_ = 1, iteration_ = 0;
  std::vector<Lane> lanes_;
  TaskDag dag_;
  std::vector<Frontier> last_;  // per stage
  std::map<UnitKey, std::vector<TaskId>> p2p_;
  std::vector<std::vector<TaskId>> dp_tasks_;
  std::vector<std::vector<std::vector<TaskId>>> gather_history_;  // per stage: see emit_param_gather
  std::map<std::tuple<int, int, int>, std::vector<TaskId>> act_out_;  // (chunk, mb, layer) → copies out
  std::vector<std::vector<TaskId>> grad_out_;  // per stage: the last gradient copies to the host
  std::vector<std::vector<std::vector<TaskId>>> act_copies_;  // per stage: activation copies out, in order
  std::vector<Frontier> delayed_step_;  // per stage: the offloaded step the next iteration waits for (DPU)
};

}  // namespace

DagSizeEstimate estimate_dag_size(const Scenario& sc, bool fold) {
  // Measured on the shipped scenarios: 4 to 6 tasks per layer, micro-batch and simulated GPU
  // (forward, backward, recompute and their collectives); 8 bounds it from above, offload adds copies.
  constexpr double kTasksPerLayerAndMicrobatch = 8.0;
  const auto& p = sc.parallelism;
  const double iterations = static_cast<double>(std::max<std::int64_t>(sc.training.iterations, 3));
  const double microbatches = static_cast<double>(std::max<std::int64_t>(sc.num_microbatches(), 1));
  const double layers = std::ceil(static_cast<double>(sc.model.num_layers) / static_cast<double>(std::max<std::int64_t>(p.pp, 1)));
  const double ranks = static_cast<double>(fold ? p.pp : sc.gpus);
  DagSizeEstimate e;
  e.tasks = iterations * ranks * (microbatches + 1.0) * layers * kTasksPerLayerAndMicrobatch;
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
    out.push_back(sm.parameters * ((near ? 0.0 : b.weights) + b.optimizer) / static_cast<double>(sc.parallelism.dp));
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
