#include "sim/graph/compute_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/graph/topological_sort.hpp>
#include <iterator>
#include <stdexcept>

namespace strata {

std::string to_string(OpKind kind) {
  switch (kind) {
    case OpKind::embedding: return "embedding";
    case OpKind::norm: return "norm";
    case OpKind::qkv_projection: return "qkv_projection";
    case OpKind::attention_core: return "attention_core";
    case OpKind::attention_output: return "attention_output";
    case OpKind::mlp_up: return "mlp_up";
    case OpKind::mlp_activation: return "mlp_activation";
    case OpKind::mlp_down: return "mlp_down";
    case OpKind::router: return "router";
    case OpKind::experts: return "experts";
    case OpKind::final_norm: return "final_norm";
    case OpKind::lm_head: return "lm_head";
    case OpKind::loss: return "loss";
  }
  return "op";
}

namespace {

// Bytes of one element of a dropout mask: PyTorch stores it as a bool tensor
// (Korthikanti et al. 2022 §4.1 count it as 1 byte per element).
constexpr double kMaskBytes = 1.0;
// Softmax statistics kept by fused attention are fp32 (FlashAttention-2, Dao 2023, Alg. 1: logsumexp L).
constexpr double kFp32Bytes = 4.0;
// Cross-entropy keeps the logits in fp32 (Korthikanti et al. 2022 §4.3: 4sbv/t).
constexpr double kLogitBytes = 4.0;

/// Adds ops for one model, chaining each to the previous one and wiring residual edges.
class GraphBuilder {
 public:
  GraphBuilder(const ModelSpec& m, const GraphShape& shape)
      : m_(m), s_(static_cast<double>(shape.seq_len)), b_(static_cast<double>(shape.micro_batch)),
        act_(shape.activation_bytes), flash_(shape.flash_attention) {}

  ComputeGraph build() {
    const double h = m_.hidden_size, V = m_.vocab_size;
    const double sbh = s_ * b_ * h;

    Op emb{.name = "embedding", .kind = OpKind::embedding, .layer = -1};
    emb.params_split = V * h;  // vocab-parallel (Megatron VocabParallelEmbedding)
    if (m_.position_embedding == PositionEmbedding::learned)
      emb.params_replicated = static_cast<double>(m_.max_position_embeddings) * h;
    if (m_.hidden_dropout > 0) emb.saved.push_back({"embedding dropout mask", kMaskBytes * sbh, Split::sequence});
    emb.output_bytes = act_ * sbh;
    emb.memory_traffic = act_ * sbh + dropout_traffic(sbh);
    OpId prev = add(emb, std::nullopt);

    for (int layer = 0; layer < m_.num_layers; ++layer) prev = add_block(layer, prev);

    Op fn{.name = "final_norm", .kind = OpKind::final_norm, .layer = static_cast<int>(m_.num_layers)};
    fn.params_replicated = norm_params();
    fn.saved.push_back({"final norm input", act_ * sbh, Split::sequence});
    fn.output_bytes = act_ * sbh;
    fn.memory_traffic = 2.0 * act_ * sbh;
    prev = add(fn, prev);

    Op head{.name = "lm_head", .kind = OpKind::lm_head, .layer = static_cast<int>(m_.num_layers)};
    head.params_split = V * h;
    head.shares_embedding = m_.tie_word_embeddings;
    head.forward_flops = 2.0 * s_ * b_ * h * V;
    head.gemms = {{s_ * b_, V, h, 1.0, GemmSplit::n}};
    head.backward_flops = 2.0 * head.forward_flops;
    head.saved.push_back({"LM head input", act_ * sbh, Split::sequence});
    head.output_bytes = kLogitBytes * s_ * b_ * V;
    prev = add(head, prev);

    Op loss{.name = "loss", .kind = OpKind::loss, .layer = static_cast<int>(m_.num_layers)};
    loss.saved.push_back({"fp32 logits", kLogitBytes * s_ * b_ * V, Split::tensor});
    if (m_.final_logit_softcapping > 0) {
      // cap·tanh(logits/cap) in the activation dtype (transformers Gemma2ForCausalLM): tanh's backward
      // needs its output; one fused elementwise pass reads and writes the logits.
      loss.saved.push_back({"softcapped logits", act_ * s_ * b_ * V, Split::tensor});
      loss.memory_traffic += 2.0 * act_ * s_ * b_ * V;
    }
    loss.output_bytes = kFp32Bytes;
    // Softmax cross-entropy passes over the fp32 logits three times (max, exp-sum, normalise).
    loss.memory_traffic = 3.0 * kLogitBytes * s_ * b_ * V;
    loss.traffic_split = Split::tensor;
    add(loss, prev);
    return std::move(g_);
  }

