#pragma once

/// The pipeline partition a scenario runs: the blocks per chunk it gives
/// (parallelism.pipeline_layers), equal counts (uniform), or counts balanced by each block's
/// simulated kernel time and bounded by each stage's memory (balanced).

#include <functional>
#include <optional>
#include <vector>

#include "sim/config/scenario_spec.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

PipelinePartition scenario_partition(const Scenario& sc, const ComputeGraph& graph);

/// Whether a stage of a candidate partition fits in memory.
using StageFits = std::function<bool(const PipelinePartition&, int stage)>;

/// What a model chunk of `count` blocks from block `first` costs (with the embedding in the first
/// block and the LM head in the last); it grows as the chunk does.
using ChunkCost = std::function<double(int first, int count)>;

/// Contiguous blocks per model chunk (chunk c on stage c % stages) that minimise the largest chunk's
/// cost; `fits` says whether a stage of a candidate fits in memory. A binary search over the bound with
/// greedy packing from the last chunk back (the last stages hold the fewest micro-batches in flight,
/// so packing them first keeps the memory-heavy first stages light), each chunk growing only while
/// its stage fits; nullopt when no bound gives a partition that fits.
std::optional<PipelinePartition> balance_partition(int blocks, const ChunkCost& cost, int stages, int virtual_stages,
                                                   const StageFits& fits);

}  // namespace strata
