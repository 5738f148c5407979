#include "sim/dag/data_loading_emitter.hpp"

#include <cmath>

namespace strata {

/// This iteration's training samples: each rank of the first stage reads its share (its replica's
/// samples over the TP group) from the data tier into host memory, on its data stream, as
/// requests_per_sample random reads per sample. The read waits until the batch `prefetch_iterations`
/// before it is in use (its first forward has run); without prefetching, until the previous
/// iteration ends. The first iteration's forward waits for the read. The first reads of a run
/// start together: every node's start-up burst.
void DataLoadingEmitter::emit() {
  const DataSpec& d = plan_.data;
  const RankLayout& layout = ctx_.layout();
  const auto& lanes = ctx_.lanes();
  const int iteration = ctx_.iteration();
  TaskDag& dag = ctx_.dag();
  auto& last = ctx_.last(0);
  auto& first_forward = first_forward_;
  // The first forward of each iteration on stage 0, found after the fact (stage 0's first task).
  if (iteration > 0 && first_forward.size() < static_cast<std::size_t>(iteration)) {
    std::vector<TaskId> ids(lanes.size());
    for (std::size_t i = 0; i < lanes.size(); ++i)
      for (TaskId id = iteration_start_; id < dag.tasks.size(); ++id) {
        const Task& t = dag.tasks[id];
        if (t.kind == TaskKind::forward && t.rank() == ctx_.rank_of(0, lanes[i])) {
          ids[i] = id;
          break;
        }
      }
    first_forward.push_back(ids);
  }
  iteration_start_ = static_cast<TaskId>(dag.tasks.size());
  if (d.tier == Tier::dram) return;  // already in host memory
  const double samples = static_cast<double>(plan_.global_batch_size) / static_cast<double>(layout.replicas()) /
                         static_cast<double>(layout.tp);
  const double bytes = samples * d.sample_bytes;
  const double requests = std::ceil(samples * static_cast<double>(d.requests_per_sample));
  const std::int64_t ahead = d.prefetch_iterations;
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const std::int64_t r = ctx_.rank_of(0, lanes[i]);
    Task t = ctx_.base(TaskKind::data_load, Stream::data, {r}, 0);
    DagContext::set_pos(t, {0, -1, -1});
    Flow f{tier_device(d.tier, layout.node(r)), tier_device(Tier::dram, layout.node(r)), bytes, false};
    f.rail = r;
    t.flows.push_back(f);
    // Requests keep max_in_flight outstanding; each round pays the request latency.
    t.latency_steps = static_cast<int>(std::ceil(requests / static_cast<double>(plan_.max_in_flight)));
    if (ahead == 0) t.deps = last[i];
    else if (iteration - ahead >= 0) t.deps = {first_forward[static_cast<std::size_t>(iteration - ahead)][i]};
    const TaskId id = dag.add(std::move(t));
    last[i].push_back(id);
  }
}

}  // namespace strata
