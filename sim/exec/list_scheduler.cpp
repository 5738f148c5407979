#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <queue>
#include <stdexcept>
#include <vector>

#include "sim/exec/executor.hpp"

namespace strata {

namespace {

/// The screening executor. It follows the DES's rules on the same DAG (a task starts when its
/// dependencies and streams are free; its flows start together after its latency; concurrent flows
/// share each link max-min fairly; a background flow runs only while no foreground flow is on one
/// of its links; compute kernels that overlap on one GPU share it, beside the share of its SMs a
/// running NCCL collective holds), but as a fluid model in the
/// calling process: no SimGrid engine, no platform to build, no child process. After each event
/// only the activities connected to the links it touched get new rates (progressive filling, as
/// SimGrid's max-min solver does for the whole system), so an event costs what its neighbourhood
/// holds, not what the cluster holds. docs/architecture.md argues the choice.
class FluidScheduler {
 public:
  FluidScheduler(const TaskDag& dag, const TaskCosts& costs) : dag_(dag), costs_(costs) {
    const auto n = dag.tasks.size();
    const auto stream_order = stream_predecessors(dag);
    const StreamPredecessors& stream_prev = *stream_order;
    pending_.assign(n, 0);
    std::vector<std::uint32_t> count(n + 1, 0);
    for (TaskId id = 0; id < n; ++id) {
      for (TaskId d : dag.tasks[id].deps) ++count[d + 1];
      for (TaskId p : stream_prev[id]) ++count[p + 1];
      pending_[id] = static_cast<std::uint32_t>(dag.tasks[id].deps.size() + stream_prev[id].size());
    }
    for (std::size_t i = 1; i <= n; ++i) count[i] += count[i - 1];
    succ_offset_ = count;
    succ_.resize(count[n]);
    for (TaskId id = 0; id < n; ++id) {
      for (TaskId d : dag.tasks[id].deps) succ_[count[d]++] = id;
      for (TaskId p : stream_prev[id]) succ_[count[p]++] = id;
    }
    outstanding_.assign(n, 0);
    times_.start.assign(n, 0.0);
    times_.finish.assign(n, 0.0);

    // Resources: every link a flow uses (bytes/s) and every simulated GPU (seconds of kernel work
    // per second).
    if (!costs.used_links().empty())
      link_index_.assign(static_cast<std::size_t>(costs.used_links().rbegin()->first) + 1, kNone);
    for (const auto& [link, bandwidth] : costs.used_links()) {
      link_index_[static_cast<std::size_t>(link)] = static_cast<std::uint32_t>(resources_.size());
      resources_.emplace_back().capacity = bandwidth;
    }
    std::int64_t top = 0;
    for (const auto& [rank, group] : dag.represents) top = std::max(top, rank);
    gpu_index_.assign(static_cast<std::size_t>(top) + 1, kNone);
    first_gpu_ = static_cast<std::uint32_t>(resources_.size());
    for (const auto& [rank, group] : dag.represents) {
      gpu_index_[static_cast<std::size_t>(rank)] = static_cast<std::uint32_t>(resources_.size());
      resources_.emplace_back().capacity = 1.0;
    }
    kernels_.assign(resources_.size() - first_gpu_, 0);
    pending_holds_.resize(kernels_.size());

    // What starting each task needs, gathered in one pass in task order: the run then visits tasks
    // in event order without going back to the DAG's tasks and their routed flows.
    work_.resize(n);
    flow_begin_.resize(n + 1);
    std::map<std::pair<std::vector<LinkId>, double>, std::uint32_t> cap_index;
    for (TaskId id = 0; id < n; ++id) {
      const Task& t = dag.tasks[id];
      Work& w = work_[id];
      flow_begin_[id] = static_cast<std::uint32_t>(flows_.size());
      if (!t.flows.empty()) {
        w.kind = Work::transfer;
        w.seconds = costs.latency_seconds(id);
        for (const RoutedFlow& f : costs.flows(id)) {
          if (f.bytes <= 0.0) continue;
          const auto first = static_cast<std::uint32_t>(flow_uses_.size());
          for (LinkId l : f.links) {
            const std::uint32_t r = link_index_[static_cast<std::size_t>(l)];  // every routed link is a used one
            auto it = std::find_if(flow_uses_.begin() + first, flow_uses_.end(),
                                   [r](const Use& u) { return u.resource == r; });
            if (it != flow_uses_.end()) ++it->weight;
            else flow_uses_.push_back({r, 1});
          }
          if (std::isfinite(f.rate_cap)) {
            // The cap of a point-to-point send is shared by the flows between the same two GPUs: a
            // resource per capped route, as the DES gives each such route a link of its own.
            const auto next = static_cast<std::uint32_t>(resources_.size());
            auto [cap, fresh] = cap_index.try_emplace({f.links, f.rate_cap}, next);
            if (fresh) resources_.emplace_back().capacity = f.rate_cap;
            flow_uses_.push_back({cap->second, 1});
          }
          const auto count = static_cast<std::uint32_t>(flow_uses_.size() - first);
          if (count == 0) continue;  // no link to cross: the bytes arrive at once
          flows_.push_back({f.bytes, first, count, f.background});
        }
        continue;
      }
      w.seconds = costs.compute_seconds(t);
      if (w.seconds <= 0.0) w.kind = Work::instant;
      else if (TaskCosts::on_host(t)) w.kind = Work::host;  // a fixed share of the host CPUs
      else {
        w.kind = Work::kernel;
        const auto rank = static_cast<std::size_t>(t.rank());
        w.gpu = rank < gpu_index_.size() ? gpu_index_[rank] : kNone;
        if (w.gpu == kNone) throw std::logic_error("compute task on a rank the DAG does not simulate");
      }
    }
    flow_begin_[n] = static_cast<std::uint32_t>(flows_.size());
  }

