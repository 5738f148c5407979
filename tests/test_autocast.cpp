// Automatic mixed precision over fp32 parameters (training.param_precision fp32 under a 16-bit
// precision; TrainingSpec::autocast): the model states, the weight casts each linear keeps for its
// backward, and the passes that make them, against closed forms from the graph.

#include <catch2/catch.hpp>

#include "sim/analysis/run.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/graph/kernel_costs.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "support.hpp"

using namespace strata;
using nlohmann::json;

namespace {

// One micro-batch per step, no recomputation.
json fsdp_8b() { return test::fsdp_llama3_8b(1, "none"); }

const std::string kAutocast = "training.param_precision=fp32";

ComputeGraph graph_of(const Scenario& sc) {
  GraphShape shape{.seq_len = sc.training.seq_len, .micro_batch = sc.training.micro_batch_size};
  shape.eager_elementwise = !sc.training.behaviour.fused_elementwise;
  shape.cross_entropy = sc.training.behaviour.cross_entropy;
  return build_compute_graph(sc.model, shape);
}

/// Elements of the weights the matmuls of ops `in` read on one TP rank.
template <class Pred>
double matmul_weights(const ComputeGraph& g, double tp, Pred in) {
  double total = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (!g[v].gemms.empty() && in(g[v])) total += g[v].params_split / tp + g[v].params_replicated;
  return total;
}

const StageMemory& stage0(const RunResult& r) { return r.memory.stages.front(); }

/// Bytes rank 0's ZeRO-3 parameter gathers move in one iteration.
double gathered_bytes(const Scenario& sc) {
  const ComputeGraph g = graph_of(sc);
  const auto part = partition_layers(static_cast<int>(sc.model.num_layers), 1, 1);
  const TaskDag dag = build_training_dag(sc, g, part, estimate_memory(sc, g, part), {true, -1, 1});
  double bytes = 0.0;
  for (const Task& t : dag.tasks)
    if (t.kind == TaskKind::param_gather && t.rank() == 0)
      for (const Flow& f : t.flows) bytes += f.bytes;
  return bytes;
}

}  // namespace

TEST_CASE("Autocast: fp32 parameters are the optimizer's master copy, gathered and stored at 4 bytes",
          "[autocast]") {
  const Scenario mixed = test::load_inline(fsdp_8b());
  const Scenario amp = test::load_inline(fsdp_8b(), {kAutocast});
  REQUIRE_FALSE(mixed.training.autocast());
  REQUIRE(amp.training.autocast());
  // Mixed precision: 16-bit weights and gradients, an fp32 master copy and two moments (ZeRO §3.1).
  const StateBytes m = state_bytes(mixed.training);
  CHECK(m.weights == 2.0);
  CHECK(m.gradients == 2.0);
  CHECK(m.master == 4.0);
  CHECK(m.optimizer == 12.0);
  // Autocast: the fp32 parameters are what the optimizer updates; their gradients land in fp32.
  const StateBytes a = state_bytes(amp.training);
  CHECK(a.weights == 4.0);
  CHECK(a.gradients == 4.0);
  CHECK(a.master == 0.0);
  CHECK(a.optimizer == 8.0);
  // Per GPU under ZeRO-3 every state is a 1/8 shard of the same parameters.
  const RunResult rm = estimate_scenario(mixed), ra = estimate_scenario(amp);
  const double shard = stage0(rm).all_parameters / 8.0;
  CHECK(stage0(rm).hbm.params == Approx(2.0 * shard));
  CHECK(stage0(ra).hbm.params == Approx(4.0 * shard));
  CHECK(stage0(ra).hbm.optimizer == Approx(8.0 * shard));
  CHECK(stage0(rm).hbm.optimizer == Approx(12.0 * shard));
  // Adam updates the fp32 parameters in place: it reads them as well as writing them.
  CHECK(adam_step_bytes(a) == 2.0 * 8.0 + 4.0 + 4.0 + 4.0);
  CHECK(adam_step_bytes(m) == 2.0 * 12.0 + 2.0 + 2.0);
  // The gathers carry the fp32 parameters: twice the bytes of 16-bit ones.
  CHECK(gathered_bytes(amp) == Approx(2.0 * gathered_bytes(mixed)));
  // The run says how far the autocast model has been checked, and what it leaves out.
  bool warned = false;
  for (const std::string& w : ra.confidence.warnings) warned |= w.find("autocast over fp32 parameters") == 0;
  CHECK(warned);
}

