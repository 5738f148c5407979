// The computation graph: structure (acyclic, one op chain per block), FLOPs against Korthikanti
// et al. Eq. 7, and the pipeline partition.

#include <catch2/catch.hpp>
#include <map>

#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "support.hpp"

using namespace strata;

TEST_CASE("Model FLOPs per iteration equal Korthikanti et al. Eq. 7", "[validation][graph][slow]") {
  // 72·B·L·s·h²·(1 + s/(6h) + v/(12hL)), model FLOPs without recomputation (Appendix A).
  test::Comparison table("Model FLOPs per iteration vs Korthikanti et al. 2022 Eq. 7", "PFLOP");
  for (const char* name : {"korthikanti-22b-full", "korthikanti-175b-full", "korthikanti-530b-full", "korthikanti-1t-full"}) {
    Scenario sc = test::load(name);
    RunResult r = run_scenario(sc);
    const double B = sc.training.global_batch_size, L = sc.model.num_layers, s = sc.training.seq_len,
                 h = sc.model.hidden_size, v = sc.model.vocab_size;
    double eq7 = 72.0 * B * L * s * h * h * (1.0 + s / (6.0 * h) + v / (12.0 * h * L));
    table.add(name, eq7 / 1e15, r.flops_per_iteration / 1e15);
  }
  table.print();
  CHECK(table.max_error() < 1e-12);
}

TEST_CASE("The graph is a DAG with every block's ops in order", "[graph]") {
  Scenario sc = test::load("mixtral-8x7b-h100");
  ComputeGraph g = build_compute_graph(sc.model, GraphShape{.seq_len = 4096});
  auto order = topological_order(g);
  REQUIRE(order.size() == boost::num_vertices(g));
  CHECK(g[order.front()].kind == OpKind::embedding);
  CHECK(g[order.back()].kind == OpKind::loss);
  int routers = 0;
  for (auto v : order) routers += g[v].kind == OpKind::router;
  CHECK(routers == sc.model.num_layers);
  // Edges carry the bytes of the tensor they move: every block input is a bf16 [s, b, h] tensor.
  for (auto e : boost::make_iterator_range(boost::edges(g)))
    CHECK(g[e].bytes > 0.0);
}

TEST_CASE("Flash attention keeps no s² tensors", "[graph]") {
  // In 16 bits: under FP8 only the attention output beside its FP8 copy is the core's alone.
  Scenario sc = test::load("korthikanti-22b-selective");
  GraphShape shape{.seq_len = 2048, .micro_batch = 4, .activation_bytes = 2.0, .flash_attention = true};
  ComputeGraph g = build_compute_graph(sc.model, shape);
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    for (const auto& t : g[v].saved) CHECK_FALSE(t.attention_core_only);
}

TEST_CASE("Uneven pipelines give the first and last stage fewer blocks", "[graph]") {
  // Llama 3 §3.3.2: 126 layers over 16 stages, one layer fewer on the first and last stage.
  PipelinePartition p = partition_layers(126, 16, 1);
  CHECK(p.layers_on_stage(0) == 7);
  CHECK(p.layers_on_stage(15) == 7);
  for (int s = 1; s < 15; ++s) CHECK(p.layers_on_stage(s) == 8);
  PipelinePartition inter = partition_layers(96, 8, 3);
  CHECK(inter.chunks.size() == 24);
  CHECK(inter.layers_on_stage(0) == 12);
  CHECK(inter.stage_of_layer(4) == 1);  // chunk 1 (layers 4-7) sits on stage 1
  CHECK(inter.stage_of_layer(32) == 0);  // chunk 8 wraps around to stage 0
}

