#include "sim/analysis/pipeline_balance.hpp"

#include <algorithm>

#include "sim/dag/layer_work.hpp"
#include "sim/graph/memory_model.hpp"

namespace strata {

namespace {

/// The partition with `sizes` for chunks [from, end of chunks) and the blocks [0, first) spread
/// evenly over the chunks before `from` (each keeps at least one).
PipelinePartition candidate(std::vector<int> sizes, int from, int first, int stages, int virtual_stages) {
  for (int c = 0; c < from; ++c) sizes[static_cast<std::size_t>(c)] = first / from + (c < first % from ? 1 : 0);
  return partition_from_counts(sizes, stages, virtual_stages);
}

/// Greedy packing under `bound`, from the last chunk back: each chunk takes blocks while its cost
/// stays within the bound, its stage still fits (the blocks not yet placed spread evenly over the
/// earlier chunks) and every earlier chunk keeps at least one block. Empty when the blocks do not
/// all fit.
std::vector<int> pack(int blocks, const ChunkCost& cost, int stages, int virtual_stages, double bound,
                      const StageFits& fits) {
  const int chunks = stages * virtual_stages;
  std::vector<int> sizes(static_cast<std::size_t>(chunks), 0);
  int end = blocks;  // blocks [0, end) are still to place
  for (int c = chunks - 1; c >= 0; --c) {
    double sum = 0.0;
    int n = 0;
    while (end - n > c) {
      const double grown = cost(end - n - 1, n + 1);
      // The first chunk must take every block left.
      if (c > 0 && n > 0 && grown > bound) break;
      if (c > 0) {
        sizes[static_cast<std::size_t>(c)] = n + 1;
        if (!fits(candidate(sizes, c, end - n - 1, stages, virtual_stages), c % stages)) break;
      }
      sum = grown;
      ++n;
    }
    if (sum > bound || n == 0) return {};
    sizes[static_cast<std::size_t>(c)] = n;
    end -= n;
  }
  if (end != 0) return {};
  return sizes;
}

double largest_chunk(const ChunkCost& cost, const PipelinePartition& p) {
  double worst = 0.0;
  for (const auto& c : p.chunks) worst = std::max(worst, cost(c.first_layer, c.num_layers));
  return worst;
}

}  // namespace

std::optional<PipelinePartition> balance_partition(int blocks, const ChunkCost& cost, int stages, int virtual_stages,
                                                   const StageFits& fits) {
  const int chunks = stages * virtual_stages;
  if (blocks < chunks) return std::nullopt;
  auto feasible = [&](double bound) -> std::optional<PipelinePartition> {
    const std::vector<int> sizes = pack(blocks, cost, stages, virtual_stages, bound, fits);
    if (sizes.empty()) return std::nullopt;
    PipelinePartition p = partition_from_counts(sizes, stages, virtual_stages);
    for (int s = 0; s < stages; ++s)
      if (!fits(p, s)) return std::nullopt;
    return p;
  };
  double lo = 0.0;
  for (int l = 0; l < blocks; ++l) lo = std::max(lo, cost(l, 1));
  double hi = cost(0, blocks);
  std::optional<PipelinePartition> best = feasible(hi);
  if (!best) return std::nullopt;
  if (auto p = feasible(lo)) return p;
  // Invariant: lo infeasible, hi feasible. 50 halvings are far below any kernel's time.
  for (int i = 0; i < 50 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (auto p = feasible(mid)) {
      hi = largest_chunk(cost, *p);  // the bound the packing reached, at most mid
      best = std::move(p);
    } else {
      lo = mid;
    }
  }
  return best;
}

PipelinePartition scenario_partition(const Scenario& sc, const ComputeGraph& graph) {
  const auto& par = sc.parallelism;
  const int L = static_cast<int>(sc.model.num_layers), pp = static_cast<int>(par.pp),
            v = static_cast<int>(par.virtual_stages);
  if (!par.pipeline_layers.empty()) {
    std::vector<int> counts;
    for (std::int64_t n : par.pipeline_layers) counts.push_back(static_cast<int>(n));
    return partition_from_counts(counts, pp, v);
  }
  PipelinePartition uniform = partition_layers(L, pp, v);
  switch (par.pipeline_partition) {
    case PipelinePartitioning::uniform: return uniform;
    case PipelinePartitioning::balanced: break;
  }
  if (pp == 1) return uniform;
  // Each block's kernel seconds forward, backward and recomputed (FLOPs on a GPU without kernel
  // tables); the embedding counts with the first block and the LM head and loss with the last
  // (layer_work). TP collectives are alike for every block and left out (the copies DTensor's sequence
  // parallelism makes around them are in the kernel seconds, alike too). Where full recomputation is
  // limited to a chunk's first blocks (memory.recompute_layers), a chunk reruns only those.
  const std::vector<LayerWork> work = layer_work(sc, graph);
  double total_s = 0.0;
  for (const auto& w : work) total_s += w.fwd_s + w.bwd_s;
  std::vector<double> run_sum = {0.0}, rerun_sum = {0.0};  // prefix sums over the blocks
  for (const auto& w : work) {
    const RerunWork rerun = rerun_work(w, w.recompute, sc.training.behaviour.selective_recompute);
    run_sum.push_back(run_sum.back() + (total_s > 0.0 ? w.fwd_s + w.bwd_s : w.fwd_flops + w.bwd_flops));
    rerun_sum.push_back(rerun_sum.back() + (total_s > 0.0 ? rerun.seconds : rerun.flops));
  }
  const ChunkCost cost = [&](int first, int count) {
    const auto at = [](const std::vector<double>& sum, int l) { return sum[static_cast<std::size_t>(l)]; };
    const int rerun = recomputed_blocks(sc, count);
    return at(run_sum, first + count) - at(run_sum, first) + at(rerun_sum, first + rerun) - at(rerun_sum, first);
  };
  // Memory bounds the partition only when the uniform one fits: otherwise no split fits and the
  // verdict says so.
  const double hbm = sc.hardware.gpu.hbm.value;
  auto stage_fits = [&](const PipelinePartition& p, int stage) {
    return estimate_memory(sc, graph, p).stages[static_cast<std::size_t>(stage)].hbm.total() <= hbm;
  };
  bool bounded = true;
  for (int s = 0; s < pp; ++s) bounded = bounded && stage_fits(uniform, s);
  const StageFits fits = [&](const PipelinePartition& p, int stage) { return !bounded || stage_fits(p, stage); };
  std::optional<PipelinePartition> best = balance_partition(L, cost, pp, v, fits);
  // The greedy packing is not exact under a memory bound: never return worse than uniform.
  if (!best || largest_chunk(cost, *best) > largest_chunk(cost, uniform)) return uniform;
  return *best;
}

}  // namespace strata