  TaskTimes run() {
    const std::size_t n = dag_.tasks.size();
    for (TaskId id = 0; id < n; ++id)
      if (pending_[id] == 0) ready_.push_back(id);
    while (true) {
      while (!ready_.empty()) {
        const TaskId id = ready_.front();
        ready_.pop_front();
        start(id);
      }
      if (!dirty_.empty()) share();
      if (done_ == n) break;
      while (!completions_.empty() && stale(completions_.top())) completions_.pop();
      const double next_timer = timers_.empty() ? kInf : timers_.top().at;
      const double next_completion = completions_.empty() ? kInf : completions_.top().at;
      if (next_timer == kInf && next_completion == kInf)
        throw std::logic_error("screening executor stalled: tasks wait on each other");
      now_ = std::min(next_timer, next_completion);
      while (!timers_.empty() && timers_.top().at <= now_) {
        const TaskId id = timers_.top().task;
        timers_.pop();
        start_flows(id);
      }
      while (!completions_.empty() && completions_.top().at <= now_) {
        const Event e = completions_.top();
        completions_.pop();
        if (!stale(e)) complete(e.activity);
      }
    }
    return std::move(times_);
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  struct Use {
    std::uint32_t resource;
    std::uint32_t weight;  ///< how often the route crosses the link (SimGrid charges each crossing)
  };
  /// How a task starts: at once, on the host, as a kernel on its GPU, or as flows after a latency.
  struct Work {
    enum Kind : std::uint8_t { instant, host, kernel, transfer } kind = instant;
    std::uint32_t gpu = 0;  ///< kernel: its GPU's resource
    double seconds = 0.0;   ///< host and kernel: the work; transfer: the latency
  };
  /// A flow that crosses at least one link: its bytes and its uses in flow_uses_.
  struct Flow {
    double bytes;
    std::uint32_t first_use, uses;
    bool background;
  };
  struct Activity {
    double remaining = 0.0;  ///< bytes, or seconds of kernel work
    double rate = 0.0;
    /// A collective's hold on its GPU's SMs: at most this rate, no work to finish, removed when its
    /// task ends (infinite for every other activity).
    double bound = kInf;
    double since = 0.0;  ///< when `remaining` was last brought up to date
    TaskId task = 0;
    std::uint32_t first_use = 0, uses = 0;
    std::uint32_t version = 0;  ///< bumped when its rate changes: older completion events are stale
    std::uint32_t seen = 0;
    bool background = false;
    bool done = false;
    bool fixed = false;
    bool kernel = false;  ///< a compute kernel on its GPU (the one resource it uses)
  };
  struct Resource {
    double capacity = 0.0;
    std::vector<std::uint32_t> active;  ///< activities in progress on it (suspended included)
    std::uint32_t foreground = 0;       ///< foreground flows in progress on it
    std::uint32_t seen = 0;
    bool dirty = false;
    double left = 0.0;         ///< progressive filling: capacity not yet given out
    std::uint64_t weight = 0;  ///< progressive filling: crossings of activities without a rate yet
  };
  struct Event {
    double at;
    std::uint32_t activity;
    std::uint32_t version;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : activity > o.activity; }
  };
  struct Timer {
    double at;
    std::uint64_t order;
    TaskId task;
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : order > o.order; }
  };