 private:
  double norm_params() const {
    const double h = m_.hidden_size;
    return m_.norm == NormKind::layernorm ? 2.0 * h : h;  // gain (+ bias for LayerNorm)
  }

  /// A norm on a sub-block's output before the residual add (Gemma 2 post-attention and
  /// post-feed-forward norms); it keeps its input for backward, like the pre-norms.
  Op post_norm(std::string op_name, int layer, const char* saved_name) const {
    const double sbh = s_ * b_ * static_cast<double>(m_.hidden_size);
    Op n{.name = std::move(op_name), .kind = OpKind::norm, .layer = layer};
    n.params_replicated = norm_params();
    n.saved.push_back({saved_name, act_ * sbh, Split::sequence});
    n.output_bytes = act_ * sbh;
    n.memory_traffic = 2.0 * act_ * sbh;
    return n;
  }

  /// Dropout reads and writes the tensor and writes its mask; nothing when dropout is off.
  double dropout_traffic(double elements) const {
    return m_.hidden_dropout > 0 ? elements * (2.0 * act_ + kMaskBytes) : 0.0;
  }
  /// Fused bias-dropout-residual add after a row-parallel projection: reads the projection output
  /// and the residual, writes the sum (and the dropout mask).
  double residual_traffic(double sbh) const {
    return 3.0 * act_ * sbh + (m_.hidden_dropout > 0 ? kMaskBytes * sbh : 0.0);
  }

  OpId add(Op op, std::optional<OpId> from) {
    double in_bytes = from ? g_[*from].output_bytes : 0.0;
    OpId id = boost::add_vertex(std::move(op), g_);
    if (from) boost::add_edge(*from, id, TensorEdge{in_bytes}, g_);
    return id;
  }

