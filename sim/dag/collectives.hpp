#pragma once

/// NCCL's collectives as flows. Rings: every member sends to its ring successor; the bytes each
/// sends and the number of sequential steps follow the ring algorithm (Patarasuk & Yuan 2009;
/// NCCL's ring): all-reduce 2(n-1)/n·S in 2(n-1) steps, reduce-scatter and all-gather (n-1)/n·S in
/// n-1 steps. An all-reduce inside a node whose NVSwitch reduces (NVLink SHARP, NCCL's NVLS
/// algorithm) instead sends each member's buffer once to the switch and brings the sum back once:
/// S each way per member, at the switch's rate.

#include <cstdint>
#include <vector>

#include "sim/dag/rank_layout.hpp"
#include "sim/dag/task_dag.hpp"

namespace strata {

struct HardwareSpec;

/// `scatter_gather`: a reduce-scatter and an all-gather of the same buffer (a TP sub-block's pair
/// under sequence parallelism): two NCCL collectives the switch does not reduce, timed as one ring
/// all-reduce (its volume, its steps and one call's latency).
enum class Collective { all_reduce, reduce_scatter, all_gather, scatter_gather };

double ring_bytes_per_member(Collective c, std::int64_t members, double bytes);
int ring_steps(Collective c, std::int64_t members);

/// The smallest group inside one node whose all-reduce NCCL runs in the NVSwitch rather than as a
/// ring: where the switch's S at efficiency.nvlink_sharp beats the ring's 2(n-1)/n·S at
/// efficiency.nvlink, as NCCL's tuner picks the algorithm its model finds faster. 0 when the node
/// has no NVLink SHARP or the profile states no rate for it, or no group of the node gains.
std::int64_t switch_all_reduce_from(const HardwareSpec& hw);

/// A task running collective `c` over `group` (ring order) on `bytes` (the full buffer S).
/// `simulated` are the members that get a flow and whose stream the task occupies: all of them,
/// or one representative when symmetric peers are folded away.
Task nccl_collective(Collective c, const std::vector<std::int64_t>& group, const std::vector<std::int64_t>& simulated,
                     double bytes, TaskKind kind, Stream stream, const RankLayout& layout);

}  // namespace strata
