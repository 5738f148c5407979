#include "sim/analysis/dag_cache.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace strata {

const std::vector<std::string>& dag_neutral_paths() {
  static const std::vector<std::string> paths = {
      "hardware.object_store.bandwidth", "hardware.nic.bandwidth",           "hardware.nvlink.bandwidth",
      "hardware.pcie.bandwidth",         "hardware.host.dram_bandwidth",     "hardware.cxl.bandwidth",
      "hardware.local_ssd.read_bandwidth", "hardware.local_ssd.write_bandwidth"};
  return paths;
}

bool dag_neutral(const std::string& path) {
  const auto& paths = dag_neutral_paths();
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

std::shared_ptr<const TaskDag> DagCache::get(const std::string& key, const std::function<TaskDag()>& build) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == key) {
      ++hits_;
      auto entry = std::move(*it);
      entries_.erase(it);
      entries_.push_back(std::move(entry));
      return entries_.back().second;
    }
  TaskDag built = build();
  const std::size_t tasks = built.tasks.size();
  if (tasks > max_tasks_ / 4) return std::make_shared<const TaskDag>(std::move(built));  // would push the others out
  built.shared_identity = fmt::format("dag cache #{}", ++built_);
  built.stream_order = stream_predecessors(built);
  auto dag = std::make_shared<const TaskDag>(std::move(built));
  while (!entries_.empty() && tasks_ + tasks > max_tasks_) {
    tasks_ -= entries_.front().second->tasks.size();
    entries_.pop_front();
  }
  entries_.emplace_back(key, dag);
  tasks_ += tasks;
  return dag;
}

namespace {

bool cache_enabled = false;

}  // namespace

DagCache* process_dag_cache() {
  static DagCache cache;
  return cache_enabled ? &cache : nullptr;
}

void enable_process_dag_cache() { cache_enabled = true; }

std::shared_ptr<const TaskDag> shared_dag(const SimulationOptions& options, const char* what, const DagOptions& dag,
                                          const std::function<TaskDag()>& build) {
  DagCache* cache = process_dag_cache();
  if (!cache || options.dag_group.empty()) return std::make_shared<const TaskDag>(build());
  const std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}", options.dag_group, what, dag.fold, dag.checkpoint_after,
                                      dag.min_iterations, dag.persist, options.fold);
  return cache->get(key, build);
}

}  // namespace strata
