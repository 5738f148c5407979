// Selective recompute as each framework implements it: Megatron's (the attention core rerun) and
// PyTorch's per-op checkpointing as torchtitan applies it (every other matmul rerun), which the
// pytorch-fsdp preset picks (sim/config/framework, sim/graph/memory_model, sim/dag/layer_work).

#include <catch2/catch.hpp>

#include "sim/core/diagnostics.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/graph/memory_model.hpp"
#include "support.hpp"

using namespace strata;

namespace {

// Llama 3 8B: hidden 4096, 8 KV heads of 128, SwiGLU 14336.
constexpr double kHidden = 4096, kKv = 1024, kFfn = 14336;

Scenario fsdp_8b(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> sets = {"training.framework=\"pytorch-fsdp\"", "memory.recompute=\"selective\""};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return test::load("llama-3-8b-zero3-h100", sets);
}

ComputeGraph graph_of(const Scenario& sc) {
  return build_compute_graph(sc.model, {sc.training.seq_len, sc.training.micro_batch_size, 2.0,
                                        sc.training.flash_attention, !sc.training.behaviour.fused_elementwise});
}

}  // namespace

TEST_CASE("The pytorch-fsdp preset's selective recompute is per-op checkpointing on dense blocks", "[recompute][config]") {
  CHECK(fsdp_8b().training.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul);
  CHECK(test::load("llama-3-8b-zero3-h100").training.behaviour.selective_recompute ==
        SelectiveRecompute::attention_core);
  CHECK(fsdp_8b({"training.selective_recompute=\"attention-core\""}).training.behaviour.selective_recompute ==
        SelectiveRecompute::attention_core);
  // Experts run through grouped matmuls the policy does not count: Megatron's selective stands.
  const Scenario moe = test::load("mixtral-8x7b-h100", {"training.framework=\"pytorch-fsdp\""});
  CHECK(moe.training.behaviour.selective_recompute == SelectiveRecompute::attention_core);
  try {
    test::load("mixtral-8x7b-h100", {"training.framework=\"pytorch-fsdp\"",
                                     "training.selective_recompute=\"every-other-matmul\""});
    FAIL("a MoE model took every-other-matmul");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("/training/selective_recompute: every-other-matmul is modelled for dense blocks") !=
          std::string::npos);
  }
  // Biased linears are aten.addmm, which the save list (aten.mm) does not name.
  const std::vector<std::string> fsdp = {"training.framework=\"pytorch-fsdp\"", "parallelism.tp=1",
                                         "parallelism.dp=8", "parallelism.sequence_parallel=false",
                                         "training.global_batch_size=32"};
  CHECK(test::load("korthikanti-22b-selective", fsdp).training.behaviour.selective_recompute ==
        SelectiveRecompute::attention_core);
  // Under TP with SP (torchtitan's) the preset's is per-op checkpointing too; TP without SP
  // all-reduces, whose outputs the save list does not name: Megatron's selective stands, and asking
  // for per-op checkpointing is refused.
  CHECK(fsdp_8b({"parallelism.tp=2", "parallelism.dp=4", "parallelism.sequence_parallel=true"})
            .training.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul);
  CHECK(fsdp_8b({"parallelism.tp=2", "parallelism.dp=4", "parallelism.sequence_parallel=false"})
            .training.behaviour.selective_recompute == SelectiveRecompute::attention_core);
  try {
    fsdp_8b({"parallelism.tp=2", "parallelism.dp=4", "parallelism.sequence_parallel=false",
             "training.selective_recompute=\"every-other-matmul\""});
    FAIL("TP 2 without SP took every-other-matmul");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("/training/selective_recompute: every-other-matmul is modelled at "
                                     "/parallelism/tp 1 or with /parallelism/sequence_parallel true") !=
          std::string::npos);
  }
}

