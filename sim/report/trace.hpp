#pragma once

/// A schedule as Chrome / Perfetto trace-event JSON: a process per simulated GPU with a thread per
/// stream, a process for the links (async slices on a track per link a transfer crossed), and
/// counters for each GPU's memory per tier. Times are microseconds.

#include <functional>
#include <string>
#include <vector>

#include "sim/analysis/results.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

std::string trace_json(const TaskDag& dag, const TaskTimes& times, const LinkNamer& links);

}  // namespace strata