  OpId add_block(int layer, OpId block_input) {
    const double h = m_.hidden_size, s = s_, b = b_;
    const double sbh = s * b * h;
    const double qw = static_cast<double>(m_.q_width()), kvw = static_cast<double>(m_.kv_width());
    const double a = m_.num_heads;
    const double I = m_.intermediate_size;
    auto name = [&](const char* what) { return fmt::format("layer{}.{}", layer, what); };

    Op n1{.name = name("attn_norm"), .kind = OpKind::norm, .layer = layer};
    n1.params_replicated = norm_params();
    n1.saved.push_back({"attention norm input", act_ * sbh, Split::sequence, false, true});
    n1.output_bytes = act_ * sbh;
    n1.memory_traffic = 2.0 * act_ * sbh;
    OpId id = add(n1, block_input);

    Op qkv{.name = name("qkv"), .kind = OpKind::qkv_projection, .layer = layer};
    const double qkv_out = qw + 2.0 * kvw;
    qkv.params_split = h * qkv_out + (m_.attention_bias ? qkv_out : 0.0);
    qkv.forward_flops = 2.0 * s * b * h * qkv_out;
    qkv.gemms = {{s * b, qkv_out, h, 1.0, GemmSplit::n}};
    qkv.backward_flops = 2.0 * qkv.forward_flops;
    qkv.saved.push_back({"QKV input", act_ * sbh, Split::sequence});
    qkv.output_bytes = act_ * s * b * qkv_out;
    id = add(qkv, id);

    // Korthikanti et al. 2022 §4.1: Q, K (4sbh), V (2sbh), softmax output (2as²b), its dropout mask
    // (as²b) and dropout output (2as²b); GQA shrinks K and V to kv_heads·head_dim.
    Op core{.name = name("attention"), .kind = OpKind::attention_core, .layer = layer};
    // A sliding window bounds the keys per query, but only fused kernels skip the masked blocks
    // (FlashAttention-2 window_size, Dao 2023); eager attention computes the full s×s scores.
    const double keys =
        flash_ && m_.windowed(layer) ? std::min(s, static_cast<double>(m_.sliding_window)) : s;
    core.forward_flops = 4.0 * b * s * keys * qw;  // QK^T and attention·V
    const double head_dim = qw / a;
    if (flash_) core.fused_attention = AttentionShape{b, a, s, keys, head_dim, keys >= s};
    else core.gemms = {{s, keys, head_dim, b * a, GemmSplit::count}, {s, head_dim, keys, b * a, GemmSplit::count}};
    core.backward_flops = 2.0 * core.forward_flops;
    core.saved.push_back({"Q", act_ * s * b * qw, Split::tensor});
    core.saved.push_back({"K", act_ * s * b * kvw, Split::tensor});
    core.saved.push_back({"V", act_ * s * b * kvw, Split::tensor});
    core.traffic_split = Split::tensor;
    if (flash_) {
      // Fused attention recomputes the scores in backward; it keeps only the row logsumexp.
      core.saved.push_back({"softmax logsumexp", kFp32Bytes * a * s * b, Split::tensor});
      core.memory_traffic = act_ * s * b * (2.0 * qw + 2.0 * kvw);  // read Q, K, V; write O
    } else {
      const double scores = a * s * s * b;
      core.saved.push_back({"softmax output", act_ * scores, Split::tensor, true});
      // The scores are written by QK^T, read and written by the fused softmax, read by attention·V.
      core.memory_traffic = 4.0 * act_ * scores;
      if (m_.attn_logit_softcapping > 0) {
        // Eager cap·tanh(scores/cap) keeps the tanh output for backward; fused kernels apply it in
        // place (FlashAttention 2.6 softcap).
        core.saved.push_back({"softcapped scores", act_ * scores, Split::tensor, true});
        core.memory_traffic += 2.0 * act_ * scores;
      }
      if (m_.attention_dropout > 0) {
        core.saved.push_back({"attention dropout mask", kMaskBytes * scores, Split::tensor, true});
        core.saved.push_back({"attention dropout output", act_ * scores, Split::tensor, true});
        core.memory_traffic += scores * (2.0 * act_ + kMaskBytes);
      }
    }
    core.output_bytes = act_ * s * b * qw;
    id = add(core, id);

    Op out{.name = name("attn_out"), .kind = OpKind::attention_output, .layer = layer};
    out.params_split = qw * h;
    out.params_replicated = m_.attention_output_bias ? h : 0.0;  // row-parallel bias is added after the reduce
    out.forward_flops = 2.0 * s * b * qw * h;
    out.gemms = {{s * b, h, qw, 1.0, GemmSplit::k}};
    out.backward_flops = 2.0 * out.forward_flops;
    out.saved.push_back({"attention projection input", act_ * s * b * qw, Split::tensor});
    if (m_.hidden_dropout > 0) out.saved.push_back({"attention residual dropout mask", kMaskBytes * sbh, Split::sequence});
    out.output_bytes = act_ * sbh;
    out.memory_traffic = residual_traffic(sbh);
    id = add(out, id);
    if (m_.sandwich_norm) id = add(post_norm(name("attn_post_norm"), layer, "attention post-norm input"), id);
    boost::add_edge(block_input, id, TensorEdge{act_ * sbh}, g_);  // residual
    OpId attn_residual = id;

    Op n2{.name = name("mlp_norm"), .kind = OpKind::norm, .layer = layer};
    n2.params_replicated = norm_params();
    // With a parallel residual the MLP norm reads the block input, already kept by the attention
    // norm (transformers GPTNeoXLayer passes the same tensor to both norms).
    if (!m_.parallel_residual) n2.saved.push_back({"MLP norm input", act_ * sbh, Split::sequence});
    n2.output_bytes = act_ * sbh;
    n2.memory_traffic = 2.0 * act_ * sbh;
    id = add(n2, id);

    const bool gated = m_.mlp == MlpKind::gated;
    const double up_width = gated ? 2.0 * I : I;
    // One expert's MLP, or the dense MLP; MoE multiplies work and activations by the experts each
    // token visits and weights by the number of experts.
    const double visits = m_.is_moe() ? static_cast<double>(m_.experts_per_token) : 1.0;
    const double copies = m_.is_moe() ? static_cast<double>(m_.num_experts) : 1.0;

    if (m_.is_moe()) {
      Op router{.name = name("router"), .kind = OpKind::router, .layer = layer};
      router.params_replicated = h * m_.num_experts;
      router.forward_flops = 2.0 * s * b * h * m_.num_experts;
      router.gemms = {{s * b, static_cast<double>(m_.num_experts), h, 1.0, GemmSplit::none}};
      router.backward_flops = 2.0 * router.forward_flops;
      router.saved.push_back({"router logits", kFp32Bytes * s * b * m_.num_experts, Split::sequence});
      router.output_bytes = kFp32Bytes * s * b * m_.num_experts;
      id = add(router, id);
    }

    Op up{.name = name(m_.is_moe() ? "experts_up" : "mlp_up"),
          .kind = m_.is_moe() ? OpKind::experts : OpKind::mlp_up, .layer = layer};
    up.params_split = copies * (h * up_width + (m_.mlp_bias ? up_width : 0.0));
    up.forward_flops = visits * 2.0 * s * b * h * up_width;
    // An expert sees the tokens routed to it: visits/experts of them on average.
    up.gemms = {{s * b * visits / copies, up_width, h, copies, GemmSplit::n}};
    up.backward_flops = 2.0 * up.forward_flops;
    up.saved.push_back({"MLP input", act_ * sbh, Split::sequence});
    if (m_.is_moe() && visits > 1.0)
      up.saved.push_back({"routed token copies", (visits - 1.0) * act_ * sbh, Split::sequence});
    up.output_bytes = visits * act_ * s * b * up_width;
    id = add(up, id);

    Op act{.name = name("mlp_act"), .kind = OpKind::mlp_activation, .layer = layer};
    if (gated) {
      act.saved.push_back({"gate projection output", visits * act_ * s * b * I, Split::tensor});
      act.saved.push_back({"up projection output", visits * act_ * s * b * I, Split::tensor});
    } else {
      act.saved.push_back({"activation input", visits * act_ * s * b * I, Split::tensor});
    }
    act.output_bytes = visits * act_ * s * b * I;
    act.memory_traffic = visits * act_ * s * b * I * (gated ? 3.0 : 2.0);  // read gate (and up), write
    act.traffic_split = Split::tensor;
    id = add(act, id);

    Op down{.name = name(m_.is_moe() ? "experts_down" : "mlp_down"),
            .kind = m_.is_moe() ? OpKind::experts : OpKind::mlp_down, .layer = layer};
    down.params_split = copies * I * h;
    down.params_replicated = m_.mlp_bias ? copies * h : 0.0;
    down.forward_flops = visits * 2.0 * s * b * I * h;
    down.gemms = {{s * b * visits / copies, h, I, copies, GemmSplit::k}};
    down.backward_flops = 2.0 * down.forward_flops;
    down.saved.push_back({"down projection input", visits * act_ * s * b * I, Split::tensor});
    if (m_.hidden_dropout > 0) down.saved.push_back({"MLP residual dropout mask", kMaskBytes * sbh, Split::sequence});
    down.output_bytes = act_ * sbh;
    down.memory_traffic = residual_traffic(sbh);
    id = add(down, id);
    if (m_.sandwich_norm) id = add(post_norm(name("mlp_post_norm"), layer, "MLP post-norm input"), id);
    boost::add_edge(attn_residual, id, TensorEdge{act_ * sbh}, g_);  // residual
    return id;
  }

