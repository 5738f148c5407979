#include "sim/graph/pipeline_partition.hpp"

#include <stdexcept>

namespace strata {

int PipelinePartition::layers_on_stage(int stage) const {
  int n = 0;
  for (const auto& c : chunks)
    if (c.stage == stage) n += c.num_layers;
  return n;
}

int PipelinePartition::stage_of_layer(int layer) const {
  for (const auto& c : chunks)
    if (layer >= c.first_layer && layer < c.first_layer + c.num_layers) return c.stage;
  throw std::out_of_range("layer outside the partition");
}

PipelinePartition partition_layers(int num_layers, int stages, int virtual_stages) {
  const int num_chunks = stages * virtual_stages;
  if (stages < 1 || virtual_stages < 1 || num_layers < num_chunks - 2 || num_layers < 1)
    throw std::invalid_argument("partition needs a block for every model chunk but the first and the last");
  PipelinePartition p{stages, virtual_stages, {}};
  std::vector<int> sizes(num_chunks, num_layers / num_chunks);
  int extra = num_layers % num_chunks;
  // Middle chunks first, then the last, then the first.
  for (int c = 1; c + 1 < num_chunks && extra > 0; ++c, --extra) ++sizes[c];
  if (extra > 0 && num_chunks > 1) ++sizes[num_chunks - 1], --extra;
  if (extra > 0) ++sizes[0], --extra;
  int next = 0;
  for (int c = 0; c < num_chunks; ++c) {
    p.chunks.push_back({c % stages, c / stages, next, sizes[c]});
    next += sizes[c];
  }
  return p;
}

PipelinePartition partition_from_counts(const std::vector<int>& counts, int stages, int virtual_stages) {
  const int num_chunks = stages * virtual_stages;
  std::vector<int> sizes = counts;
  if (static_cast<int>(counts.size()) == stages && num_chunks != stages) {
    sizes.assign(static_cast<std::size_t>(num_chunks), 0);
    for (int s = 0; s < stages; ++s) {
      const int n = counts[static_cast<std::size_t>(s)];
      for (int v = 0; v < virtual_stages; ++v)
        sizes[static_cast<std::size_t>(v * stages + s)] = n / virtual_stages + (v < n % virtual_stages ? 1 : 0);
    }
  }
  if (static_cast<int>(sizes.size()) != num_chunks) throw std::invalid_argument("partition counts per chunk or stage");
  PipelinePartition p{stages, virtual_stages, {}};
  int next = 0;
  for (int c = 0; c < num_chunks; ++c) {
    const int n = sizes[static_cast<std::size_t>(c)];
    const bool end = num_chunks > 1 && (c == 0 || c == num_chunks - 1);
    if (n < (end ? 0 : 1)) throw std::invalid_argument("each model chunk but the first and the last needs a block");
    p.chunks.push_back({c % stages, c / stages, next, n});
    next += n;
  }
  return p;
}

std::vector<int> chunk_layers(const PipelinePartition& p) {
  std::vector<int> out;
  for (const auto& c : p.chunks) out.push_back(c.num_layers);
  return out;
}

}  // namespace strata
