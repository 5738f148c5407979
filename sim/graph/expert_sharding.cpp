#include "sim/graph/expert_sharding.hpp"

namespace strata {

Op expert_shard(const Op& op, std::int64_t ep, double pace, std::int64_t tp, std::int64_t expert_tp) {
  // Without EP every rank computes the same tokens on its slice of every expert: no rank waits.
  if (op.kind != OpKind::experts || ep == 1) return op;
  const double e = static_cast<double>(ep);
  Op out = op;
  const double tokens_share = static_cast<double>(expert_tp) / static_cast<double>(tp);
  // After the all-to-all (and the expert-TP group's gather) a rank holding more than one expert
  // sorts the tokens it received by expert, and back before the combine (the alltoall dispatcher;
  // EP 1 uses no all-to-all). Those are the expert-TP group's tokens, the most loaded rank's pace×
  // its share: expert_tp× what the TP split of the op's traffic (rank_bytes, under SP) leaves a rank.
  const double local_experts = (op.gemms.empty() ? 1.0 : op.gemms.front().count) / e;
  if (local_experts > 1.0) out.memory_traffic += op.expert_sort_traffic * pace * static_cast<double>(expert_tp);
  out.params_split /= e;
  out.params_replicated /= e;
  out.forward_flops *= pace;
  out.backward_flops *= pace;
  // One grouped GEMM over the local experts: each sees the tokens the whole EP group routes to it.
  for (GemmShape& g : out.gemms) {
    g.m *= e * pace * tokens_share;
    g.count /= e;
  }
  return out;
}

double expert_params_per_tp_rank(const Op& op, std::int64_t tp) {
  if (op.kind != OpKind::experts) return 0.0;
  return op.params_split / static_cast<double>(tp) + op.params_replicated;
}

}  // namespace strata