  const ModelSpec& m_;
  double s_, b_, act_;
  bool flash_;
  ComputeGraph g_;
};

}  // namespace

ComputeGraph build_compute_graph(const ModelSpec& model, const GraphShape& shape) {
  ComputeGraph g = GraphBuilder(model, shape).build();
  topological_order(g);  // throws on a cycle
  return g;
}

std::vector<OpId> topological_order(const ComputeGraph& graph) {
  std::vector<OpId> reversed;
  try {
    boost::topological_sort(graph, std::back_inserter(reversed));
  } catch (const boost::not_a_dag&) {
    throw std::logic_error("computation graph has a cycle");
  }
  return {reversed.rbegin(), reversed.rend()};
}

double total_parameters(const ComputeGraph& graph) {
  double total = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph)))
    if (!graph[v].shares_embedding) total += graph[v].params();
  return total;
}

ParameterBreakdown parameter_breakdown(const ComputeGraph& graph) {
  ParameterBreakdown p;
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    const Op& op = graph[v];
    switch (op.kind) {
      case OpKind::embedding: p.embedding += op.params(); break;
      case OpKind::qkv_projection:
      case OpKind::attention_core:
      case OpKind::attention_output: p.attention += op.params(); break;
      case OpKind::mlp_up:
      case OpKind::mlp_activation:
      case OpKind::mlp_down:
      case OpKind::router:
      case OpKind::experts: p.mlp += op.params(); break;
      case OpKind::norm:
      case OpKind::final_norm: p.norms += op.params(); break;
      case OpKind::lm_head: p.lm_head += op.shares_embedding ? 0.0 : op.params(); break;
      case OpKind::loss: break;
    }
  }
  return p;
}

double model_flops(const ComputeGraph& graph) {
  double total = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph)))
    total += graph[v].forward_flops + graph[v].backward_flops;
  return total;
}

}  // namespace strata
