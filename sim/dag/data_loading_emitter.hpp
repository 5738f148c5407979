#pragma once

/// Training-data loading: at the start of each iteration every rank of the first stage reads its
/// share of the batch from the data tier into host memory, on its data stream, as many rounds of
/// random reads; the read of a batch waits until the batch `prefetch_iterations` before it is in use.

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/config/scenario_spec.hpp"
#include "sim/dag/dag_context.hpp"

namespace strata {

/// What the data-loading emitter needs of the scenario.
struct DataLoadingPlan {
  DataSpec data;
  std::int64_t global_batch_size = 1;
  std::int64_t max_in_flight = 1;  ///< the object store's outstanding requests per client
};

class DataLoadingEmitter {
 public:
  DataLoadingEmitter(DagContext& ctx, DataLoadingPlan plan) : ctx_(ctx), plan_(std::move(plan)) {}

  /// This iteration's reads; call before anything else of the iteration is emitted.
  void emit();

 private:
  DagContext& ctx_;
  DataLoadingPlan plan_;
  std::vector<std::vector<TaskId>> first_forward_;  ///< per iteration, stage 0's first forward per lane
  TaskId iteration_start_ = 0;                       ///< the first task of the current iteration
};

}  // namespace strata
