#pragma once

/// Ring collectives as flows: every member sends to its ring successor; the bytes each sends and the
/// number of sequential steps follow the ring algorithm (Patarasuk & Yuan 2009; NCCL's ring):
/// all-reduce 2(n-1)/n·S in 2(n-1) steps, reduce-scatter and all-gather (n-1)/n·S in n-1 steps.

#include <cstdint>
#include <vector>

#include "sim/dag/rank_layout.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

enum class Collective { all_reduce, reduce_scatter, all_gather };

double ring_bytes_per_member(Collective c, std::int64_t members, double bytes);
int ring_steps(Collective c, std::int64_t members);

/// A task running collective `c` over `group` (ring order) on `bytes` (the full buffer S).
/// `simulated` are the members that get a flow and whose stream the task occupies: all of them,
/// or one representative when symmetric peers are folded away.
Task ring_collective(Collective c, const std::vector<std::int64_t>& group, const std::vector<std::int64_t>& simulated,
                     double bytes, TaskKind kind, Stream stream, const RankLayout& layout);

}  // namespace strata
