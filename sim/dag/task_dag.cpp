#include "sim/dag/task_dag.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>
#include <algorithm>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <unordered_map>

namespace strata {

std::string to_string(TaskKind k) {
  switch (k) {
    case TaskKind::forward: return "forward";
    case TaskKind::backward: return "backward";
    case TaskKind::recompute: return "recompute";
    case TaskKind::optimizer: return "optimizer";
    case TaskKind::tp_comm: return "tp_comm";
    case TaskKind::cp_comm: return "cp_comm";
    case TaskKind::pp_transfer: return "pp_transfer";
    case TaskKind::dp_comm: return "dp_comm";
    case TaskKind::param_gather: return "param_gather";
    case TaskKind::offload: return "offload";
    case TaskKind::host_optimizer: return "host_optimizer";
    case TaskKind::checkpoint: return "checkpoint";
    case TaskKind::data_load: return "data_load";
    case TaskKind::redundant: return "redundant";
    case TaskKind::ep_comm: return "ep_comm";
  }
  return "task";
}

bool is_compute(TaskKind k) {
  return k == TaskKind::forward || k == TaskKind::backward || k == TaskKind::recompute || k == TaskKind::optimizer ||
         k == TaskKind::redundant;
}

bool is_point_to_point(TaskKind k) { return k == TaskKind::pp_transfer || k == TaskKind::cp_comm; }

std::string to_string(Stream s) {
  switch (s) {
    case Stream::compute: return "compute";
    case Stream::tp_comm: return "tp_comm";
    case Stream::cp_comm: return "cp_comm";
    case Stream::p2p: return "p2p";
    case Stream::dp_comm: return "dp_comm";
    case Stream::gather: return "gather";
    case Stream::offload_out: return "offload_out";
    case Stream::offload_in: return "offload_in";
    case Stream::grad_out: return "grad_out";
    case Stream::param_in: return "param_in";
    case Stream::upload: return "upload";
    case Stream::host: return "host";
    case Stream::checkpoint: return "checkpoint";
    case Stream::checkpoint_2: return "checkpoint_2";
    case Stream::checkpoint_3: return "checkpoint_3";
    case Stream::data: return "data";
    case Stream::ep_comm: return "ep_comm";
  }
  return "stream";
}

std::string to_string(MemoryUse u) {
  switch (u) {
    case MemoryUse::params: return "params";
    case MemoryUse::gradients: return "gradients";
    case MemoryUse::optimizer: return "optimizer";
    case MemoryUse::activations: return "activations";
    case MemoryUse::workspace: return "workspace";
    case MemoryUse::buffers: return "buffers";
  }
  return "memory";
}

double TaskTimes::makespan() const { return finish.empty() ? 0.0 : *std::max_element(finish.begin(), finish.end()); }

Device tier_device(Tier tier, std::int64_t node) {
  switch (tier) {
    case Tier::dram: return {DeviceKind::dram, node};
    case Tier::cxl: return {DeviceKind::cxl, node};
    case Tier::local_ssd: return {DeviceKind::local_ssd, node};
    case Tier::object_store: return {DeviceKind::object_store, 0};
    case Tier::none:
    case Tier::hbm: break;
  }
  throw std::logic_error("not a storage tier: " + to_string(tier));
}

TaskId TaskDag::add(Task t) {
  if (tasks.size() >= std::numeric_limits<TaskId>::max()) throw std::length_error("task DAG too large");
  for (TaskId d : t.deps)
    if (d >= tasks.size()) throw std::logic_error("task depends on a task not yet added");
  const auto id = static_cast<TaskId>(tasks.size());
  if (t.stream == Stream::compute)
    for (std::int64_t r : t.ranks) {
      const auto slot = static_cast<std::size_t>(r);
      if (slot >= last_compute_.size()) last_compute_.resize(slot + 1, kNoTask);
      last_compute_[slot] = id;
    }
  tasks.push_back(std::move(t));
  return id;
}

std::shared_ptr<const StreamPredecessors> stream_predecessors(const TaskDag& dag) {
  if (dag.stream_order) return dag.stream_order;
  // The last task seen on each (rank, stream), indexed directly: ranks are below the GPU count.
  std::int64_t max_rank = -1;
  for (const Task& t : dag.tasks)
    for (std::int64_t r : t.ranks) max_rank = std::max(max_rank, r);
  constexpr TaskId kNone = std::numeric_limits<TaskId>::max();
  std::vector<TaskId> last(static_cast<std::size_t>(max_rank + 1) * kNumStreams, kNone);
  auto order = std::make_shared<StreamPredecessors>();
  StreamPredecessors& out = *order;
  out.offsets_.reserve(dag.tasks.size() + 1);
  out.ids_.reserve(dag.tasks.size());
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    out.offsets_.push_back(out.ids_.size());
    const Task& t = dag.tasks[id];
    for (std::int64_t r : t.ranks) {
      TaskId& slot = last[static_cast<std::size_t>(r) * kNumStreams + static_cast<std::size_t>(t.stream)];
      if (slot != kNone) out.ids_.push_back(slot);
      slot = id;
    }
  }
  out.offsets_.push_back(out.ids_.size());
  return order;
}

std::vector<TaskId> topological_order(const TaskDag& dag) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(dag.tasks.size());
  std::unordered_map<std::int64_t, TaskId> last_on_stream;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    for (TaskId d : t.deps) boost::add_edge(d, id, g);
    for (std::int64_t r : t.ranks) {
      const std::int64_t key = r * kNumStreams + static_cast<int>(t.stream);
      auto [it, fresh] = last_on_stream.try_emplace(key, id);
      if (!fresh) {
        boost::add_edge(it->second, id, g);
        it->second = id;
      }
    }
  }
  std::vector<Graph::vertex_descriptor> reversed;
  reversed.reserve(dag.tasks.size());
  try {
    boost::topological_sort(g, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("task DAG has a cycle (a schedule waits on itself)");
  }
  return {reversed.rbegin(), reversed.rend()};
}

}  // namespace strata
