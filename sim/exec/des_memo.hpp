#pragma once

/// Remembers DES results within a process, keyed by everything the simulation reads, so a sweep
/// worker does not simulate the same DAG on the same platform twice. On the shipped GPT-3 grid the
/// families of one checkpoint strategy differ only in the object store's bandwidth, which their
/// training run (no checkpoint in it) never touches: one training simulation serves them all.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "sim/dag/task_dag.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata {

/// The inputs of one DES run as bytes: per task its dependencies, ranks, stream, compute time,
/// host flag, latency, share of the SMs and routed flows (bytes, links, background); the simulated ranks; each used
/// link's bandwidth and name; the GPU rate. Exactly what run_des's simulation reads (the SimGrid
/// settings are fixed), so equal keys give equal task times: the simulation is deterministic.
std::string des_key(const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout);

/// The last few results, compared by their whole key (no hash: a collision cannot return another
/// DAG's times). Bounded, least recently used out first, so a worker's memory (and the cost of
/// forking it for the next simulation) stays moderate. The bound holds about four families of the
/// GPT-3 grid (a training run's key is about 7 MB, a checkpoint window's up to 25 MB), enough for a
/// worker to keep each strategy's training run while the families of one bandwidth go by.
class DesMemo {
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

/// This process's memo, which run_des consults, or nullptr (the default): a single `strata run`
/// would only pay for the keys. Sweep workers turn it on (plan/sweep_runner).
DesMemo* process_des_memo();
void enable_process_des_memo();

}  // namespace strata