TEST_CASE("Eager PyTorch moves the bytes of its kernel sequences; fused kernels read and write once",
          "[graph]") {
  // Llama 3 8B, bf16 activations (2 bytes), s·b = 4096 tokens. Per element of the hidden state an
  // RMSNorm reads and writes it once fused (4 bytes); eager it runs x.float() (2 + 4), pow (4 + 4),
  // mean (4), x * rsqrt (4 + 4), .to(bf16) (4 + 2) and weight * x (2 + 2): 36 bytes. SwiGLU reads the
  // gate and the up projection and writes their product (3 tensors of I) fused; eager, silu (2) and
  // the product (3) are 5. Rotary embeddings of Q and K: 4 bytes per element fused, 2 + 4 + 4 + 4 +
  // 4 + 2 = 20 eager. LayerNorm is one native kernel either way.
  const ModelSpec m = test::load("llama-3-8b-zero3-h100").model;
  const double tokens = 4096.0, h = m.hidden_size, I = m.intermediate_size;
  const double q = h, k = static_cast<double>(m.num_kv_heads * m.head_dim);
  auto traffic = [&](const ModelSpec& model, bool eager, OpKind kind) {
    const ComputeGraph g = build_compute_graph(
        model, GraphShape{.seq_len = 4096, .micro_batch = 1, .activation_bytes = 2.0, .flash_attention = true,
                          .eager_elementwise = eager});
    for (auto v : boost::make_iterator_range(boost::vertices(g)))
      if (g[v].kind == kind && g[v].layer == 0) return g[v].memory_traffic;
    return -1.0;
  };
  CHECK(traffic(m, false, OpKind::norm) == Approx(4.0 * tokens * h));
  CHECK(traffic(m, true, OpKind::norm) == Approx(36.0 * tokens * h));
  CHECK(traffic(m, false, OpKind::mlp_activation) == Approx(3.0 * 2.0 * tokens * I));
  CHECK(traffic(m, true, OpKind::mlp_activation) == Approx(5.0 * 2.0 * tokens * I));
  CHECK(traffic(m, false, OpKind::qkv_projection) == Approx(4.0 * tokens * (q + k)));
  CHECK(traffic(m, true, OpKind::qkv_projection) == Approx(20.0 * tokens * (q + k)));
  ModelSpec layernorm = m;
  layernorm.norm = NormKind::layernorm;
  CHECK(traffic(layernorm, true, OpKind::norm) == Approx(traffic(layernorm, false, OpKind::norm)));
}

TEST_CASE("The loss holds the 16-bit logits while it runs, and PyTorch's fp32 copy beside its softmax",
          "[graph]") {
  // Megatron's vocab-parallel cross-entropy exponentiates and normalises its fp32 copy in place
  // (that copy is the softmax it keeps); PyTorch's log_softmax writes a new tensor beside the copy.
  Scenario sc = test::load("llama-3-8b-zero3-h100");
  const double s = 4096, b = 2, V = static_cast<double>(sc.model.vocab_size);
  auto loss_of = [&](bool beside) {
    const ComputeGraph g = build_compute_graph(
        sc.model, GraphShape{.seq_len = 4096, .micro_batch = 2,
                             .cross_entropy = beside ? CrossEntropy::pytorch : CrossEntropy::vocab_parallel});
    for (auto v : boost::make_iterator_range(boost::vertices(g)))
      if (g[v].kind == OpKind::loss) return g[v];
    FAIL("no loss op");
    return Op{};
  };
  const Op in_place = loss_of(false), pytorch = loss_of(true);
  CHECK(in_place.transient_bytes == Approx(2.0 * s * b * V));            // bf16 logits
  CHECK(pytorch.transient_bytes == Approx((2.0 + 4.0) * s * b * V));     // and their fp32 copy
  double kept = 0.0;
  for (const auto& t : in_place.saved) kept += t.bytes;
  CHECK(kept == Approx(4.0 * s * b * V));  // the fp32 softmax, in both
  // flash-attn's fused kernel keeps the 16-bit logits themselves and makes no copy.
  const ComputeGraph g = build_compute_graph(
      sc.model, GraphShape{.seq_len = 4096, .micro_batch = 2, .cross_entropy = CrossEntropy::single_kernel});
  Op single;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].kind == OpKind::loss) single = g[v];
  CHECK(single.transient_bytes == 0.0);
  CHECK(single.saved.at(0).bytes == Approx(2.0 * s * b * V));
}

TEST_CASE("The framework preset sets the loss's cross-entropy, and training.cross_entropy overrides it",
          "[graph][config]") {
  CHECK(test::load("llama-3-8b-zero3-h100").training.behaviour.cross_entropy == CrossEntropy::vocab_parallel);
  CHECK(test::load("llama-3-8b-zero3-h100", {"training.framework=\"pytorch-fsdp\""})
            .training.behaviour.cross_entropy == CrossEntropy::pytorch);
  // DeepSpeed runs transformers' models as often as Megatron-DeepSpeed's: the user says which.
  CHECK(test::load("llama-3-8b-zero3-h100",
                   {"training.framework=\"deepspeed\"", "training.cross_entropy=\"pytorch\""})
            .training.behaviour.cross_entropy == CrossEntropy::pytorch);
}

