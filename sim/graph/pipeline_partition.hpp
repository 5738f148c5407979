#pragma once

/// Which transformer blocks each pipeline stage (and model chunk) holds.

#include <cstdint>
#include <vector>

namespace strata {

struct ModelChunk {
  int stage = 0;    ///< GPU pipeline rank
  int virtual_index = 0;  ///< chunk number on that stage (interleaved schedule)
  int first_layer = 0;
  int num_layers = 0;
};

struct PipelinePartition {
  int stages = 1;
  int virtual_stages = 1;
  std::vector<ModelChunk> chunks;  ///< in model order: chunk c sits on stage c % stages

  /// Blocks on a stage, over all its chunks.
  int layers_on_stage(int stage) const;
  /// The stage holding a block.
  int stage_of_layer(int layer) const;
};

/// Splits `num_layers` blocks into stages·virtual_stages chunks in model order. With uneven counts
/// the middle stages take the extra blocks first, because the first and last stages also hold the
/// embedding and the LM head (Llama 3 §3.3.2 gives 126 layers / 16 stages as 7 + 14×8 + 7).
PipelinePartition partition_layers(int num_layers, int stages, int virtual_stages);

/// The partition with `counts` blocks per model chunk, in model order (stages·virtual_stages
/// entries, each at least 1), or per stage (stages entries, each spread over the stage's chunks,
/// the earlier chunks taking the spare blocks).
PipelinePartition partition_from_counts(const std::vector<int>& counts, int stages, int virtual_stages);

/// Blocks per model chunk, in model order.
std::vector<int> chunk_layers(const PipelinePartition& p);

}  // namespace strata
