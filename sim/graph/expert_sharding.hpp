#pragma once

/// An MoE layer's routed experts as one expert-parallel rank sees them. Expert parallelism gives
/// each of the ep ranks of a group num_experts/ep experts and sends each its tokens: ep·s·b·k tokens
/// spread over num_experts experts, so a rank computes as many routed tokens as without EP (s·b·k),
/// in ep× taller per-expert GEMMs of which there are ep× fewer. The most loaded rank sets the pace:
/// its GEMMs are `pace` times the mean. With ep = 1 the op is unchanged.

#include <cstdint>

#include "sim/graph/compute_graph.hpp"

namespace strata {

/// The op with its weights divided over `ep` and, for routed experts, its grouped GEMM reshaped:
/// per local expert M·ep·pace rows, count/ep experts, FLOPs ×pace, and, with more than one local
/// expert, the sorting pass's traffic (Op::expert_sort_traffic). Other ops come back unchanged.
/// `expert_tp`: the experts' TP degree (ParallelismSpec::expert_tp()). Split over the TP group
/// (expert_tp = tp) the group gathers its tokens first, so each EP rank's experts see the replica's
/// tokens; whole (expert TP 1) under sequence parallelism a rank routes only its own shard: the
/// experts' rows are tp× fewer.
Op expert_shard(const Op& op, std::int64_t ep, double pace, std::int64_t tp = 1, std::int64_t expert_tp = 1);

/// Weights of `op` one TP rank holds that belong to the routed experts (0 for other ops), before EP.
double expert_params_per_tp_rank(const Op& op, std::int64_t tp);

}  // namespace strata