TEST_CASE("Per-op checkpointing keeps the block input, the attention output and wq, wv, w1, w2", "[recompute][activations]") {
  const Scenario sc = fsdp_8b();
  const ComputeGraph g = graph_of(sc);
  const double tokens = static_cast<double>(sc.training.seq_len * sc.training.micro_batch_size);
  ActivationPolicy p{1, false, Recompute::selective, 1, SelectiveRecompute::every_other_matmul};
  // Block input, attention output, wq (hidden wide), wv (KV width), w1 (gate, FFN wide), w2 (hidden).
  const double per_token = 2.0 * (kHidden + kHidden + kHidden + kKv + kFfn + kHidden);
  CHECK(layer_activation_bytes(g, 5, p) == Approx(per_token * tokens));
  // Under TP 2 without SP the column-parallel outputs halve; the block input and w2's (row-parallel,
  // the whole hidden state before its reduce) do not.
  p.tp = 2;
  CHECK(layer_activation_bytes(g, 5, p) ==
        Approx(2.0 * (kHidden + kHidden / 2 + kHidden / 2 + kKv / 2 + kFfn / 2 + kHidden) * tokens));
  // Under TP 8 with SP the block input is the rank's sequence shard, and the reduce-scatters after wo
  // and w2 (on the save list) keep their outputs, a sequence shard each; w2's own output is still
  // the whole hidden state.
  p.tp = 8;
  p.sequence_parallel = true;
  CHECK(layer_activation_bytes(g, 5, p) ==
        Approx(2.0 * (kHidden / 8 + kHidden / 8 + kHidden / 8 + kKv / 8 + kFfn / 8 + kHidden + 2 * kHidden / 8) *
               tokens));
  p.sequence_parallel = false;
  // Megatron's selective keeps far more of the same block (everything but the attention core's).
  p.tp = 1;
  p.selective = SelectiveRecompute::attention_core;
  CHECK(layer_activation_bytes(g, 5, p) > 1.5 * per_token * tokens);
}

TEST_CASE("Per-op checkpointing reruns wk, wo and w3 and the elementwise ops, not the attention", "[recompute]") {
  const Scenario sc = fsdp_8b();
  const ComputeGraph g = graph_of(sc);
  const std::vector<LayerWork> work = layer_work(sc, g);
  const double tokens = static_cast<double>(sc.training.seq_len * sc.training.micro_batch_size);
  const LayerWork& w = work[5];
  CHECK(w.rerun_flops == Approx(2.0 * tokens * kHidden * (kKv + kHidden + kFfn)));
  // Every elementwise op of the block runs again: all its memory traffic but the attention core's
  // (bf16: no fp8 casts in the block's bytes).
  CHECK(w.rerun_bytes == Approx(w.block_bytes - w.core_bytes));
  // The block's forward minus its attention core costs more than the rerun: two of three MLP
  // matmuls and wq, wv are not rerun.
  CHECK(w.rerun_s < w.block_s - w.core_s);
  const RerunWork r = rerun_work(w, Recompute::selective, SelectiveRecompute::every_other_matmul);
  CHECK(r.seconds == w.rerun_s);
  CHECK(rerun_work(w, Recompute::selective, SelectiveRecompute::attention_core).seconds == w.core_s);
  CHECK(rerun_work(w, Recompute::none, SelectiveRecompute::every_other_matmul).seconds == 0.0);
  // What the kept tensors leave out is rebuilt before the backward.
  ActivationPolicy none{1, false, Recompute::none, 1};
  CHECK(w.saved + w.rebuilt == Approx(layer_activation_bytes(g, 5, none)));
}

TEST_CASE("Per-op checkpointing under TP with SP reruns the block's two input all-gathers", "[recompute]") {
  // Llama 3 8B, TP 8 with SP: the recomputation's TP collectives are the all-gathers before attention
  // and MLP, one of the hidden state each (torchtitan's save list keeps the reduce-scatters').
  const std::vector<std::string> tp8 = {"nodes=2", "parallelism.tp=8", "parallelism.dp=2",
                                        "parallelism.sequence_parallel=true", "training.global_batch_size=2",
                                        "training.micro_batch_size=1", "training.iterations=1"};
  const Scenario sc = fsdp_8b(tp8);
  REQUIRE(sc.training.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul);
  const ComputeGraph g = graph_of(sc);
  const std::vector<LayerWork> work = layer_work(sc, g);
  CHECK(work[5].tp_rerun_gathers == 2);
  CHECK(rerun_work(work[5], Recompute::selective, SelectiveRecompute::every_other_matmul).tp_all_gathers == 2);
  CHECK(rerun_work(work[5], Recompute::selective, SelectiveRecompute::attention_core).tp_all_gathers == 0);
}
