#pragma once

/// Remembers an executor's results within a process, keyed by everything the simulation reads, so a
/// sweep worker does not simulate the same DAG on the same platform twice (with either executor: each
/// has its own memo, as their times differ). On the shipped GPT-3 grid the families of one
/// checkpoint strategy differ only in the object store's bandwidth, which their training run (no
/// checkpoint in it) never touches: one training simulation serves them all.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "sim/dag/task_dag.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata {

/// The inputs of one simulation as bytes: per task its dependencies, ranks, stream, compute time,
/// host flag, latency, share of the SMs and routed flows (bytes, links, background); the simulated
/// ranks; each used link's bandwidth and name; the GPU rate. Everything run_des reads (the SimGrid
/// settings are fixed) and a superset of what run_list_schedule reads, so equal keys give equal task
/// times: both executors are deterministic. A DAG shared through a sweep worker's DAG cache
/// (TaskDag::shared_identity) is named by its identity instead of its tasks: the families sharing it
/// differ only in the link bandwidths, which the key keeps (tests/test_dag_cache.cpp).
std::string simulation_key(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

/// The last few results, compared by their whole key (no hash: a collision cannot return another
/// DAG's times). Bounded, least recently used out first, so a worker's memory (and the cost of
/// forking it for the next simulation) stays moderate. The bound holds about four families of the
/// GPT-3 grid (a training run's key is about 7 MB, a checkpoint window's up to 25 MB), enough for a
/// worker to keep each strategy's training run while the families of one bandwidth go by.
class SimulationMemo {
 public:
  static constexpr std::size_t kMaxEntries = 24;
  /// Larger DAGs are neither keyed nor kept: their key (about 100 bytes a task) would cost more
  /// memory than the memo holds, and a run of one such DAG (megatron-1t: 916k tasks) gains nothing.
  static constexpr std::size_t kMaxTasks = 300000;
  static constexpr std::size_t kMaxBytes = std::size_t{192} << 20;  ///< keys and times together

  /// The times remembered under `key` (now the most recently used), or nullptr.
  const TaskTimes* find(const std::string& key);
  void remember(std::string key, const TaskTimes& times);
  std::size_t hits() const { return hits_; }

 private:
  std::deque<std::pair<std::string, TaskTimes>> entries_;
  std::size_t bytes_ = 0;
  std::size_t hits_ = 0;
};

/// This process's memo of `kind`'s results, which execute() consults, or nullptr (the default): a
/// single `strata run` would only pay for the keys. Sweep workers turn them on (plan/sweep_runner).
SimulationMemo* process_simulation_memo(ExecutorKind kind);
void enable_process_simulation_memos();

}  // namespace strata
