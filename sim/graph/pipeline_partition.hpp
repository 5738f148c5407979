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
  /// The first model chunk holds only the embedding, or the last only the head (no block).
  bool ends_apart() const { return chunks.size() > 1 && (chunks.front().num_layers == 0 || chunks.back().num_layers == 0); }
};

/// Splits `num_layers` blocks into stages·virtual_stages chunks in model order. With uneven counts
/// the middle stages take the extra blocks first, because the first and last stages also hold the
/// embedding and the LM head (Llama 3 §3.3.2 gives 126 layers / 16 stages as 7 + 14×8 + 7). With
/// one block fewer than chunks the first chunk holds no block, only the embedding; with two fewer
/// the last also holds only the head (Llama 3's 126 layers on 16 stages of 8 one-block chunks).
PipelinePartition partition_layers(int num_layers, int stages, int virtual_stages);

/// The partition with `counts` blocks per model chunk, in model order (stages·virtual_stages
/// entries, each at least 1 but the first and the last, which may hold only the embedding or only
/// the head), or per stage (stages entries, each spread over the stage's chunks, the earlier chunks
/// taking the spare blocks).
PipelinePartition partition_from_counts(const std::vector<int>& counts, int stages, int virtual_stages);

/// Blocks per model chunk, in model order.
std::vector<int> chunk_layers(const PipelinePartition& p);

}  // namespace strata