  bool stale(const Event& e) const {
    const Activity& a = activities_[e.activity];
    return a.done || a.version != e.version;
  }

  void start(TaskId id) {
    const Work& w = work_[id];
    times_.start[id] = now_;
    switch (w.kind) {
      case Work::instant: return finish(id);
      case Work::host: return add_timer(now_ + w.seconds, id);
      case Work::kernel:
        claim_pending_holds(w.gpu);
        ++kernels_[w.gpu - first_gpu_];
        uses_.push_back({w.gpu, 1});
        add_activity(id, w.seconds, false, 1);
        activities_.back().kernel = true;
        return;
      case Work::transfer:
        if (w.seconds > 0.0) add_timer(now_ + w.seconds, id);  // its latency first
        else start_flows(id);
        return;
    }
  }

  /// From the moment its bytes start to move to its end, a collective holds its share of each
  /// simulated GPU it runs on: a bounded activity that kernels on the GPU share it with (as the DES's
  /// bounded Exec does). A hold only matters beside a kernel, so it waits (pending) until one runs
  /// on its GPU: the same rates, without an activity for every collective that blocks the compute.
  void hold_sms(TaskId id) {
    const double share = costs_.sm_share(id);
    if (share <= 0.0) return;
    for (std::int64_t rank : dag_.tasks[id].ranks) {
      const auto r = static_cast<std::size_t>(rank);
      const std::uint32_t gpu = r < gpu_index_.size() ? gpu_index_[r] : kNone;
      if (gpu == kNone) continue;
      if (kernels_on(gpu) > 0) add_hold(id, gpu, share);
      else pending_holds_[gpu - first_gpu_].push_back(id);
    }
  }

  std::uint32_t kernels_on(std::uint32_t gpu) const { return kernels_[gpu - first_gpu_]; }

  void add_hold(TaskId id, std::uint32_t gpu, double share) {
    uses_.push_back({gpu, 1});
    Activity a;
    a.remaining = kInf;
    a.bound = share;
    a.since = now_;
    a.task = id;
    a.first_use = static_cast<std::uint32_t>(uses_.size() - 1);
    a.uses = 1;
    const auto index = static_cast<std::uint32_t>(activities_.size());
    activities_.push_back(a);
    resources_[gpu].active.push_back(index);
    mark(gpu);
    holds_.push_back({id, index});
  }

  /// A kernel is about to start on `gpu`: the collectives waiting there take their share now.
  void claim_pending_holds(std::uint32_t gpu) {
    auto& waiting = pending_holds_[gpu - first_gpu_];
    for (TaskId id : waiting) add_hold(id, gpu, costs_.sm_share(id));
    waiting.clear();
  }

  void release_sms(TaskId id) {
    if (costs_.sm_share(id) <= 0.0) return;
    for (std::int64_t rank : dag_.tasks[id].ranks) {
      const auto r = static_cast<std::size_t>(rank);
      const std::uint32_t gpu = r < gpu_index_.size() ? gpu_index_[r] : kNone;
      if (gpu == kNone) continue;
      auto& waiting = pending_holds_[gpu - first_gpu_];
      waiting.erase(std::remove(waiting.begin(), waiting.end(), id), waiting.end());
    }
    for (std::size_t i = 0; i < holds_.size();) {
      if (holds_[i].first != id) {
        ++i;
        continue;
      }
      Activity& a = activities_[holds_[i].second];
      a.done = true;
      Resource& r = resources_[uses_[a.first_use].resource];
      auto it = std::find(r.active.begin(), r.active.end(), holds_[i].second);
      *it = r.active.back();
      r.active.pop_back();
      if (!r.active.empty()) mark(uses_[a.first_use].resource);
      holds_[i] = holds_.back();
      holds_.pop_back();
    }
  }

  void start_flows(TaskId id) {
    hold_sms(id);
    for (std::uint32_t i = flow_begin_[id]; i < flow_begin_[id + 1]; ++i) {
      const Flow& f = flows_[i];
      const auto first = flow_uses_.begin() + f.first_use;
      uses_.insert(uses_.end(), first, first + f.uses);
      if (!f.background)
        for (auto u = first; u != first + f.uses; ++u) ++resources_[u->resource].foreground;
      add_activity(id, f.bytes, f.background, f.uses);
    }
    if (outstanding_[id] == 0) finish(id);
  }

