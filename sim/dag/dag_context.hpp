#pragma once

/// The state every emitter of the training DAG shares while it is built: the TaskDag under
/// construction, the simulated ranks ("lanes"), each stage's frontier (what its next task waits
/// for) and the iteration being emitted, with the helpers that stamp out one task per lane. It
/// holds no policy: the emitters decide what to add, the schedule driver decides when.

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/dag/rank_layout.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

/// Builds the DAG stage by stage. Ranks are "lanes": in folded mode one lane per stage (the
/// representative), otherwise every (dp, tp) pair.
class DagContext {
 public:
  using Lane = std::pair<std::int64_t, std::int64_t>;  // (replica index dp·cp + cp index, tp index)
  /// Per lane, the tasks its next task must wait for.
  using Frontier = std::vector<std::vector<TaskId>>;

  /// Where a task sits in the schedule, for the trace.
  struct ChunkPos {
    int chunk = 0, microbatch = 0, layer = 0;
  };

  /// `offload_gpudirect`: copies to and from local SSDs are GPUDirect Storage DMAs (no host bounce).
  DagContext(const RankLayout& layout, bool fold, int stages, bool offload_gpudirect = false);

  const RankLayout& layout() const { return layout_; }
  bool fold() const { return fold_; }
  const std::vector<Lane>& lanes() const { return lanes_; }
  std::size_t num_lanes() const { return lanes_.size(); }
  TaskDag& dag() { return dag_; }
  int iteration() const { return iteration_; }
  void set_iteration(int it) { iteration_ = it; }
  /// The stage's frontier: per lane, what its next task on the stage waits for.
  Frontier& last(int stage) { return last_[static_cast<std::size_t>(stage)]; }

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

  static void set_pos(Task& t, const ChunkPos& pos) {
    t.chunk = pos.chunk;
    t.microbatch = pos.microbatch;
    t.layer = pos.layer;
  }

  static Frontier frontier_of(const std::vector<TaskId>& ids) {
    Frontier f(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) f[i] = {ids[i]};
    return f;
  }

  /// Compute work of one task: model FLOPs and HBM bytes, and the kernels' seconds when known.
  struct Work {
    double flops = 0.0, bytes = 0.0, seconds = 0.0;
  };

  /// One task per lane on the compute stream, each waiting for its lane's entry of `deps`.
  std::vector<TaskId> per_lane(int stage, TaskKind kind, const ChunkPos& pos, const Work& work,
                               std::vector<MemoryChange> alloc, std::vector<MemoryChange> release,
                               const Frontier& deps);

  /// One copy per lane between HBM and an offload tier of the lane's node; `direct` (or GPUDirect
  /// Storage for offload, with the tier local SSDs) skips the host bounce buffer.
  std::vector<TaskId> copies(int stage, const ChunkPos& pos, Stream stream, Tier tier, bool to_gpu, double bytes,
                             std::vector<MemoryChange> alloc, std::vector<MemoryChange> release, const Frontier& deps,
                             bool direct = false);

  TaskDag take() { return std::move(dag_); }

 private:
  RankLayout layout_;
  bool fold_;
  bool offload_gpudirect_ = false;
  int iteration_ = 0;
  std::vector<Lane> lanes_;
  TaskDag dag_;
  std::vector<Frontier> last_;  // per stage
};

}  // namespace strata
