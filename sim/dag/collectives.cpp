#include "sim/dag/collectives.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "sim/config/hardware_spec.hpp"

namespace strata {

double ring_bytes_per_member(Collective c, std::int64_t members, double bytes) {
  const double n = static_cast<double>(members);
  const double share = (n - 1.0) / n * bytes;
  return c == Collective::all_reduce || c == Collective::scatter_gather ? 2.0 * share : share;
}

int ring_steps(Collective c, std::int64_t members) {
  const int n = static_cast<int>(members);
  return c == Collective::all_reduce || c == Collective::scatter_gather ? 2 * (n - 1) : n - 1;
}

std::int64_t switch_all_reduce_from(const HardwareSpec& hw) {
  if (!hw.nvlink_sharp || hw.efficiency.nvlink_sharp <= 0.0) return 0;
  for (std::int64_t n = 2; n <= hw.gpus_per_node; ++n)
    if (hw.efficiency.nvlink_sharp * ring_bytes_per_member(Collective::all_reduce, n, 1.0) > hw.efficiency.nvlink)
      return n;
  return 0;
}

Task nccl_collective(Collective c, const std::vector<std::int64_t>& group, const std::vector<std::int64_t>& simulated,
                     double bytes, TaskKind kind, Stream stream, const RankLayout& layout) {
  Task t;
  t.kind = kind;
  t.stream = stream;
  t.ranks = simulated;
  const auto n = static_cast<std::int64_t>(group.size());
  // The latency terms stay the ring's: the switch's rate was fitted with them (nvlink.source).
  t.latency_steps = ring_steps(c, n);
  t.collective_calls = 1;
  // Members per node, in ring order.
  std::map<std::int64_t, std::vector<std::int64_t>> on_node;
  std::vector<std::int64_t> node_order;
  for (std::int64_t r : group) {
    auto [it, added] = on_node.try_emplace(layout.node(r));
    if (added) node_order.push_back(it->first);
    it->second.push_back(r);
  }
  auto next_of = [&](std::int64_t r) {
    auto pos = std::find(group.begin(), group.end(), r);
    if (pos == group.end()) throw std::logic_error("collective member outside its group");
    return group[static_cast<std::size_t>((pos - group.begin() + 1) % n)];
  };
  // Reduced in the switch: each member's whole buffer goes up once and the sum comes back once.
  // The flow to its successor stands for both (it leaves the member's link and enters the next's).
  const bool in_switch = c == Collective::all_reduce && node_order.size() == 1 && layout.switch_reduce_from > 0 &&
                         n >= layout.switch_reduce_from;
  if (in_switch) {
    for (std::int64_t r : simulated) {
      Flow f{Device::gpu(r), Device::gpu(next_of(r)), bytes, false};
      f.in_switch = true;
      t.flows.push_back(f);
    }
    return t;
  }
  const double per_member = ring_bytes_per_member(c, n, bytes);
  // A ring that crosses nodes with m members on each runs, in NCCL, as m channels whose rings leave
  // each node through a different member and its NIC (rail), each on 1/m of the buffer: a member
  // sends (m-1)/m of its bytes to its next peer on the node and 1/m to its counterpart on the next
  // node, so the node's traffic spreads over m NICs instead of one.
  const auto m = static_cast<std::int64_t>(on_node.begin()->second.size());
  bool rails = node_order.size() > 1 && m > 1;
  for (const auto& [node, members] : on_node) rails = rails && static_cast<std::int64_t>(members.size()) == m;
  for (std::int64_t r : simulated) {
    const std::int64_t next = next_of(r);
    if (!rails) {
      t.flows.push_back({Device::gpu(r), Device::gpu(next), per_member, layout.node(r) != layout.node(next)});
      continue;
    }
    const auto& local = on_node.at(layout.node(r));
    const auto i = static_cast<std::size_t>(std::find(local.begin(), local.end(), r) - local.begin());
    const auto at = static_cast<std::size_t>(std::find(node_order.begin(), node_order.end(), layout.node(r)) -
                                             node_order.begin());
    const auto& next_node = on_node.at(node_order[(at + 1) % node_order.size()]);
    const double share = per_member / static_cast<double>(m);
    t.flows.push_back({Device::gpu(r), Device::gpu(local[(i + 1) % local.size()]), share * static_cast<double>(m - 1),
                       false});
    t.flows.push_back({Device::gpu(r), Device::gpu(next_node[i]), share, true});
  }
  return t;
}

}  // namespace strata
