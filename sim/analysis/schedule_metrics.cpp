#include "sim/analysis/schedule_metrics.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <tuple>
#include <vector>


namespace strata {

double TimeBreakdown::exposed_total() const {
  double total = 0.0;
  for (const auto& [kind, s] : exposed_comm)
    if (kind != TaskKind::offload && kind != TaskKind::host_optimizer && kind != TaskKind::checkpoint &&
        kind != TaskKind::data_load)
      total += s;
  return total;
}

double TimeBreakdown::exposed_offload() const {
  double total = 0.0;
  for (const auto& [kind, s] : exposed_comm)
    if (kind == TaskKind::offload || kind == TaskKind::host_optimizer) total += s;
  return total;
}

namespace {

/// What a GPU is doing when several of its streams are busy: compute hides communication, and
/// among transfers the one nearest the critical path is named (TP blocks compute directly, and so
/// do the expert all-to-all and a CP ring step the next attention block waits for; then pipeline
/// transfers, then ZeRO gathers, then gradient reduction, then offload copies and the host's
/// optimizer step, checkpoints, and last the data reads: a GPU idle while only its next batch is
/// loading waits for data).
constexpr std::array<TaskKind, 12> kPriority = {
    TaskKind::forward,      TaskKind::recompute, TaskKind::tp_comm, TaskKind::ep_comm, TaskKind::cp_comm,
    TaskKind::pp_transfer,  TaskKind::param_gather, TaskKind::dp_comm, TaskKind::offload,
    TaskKind::host_optimizer, TaskKind::checkpoint, TaskKind::data_load};

/// The position in kPriority of what a task keeps its GPU busy with. Every kind is listed: with
/// -Werror=switch a new task kind without a category does not compile.
int category(TaskKind k) {
  switch (k) {
    case TaskKind::forward:
    case TaskKind::backward:
    case TaskKind::optimizer:
    case TaskKind::redundant: return 0;
    case TaskKind::recompute: return 1;
    case TaskKind::tp_comm: return 2;
    case TaskKind::ep_comm: return 3;
    case TaskKind::cp_comm: return 4;
    case TaskKind::pp_transfer: return 5;
    case TaskKind::param_gather: return 6;
    case TaskKind::dp_comm: return 7;
    case TaskKind::offload: return 8;
    case TaskKind::host_optimizer: return 9;
    case TaskKind::checkpoint: return 10;
    case TaskKind::data_load: return 11;
  }
  throw std::logic_error("task kind outside its enumeration");
}

TimeBreakdown rank_breakdown(const std::vector<TaskId>& tasks, const TaskDag& dag, const TaskTimes& times, double lo,
                             double hi) {
  std::vector<std::tuple<double, int, int>> events;  // (time, +1/-1, category)
  for (TaskId id : tasks) {
    const double s = std::max(lo, times.start[id]), f = std::min(hi, times.finish[id]);
    if (f <= s) continue;
    const int c = category(dag.tasks[id].kind);
    events.emplace_back(s, 1, c);
    events.emplace_back(f, -1, c);
  }
  std::sort(events.begin(), events.end());
  std::array<int, kPriority.size()> active{};
  TimeBreakdown b;
  double t = lo;
  auto account = [&](double until) {
    const double span = until - t;
    if (span <= 0) return;
    auto top = std::find_if(active.begin(), active.end(), [](int n) { return n > 0; });
    if (top == active.end()) b.bubble += span;
    else if (top == active.begin()) b.compute += span;
    else if (kPriority[static_cast<std::size_t>(top - active.begin())] == TaskKind::recompute) b.recompute += span;
    else b.exposed_comm[kPriority[static_cast<std::size_t>(top - active.begin())]] += span;
  };
  for (const auto& [time, delta, c] : events) {
    account(time);
    t = std::max(t, time);
    active[static_cast<std::size_t>(c)] += delta;
  }
  account(hi);
  return b;
}

}  // namespace

std::pair<double, double> last_iteration_window(const TaskDag& dag, const TaskTimes& times) {
  const int n_it = std::max(1, static_cast<int>(dag.iterations));
  // With two or more iterations the period is measured between the ends of consecutive iterations'
  // GPU kernels, so work that overlaps the next iteration (a delayed host optimizer step) is not
  // counted twice; a single iteration ends with its last task.
  std::vector<double> end(static_cast<std::size_t>(n_it), 0.0);
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    if (n_it >= 2 && dag.tasks[id].stream != Stream::compute) continue;
    auto& e = end[static_cast<std::size_t>(dag.tasks[id].iteration)];
    e = std::max(e, times.finish[id]);
  }
  return {n_it >= 2 ? end[static_cast<std::size_t>(n_it - 2)] : 0.0, end.back()};
}

