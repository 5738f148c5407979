// The simulation memo (sim/exec/simulation_memo): a key holds everything the simulation reads, so a changed
// bandwidth is another key, and equal keys return the times a simulation gave.

#include <catch2/catch.hpp>

#include "sim/dag/collectives.hpp"
#include "sim/exec/simulation_memo.hpp"
#include "sim/exec/executor.hpp"
#include "support.hpp"

namespace {

using namespace strata;

TaskDag all_reduce(const std::vector<std::int64_t>& group, double bytes, const RankLayout& layout) {
  TaskDag dag;
  dag.add(nccl_collective(Collective::all_reduce, group, group, bytes, TaskKind::dp_comm, Stream::dp_comm, layout));
  for (std::int64_t r : group) {
    dag.resident[r] = {};
    dag.represents[r] = 1;
  }
  return dag;
}

}  // namespace

TEST_CASE("A simulation key changes with any input of the simulation, and the memo returns the simulated times",
          "[unit][simulation]") {
  HardwareSpec hw = test::load("default").hardware;
  hw.gpus_per_node = 1;
  const RankLayout ranks{1, 1, 4, hw.gpus_per_node};
  const TaskDag dag = all_reduce({0, 1, 2, 3}, 64e6, ranks);
  const PlatformLayout layout(hw, 4);
  const TaskCosts costs(hw, Precision::bf16, layout, dag);
  const std::string key = simulation_key(dag, costs, layout);
  CHECK(key == simulation_key(dag, costs, layout));

  HardwareSpec slower = hw;
  slower.nic.bandwidth = BytesPerSecond(slower.nic.bandwidth.value / 2);
  const PlatformLayout slower_layout(slower, 4);
  const TaskCosts slower_costs(slower, Precision::bf16, slower_layout, dag);
  CHECK(key != simulation_key(dag, slower_costs, slower_layout));
  // The point-to-point cap is no link's bandwidth: a DAG shared by a sweep over it still keys apart.
  HardwareSpec capped = hw;
  capped.efficiency.nvlink_p2p = hw.efficiency.nvlink_p2p / 2;
  TaskDag shared = dag;
  shared.shared_identity = "a sweep family's DAG";
  CHECK(simulation_key(shared, costs, layout) !=
        simulation_key(shared, TaskCosts(capped, Precision::bf16, layout, shared), layout));
  const TaskDag smaller = all_reduce({0, 1, 2, 3}, 32e6, ranks);
  CHECK(key != simulation_key(smaller, TaskCosts(hw, Precision::bf16, layout, smaller), layout));

  // Simulated twice: the same times (what makes a memo sound), and the slower NIC is slower.
  const TaskTimes first = run_des(dag, costs, layout), again = run_des(dag, costs, layout);
  CHECK(first.start == again.start);
  CHECK(first.finish == again.finish);
  CHECK(run_des(dag, slower_costs, slower_layout).makespan() > first.makespan());

  SimulationMemo memo;
  CHECK(memo.find(key) == nullptr);
  memo.remember(key, first);
  REQUIRE(memo.find(key) != nullptr);
  CHECK(memo.find(key)->finish == first.finish);
  CHECK(memo.hits() == 2);
  // Bounded: the oldest goes first.
  for (std::size_t i = 0; i < SimulationMemo::kMaxEntries; ++i) memo.remember(key + std::to_string(i), first);
  CHECK(memo.find(key) == nullptr);
  CHECK(memo.find(key + "0") != nullptr);
}
