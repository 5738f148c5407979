#include "sim/exec/executor.hpp"

#include "sim/exec/simulation_memo.hpp"

namespace strata {

std::string to_string(ExecutorKind k) {
  switch (k) {
    case ExecutorKind::des: return "des";
    case ExecutorKind::list: return "list";
  }
  return "des";
}

namespace {

TaskTimes simulate(ExecutorKind kind, const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout) {
  switch (kind) {
    case ExecutorKind::des: return run_des(dag, costs, layout);
    case ExecutorKind::list: return run_list_schedule(dag, costs);
  }
  return run_des(dag, costs, layout);
}

}  // namespace

TaskTimes execute(ExecutorKind kind, const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout) {
  // Per process: each sweep worker keeps its own (issue 16: a family of the GPT-3 grid repeated
  // the training run of every other family of its strategy).
  SimulationMemo* memo = process_simulation_memo(kind);
  if (!memo || dag.tasks.size() > SimulationMemo::kMaxTasks) return simulate(kind, dag, costs, layout);
  std::string key = simulation_key(dag, costs, layout);
  if (const TaskTimes* known = memo->find(key)) return *known;
  TaskTimes times = simulate(kind, dag, costs, layout);
  memo->remember(std::move(key), times);
  return times;
}

}  // namespace strata
