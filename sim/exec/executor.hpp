#pragma once

/// The two executors over one task DAG. A task starts when its dependencies have finished and every
/// stream it occupies is free (tasks of one stream run in program order, like CUDA streams).
///  - run_list_schedule: contention-free; each task takes its uncontended time.
///  - run_des: SimGrid discrete-event simulation; concurrent flows share link bandwidth, except
///    background flows, which are suspended while any other flow uses one of their links.
/// With no shared-link contention both give the same times.

#include <string>
#include <vector>

#include "sim/exec/task_costs.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

enum class ExecutorKind { des, list };
std::string to_string(ExecutorKind k);

TaskTimes run_list_schedule(const TaskDag& dag, const TaskCosts& costs);

/// Runs SimGrid in a child process (SimGrid allows one simulation per process), so it can be called
/// any number of times. Throws std::runtime_error if the child fails.
TaskTimes run_des(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

/// The executor `kind` on the DAG.
TaskTimes execute(ExecutorKind kind, const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

}  // namespace strata