TEST_CASE("Autocast: each linear keeps its weight's 16-bit cast until its backward, the norms their fp32 input",
          "[autocast][activations]") {
  const Scenario mixed = test::load_inline(fsdp_8b());
  const Scenario amp = test::load_inline(fsdp_8b(), {kAutocast});
  const ComputeGraph g = graph_of(mixed);
  const auto every = [](const Op&) { return true; };
  // One micro-batch in flight (no pipeline): every matmul's weight once, at 2 bytes, the LM head's too.
  const double casts = 2.0 * matmul_weights(g, 1.0, every);
  // The residual stream in fp32: each block's two pre-norms and the final norm keep 4 bytes per
  // hidden value where 16-bit training keeps 2.
  const double L = static_cast<double>(mixed.model.num_layers);
  const double sbh = static_cast<double>(mixed.training.seq_len * mixed.model.hidden_size);
  const double stream = 2.0 * sbh * (2.0 * L + 1.0);
  CHECK(stage0(estimate_scenario(amp)).hbm.activations - stage0(estimate_scenario(mixed)).hbm.activations ==
        Approx(casts + stream));

  SECTION("full recomputation keeps a block's input only: the casts left are the LM head's") {
    const Scenario full = test::load_inline(fsdp_8b(), {"memory.recompute=full"});
    const Scenario full_amp = test::load_inline(fsdp_8b(), {"memory.recompute=full", kAutocast});
    const double head = 2.0 * matmul_weights(g, 1.0, [](const Op& op) { return op.kind == OpKind::lm_head; });
    CHECK(stage0(estimate_scenario(full_amp)).hbm.activations - stage0(estimate_scenario(full)).hbm.activations ==
          Approx(head + 2.0 * sbh * (L + 1.0)));
  }
  SECTION("context parallelism divides the tokens, not the weights") {
    const std::vector<std::string> cp = {"parallelism.cp=2", "training.framework=megatron-core",
                                         "training.global_batch_size=4"};
    std::vector<std::string> cp_amp = cp;
    cp_amp.push_back(kAutocast);
    const double delta = stage0(estimate_scenario(test::load_inline(fsdp_8b(), cp_amp))).hbm.activations -
                         stage0(estimate_scenario(test::load_inline(fsdp_8b(), cp))).hbm.activations;
    CHECK(delta == Approx(casts + stream / 2.0));
  }
}

TEST_CASE("Autocast: the residual stream stays fp32 and each norm's output is cast for the linear after it",
          "[autocast][graph]") {
  const Scenario sc = test::load_inline(fsdp_8b(), {"training.fused_elementwise=true"});
  GraphShape shape{.seq_len = sc.training.seq_len, .micro_batch = 1};
  const ComputeGraph sixteen = build_compute_graph(sc.model, shape);
  shape.residual_bytes = 4.0;
  const ComputeGraph stream = build_compute_graph(sc.model, shape);
  const double sbh = static_cast<double>(sc.training.seq_len * sc.model.hidden_size);
  const auto op = [](const ComputeGraph& g, const std::string& name) -> const Op& {
    for (auto v : boost::make_iterator_range(boost::vertices(g)))
      if (g[v].name == name) return g[v];
    FAIL("no op " << name);
    return g[0];
  };
  // The fused norm reads and writes 4 bytes, then the QKV linear's cast reads 4 and writes 2.
  CHECK(op(sixteen, "layer0.attn_norm").memory_traffic == Approx(4.0 * sbh));
  CHECK(op(stream, "layer0.attn_norm").memory_traffic == Approx(8.0 * sbh + 6.0 * sbh));
  CHECK(op(stream, "layer0.attn_norm").saved.front().bytes == Approx(4.0 * sbh));
  // The projection's 16-bit output and the fp32 residual in, the fp32 sum out.
  CHECK(op(sixteen, "layer0.attn_out").memory_traffic == Approx(6.0 * sbh));
  CHECK(op(stream, "layer0.attn_out").memory_traffic == Approx(10.0 * sbh));
  // What the linears keep of their input is the 16-bit cast, as without autocast.
  CHECK(op(stream, "layer0.qkv").saved.front().bytes == op(sixteen, "layer0.qkv").saved.front().bytes);
  // Eager RMSNorm on an fp32 input has no casts of its own: pow, mean, x·rsqrt, weight·x in fp32.
  GraphShape eager{.seq_len = sc.training.seq_len, .micro_batch = 1, .eager_elementwise = true, .residual_bytes = 4.0};
  CHECK(op(build_compute_graph(sc.model, eager), "layer0.attn_norm").memory_traffic ==
        Approx((5.0 * 4.0 + 2.0 * 4.0) * sbh + 6.0 * sbh));
}