  /// An activity over the last `count` entries of uses_.
  void add_activity(TaskId id, double amount, bool background, std::uint32_t count) {
    Activity a;
    a.remaining = amount;
    a.since = now_;
    a.task = id;
    a.first_use = static_cast<std::uint32_t>(uses_.size() - count);
    a.uses = count;
    a.background = background;
    const auto index = static_cast<std::uint32_t>(activities_.size());
    // Alone on every resource it crosses (the common case: a kernel on its GPU, a copy on idle links),
    // it shares with no one and changes no one's rate: its own rate is its bottleneck's, no
    // re-sharing needed.
    bool alone = true;
    double rate = kInf;
    for (std::uint32_t u = a.first_use; u < a.first_use + count; ++u) {
      const Resource& r = resources_[uses_[u].resource];
      alone = alone && r.active.empty();
      rate = std::min(rate, r.capacity / static_cast<double>(uses_[u].weight));
    }
    rate = std::min(rate, a.bound);
    if (alone) {
      a.rate = rate;
      completions_.push({std::isinf(rate) ? now_ : now_ + a.remaining / rate, index, a.version});
    }
    activities_.push_back(a);
    for (std::uint32_t u = a.first_use; u < a.first_use + count; ++u) {
      resources_[uses_[u].resource].active.push_back(index);
      if (!alone) mark(uses_[u].resource);
    }
    ++outstanding_[id];
  }

  void complete(std::uint32_t index) {
    Activity& a = activities_[index];
    a.done = true;
    if (a.kernel) --kernels_[uses_[a.first_use].resource - first_gpu_];
    a.remaining = 0.0;
    for (std::uint32_t u = a.first_use; u < a.first_use + a.uses; ++u) {
      Resource& r = resources_[uses_[u].resource];
      auto it = std::find(r.active.begin(), r.active.end(), index);
      *it = r.active.back();
      r.active.pop_back();
      if (!a.background) --r.foreground;
      if (!r.active.empty()) mark(uses_[u].resource);  // those left on it get its share
    }
    if (--outstanding_[a.task] == 0) finish(a.task);
  }

  void finish(TaskId id) {
    times_.finish[id] = now_;
    release_sms(id);
    ++done_;
    for (std::uint32_t s = succ_offset_[id]; s < succ_offset_[id + 1]; ++s)
      if (--pending_[succ_[s]] == 0) ready_.push_back(succ_[s]);
  }

  void add_timer(double at, TaskId id) { timers_.push({at, timer_order_++, id}); }

  void mark(std::uint32_t r) {
    if (!resources_[r].dirty) {
      resources_[r].dirty = true;
      dirty_.push_back(r);
    }
  }

  bool suspended(const Activity& a) const {
    if (!a.background) return false;
    for (std::uint32_t u = a.first_use; u < a.first_use + a.uses; ++u)
      if (resources_[uses_[u].resource].foreground > 0) return true;
    return false;
  }

  /// Gives activity `index` its rate, which its resources give out.
  void fix(std::uint32_t index, double rate) {
    Activity& a = activities_[index];
    a.fixed = true;
    a.rate = rate;
    for (std::uint32_t u = a.first_use; u < a.first_use + a.uses; ++u) {
      Resource& res = resources_[uses_[u].resource];
      res.left -= rate * uses_[u].weight;
      res.weight -= uses_[u].weight;
    }
  }

