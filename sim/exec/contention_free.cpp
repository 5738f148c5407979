#include <algorithm>

#include "sim/exec/executor.hpp"

namespace strata {

TaskTimes run_contention_free(const TaskDag& dag, const TaskCosts& costs) {
  // TaskDag::add only accepts dependencies on earlier tasks and streams run in insertion order, so
  // insertion order is a topological order (the tests check it with Boost.Graph).
  const auto stream_order = stream_predecessors(dag);
  const StreamPredecessors& stream_prev = *stream_order;
  TaskTimes times;
  times.start.assign(dag.tasks.size(), 0.0);
  times.finish.assign(dag.tasks.size(), 0.0);
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    double start = 0.0;
    for (TaskId d : t.deps) start = std::max(start, times.finish[d]);
    for (TaskId p : stream_prev[id]) start = std::max(start, times.finish[p]);
    times.start[id] = start;
    times.finish[id] = start + costs.uncontended_seconds(id, t);
  }
  return times;
}

}  // namespace strata
