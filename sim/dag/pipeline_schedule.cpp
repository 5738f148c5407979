#include "sim/dag/pipeline_schedule.hpp"

#include <algorithm>

namespace strata {

namespace {

std::vector<PipelineUnit> gpipe(int stage, int m) {
  std::vector<PipelineUnit> order;
  for (int mb = 0; mb < m; ++mb) order.push_back({true, stage, mb});
  for (int mb = 0; mb < m; ++mb) order.push_back({false, stage, mb});
  return order;
}

/// PipeDream-Flush: p-s-1 warm-up forwards, then one forward and one backward alternately, then
/// the remaining backwards (Narayanan et al. 2021, Figure 4 top).
std::vector<PipelineUnit> one_f_one_b(int stage, int p, int m) {
  const int warmup = std::min(p - stage - 1, m);
  std::vector<PipelineUnit> order;
  int next_f = 0, next_b = 0;
  for (int i = 0; i < warmup; ++i) order.push_back({true, stage, next_f++});
  while (next_f < m) {
    order.push_back({true, stage, next_f++});
    order.push_back({false, stage, next_b++});
  }
  while (next_b < m) order.push_back({false, stage, next_b++});
  return order;
}

/// Megatron-LM's interleaved schedule (forward_backward_pipelining_with_interleaving): the k-th
/// forward runs chunk (k / p) % v on micro-batch (k / (p·v))·p + k % p; backwards visit chunks in
/// reverse. Warm-up is 2(p-s-1) + (v-1)·p forwards (all of them when m = p).
std::vector<PipelineUnit> interleaved(int stage, int p, int v, int m) {
  const int total = m * v;
  // With as many micro-batches as stages Megatron runs every forward first.
  const int warmup = m == p ? total : std::min(2 * (p - stage - 1) + (v - 1) * p, total);
  auto unit = [&](int k, bool forward) {
    const int group = k / (p * v), in_group = k % (p * v);
    int local_chunk = in_group / p;
    if (!forward) local_chunk = v - 1 - local_chunk;
    return PipelineUnit{forward, local_chunk * p + stage, group * p + in_group % p};
  };
  std::vector<PipelineUnit> order;
  int next_f = 0, next_b = 0;
  for (int i = 0; i < warmup; ++i) order.push_back(unit(next_f++, true));
  while (next_f < total) {
    order.push_back(unit(next_f++, true));
    order.push_back(unit(next_b++, false));
  }
  while (next_b < total) order.push_back(unit(next_b++, false));
  return order;
}

}  // namespace

PipelineOrder pipeline_order(Schedule schedule, int stages, int virtual_stages, int microbatches) {
  PipelineOrder order(static_cast<std::size_t>(stages));
  for (int s = 0; s < stages; ++s) {
    auto& o = order[static_cast<std::size_t>(s)];
    switch (schedule) {
      case Schedule::gpipe: o = gpipe(s, microbatches); break;
      case Schedule::one_f_one_b: o = one_f_one_b(s, stages, microbatches); break;
      case Schedule::interleaved:
        o = virtual_stages > 1 ? interleaved(s, stages, virtual_stages, microbatches)
                               : one_f_one_b(s, stages, microbatches);
        break;
    }
  }
  return order;
}

}  // namespace strata
