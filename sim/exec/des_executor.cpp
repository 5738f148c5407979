#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "sim/exec/executor.hpp"
#include "sim/platform/simgrid_platform.hpp"

namespace strata {

namespace sg4 = simgrid::s4u;

namespace {

/// Drives the whole DAG from SimGrid's maestro, without an actor: a task's activities (an Exec on
/// the GPU host, or a Comm per flow on its route) start when it becomes ready, from the completion
/// callback of the activity that readied it or from a kernel timer (host-side waits and flow
/// latencies). SimGrid reports each completion once, so an event costs the same whatever the number
/// of running activities: an actor's wait_any over all of them cost O(running) per event, quadratic
/// with the thousands of concurrent flows of a large expert-parallel all-to-all.
class Controller {
 public:
  Controller(const TaskDag& dag, const TaskCosts& costs, const SimgridPlatform& platform,
             const std::vector<std::vector<std::size_t>>& route_of, TaskTimes& times)
      : dag_(dag), costs_(costs), platform_(platform), route_of_(route_of), times_(times) {
    const auto n = dag.tasks.size();
    const auto stream_order = stream_predecessors(dag);
    const StreamPredecessors& stream_prev = *stream_order;
    pending_.assign(n, 0);
    successors_.resize(n);
    for (TaskId id = 0; id < n; ++id) {
      for (TaskId d : dag.tasks[id].deps) successors_[d].push_back(id);
      for (TaskId p : stream_prev[id]) successors_[p].push_back(id);
      pending_[id] = static_cast<std::uint32_t>(dag.tasks[id].deps.size() + stream_prev[id].size());
    }
    outstanding_.assign(n, 0);
    times_.start.assign(n, 0.0);
    times_.finish.assign(n, 0.0);
    for (TaskId id = 0; id < n; ++id)
      if (pending_[id] == 0) ready_.push_back(id);
    const std::size_t ranks = dag.represents.empty() ? 0 : static_cast<std::size_t>(dag.represents.rbegin()->first) + 1;
    kernels_.assign(ranks, 0);
    pending_holds_.resize(ranks);
  }

  /// Runs the engine until no activity or timer is left; throws if some task never ran.
  void run(sg4::Engine& engine) {
    sg4::Activity::on_completion_cb([this](const sg4::Activity& activity) { on_completion(activity); });
    // Activities that completed in an earlier round are dropped when time next advances: by then
    // SimGrid is done with them (dropping one inside its own completion callback would free it
    // while SimGrid still uses it).
    sg4::Engine::on_time_advance_cb([this](double) { completed_.clear(); });
    guarded([this] { start_ready(); });
    engine.run();
    if (!failure_.empty()) throw std::logic_error(failure_);
    if (done_ < dag_.tasks.size()) throw std::logic_error("DES stalled: tasks wait on each other");
  }

 private:
  /// What a running activity stands for: its task, and its flow (index into flow_links_) or -1.
  struct Running {
    sg4::ActivityPtr activity;
    TaskId task = 0;
    std::int64_t flow = -1;
  };

  /// An exception must not unwind through SimGrid's engine: the first one is kept, nothing more
  /// starts, and run() throws it once the engine has drained.
  template <class F>
  void guarded(F&& body) {
    if (!failure_.empty()) return;
    try {
      body();
    } catch (const std::exception& e) {
      failure_ = e.what();
    }
  }

  void on_completion(const sg4::Activity& activity) {
    // Cancelled activities (a suspended background flow being replaced) are reported too, and
    // twice; only a normal finish of one of ours counts.
    if (activity.get_state() != sg4::Activity::State::FINISHED) return;
    auto* slot = activity.get_data<std::size_t>();
    if (slot == nullptr) return;
    guarded([&] {
      complete_activity(*slot);
      start_ready();
    });
  }

  void start_ready() {
    while (!ready_.empty()) {
      TaskId id = ready_.front();
      ready_.pop_front();
      start(id);
    }
  }

  void start(TaskId id) {
    const Task& t = dag_.tasks[id];
    times_.start[id] = sg4::Engine::get_clock();
    if (t.flows.empty()) {
      const double seconds = costs_.compute_seconds(t);
      if (seconds <= 0.0) return finish(id);
      if (TaskCosts::on_host(t)) return set_timer(seconds, id);  // a fixed share of the host CPUs
      sg4::Host* gpu = platform_.gpus.at(t.rank());
      claim_pending_holds(t.rank());
      ++kernels_[static_cast<std::size_t>(t.rank())];
      auto exec = sg4::Exec::init()->set_flops_amount(seconds * gpu->get_speed())->set_host(gpu);
      track(exec, id);
      exec->start();
      return;
    }
    const double latency = costs_.latency_seconds(id);
    if (latency > 0.0) set_timer(latency, id);
    else start_flows(id);
  }