  /// New max-min rates for every activity connected (through shared resources) to a resource an
  /// event touched; the others keep theirs.
  void share() {
    ++epoch_;
    component_resources_.clear();
    component_activities_.clear();
    for (std::uint32_t r : dirty_) {
      resources_[r].dirty = false;
      if (resources_[r].seen != epoch_) {
        resources_[r].seen = epoch_;
        component_resources_.push_back(r);
      }
    }
    dirty_.clear();
    for (std::size_t i = 0; i < component_resources_.size(); ++i) {
      for (std::uint32_t index : resources_[component_resources_[i]].active) {
        Activity& a = activities_[index];
        if (a.seen == epoch_) continue;
        a.seen = epoch_;
        component_activities_.push_back(index);
        for (std::uint32_t u = a.first_use; u < a.first_use + a.uses; ++u) {
          Resource& r = resources_[uses_[u].resource];
          if (r.seen != epoch_) {
            r.seen = epoch_;
            component_resources_.push_back(uses_[u].resource);
          }
        }
      }
    }
    for (std::uint32_t r : component_resources_) {
      resources_[r].left = resources_[r].capacity;
      resources_[r].weight = 0;
    }
    std::size_t unfixed = 0;
    bounded_.clear();
    for (std::uint32_t index : component_activities_) {
      Activity& a = activities_[index];
      // An infinite rate (a test's infinitely fast link) finishes at once: no inf * 0.
      a.remaining = std::isinf(a.rate) ? 0.0 : std::max(0.0, a.remaining - a.rate * (now_ - a.since));
      a.since = now_;
      a.rate = 0.0;
      a.fixed = suspended(a);
      if (a.fixed) continue;
      ++unfixed;
      if (a.bound < kInf) bounded_.push_back(index);
      for (std::uint32_t u = a.first_use; u < a.first_use + a.uses; ++u)
        resources_[uses_[u].resource].weight += uses_[u].weight;
    }
    // Progressive filling: the resource with the smallest fair share fixes the rate of every
    // activity on it that has none yet, which takes that rate from their other resources.
    while (unfixed > 0) {
      std::uint32_t bottleneck = kNone;
      double share = kInf;
      for (std::uint32_t r : component_resources_) {
        const Resource& res = resources_[r];
        if (res.weight == 0) continue;
        const double s = std::max(0.0, res.left) / static_cast<double>(res.weight);
        if (s < share) {  // an infinite share never wins: it is nobody's bottleneck
          share = s;
          bottleneck = r;
        }
      }
      // A bounded activity below the fair share takes its bound and leaves the rest to the others
      // (max-min with bounds, as SimGrid's solver treats an Exec's bound).
      std::uint32_t tightest = kNone;
      for (std::uint32_t index : bounded_)
        if (!activities_[index].fixed && activities_[index].bound < share &&
            (tightest == kNone || activities_[index].bound < activities_[tightest].bound))
          tightest = index;
      if (tightest != kNone) {
        fix(tightest, activities_[tightest].bound);
        --unfixed;
        continue;
      }
      if (bottleneck == kNone) {
        // Only infinite capacities left (share inf on each): every remaining activity is unbounded.
        for (std::uint32_t index : component_activities_) {
          Activity& a = activities_[index];
          if (!a.fixed) a.rate = kInf, a.fixed = true;
        }
        break;
      }
      for (std::uint32_t index : resources_[bottleneck].active) {
        if (activities_[index].fixed) continue;
        fix(index, share);
        --unfixed;
      }
    }
    for (std::uint32_t index : component_activities_) {
      Activity& a = activities_[index];
      ++a.version;
      if (std::isinf(a.remaining)) continue;  // a hold: it ends with its task
      if (a.rate > 0.0) completions_.push({std::isinf(a.rate) ? now_ : now_ + a.remaining / a.rate, index, a.version});
      else if (a.remaining <= 0.0) completions_.push({now_, index, a.version});
    }
  }

  const TaskDag& dag_;
  const TaskCosts& costs_;
  TaskTimes times_;
  double now_ = 0.0;
  std::size_t done_ = 0;
  std::vector<std::uint32_t> pending_, outstanding_;
  std::vector<std::uint32_t> succ_offset_, succ_;
  std::deque<TaskId> ready_;
  std::vector<std::uint32_t> link_index_;  ///< by link id: its resource (kNone: no flow uses it)
  std::vector<std::uint32_t> gpu_index_;
  std::vector<Resource> resources_;
  std::vector<Activity> activities_;
  std::vector<Use> uses_;
  std::vector<Work> work_;                 ///< by task
  std::vector<std::uint32_t> flow_begin_;  ///< by task: its first flow in flows_ (one past the end last)
  std::vector<Flow> flows_;
  std::vector<Use> flow_uses_;
  std::vector<std::uint32_t> dirty_, component_resources_, component_activities_, bounded_;
  std::vector<std::pair<TaskId, std::uint32_t>> holds_;  ///< running collectives' holds: task, activity
  std::vector<std::vector<TaskId>> pending_holds_;  ///< by GPU: holds no kernel has met yet
  /// Resources from here on are the simulated GPUs, then the capped routes' rate caps.
  std::uint32_t first_gpu_ = 0;
  std::vector<std::uint32_t> kernels_;   ///< by GPU: compute kernels running on it
  std::uint32_t epoch_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> completions_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::uint64_t timer_order_ = 0;
};

}  // namespace

TaskTimes run_list_schedule(const TaskDag& dag, const TaskCosts& costs) { return FluidScheduler(dag, costs).run(); }

}  // namespace strata
