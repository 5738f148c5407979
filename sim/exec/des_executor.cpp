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

#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include "sim/exec/des_memo.hpp"
#include "sim/exec/executor.hpp"
#include "sim/platform/simgrid_platform.hpp"

namespace strata {

namespace sg4 = simgrid::s4u;

namespace {

/// One actor drives the whole DAG: it starts each task's activities (an Exec on the GPU host, or a
/// Comm per flow on its route) when the task becomes ready, and waits for whichever finishes first.
/// Keeping tasks passive avoids an actor (and its context) per task.
class Controller {
 public:
  Controller(const TaskDag& dag, const TaskCosts& costs, const SimgridPlatform& platform,
             const std::vector<std::vector<std::size_t>>& route_of, TaskTimes& times)
      : dag_(dag), costs_(costs), platform_(platform), route_of_(route_of), times_(times) {
    const auto n = dag.tasks.size();
    const auto stream_prev = stream_predecessors(dag);
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
  }

  void operator()() {
    const std::size_t n = dag_.tasks.size();
    while (done_ < n) {
      while (!ready_.empty()) {
        TaskId id = ready_.front();
        ready_.pop_front();
        start(id);
      }
      if (done_ == n) break;
      if (active_.empty() && timers_.empty()) throw std::logic_error("DES stalled: tasks wait on each other");
      if (active_.empty()) {
        sg4::this_actor::sleep_until(timers_.begin()->first);
      } else {
        const double timeout =
            timers_.empty() ? -1.0 : std::max(0.0, timers_.begin()->first - sg4::Engine::get_clock());
        const ssize_t idx = sg4::Activity::wait_any_for(active_, timeout);
        if (idx >= 0 && static_cast<std::size_t>(idx) < active_.size()) complete_activity(static_cast<std::size_t>(idx));
      }
      fire_timers();
    }
  }

 private:
  void start(TaskId id) {
    const Task& t = dag_.tasks[id];
    times_.start[id] = sg4::Engine::get_clock();
    if (t.flows.empty()) {
      const double seconds = costs_.compute_seconds(t);
      if (seconds <= 0.0) return finish(id);
      if (TaskCosts::on_host(t)) {  // a fixed share of the host CPUs: a timed wait
        timers_.emplace(sg4::Engine::get_clock() + seconds, id);
        return;
      }
      sg4::Host* gpu = platform_.gpus.at(t.rank());
      auto exec = sg4::Exec::init()->set_flops_amount(seconds * gpu->get_speed())->set_host(gpu);
      exec->start();
      track(exec, id);
      return;
    }
    const double latency = costs_.latency_seconds(id);
    if (latency > 0.0) timers_.emplace(sg4::Engine::get_clock() + latency, id);
    else start_flows(id);
  }

  void start_flows(TaskId id) {
    const auto& flows = costs_.flows(id);
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (flows[f].bytes <= 0.0) continue;
      const SimgridRouteEnds& ends = platform_.routes[route_of_[id][f]];
      auto comm = sg4::Comm::sendto_init(ends.from, ends.to)->set_payload_size(static_cast<std::uint64_t>(flows[f].bytes));
      const auto flow = static_cast<std::int64_t>(flow_links_.size());
      flow_links_.push_back(&flows[f].links);
      flow_route_.push_back(route_of_[id][f]);
      flow_task_.push_back(id);
      if (flows[f].background) {
        comm->start();
        background_.emplace(flow, comm);
        for (LinkId l : flows[f].links) background_on_[l].push_back(flow);
        track(comm, id, flow);
        if (!links_free(flows[f].links)) suspend(flow);
        continue;
      } else {
        for (LinkId l : flows[f].links)
          if (foreground_on_[l]++ == 0) yield_link(l);
        comm->start();
      }
      track(comm, id, flow);
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
    for (std::size_t i = 0; i < active_flow_.size(); ++i)
      if (active_flow_[i] == flow) {
        untrack(i);
        break;
      }
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
      background_[flow]->cancel();  // the suspended one, done with
      comm->start();
      background_[flow] = comm;
      active_.push_back(comm);
      active_task_.push_back(flow_task_[static_cast<std::size_t>(flow)]);
      active_flow_.push_back(flow);
    }
  }

  void track(sg4::ActivityPtr activity, TaskId id, std::int64_t flow = -1) {
    active_.push_back(std::move(activity));
    active_task_.push_back(id);
    active_flow_.push_back(flow);
    ++outstanding_[id];
  }

  /// Stops waiting on active_[idx] (its task still counts it as outstanding).
  void untrack(std::size_t idx) {
    active_[idx] = active_.back();
    active_.pop_back();
    active_task_[idx] = active_task_.back();
    active_task_.pop_back();
    active_flow_[idx] = active_flow_.back();
    active_flow_.pop_back();
  }

  void complete_activity(std::size_t idx) {
    const TaskId id = active_task_[idx];
    const std::int64_t flow = active_flow_[idx];
    untrack(idx);
    if (flow >= 0) {
      const auto& links = *flow_links_[static_cast<std::size_t>(flow)];
      if (auto bg = background_.find(flow); bg != background_.end()) {
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
  std::vector<sg4::ActivityPtr> active_;
  std::vector<TaskId> active_task_;
  std::vector<std::int64_t> active_flow_;  ///< index into flow_links_, or -1 for a compute activity
  std::vector<const std::vector<LinkId>*> flow_links_;  ///< per started flow, its links
  std::map<LinkId, std::int64_t> foreground_on_;        ///< foreground flows in progress per link
  std::map<LinkId, std::vector<std::int64_t>> background_on_;  ///< background flows in progress per link
  std::map<std::int64_t, sg4::CommPtr> background_;
  std::map<std::int64_t, double> suspended_;  ///< suspended background flows: bytes they have left
  std::vector<std::size_t> flow_route_;       ///< per started flow, its route
  std::vector<TaskId> flow_task_;             ///< per started flow, its task
  std::multimap<double, TaskId> timers_;
  std::size_t done_ = 0;
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

  std::map<std::vector<LinkId>, std::size_t> route_index;
  std::vector<std::vector<LinkId>> routes;
  std::vector<std::vector<std::size_t>> route_of(dag.tasks.size());
  for (TaskId id = 0; id < dag.tasks.size(); ++id)
    for (const RoutedFlow& f : costs.flows(id)) {
      auto [it, fresh] = route_index.try_emplace(f.links, routes.size());
      if (fresh) routes.push_back(f.links);
      route_of[id].push_back(it->second);
    }
  std::vector<std::int64_t> ranks;
  for (const auto& [rank, count] : dag.represents) ranks.push_back(rank);
  const SimgridPlatform platform =
      build_simgrid_platform(layout, costs.used_links(), routes, ranks, costs.flops_per_second());

  TaskTimes times;
  Controller controller(dag, costs, platform, route_of, times);
  std::string failure;  // an exception must not escape a SimGrid actor
  sg4::Actor::create("controller", platform.controller, [&controller, &failure] {
    try {
      controller();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  engine.run();
  if (!failure.empty()) throw std::logic_error(failure);
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
  // Per process: each sweep worker keeps its own (issue 16: a family of the GPT-3 grid repeated
  // the training run of every other family of its strategy).
  DesMemo* memo = process_des_memo();
  if (!memo || dag.tasks.size() > DesMemo::kMaxTasks) return simulate_in_child(dag, costs, layout);
  std::string key = des_key(dag, costs, layout);
  if (const TaskTimes* known = memo->find(key)) return *known;
  TaskTimes times = simulate_in_child(dag, costs, layout);
  memo->remember(std::move(key), times);
  return times;
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