  /// From the moment its bytes start to move to its end, a collective holds its share of each
  /// simulated GPU it runs on: an Exec bounded at that share of the GPU's speed, which the kernels
  /// running there share the GPU with (max-min with bounds, SimGrid's CPU model). It has no work to
  /// finish: it is cancelled when its task ends. A hold only matters beside a kernel, so it waits
  /// (pending) until one runs on its GPU, as in screening.
  void hold_sms(TaskId id, const Task& t) {
    const double share = costs_.sm_share(id);
    if (share <= 0.0) return;
    for (std::int64_t rank : t.ranks) {
      const auto r = static_cast<std::size_t>(rank);
      if (r >= kernels_.size() || !platform_.gpus.count(rank)) continue;
      if (kernels_[r] > 0) add_hold(id, rank, share);
      else pending_holds_[r].push_back(id);
    }
  }

  void add_hold(TaskId id, std::int64_t rank, double share) {
    sg4::Host* gpu = platform_.gpus.at(rank);
    auto hold = sg4::Exec::init()
                    ->set_flops_amount(kHoldWork * gpu->get_speed())
                    ->set_bound(share * gpu->get_speed())
                    ->set_host(gpu);
    hold->start();
    holds_.emplace(id, hold);
  }

  /// A kernel is about to start on `rank`'s GPU: the collectives waiting there take their share now.
  void claim_pending_holds(std::int64_t rank) {
    auto& waiting = pending_holds_[static_cast<std::size_t>(rank)];
    for (TaskId id : waiting) add_hold(id, rank, costs_.sm_share(id));
    waiting.clear();
  }

  void release_sms(TaskId id) {
    if (costs_.sm_share(id) <= 0.0) return;
    for (std::int64_t rank : dag_.tasks[id].ranks) {
      const auto r = static_cast<std::size_t>(rank);
      if (r >= pending_holds_.size()) continue;
      auto& waiting = pending_holds_[r];
      waiting.erase(std::remove(waiting.begin(), waiting.end(), id), waiting.end());
    }
    auto [first, last] = holds_.equal_range(id);
    for (auto it = first; it != last; ++it) {
      // Cancelled from maestro, an Exec keeps its share of the host until SimGrid gets round to it;
      // suspended first, it gives the share back at once.
      it->second->suspend();
      it->second->cancel();
      cancelled_.push_back(it->second);
    }
    holds_.erase(first, last);
  }

  /// After `seconds`, start_flows(id): the flows after their latency, or the end of a host-side wait.
  void set_timer(double seconds, TaskId id) {
    const double at = sg4::Engine::get_clock() + seconds;
    timers_.emplace(at, id);
    // The kernel orders timers of one date by address; ours fire in the order they were set.
    simgrid::kernel::timer::Timer::set(at, [this] {
      guarded([this] {
        fire_timers();
        start_ready();
      });
    });
  }

  void start_flows(TaskId id) {
    hold_sms(id, dag_.tasks[id]);
    const auto& flows = costs_.flows(id);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (flows[f].bytes <= 0.0) continue;
      const SimgridRouteEnds& ends = platform_.routes[route_of_[id][f]];
      auto comm = sg4::Comm::sendto_init(ends.from, ends.to)->set_payload_size(static_cast<std::uint64_t>(flows[f].bytes));
      const auto flow = static_cast<std::int64_t>(flow_links_.size());
      flow_links_.push_back(&flows[f].links);
      flow_route_.push_back(route_of_[id][f]);
      track(comm, id, flow);
      if (flows[f].background) {
        comm->start();
        background_.emplace(flow, comm);
        for (LinkId l : flows[f].links) background_on_[l].push_back(flow);
        if (!links_free(flows[f].links)) suspend(flow);
        continue;
      }
      for (LinkId l : flows[f].links)
        if (foreground_on_[l]++ == 0) yield_link(l);
      comm->start();
    }
    if (outstanding_[id] == 0) finish(id);
  }

