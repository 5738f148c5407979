// When ZeRO-2/3 reduce their partitioned gradients over a step's micro-batches
// (training.grad_sync): every micro-batch, or once after the last (FSDP no_sync), against closed forms.

#include <catch2/catch.hpp>

#include "sim/analysis/run.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/graph/memory_model.hpp"
#include "dag_support.hpp"
#include "support.hpp"

using namespace strata;
using nlohmann::json;

namespace {

// Four micro-batches per step, full recomputation.
json fsdp_8b() { return test::fsdp_llama3_8b(4, "full"); }

const std::string kNoSync = "training.grad_sync=last-microbatch";

/// Gradient reductions of rank 0 in one iteration (data-parallel collectives off the gather stream,
/// which carries ZeRO-1/2's gathers of the updated weights): how many, and the bytes their flows move.
std::pair<int, double> reductions(const TaskDag& dag) {
  int count = 0;
  double bytes = 0.0;
  for (const Task& t : dag.tasks)
    if (t.kind == TaskKind::dp_comm && t.stream != Stream::gather && t.rank() == 0) {
      ++count;
      for (const Flow& f : t.flows) bytes += f.bytes;
    }
  return {count, bytes};
}

}  // namespace

TEST_CASE("grad_sync last-microbatch reduces once per step what every-microbatch reduces per micro-batch",
          "[grad_sync][dag]") {
  const Scenario every = test::load_inline(fsdp_8b());
  const Scenario once = test::load_inline(fsdp_8b(), {kNoSync});
  REQUIRE(every.num_microbatches() == 4);
  REQUIRE(every.training.behaviour.grad_sync == GradientSync::every_microbatch);
  const auto [n_every, bytes_every] = reductions(test::single_stage_dag(every).dag);
  const auto [n_once, bytes_once] = reductions(test::single_stage_dag(once).dag);
  REQUIRE(n_once > 0);
  CHECK(n_every == 4 * n_once);
  CHECK(bytes_every == Approx(4.0 * bytes_once));
}

TEST_CASE("grad_sync last-microbatch keeps the whole gradient on every rank and adds into it", "[grad_sync]") {
  const Scenario every = test::load_inline(fsdp_8b());
  const Scenario once = test::load_inline(fsdp_8b(), {kNoSync});
  const RunResult re = estimate_scenario(every), ro = estimate_scenario(once);
  const StageMemory& e = re.memory.stages.front();
  const StageMemory& o = ro.memory.stages.front();
  const double g = state_bytes(every.training).gradients;
  // ZeRO-3 over 8 ranks: a 1/8 shard, against the whole gradient of the rank's parameters (TP 1).
  CHECK(e.hbm.gradients == Approx(g * e.all_parameters / 8.0));
  CHECK(o.hbm.gradients == Approx(g * o.all_parameters));
  // Each micro-batch's backward adds its gradient into the buffer (autograd's .grad): read the
  // gradient, read and write the buffer, per parameter of the block.
  const test::BuiltDag b = test::single_stage_dag(every);
  const LayerWork before = layer_work(every, b.graph)[0], after = layer_work(once, b.graph)[0];
  CHECK(after.bwd_bytes - before.bwd_bytes == Approx(before.params * (2.0 + 2.0 * g)));
  CHECK(after.fwd_s == before.fwd_s);

  SECTION("with one micro-batch there is nothing to accumulate: the shard and no pass, as every-microbatch") {
    const Scenario single = test::load_inline(fsdp_8b(), {kNoSync, "training.global_batch_size=8"});
    const RunResult r = estimate_scenario(single);
    const StageMemory& s = r.memory.stages.front();
    CHECK(s.hbm.gradients == Approx(g * s.all_parameters / 8.0));
    const Scenario single_every = test::load_inline(fsdp_8b(), {"training.global_batch_size=8"});
    CHECK(layer_work(single, b.graph)[0].bwd_bytes == layer_work(single_every, b.graph)[0].bwd_bytes);
  }
  SECTION("ZeRO-2 alike: the whole gradient, and one reduction per step") {
    const Scenario every2 = test::load_inline(fsdp_8b(), {"parallelism.zero_stage=2"});
    const Scenario once2 = test::load_inline(fsdp_8b(), {"parallelism.zero_stage=2", kNoSync});
    const RunResult r2 = estimate_scenario(once2);
    CHECK(r2.memory.stages.front().hbm.gradients == Approx(g * r2.memory.stages.front().all_parameters));
    CHECK(reductions(test::single_stage_dag(every2).dag).first ==
          4 * reductions(test::single_stage_dag(once2).dag).first);
  }
  SECTION("an explicit grad_accumulation none is kept") {
    const Scenario none = test::load_inline(fsdp_8b(), {kNoSync, "training.grad_accumulation=none"});
    CHECK(none.training.behaviour.grad_accumulation == GradAccumulation::none);
    CHECK(once.training.behaviour.grad_accumulation == GradAccumulation::add);
    CHECK(layer_work(none, b.graph)[0].bwd_bytes == before.bwd_bytes);
  }
}
