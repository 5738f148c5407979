#include "sim/analysis/memory_timeline.hpp"

#include <algorithm>
#include <tuple>

namespace strata {

namespace {

/// (time, signed bytes, tier): frees sort before allocations at one instant.
using Events = std::vector<std::tuple<double, double, Tier>>;

Events rank_events(const TaskDag& dag, const TaskTimes& times, std::int64_t rank,
                   const std::vector<TaskId>& tasks) {
  Events e;
  for (const MemoryChange& c : dag.resident.at(rank)) e.emplace_back(0.0, c.bytes, c.tier);
  for (TaskId id : tasks) {
    for (const MemoryChange& c : dag.tasks[id].allocate) e.emplace_back(times.start[id], c.bytes, c.tier);
    for (const MemoryChange& c : dag.tasks[id].release) e.emplace_back(times.finish[id], -c.bytes, c.tier);
  }
  return e;
}

std::map<Tier, MemorySeries> integrate(Events events) {
  std::sort(events.begin(), events.end());
  std::map<Tier, MemorySeries> out;
  std::map<Tier, double> current;
  for (const auto& [t, delta, tier] : events) {
    current[tier] += delta;
    MemorySeries& s = out[tier];
    // Several changes at one instant: the last value stands.
    if (!s.time_s.empty() && s.time_s.back() == t) s.bytes.back() = current[tier];
    else {
      s.time_s.push_back(t);
      s.bytes.push_back(current[tier]);
    }
  }
  return out;
}

std::map<std::int64_t, std::vector<TaskId>> tasks_by_rank(const TaskDag& dag) {
  std::map<std::int64_t, std::vector<TaskId>> by_rank;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    if (t.allocate.empty() && t.release.empty()) continue;
    for (std::int64_t r : t.ranks) by_rank[r].push_back(id);
  }
  return by_rank;
}

}  // namespace

std::map<std::int64_t, std::map<Tier, MemorySeries>> rank_memory_timelines(const TaskDag& dag,
                                                                          const TaskTimes& times) {
  const auto by_rank = tasks_by_rank(dag);
  std::map<std::int64_t, std::map<Tier, MemorySeries>> out;
  for (const auto& [rank, count] : dag.represents) {
    auto it = by_rank.find(rank);
    out[rank] = integrate(rank_events(dag, times, rank, it == by_rank.end() ? std::vector<TaskId>{} : it->second));
  }
  return out;
}

std::map<Tier, MemorySeries> node_memory_timelines(const TaskDag& dag, const TaskTimes& times, std::int64_t gpus,
                                                   std::int64_t gpus_per_node, std::int64_t node) {
  std::map<std::int64_t, std::int64_t> simulated_for;  // fold group -> simulated rank
  for (const auto& [rank, count] : dag.represents) simulated_for[rank / dag.fold_group] = rank;
  std::map<std::int64_t, std::int64_t> mix;  // simulated rank -> GPUs of the node it stands for
  for (std::int64_t g = node * gpus_per_node; g < std::min(gpus, (node + 1) * gpus_per_node); ++g)
    if (auto rep = simulated_for.find(g / dag.fold_group); rep != simulated_for.end()) ++mix[rep->second];
  const auto by_rank = tasks_by_rank(dag);
  Events all;
  for (const auto& [rank, count] : mix) {
    auto it = by_rank.find(rank);
    for (const auto& [t, delta, tier] :
         rank_events(dag, times, rank, it == by_rank.end() ? std::vector<TaskId>{} : it->second))
      if (tier != Tier::hbm) all.emplace_back(t, delta * static_cast<double>(count), tier);
  }
  return integrate(std::move(all));
}

}  // namespace strata
