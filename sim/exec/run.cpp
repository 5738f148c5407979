#include "sim/exec/run.hpp"

#include "sim/graph/compute_graph.hpp"

namespace strata {

RunResult run_scenario(const Scenario& sc) {
  GraphShape shape;
  shape.seq_len = sc.training.seq_len;
  shape.micro_batch = sc.training.micro_batch_size;
  // fp8 training keeps activations in 16-bit outside the GEMMs (Transformer Engine).
  shape.activation_bytes = std::max(2.0, bytes_per_element(sc.training.precision));
  shape.flash_attention = sc.training.flash_attention;
  ComputeGraph graph = build_compute_graph(sc.model, shape);

  RunResult r;
  r.parameters = total_parameters(graph);
  r.flops_per_iteration = model_flops(graph) * static_cast<double>(sc.num_microbatches() * sc.parallelism.dp);
  r.partition = partition_layers(static_cast<int>(sc.model.num_layers), static_cast<int>(sc.parallelism.pp),
                                 static_cast<int>(sc.parallelism.virtual_stages));
  r.memory = estimate_memory(sc, graph, r.partition);
  return r;
}

}  // namespace strata
