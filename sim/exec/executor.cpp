#include "sim/exec/executor.hpp"

namespace strata {

std::string to_string(ExecutorKind k) {
  switch (k) {
    case ExecutorKind::des: return "des";
    case ExecutorKind::list: return "list";
  }
  return "des";
}

TaskTimes execute(ExecutorKind kind, const TaskDag& dag, const TaskCosts& costs, const PlatformLayout& layout) {
  switch (kind) {
    case ExecutorKind::des: return run_des(dag, costs, layout);
    case ExecutorKind::list: return run_list_schedule(dag, costs);
  }
  return run_des(dag, costs, layout);
}

}  // namespace strata