namespace {

using TierEvents = std::vector<std::tuple<double, double, Tier>>;  // (time, delta, tier), resident at -1

std::map<Tier, NodeTierPeak> node_tier_peaks(const TaskDag& dag, const TaskTimes& times,
                                             const std::map<std::int64_t, std::vector<TaskId>>& by_rank,
                                             std::int64_t gpus, std::int64_t gpus_per_node) {
  // Host-tier changes of each simulated rank.
  std::map<std::int64_t, TierEvents> events;
  std::map<std::int64_t, std::int64_t> simulated_for;  // fold group -> simulated rank
  for (const auto& [rank, count] : dag.represents) {
    simulated_for[rank / dag.fold_group] = rank;
    TierEvents& e = events[rank];
    for (const MemoryChange& c : dag.resident.at(rank))
      if (c.tier != Tier::hbm) e.emplace_back(-1.0, c.bytes, c.tier);
    auto it = by_rank.find(rank);
    if (it == by_rank.end()) continue;
    for (TaskId id : it->second) {
      for (const MemoryChange& c : dag.tasks[id].allocate)
        if (c.tier != Tier::hbm) e.emplace_back(times.start[id], c.bytes, c.tier);
      for (const MemoryChange& c : dag.tasks[id].release)
        if (c.tier != Tier::hbm) e.emplace_back(times.finish[id], -c.bytes, c.tier);
    }
  }
  // Nodes with the same mix of simulated ranks have the same timeline: merge each mix once.
  std::map<std::map<std::int64_t, std::int64_t>, std::map<Tier, std::pair<double, double>>> merged;
  std::map<Tier, NodeTierPeak> out;
  const std::int64_t nodes = (gpus + gpus_per_node - 1) / gpus_per_node;
  for (std::int64_t node = 0; node < nodes; ++node) {
    std::map<std::int64_t, std::int64_t> mix;
    for (std::int64_t g = node * gpus_per_node; g < std::min(gpus, (node + 1) * gpus_per_node); ++g) {
      auto rep = simulated_for.find(g / dag.fold_group);
      if (rep != simulated_for.end()) ++mix[rep->second];
    }
    auto [it, fresh] = merged.try_emplace(mix);
    if (fresh) {
      TierEvents all;
      for (const auto& [rank, count] : mix)
        for (const auto& [t, delta, tier] : events[rank]) all.emplace_back(t, delta * static_cast<double>(count), tier);
      std::sort(all.begin(), all.end());  // at one instant frees (negative) come first
      std::map<Tier, double> current;
      for (const auto& [t, delta, tier] : all) {
        current[tier] += delta;
        auto& peak = it->second[tier];
        if (current[tier] > peak.first) peak = {current[tier], std::max(0.0, t)};
      }
    }
    for (const auto& [tier, peak] : it->second)
      if (peak.first > out[tier].bytes) out[tier] = {peak.first, node, peak.second};
  }
  return out;
}

}  // namespace

