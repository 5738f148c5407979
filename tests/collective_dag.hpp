#pragma once

// One collective as a DAG, and the time an executor gives a DAG: shared by the closed-form
// collective tests and the nccl-tests validation.

#include <cstdint>
#include <vector>

#include "sim/dag/collectives.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/platform/platform_layout.hpp"

namespace strata::test {

/// A DAG with one NCCL collective over `group`; folded: one representative stands for the group.
inline TaskDag collective_dag(Collective c, const std::vector<std::int64_t>& group, double bytes, bool folded,
                              const RankLayout& layout) {
  TaskDag dag;
  const std::vector<std::int64_t> simulated = folded ? std::vector<std::int64_t>{group.front()} : group;
  dag.add(nccl_collective(c, group, simulated, bytes, TaskKind::dp_comm, Stream::dp_comm, layout));
  for (std::int64_t r : simulated) {
    dag.resident[r] = {};
    dag.represents[r] = folded ? static_cast<std::int64_t>(group.size()) : 1;
  }
  dag.fold_group = folded ? layout.gpus_per_node * 1024 : 1;  // every rank in one group
  return dag;
}

/// The makespan of `dag` on `gpus` GPUs of `hw`: the DES, or screening (the list scheduler).
inline double makespan(const TaskDag& dag, const HardwareSpec& hw, std::int64_t gpus, bool des,
                       Precision precision = Precision::bf16) {
  const PlatformLayout layout(hw, gpus);
  const TaskCosts costs(hw, precision, layout, dag);
  return (des ? run_des(dag, costs, layout) : run_list_schedule(dag, costs)).makespan();
}

}  // namespace strata::test