  // Background flows (a scavenger transport): one runs only while none of its links carries a
  // foreground flow. A foreground flow arriving suspends it; the last one leaving resumes it.
  bool links_free(const std::vector<LinkId>& links) const {
    for (LinkId l : links) {
      auto it = foreground_on_.find(l);
      if (it != foreground_on_.end() && it->second > 0) return false;
    }
    return true;
  }

  void yield_link(LinkId l) {
    auto it = background_on_.find(l);
    if (it == background_on_.end()) return;
    for (std::int64_t flow : it->second) suspend(flow);
  }

  // A comm is suspended at most once and never resumed: SimGrid 3.32's Activity::resume() leaves
  // the activity marked suspended, so a later suspend() of it does nothing. Resuming cancels it and
  // starts a fresh comm with the bytes it had left.
  void suspend(std::int64_t flow) {
    if (suspended_.count(flow)) return;
    auto& comm = background_.at(flow);
    suspended_[flow] = comm->get_remaining();
    comm->suspend();
  }

  void release_link(LinkId l) {
    auto it = background_on_.find(l);
    if (it == background_on_.end()) return;
    for (std::int64_t flow : it->second) {
      auto s = suspended_.find(flow);
      if (s == suspended_.end() || !links_free(*flow_links_[static_cast<std::size_t>(flow)])) continue;
      const SimgridRouteEnds& ends = platform_.routes[flow_route_[static_cast<std::size_t>(flow)]];
      auto comm = sg4::Comm::sendto_init(ends.from, ends.to)
                      ->set_payload_size(static_cast<std::uint64_t>(std::max(1.0, std::round(s->second))));
      suspended_.erase(s);
      sg4::CommPtr& old = background_[flow];  // the suspended one, done with: its slot now runs `comm`
      auto* slot = old->get_data<std::size_t>();
      old->set_data(nullptr);
      old->cancel();
      cancelled_.push_back(old);
      comm->set_data(slot);
      running_[*slot].activity = comm;
      comm->start();
      background_[flow] = comm;
    }
  }

  /// Registers a not yet started activity of task `id` (its task counts it as outstanding).
  void track(const sg4::ActivityPtr& activity, TaskId id, std::int64_t flow = -1) {
    std::size_t slot = running_.size();
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
    } else {
      running_.emplace_back();
      slots_.push_back(slot);
    }
    running_[slot] = Running{activity, id, flow};
    activity->set_data(&slots_[slot]);
    ++outstanding_[id];
  }

  void complete_activity(std::size_t slot) {
    Running& r = running_[slot];
    const TaskId id = r.task;
    const std::int64_t flow = r.flow;
    r.activity->set_data(nullptr);
    completed_.push_back(std::move(r.activity));
    free_.push_back(slot);
    if (flow < 0) --kernels_[static_cast<std::size_t>(dag_.tasks[id].rank())];  // an Exec: a kernel on its GPU
    if (flow >= 0) {
      const auto& links = *flow_links_[static_cast<std::size_t>(flow)];
      if (auto bg = background_.find(flow); bg != background_.end()) {
        completed_.push_back(bg->second);
        background_.erase(bg);
        for (LinkId l : links) {
          auto& on = background_on_[l];
          on.erase(std::find(on.begin(), on.end(), flow));
        }
      } else {
        for (LinkId l : links)
          if (--foreground_on_[l] == 0) release_link(l);
      }
    }
    if (--outstanding_[id] == 0) finish(id);
  }

  void fire_timers() {
    const double now = sg4::Engine::get_clock();
    while (!timers_.empty() && timers_.begin()->first <= now) {
      TaskId id = timers_.begin()->second;
      timers_.erase(timers_.begin());
      start_flows(id);
    }
  }

  void finish(TaskId id) {
    times_.finish[id] = sg4::Engine::get_clock();
    release_sms(id);
    ++done_;
    for (TaskId s : successors_[id])
      if (--pending_[s] == 0) ready_.push_back(s);
  }

