#include "sim/dag/layer_work.hpp"

#include <algorithm>

#include "sim/graph/kernel_costs.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

std::vector<LayerWork> layer_work(const Scenario& sc, const ComputeGraph& graph) {
  const int L = static_cast<int>(sc.model.num_layers);
  const double t = static_cast<double>(sc.parallelism.tp);
  const bool sp = sc.parallelism.sequence_parallel;
  const ActivationPolicy policy{sc.parallelism.tp, sp, sc.memory.recompute};
  const KernelCosts kernels(sc.hardware, sc.training.precision, sc.training.behaviour.attention);
  std::vector<LayerWork> work(static_cast<std::size_t>(L));
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    const Op& op = graph[v];
    LayerWork& w = work[static_cast<std::size_t>(std::clamp(op.layer, 0, L - 1))];
    const bool in_block = op.layer >= 0 && op.layer < L;
    // The router and the latent-attention down-projections are replicated over TP (divided only by
    // sequence parallelism); every other GEMM is split over the TP group (Megatron column/row-parallel
    // linears, vocab-parallel head).
    const double flops_div = op.tp_replicated ? (sp ? t : 1.0) : t;
    const double traffic = rank_bytes({"", op.memory_traffic, op.traffic_split}, policy);
    w.fwd_flops += op.forward_flops / flops_div;
    w.bwd_flops += op.backward_flops / flops_div;
    w.fwd_bytes += traffic;
    w.bwd_bytes += kBackwardTrafficFactor * traffic;
    const OpSeconds sec = kernels.op_seconds(op, t, traffic, kBackwardTrafficFactor * traffic);
    w.fwd_s += sec.forward;
    w.bwd_s += sec.backward;
    if (op.kind == OpKind::attention_core) {
      w.core_flops += op.forward_flops / flops_div;
      w.core_bytes += traffic;
      w.core_s += sec.forward;
    }
    if (in_block) {
      w.block_flops += op.forward_flops / flops_div;
      w.block_bytes += traffic;
      w.block_s += sec.forward;
    }
    if (!(op.shares_embedding && sc.parallelism.pp == 1)) w.params += op.params_split / t + op.params_replicated;
    // Recomputation reruns transformer blocks only: the embedding's and the head's tensors stay.
    for (const SavedTensor& s : op.saved) {
      const double bytes = rank_bytes(s, policy);
      if (!in_block || kept_for_backward(s, policy.recompute)) w.saved += bytes;
      else w.rebuilt += bytes;
    }
  }
  // Megatron, in all-reduce equivalents of the hidden-state buffer: forward, one after each of the
  // attention and MLP row-parallel projections (with SP an all-gather before and a reduce-scatter
  // after each sub-block: the same volume). Backward without SP, the two input-gradient
  // all-reduces; with SP, Megatron's sequence-parallel linears also re-gather their sharded input
  // for the weight gradient, three all-reduce equivalents (which is why SP saves 0.5 ms of forward
  // but only 0.1 ms of backward per layer in Korthikanti et al. 2022 Table 4). Plus one for the
  // vocab-parallel embedding's output and one for the LM head's input gradient. They block the
  // compute stream, as the collectives of the paper's Megatron did.
  for (auto& w : work) {
    w.tp_fwd = kBlockCollectives;
    w.tp_bwd = sp ? 3 : 2;
  }
  work.front().tp_fwd += 1;
  work.back().tp_bwd += 1;
  return work;
}

}  // namespace strata
