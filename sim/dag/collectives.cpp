#include "sim/dag/collectives.hpp"

#include <algorithm>
#include <stdexcept>

namespace strata {

double ring_bytes_per_member(Collective c, std::int64_t members, double bytes) {
  const double n = static_cast<double>(members);
  const double share = (n - 1.0) / n * bytes;
  return c == Collective::all_reduce ? 2.0 * share : share;
}

int ring_steps(Collective c, std::int64_t members) {
  const int n = static_cast<int>(members);
  return c == Collective::all_reduce ? 2 * (n - 1) : n - 1;
}

Task ring_collective(Collective c, const std::vector<std::int64_t>& group, const std::vector<std::int64_t>& simulated,
                     double bytes, TaskKind kind, Stream stream, const RankLayout& layout) {
  Task t;
  t.kind = kind;
  t.stream = stream;
  t.ranks = simulated;
  const auto n = static_cast<std::int64_t>(group.size());
  t.latency_steps = ring_steps(c, n);
  t.collective_calls = 1;
  const double per_member = ring_bytes_per_member(c, n, bytes);
  for (std::int64_t r : simulated) {
    auto pos = std::find(group.begin(), group.end(), r);
    if (pos == group.end()) throw std::logic_error("collective member outside its group");
    const std::int64_t next = group[static_cast<std::size_t>((pos - group.begin() + 1) % n)];
    t.flows.push_back({Device::gpu(r), Device::gpu(next), per_member, layout.node(r) != layout.node(next)});
  }
  return t;
}

}  // namespace strata