TEST_CASE("Autocast: every forward casts each weight and every backward casts its gradient back", "[autocast]") {
  const Scenario mixed = test::load_inline(fsdp_8b());
  const Scenario amp = test::load_inline(fsdp_8b(), {kAutocast});
  const ComputeGraph g = graph_of(mixed);
  const std::vector<LayerWork> before = layer_work(mixed, g), after = layer_work(amp, g);
  const KernelCosts kernels(amp.hardware, amp.training.precision, amp.training.behaviour);
  // Block 0: read 4 bytes and write 2 per weight forward, read 2 and write 4 backward; a kernel per weight.
  double seconds = 0.0, bytes = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(g))) {
    const Op& op = g[v];
    if (op.layer != 0 || op.gemms.empty()) continue;
    const double moved = 6.0 * (op.params_split + op.params_replicated);
    bytes += moved;
    seconds += kernels.memory_seconds(moved, static_cast<double>(op.gemms.size()));
  }
  REQUIRE(bytes > 0.0);
  CHECK(after[0].fwd_bytes - before[0].fwd_bytes == Approx(bytes));
  CHECK(after[0].bwd_bytes - before[0].bwd_bytes == Approx(bytes));
  CHECK(after[0].fwd_s - before[0].fwd_s == Approx(seconds));
  CHECK(after[0].bwd_s - before[0].bwd_s == Approx(seconds));
  SECTION("per-op checkpointing keeps no cast: each is made again before its backward") {
    const Scenario sac = test::load_inline(fsdp_8b(), {"memory.recompute=selective"});
    const Scenario sac_amp = test::load_inline(fsdp_8b(), {"memory.recompute=selective", kAutocast});
    REQUIRE(sac.training.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul);
    const LayerWork kept = layer_work(sac, g)[0], recast = layer_work(sac_amp, g)[0];
    // Each rerun cast is the forward's: read 4 bytes, write 2, a kernel per weight.
    CHECK(recast.rerun_bytes - kept.rerun_bytes == Approx(bytes));
    CHECK(recast.rerun_s - kept.rerun_s == Approx(seconds));
  }
  SECTION("DeepSpeed below ZeRO-2 adds each fp32 gradient into its buffer: no BF16_Optimizer cast") {
    json ds = fsdp_8b();
    ds["training"]["framework"] = "deepspeed";
    ds["parallelism"]["zero_stage"] = 1;
    const Scenario bf16 = test::load_inline(ds, {"training.grad_precision=fp32"});
    const Scenario fp32 = test::load_inline(ds, {kAutocast});
    CHECK(bf16.training.behaviour.grad_accumulation == GradAccumulation::cast_add);
    CHECK(fp32.training.behaviour.grad_accumulation == GradAccumulation::add);
    // The gradients are the parameters' fp32 ones, counted once (no 16-bit copy beside them).
    const RunResult r = estimate_scenario(fp32);
    CHECK(stage0(r).hbm.gradients == Approx(4.0 * stage0(r).parameters));
  }
  // Without autocast nothing changes: the default parameters are the compute precision's.
  const Scenario explicit_default = test::load_inline(fsdp_8b(), {"training.param_precision=bf16"});
  CHECK(layer_work(explicit_default, g)[0].fwd_s == before[0].fwd_s);
}

TEST_CASE("Autocast: the summary's memory line names the parameters' dtype", "[autocast][cli]") {
  const test::Result r = test::strata_cli("run tests/data/validation/tinyllama-1b-a100-40g-16.json");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("offload none, fp32 parameters (autocast)") != std::string::npos);
  const test::Result mixed =
      test::strata_cli("run tests/data/validation/tinyllama-1b-a100-40g-16.json --set training.param_precision=bf16");
  REQUIRE(mixed.code == 0);
  CHECK(mixed.out.find("(autocast)") == std::string::npos);
}