  const TaskDag& dag_;
  const TaskCosts& costs_;
  const SimgridPlatform& platform_;
  const std::vector<std::vector<std::size_t>>& route_of_;
  TaskTimes& times_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::vector<TaskId>> successors_;
  std::vector<std::uint32_t> outstanding_;
  std::deque<TaskId> ready_;
  std::deque<Running> running_;     ///< per slot, the activity running in it (reused once it completes)
  std::deque<std::size_t> slots_;   ///< slot numbers at stable addresses: each activity's data points at its own
  std::vector<std::size_t> free_;   ///< slots whose activity completed
  std::vector<sg4::ActivityPtr> completed_;  ///< completed this round, released when time advances
  /// Cancelled comms are kept to the end: SimGrid reports their failure some rounds later.
  std::vector<sg4::ActivityPtr> cancelled_;
  std::vector<const std::vector<LinkId>*> flow_links_;  ///< per started flow, its links
  std::map<LinkId, std::int64_t> foreground_on_;        ///< foreground flows in progress per link
  std::map<LinkId, std::vector<std::int64_t>> background_on_;  ///< background flows in progress per link
  std::map<std::int64_t, sg4::CommPtr> background_;
  std::map<std::int64_t, double> suspended_;  ///< suspended background flows: bytes they have left
  std::vector<std::size_t> flow_route_;       ///< per started flow, its route
  std::multimap<double, TaskId> timers_;
  std::multimap<TaskId, sg4::ExecPtr> holds_;  ///< running collectives' holds on their GPUs
  std::vector<std::vector<TaskId>> pending_holds_;  ///< by rank: holds no kernel has met yet
  std::vector<std::uint32_t> kernels_;             ///< by rank: kernels running on its GPU
  /// A hold's work in seconds of its GPU: far beyond any simulated run, so it only ends cancelled.
  static constexpr double kHoldWork = 1e12;
  std::size_t done_ = 0;
  std::string failure_;
};

/// Runs the simulation and hands the times to `deliver` while SimGrid's engine and platform are still
/// alive: the child process exits inside `deliver`, so they are never torn down (their destructors
/// were about a tenth of the 175B / 1,024-GPU run).
void simulate(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout,
              const std::function<void(const TaskTimes&)>& deliver) {
  std::vector<std::string> args = {"strata"};
  for (const auto& s : simgrid_settings()) args.push_back(s);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());

  // A route per distinct link list and rate cap: a capped flow shares its cap with the flows between
  // the same two GPUs only (SimGrid 3.32 takes no Comm::set_rate on a comm between two hosts).
  std::map<std::pair<std::vector<LinkId>, double>, std::size_t> route_index;
  std::vector<SimgridRoute> routes;
  std::vector<std::vector<std::size_t>> route_of(dag.tasks.size());
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    for (const RoutedFlow& f : costs.flows(id)) {
      auto [it, fresh] = route_index.try_emplace({f.links, f.rate_cap}, routes.size());
      if (fresh) routes.push_back({f.links, f.rate_cap});
      route_of[id].push_back(it->second);
    }
  std::vector<std::int64_t> ranks;
  for (const auto& [rank, count] : dag.represents) ranks.push_back(rank);
  const SimgridPlatform platform =
      build_simgrid_platform(layout, costs.used_links(), routes, ranks, costs.flops_per_second());

  TaskTimes times;
  Controller controller(dag, costs, platform, route_of, times);
  controller.run(engine);
  deliver(times);
}

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3);
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// SimGrid in a child process: one simulation per process is all SimGrid allows.
TaskTimes simulate_in_child(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

}  // namespace

TaskTimes run_des(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout) {
  return simulate_in_child(dag, costs, layout);
}

namespace {

TaskTimes simulate_in_child(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout) {
  std::fflush(nullptr);  // the child must not flush the parent's buffered output again
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    try {
      simulate(dag, costs, layout, [&](const TaskTimes& t) {
        write_all(fds[1], t.start.data(), t.start.size() * sizeof(double));
        write_all(fds[1], t.finish.data(), t.finish.size() * sizeof(double));
        ::close(fds[1]);
        ::_exit(0);  // no destructors: neither SimGrid's nor those of the parent's state
      });
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      [[maybe_unused]] auto written = ::write(2, msg.data(), msg.size());
    }
    ::close(fds[1]);
    ::_exit(2);
  }
  ::close(fds[1]);
  TaskTimes times;
  times.start.resize(dag.tasks.size());
  times.finish.resize(dag.tasks.size());
  const bool ok = read_all(fds[0], times.start.data(), times.start.size() * sizeof(double)) &&
                  read_all(fds[0], times.finish.data(), times.finish.size() * sizeof(double));
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("the SimGrid simulation failed (see the messages above)");
  return times;
}

}  // namespace

}  // namespace strata