ScheduleAnalysis analyse_schedule(const TaskDag& dag, const TaskTimes& times, const BottleneckNamer& bottleneck,
                                  std::int64_t gpus, std::int64_t gpus_per_node) {
  ScheduleAnalysis a;
  const int n_it = std::max(1, static_cast<int>(dag.iterations));
  std::tie(a.window_start, a.window_end) = last_iteration_window(dag, times);
  a.iteration_time = a.window_end - a.window_start;

  // Per simulated rank: its tasks, its breakdown, its memory timeline.
  std::map<std::int64_t, std::vector<TaskId>> by_rank;
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    for (std::int64_t r : dag.tasks[id].ranks) by_rank[r].push_back(id);
  double weight_sum = 0.0;
  for (const auto& [rank, weight] : dag.represents) {
    const auto& tasks = by_rank[rank];
    const double w = static_cast<double>(weight);
    weight_sum += w;
    TimeBreakdown b = rank_breakdown(tasks, dag, times, a.window_start, a.window_end);
    a.breakdown.compute += w * b.compute;
    a.breakdown.recompute += w * b.recompute;
    a.breakdown.bubble += w * b.bubble;
    for (const auto& [k, s] : b.exposed_comm) a.breakdown.exposed_comm[k] += w * s;
    for (TaskId id : tasks)
      if ((dag.tasks[id].kind == TaskKind::recompute || dag.tasks[id].kind == TaskKind::redundant) &&
          dag.tasks[id].iteration == n_it - 1)
        a.recompute_flops_per_gpu += w * dag.tasks[id].flops;

    // Memory: frees before allocations at the same instant (a kernel's output buffer is reused).
    RankMemory mem;
    std::map<Tier, double> current;
    std::array<double, kNumMemoryUses> hbm_use{};
    for (const MemoryChange& c : dag.resident.at(rank)) {
      current[c.tier] += c.bytes;
      if (c.tier == Tier::hbm) hbm_use[static_cast<std::size_t>(c.use)] += c.bytes;
    }
    mem.peak = current;
    mem.at_peak = hbm_use;
    std::vector<std::tuple<double, int, TaskId>> events;  // (time, 0 free / 1 alloc, task)
    for (TaskId id : tasks) {
      if (!dag.tasks[id].allocate.empty()) events.emplace_back(times.start[id], 1, id);
      if (!dag.tasks[id].release.empty()) events.emplace_back(times.finish[id], 0, id);
    }
    std::sort(events.begin(), events.end());
    for (const auto& [time, alloc, id] : events) {
      const auto& changes = alloc ? dag.tasks[id].allocate : dag.tasks[id].release;
      for (const MemoryChange& c : changes) {
        const double delta = alloc ? c.bytes : -c.bytes;
        current[c.tier] += delta;
        if (c.tier == Tier::hbm) hbm_use[static_cast<std::size_t>(c.use)] += delta;
        if (current[c.tier] > mem.peak[c.tier]) {
          mem.peak[c.tier] = current[c.tier];
          mem.peak_times[c.tier] = time;
          if (c.tier == Tier::hbm) {
            mem.at_peak = hbm_use;
            mem.peak_time = time;
          }
        }
      }
    }
    a.memory[rank] = mem;
  }
  if (weight_sum > 0) {
    a.breakdown.compute /= weight_sum;
    a.breakdown.recompute /= weight_sum;
    a.breakdown.bubble /= weight_sum;
    for (auto& [k, s] : a.breakdown.exposed_comm) s /= weight_sum;
    a.recompute_flops_per_gpu /= weight_sum;
  }
  a.bubble_fraction = a.iteration_time > 0 ? a.breakdown.bubble / a.iteration_time : 0.0;

  a.node_tiers = node_tier_peaks(dag, times, by_rank, gpus, gpus_per_node);

  // Critical path: from the task that ends the window back through whichever predecessor
  // (dependency or stream predecessor) finished last, i.e. the one that held it back; only the part
  // inside the window counts.
  const auto stream_order = stream_predecessors(dag);
  const StreamPredecessors& stream_prev = *stream_order;
  TaskId at = 0;
  double latest = -1.0;
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    if (times.finish[id] <= a.window_end && times.finish[id] > latest) latest = times.finish[at = id];
  while (latest >= 0) {
    const Task& t = dag.tasks[at];
    const double s = std::max(a.window_start, times.start[at]), f = std::min(a.window_end, times.finish[at]);
    if (f <= a.window_start) break;
    if (f > s) {
      a.critical_path.seconds[t.kind] += f - s;
      if (!t.flows.empty()) a.critical_path.links[bottleneck(at)] += f - s;
    }
    bool found = false;
    double best = -1.0;
    TaskId next = 0;
    auto consider = [&](TaskId p) {
      if (times.finish[p] > best) {
        best = times.finish[p];
        next = p;
        found = true;
      }
    };
    for (TaskId d : t.deps) consider(d);
    for (TaskId p : stream_prev[at]) consider(p);
    if (!found) break;
    at = next;
  }
  return a;
}

std::map<Tier, NodeTierPeak> node_tier_peaks(const TaskDag& dag, const TaskTimes& times, std::int64_t gpus,
                                             std::int64_t gpus_per_node) {
  std::map<std::int64_t, std::vector<TaskId>> by_rank;
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    for (std::int64_t r : dag.tasks[id].ranks) by_rank[r].push_back(id);
  return node_tier_peaks(dag, times, by_rank, gpus, gpus_per_node);
}

}  // namespace strata
