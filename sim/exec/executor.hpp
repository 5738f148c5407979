#pragma once

/// The two executors over one task DAG. A task starts when its dependencies have finished and every
/// stream it occupies is free (tasks of one stream run in program order, like CUDA streams).
///  - run_des: SimGrid discrete-event simulation; concurrent flows share link bandwidth max-min
///    fairly, except background flows, which are suspended while any other flow uses one of their
///    links; kernels that overlap on one GPU share it, and an NCCL collective holds its share of the
///    GPU's SMs while its bytes move (TaskCosts::sm_share), which the kernels beside it do without.
///  - run_list_schedule (screening, `--executor list`): the same rules as a fluid model in this
///    process (max-min shares recomputed only around each event), without SimGrid.
/// run_contention_free is the reference for contention: each task takes its uncontended time.

#include <string>
#include <vector>

#include "sim/exec/task_costs.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

enum class ExecutorKind { des, list };
std::string to_string(ExecutorKind k);

TaskTimes run_list_schedule(const TaskDag& dag, const TaskCosts& costs);

/// Every task at its uncontended time, in one pass over the DAG: what the run would take if no two
/// flows ever shared a link (`simulation.contention_free_iteration_time_s`).
TaskTimes run_contention_free(const TaskDag& dag, const TaskCosts& costs);

/// Runs SimGrid in a child process (SimGrid allows one simulation per process), so it can be called
/// any number of times. Throws std::runtime_error if the child fails.
TaskTimes run_des(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

/// The executor `kind` on the DAG.
TaskTimes execute(ExecutorKind kind, const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

}  // namespace strata
