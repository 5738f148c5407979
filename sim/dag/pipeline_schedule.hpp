#pragma once

/// The order in which each pipeline stage runs its forward and backward passes: GPipe, 1F1B
/// (PipeDream-Flush) and Megatron's interleaved 1F1B (Narayanan et al. 2021 §2.2).

#include <vector>

#include "sim/config/scenario_spec.hpp"

namespace strata {

/// One pass of one model chunk over one micro-batch.
struct PipelineUnit {
  bool forward = true;
  int chunk = 0;  ///< model chunk in model order: chunk c runs on stage c % stages
  int microbatch = 0;
};

/// Per stage, its units in program order.
using PipelineOrder = std::vector<std::vector<PipelineUnit>>;

/// `microbatches` must be a multiple of `stages` for the interleaved schedule (validated earlier).
PipelineOrder pipeline_order(Schedule schedule, int stages, int virtual_stages, int microbatches);

}  // namespace strata
