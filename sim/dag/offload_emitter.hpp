#pragma once

/// Offload to the host tiers and the drives: activations copied out after each forward layer and
/// fetched back `prefetch_layers` ahead of their backward (with back-pressure on the copies out),
/// reduced gradient shards streamed to host memory (ZeRO-Offload) or to computational SSDs (near
/// storage), and the optimizer step that then runs there: Adam on the host CPU with the states in
/// DRAM, CXL or NVMe (ZeRO-Offload / ZeRO-Infinity), or on the drives' own media (near storage).

#include <map>
#include <tuple>
#include <vector>

#include "sim/dag/dag_context.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/pipeline_schedule.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

class OffloadEmitter {
 public:
  /// `near_storage`: the optimizer runs on computational SSDs; `optimizer_shards`: replicas the
  /// optimizer states are sharded over.
  OffloadEmitter(DagContext& ctx, const OffloadSpec& spec, const StateBytes& states, bool near_storage,
                 double optimizer_shards, const std::vector<LayerWork>& work);

  /// Pinned host buffers: DRAM and CXL hold host_buffer_factor bytes per offloaded byte.
  double pinned_factor(Tier tier) const { return tier == Tier::local_ssd ? 1.0 : spec_.host_buffer_factor; }

  void new_iteration(int stages);

  // Activations, in the order the schedule driver calls them for one unit of `chunk`.
  /// A backward unit first fetches its first `prefetch_layers` + 1 layers' activations.
  void begin_unit(int stage, const PipelineUnit& u, const ModelChunk& chunk);
  /// Back-pressure: at most prefetch_layers + 1 layers wait in HBM for their copy out.
  void before_forward(int stage, DagContext::Frontier& last);
  /// The saved tensors of the forward `ids` leave for the tier once the layer is done.
  void after_forward(int stage, const DagContext::ChunkPos& pos, const LayerWork& w, const std::vector<TaskId>& ids);
  /// The backward of the unit's k-th layer waits for its activations to be back.
  void before_backward(int k, DagContext::Frontier& last);
  /// The k-th layer's backward `ids` done, the next layer's fetch starts.
  void after_backward(int stage, int k, const std::vector<TaskId>& ids);

  /// The layer's reduced gradient shard leaves for the optimizer's tier (if the step is offloaded).
  void gradient_out(int stage, const DagContext::ChunkPos& pos, const LayerWork& w,
                    const DagContext::Frontier& reduced);
  std::vector<TaskId> storage_optimizer(int stage, double params, DagContext::Frontier deps);
  std::vector<TaskId> host_optimizer(int stage, Tier tier, double params, DagContext::Frontier deps);

 private:
  void fetch(int stage, int k, DagContext::Frontier gate);

  DagContext& ctx_;
  const OffloadSpec& spec_;
  StateBytes states_;
  bool near_storage_;
  double optimizer_shards_;
  const std::vector<LayerWork>& work_;
  // The unit being emitted (backward): its chunk, micro-batch and layers, and per layer its fetches.
  int unit_chunk_ = 0, unit_microbatch_ = 0, unit_first_layer_ = 0, unit_layers_ = 0;
  std::vector<std::vector<TaskId>> fetched_;
  std::map<std::tuple<int, int, int>, std::vector<TaskId>> act_out_;  // (chunk, mb, layer) → copies out
  std::vector<std::vector<TaskId>> grad_out_;  // per stage: the last gradient copies to the host
  std::vector<std::vector<std::vector<TaskId>>> act_copies_;  // per stage: activation copies out, in order
};

}  // namespace strata