TEST_CASE("Under FP8, Transformer Engine's linears keep the FP8 copy of their inputs", "[graph][memory]") {
  // module/linear.py and layernorm_linear.py save the FP8 input (or its transpose) for the weight
  // gradient; fused attention's backward reads its 16-bit output, so the projection's FP8 copy of
  // it is kept beside that.
  Scenario sc = test::load("llama-3-8b-zero3-h100");
  const double tokens = 4096.0 * 2.0, h = 4096, ffn = 14336;
  auto saved = [&](bool fp8_inputs) {
    const ComputeGraph g = build_compute_graph(
        sc.model, GraphShape{.seq_len = 4096, .micro_batch = 2, .flash_attention = true,
                             .fp8_saved_linear_inputs = fp8_inputs});
    std::map<std::string, double> bytes;
    for (auto v : boost::make_iterator_range(boost::vertices(g)))
      if (g[v].layer == 3)
        for (const auto& t : g[v].saved) bytes[t.name] += t.bytes;
    return bytes;
  };
  auto bf16 = saved(false), fp8 = saved(true);
  CHECK(bf16["QKV input"] == Approx(2.0 * tokens * h));
  CHECK(fp8["QKV input"] == Approx(1.0 * tokens * h));
  CHECK(fp8["MLP input"] == Approx(1.0 * tokens * h));
  CHECK(fp8["down projection input"] == Approx(1.0 * tokens * ffn));
  CHECK(fp8["attention projection input"] == Approx(2.0 * tokens * h));
  CHECK(fp8["attention projection input (FP8)"] == Approx(1.0 * tokens * h));
  // What the attention kernel and the activation keep stays in 16 bits.
  CHECK(fp8["Q"] == Approx(bf16["Q"]));
  CHECK(fp8["gate projection output"] == Approx(bf16["gate projection output"]));
  // Megatron's selective recompute reruns the core, so its 16-bit output is not kept.
  const ComputeGraph g = build_compute_graph(
      sc.model, GraphShape{.seq_len = 4096, .micro_batch = 2, .flash_attention = true, .fp8_saved_linear_inputs = true});
  const ActivationPolicy none{1, false, Recompute::none, 1}, selective{1, false, Recompute::selective, 1};
  CHECK(layer_activation_bytes(g, 3, none) - layer_activation_bytes(g, 3, selective) == Approx(2.0 * tokens * h));
}

TEST_CASE("Megatron-Core's preset saves FP8 inputs under fp8; torchao's (pytorch-fsdp) does not", "[config]") {
  CHECK(test::load("llama-3-8b-zero3-h100").training.behaviour.fp8_saves_quantized_inputs);
  CHECK_FALSE(test::load("llama-3-8b-zero3-h100", {"training.framework=\"pytorch-fsdp\""})
                  .training.behaviour.fp8_saves_quantized_inputs);
}

namespace {
const Op& op_named(const ComputeGraph& g, const std::string& name) {
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].name == name) return g[v];
  FAIL("no op " << name);
  static const Op none{};
  return none;
}
}  // namespace

TEST_CASE("A fused norm writes the FP8 inputs of QKV and MLP-up; nothing else's", "[graph]") {
  // Megatron-Core's TELayerNormColumnParallelLinear (QKV, MLP-up); TERowParallelLinear after the
  // attention core and Megatron's own activation; a MoE block's experts after the router.
  const GraphShape shape{.seq_len = 4096, .micro_batch = 1};
  const ComputeGraph dense = build_compute_graph(test::load("llama-3-8b-zero3-h100").model, shape);
  CHECK(op_named(dense, "layer3.qkv").input_from_norm);
  CHECK(op_named(dense, "layer3.mlp_up").input_from_norm);
  CHECK_FALSE(op_named(dense, "layer3.attn_out").input_from_norm);
  CHECK_FALSE(op_named(dense, "layer3.mlp_down").input_from_norm);
  const ComputeGraph moe = build_compute_graph(test::load("mixtral-8x7b-h100").model, shape);
  CHECK(op_named(moe, "layer3.qkv").input_from_norm);
  CHECK_FALSE(op_named(moe, "layer3.experts_up").input_from_norm);
}

TEST_CASE("fp32 logits are their own copy: the loss's transient then holds no .float() copy", "[graph]") {
  Scenario sc = test::load("llama-3-8b-zero3-h100");
  const double s = 2048, b = 1, V = static_cast<double>(sc.model.vocab_size);
  auto transient = [&](bool beside) {
    const ComputeGraph g = build_compute_graph(sc.model, GraphShape{.seq_len = 2048, .micro_batch = 1,
                                                                    .activation_bytes = 4.0,
                                                                    .cross_entropy = beside ? CrossEntropy::pytorch
                                                                                            : CrossEntropy::vocab_parallel});
    return op_named(g, "loss").transient_bytes;
  };
  CHECK(transient(false) == 0.0);                        // in place on the logits themselves
  CHECK(transient(true) == Approx(4.0 * s * b * V));     // the logits beside the new softmax
}

