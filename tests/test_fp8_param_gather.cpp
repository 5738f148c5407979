// The fp8 linears' weights all-gathered in fp8 (training.fp8_param_gather: torchao's
// enable_fsdp_float8_all_gather, Megatron-Core's fp8_param_gather), against closed forms of the graph.

#include <catch2/catch.hpp>

#include <optional>

#include "sim/dag/layer_work.hpp"
#include "sim/graph/memory_model.hpp"
#include "dag_support.hpp"
#include "support.hpp"

using namespace strata;
using nlohmann::json;

namespace {

const std::string kFp8Gathers = "training.fp8_param_gather=true";

/// Llama 3 8B under FSDP (ZeRO-3) on 8 H100 in fp8, one micro-batch per step.
json fsdp_fp8() {
  json doc = test::fsdp_llama3_8b(1, "full");
  doc["hardware"] = "dgx-h100";
  doc["training"]["precision"] = "fp8";
  return doc;
}

/// The bytes rank 0's tasks of `kind` move over the network (on `stream`, when given).
double moved(const TaskDag& dag, TaskKind kind, std::optional<Stream> stream = std::nullopt) {
  double bytes = 0.0;
  for (const Task& t : dag.tasks)
    if (t.kind == kind && t.rank() == 0 && (!stream || t.stream == *stream))
      for (const Flow& f : t.flows) bytes += f.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("fp8 parameter gathers move the fp8 linears' weights in one byte", "[fp8][dag]") {
  const Scenario wide = test::load_inline(fsdp_fp8());
  const Scenario narrow = test::load_inline(fsdp_fp8(), {kFp8Gathers});
  REQUIRE_FALSE(wide.training.behaviour.fp8_param_gather);  // torchao's and Megatron-Core's default
  REQUIRE(narrow.training.behaviour.fp8_param_gather);
  const test::BuiltDag b = test::single_stage_dag(wide);
  const std::vector<LayerWork> work = layer_work(wide, b.graph);
  // A Llama 3 8B block: every weight is a projection's (q, k, v, o, gate, up, down) but its two
  // RMSNorms' (2 x 4096).
  const LayerWork& block = work[1];
  CHECK(block.fp8_params == Approx(block.params - 2.0 * 4096.0));
  CHECK(block.fp8_params == Approx(4096.0 * (4096.0 + 2.0 * 1024.0) + 4096.0 * 4096.0 + 3.0 * 4096.0 * 14336.0));
  // What each layer's gathers move scales from 2 bytes a weight to 1 for the fp8 share; the
  // embedding and the LM head stay 16-bit.
  double narrow_bytes = 0.0, wide_bytes = 0.0;
  for (const LayerWork& w : work) {
    narrow_bytes += (w.params - w.fp8_params) * 2.0 + w.fp8_params * 1.0;
    wide_bytes += w.params * 2.0;
  }
  const double before = moved(b.dag, TaskKind::param_gather);
  const test::BuiltDag n = test::single_stage_dag(narrow);
  const double after = moved(n.dag, TaskKind::param_gather);
  REQUIRE(before > 0.0);
  CHECK(after / before == Approx(narrow_bytes / wide_bytes).epsilon(1e-6));
  // The gradients' reduce-scatters are untouched.
  CHECK(moved(n.dag, TaskKind::dp_comm) == Approx(moved(b.dag, TaskKind::dp_comm)));
}

TEST_CASE("The distributed optimizer's gather of the updated weights moves the fp8 linears' in one byte",
          "[fp8][dag]") {
  // Megatron-Core's distributed optimizer (ZeRO-1), gathered after the step (overlap_param_gather off).
  json doc = fsdp_fp8();
  doc["training"]["framework"] = "megatron-core";
  doc["training"]["overlap_param_gather"] = false;
  doc["parallelism"] = {{"distributed_optimizer", true}};
  const Scenario wide = test::load_inline(doc);
  const Scenario narrow = test::load_inline(doc, {kFp8Gathers});
  const test::BuiltDag b = test::single_stage_dag(wide);
  const MemoryEstimate memory = estimate_memory(wide, b.graph, partition_layers(32, 1, 1));
  const StageMemory& stage = memory.stages.front();
  REQUIRE(stage.fp8_parameters > 0.0);
  const double before = moved(b.dag, TaskKind::dp_comm, Stream::gather);
  const double after = moved(test::single_stage_dag(narrow).dag, TaskKind::dp_comm, Stream::gather);
  REQUIRE(before > 0.0);
  CHECK(after / before == Approx((stage.parameters - 0.5 * stage.fp8_parameters) / stage.parameters).epsilon(1e-6));
}
