#pragma once

/// Task DAGs a sweep worker has built, so families that differ only in what no DAG reads (the
/// bandwidth of a link: the executors read it from TaskCosts, the DAG builder never does) share
/// theirs. On the shipped GPT-3 grid the ten object-store bandwidths of a checkpoint strategy give
/// ten families with the same training DAG and the same checkpoint windows.

#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/analysis/simulation_options.hpp"
#include "sim/dag/task_dag.hpp"
#include "sim/dag/training_dag.hpp"

namespace strata {

/// Whether a swept path changes no task DAG: a link bandwidth of the hardware (not the HBM's, which
/// prices memory-bound kernels when the DAG is built). tests/test_dag_cache.cpp builds DAGs at two
/// values of each and compares them.
bool dag_neutral(const std::string& path);
const std::vector<std::string>& dag_neutral_paths();

class DagCache {
 public:
  /// About 500 bytes a task while kept: the bound keeps a worker near 1 GiB.
  static constexpr std::size_t kMaxTasks = 2'000'000;

  explicit DagCache(std::size_t max_tasks = kMaxTasks) : max_tasks_(max_tasks) {}

  /// The DAG remembered under `key`, or `build()`'s, remembered (least recently used out first).
  std::shared_ptr<const TaskDag> get(const std::string& key, const std::function<TaskDag()>& build);
  std::size_t hits() const { return hits_; }

 private:
  std::deque<std::pair<std::string, std::shared_ptr<const TaskDag>>> entries_;
  std::size_t max_tasks_;
  std::size_t tasks_ = 0;
  std::size_t hits_ = 0;
  std::size_t built_ = 0;  ///< numbers the identities of the DAGs it keeps
};

/// This process's cache, or nullptr (the default). Sweep workers turn it on (plan/sweep_runner).
DagCache* process_dag_cache();
void enable_process_dag_cache();

/// `build()`'s DAG for `what` ("training", "window", …) built with `dag`, from the process cache
/// when the family's options name its DAG group (SimulationOptions::dag_group).
std::shared_ptr<const TaskDag> shared_dag(const SimulationOptions& options, const char* what, const DagOptions& dag,
                                          const std::function<TaskDag()>& build);

}  // namespace strata