TEST_CASE("The loss's passes over the logits follow the framework's cross-entropy kernels", "[graph]") {
  // Bytes per bf16 logit, counted from each implementation's kernels (compute_graph.cpp): Megatron's
  // eager vocab-parallel cross-entropy casts (2 + 4), takes the max (4), subtracts it, exps and
  // normalises in place (8 each) and sums (4); backward, a product in place (8) and the cast back
  // (4 + 2). Compiled, the cast carries the max and the subtraction the exp and sum; backward writes
  // the 16-bit gradient beside the product. PyTorch's log_softmax reads three times and writes a new
  // tensor; its backward writes nll_loss's dense gradient, reads it twice beside the output and writes.
  Scenario sc = test::load("llama-3-8b-zero3-h100");
  const double sbV = 2048.0 * static_cast<double>(sc.model.vocab_size);
  auto loss = [&](CrossEntropy ce, double act = 2.0) {
    return op_named(build_compute_graph(sc.model, GraphShape{.seq_len = 2048, .micro_batch = 1,
                                                             .activation_bytes = act, .cross_entropy = ce}),
                    "loss");
  };
  const Op eager = loss(CrossEntropy::vocab_parallel), fused = loss(CrossEntropy::vocab_parallel_fused),
           pytorch = loss(CrossEntropy::pytorch);
  CHECK(eager.memory_traffic == Approx((6.0 + 4.0 + 8.0 + 8.0 + 4.0 + 8.0) * sbV));
  CHECK(*eager.backward_memory_traffic == Approx((8.0 + 6.0) * sbV));
  CHECK(fused.memory_traffic == Approx((6.0 + 8.0 + 8.0) * sbV));
  CHECK(*fused.backward_memory_traffic == Approx((8.0 + 2.0) * sbV));
  CHECK(pytorch.memory_traffic == Approx((6.0 + 12.0 + 4.0) * sbV));
  CHECK(*pytorch.backward_memory_traffic == Approx((4.0 + 12.0 + 4.0 + 6.0) * sbV));
  // apex's xentropy kernel on the 16-bit logits: two reads forward, a read and a write backward.
  const Op single = loss(CrossEntropy::single_kernel);
  CHECK(single.memory_traffic == Approx(4.0 * sbV));
  CHECK(*single.backward_memory_traffic == Approx(4.0 * sbV));
  // fp32 logits: no cast either way (.float() returns them); the compiled max still reads them.
  CHECK(loss(CrossEntropy::vocab_parallel, 4.0).memory_traffic == Approx(32.0 * sbV));
  CHECK(*loss(CrossEntropy::vocab_parallel, 4.0).backward_memory_traffic == Approx(8.0 * sbV));
  CHECK(loss(CrossEntropy::vocab_parallel_fused, 4.0).memory_traffic == Approx(20.0 * sbV));
}

TEST_CASE("Final-logit softcapping adds its pass to the loss's", "[graph]") {
  Scenario sc = test::load("llama-3-8b-zero3-h100");
  const double sbV = 2048.0 * static_cast<double>(sc.model.vocab_size);
  const GraphShape shape{.seq_len = 2048, .micro_batch = 1};
  const Op plain = op_named(build_compute_graph(sc.model, shape), "loss");
  sc.model.final_logit_softcapping = 30.0;  // Gemma 2
  const Op capped = op_named(build_compute_graph(sc.model, shape), "loss");
  // cap·tanh(logits/cap): one bf16 pass reading and writing the logits; its backward 1.5 times that.
  CHECK(capped.memory_traffic == Approx(plain.memory_traffic + 2.0 * 2.0 * sbV));
  CHECK(*capped.backward_memory_traffic == Approx(*plain.backward_memory_traffic + 1.5 * 2.0 * 2.0 * sbV));
}

TEST_CASE("Under FP8 a MoE block's experts keep FP8 down-projection inputs and a 16-bit MLP input", "[graph][memory]") {
  const ModelSpec m = test::load("mixtral-8x7b-h100").model;
  const GraphShape shape{.seq_len = 4096, .micro_batch = 1, .fp8_saved_linear_inputs = true};
  const ComputeGraph g = build_compute_graph(m, shape);
  const double tokens = 4096.0, h = m.hidden_size, top_k = static_cast<double>(m.experts_per_token);
  double mlp_input = 0.0, down_input = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(g)))
    if (g[v].layer == 3)
      for (const auto& t : g[v].saved) {
        if (t.name == "MLP input") mlp_input += t.bytes;
        if (t.name == "down projection input") down_input += t.bytes;
      }
  CHECK(mlp_input == Approx(2.0 * tokens * h));
  CHECK(down_input == Approx(top_k * 1.0 * tokens * static_cast<double>(m.intermediate_size)));
}
