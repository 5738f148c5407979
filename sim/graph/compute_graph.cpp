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
// An FP8 tensor (E4M3 or E5M2).
constexpr double kFp8Bytes = 1.0;

/// Bytes per logit the loss's kernels move, forward and backward.
struct LogitTraffic {
  double forward = 0.0, backward = 0.0;
};

/// The cross-entropy's passes over the logits (`act` bytes each as the LM head writes them; the
/// softmax is fp32). The cast to fp32 reads the logits and writes the copy; its backward reads the
/// fp32 gradient and writes it in the logits' type; fp32 logits need neither (.float() returns them).
LogitTraffic cross_entropy_traffic(CrossEntropy implementation, double act) {
  const bool cast = act < kLogitBytes;
  const double to_fp32 = cast ? act + kLogitBytes : 0.0, from_fp32 = cast ? kLogitBytes + act : 0.0;
  const double read = kLogitBytes, read_write = 2.0 * kLogitBytes;
  switch (implementation) {
    // Megatron's tensor_parallel/cross_entropy.py, each step its own kernel: the cast, max (a read),
    // subtract the max in place, exp in place, sum (a read), divide by the sum in place; backward,
    // the softmax times the loss gradient in place (the one-hot subtraction touches one logit per
    // token), then the cast back.
    case CrossEntropy::vocab_parallel:
      return {to_fp32 + read + read_write + read_write + read + read_write, read_write + from_fp32};
    // fusions/fused_cross_entropy.py, its four steps compiled (jit_fuser): the cast beside the max
    // (one read when there is no cast), the subtraction with exp and sum, the division; backward the
    // in-place product, kept in the softmax, with the 16-bit gradient written beside it.
    case CrossEntropy::vocab_parallel_fused:
      return {(cast ? to_fp32 : read) + read_write + read_write, read_write + (cast ? act : 0.0)};
    // F.cross_entropy on logits.float(): the cast, then log_softmax (max, sum of exp, write: three
    // reads and a new tensor; PyTorch's cunn_SoftMaxForward for rows too long for shared memory);
    // backward, nll_loss writes a dense gradient of zeros with one entry per token, log_softmax's
    // backward reads it twice (its sum, then beside the output) and writes, then the cast back.
    case CrossEntropy::pytorch:
      return {to_fp32 + 3.0 * read + kLogitBytes, kLogitBytes + 3.0 * read + kLogitBytes + from_fp32};
    // apex's xentropy (cunn_SoftMaxXEntropyForward / Backward): one block per token reads its row for
    // the max, then for the sum of exp; backward reads it and writes the gradient, in the logits' type.
    case CrossEntropy::single_kernel: return {2.0 * act, 2.0 * act};
  }
  return {};
}

/// Adds ops for one model, chaining each to the previous one and wiring residual edges.
class GraphBuilder {
 public:
  GraphBuilder(const ModelSpec& m, const GraphShape& shape)
      : m_(m), s_(static_cast<double>(shape.seq_len)), b_(static_cast<double>(shape.micro_batch)),
        act_(shape.activation_bytes),
        stream_(shape.residual_bytes > 0.0 ? shape.residual_bytes : shape.activation_bytes),
        flash_(shape.flash_attention), eager_(shape.eager_elementwise),
        cross_entropy_(shape.cross_entropy), logit_metrics_(static_cast<double>(shape.logit_metrics)),
        fp8_inputs_(shape.fp8_saved_linear_inputs),
        linear_input_split_(shape.gathered_linear_inputs ? Split::replicated : Split::sequence) {}

  ComputeGraph build() {
    const double h = m_.hidden_size, V = m_.vocab_size;
    const double sbh = s_ * b_ * h;

    Op emb{.name = "embedding", .kind = OpKind::embedding, .layer = -1};
    emb.params_split = V * h;  // vocab-parallel (Megatron VocabParallelEmbedding)
    if (m_.position_embedding == PositionEmbedding::learned)
      emb.params_replicated = static_cast<double>(m_.max_position_embeddings) * h;
    if (m_.hidden_dropout > 0) emb.saved.push_back({"embedding dropout mask", kMaskBytes * sbh, Split::sequence});
    emb.output_bytes = stream_ * sbh;
    emb.memory_traffic = stream_ * sbh + dropout_traffic(sbh, stream_);
    OpId prev = add(emb, std::nullopt);

    for (int layer = 0; layer < m_.num_layers; ++layer) prev = add_block(layer, prev);

    Op fn{.name = "final_norm", .kind = OpKind::final_norm, .layer = static_cast<int>(m_.num_layers)};
    fn.params_replicated = norm_params();
    fn.saved.push_back({"final norm input", stream_ * sbh, Split::sequence});
    fn.output_bytes = stream_ * sbh;
    fn.memory_traffic = stream_norm_traffic(sbh);
    prev = add(fn, prev);

    Op head{.name = "lm_head", .kind = OpKind::lm_head, .layer = static_cast<int>(m_.num_layers)};
    head.params_split = V * h;
    head.shares_embedding = m_.tie_word_embeddings;
    head.forward_flops = 2.0 * s_ * b_ * h * V;
    head.gemms = {{s_ * b_, V, h, 1.0, GemmSplit::n}};
    head.backward_flops = 2.0 * head.forward_flops;
    head.saved.push_back({"LM head input", act_ * sbh, linear_input_split_});
    head.output_bytes = kLogitBytes * s_ * b_ * V;
    prev = add(head, prev);

    Op loss{.name = "loss", .kind = OpKind::loss, .layer = static_cast<int>(m_.num_layers)};
    const bool keeps_logits = cross_entropy_ == CrossEntropy::single_kernel;
    if (keeps_logits) loss.saved.push_back({"logits", act_ * s_ * b_ * V, Split::tensor});
    else loss.saved.push_back({"fp32 logits", kLogitBytes * s_ * b_ * V, Split::tensor});
    const LogitTraffic ce = cross_entropy_traffic(cross_entropy_, act_);
    loss.memory_traffic = ce.forward * s_ * b_ * V;
    loss.backward_memory_traffic = ce.backward * s_ * b_ * V;
    // Each training metric runs F.cross_entropy's forward on the logits (autocast casts them to fp32
    // first). Timed with the loss on the compute stream; not in its transient, since it runs after
    // the micro-batch's backward, when its activations are freed.
    const double metric = cross_entropy_traffic(CrossEntropy::pytorch, act_).forward;
    loss.memory_traffic += logit_metrics_ * metric * s_ * b_ * V;
    if (m_.final_logit_softcapping > 0) {
      // cap·tanh(logits/cap) in the activation dtype (transformers Gemma2ForCausalLM): tanh's backward
      // needs its output; one fused elementwise pass reads and writes the logits.
      loss.saved.push_back({"softcapped logits", act_ * s_ * b_ * V, Split::tensor});
      loss.memory_traffic += 2.0 * act_ * s_ * b_ * V;
      *loss.backward_memory_traffic += kBackwardTrafficFactor * 2.0 * act_ * s_ * b_ * V;
    }
    loss.output_bytes = kFp32Bytes;
    loss.traffic_split = Split::tensor;
    // While it runs, the LM head's 16-bit logits exist beside the fp32 softmax it keeps, and so does
    // the fp32 copy the softmax is computed from (logits.float()) where the softmax is a new tensor
    // (PyTorch's log_softmax); Megatron's vocab-parallel cross-entropy works in place on that copy.
    // fp32 logits are their own copy (.float() returns them): in place nothing more, PyTorch's the
    // logits beside the new softmax. A single fused kernel keeps the logits themselves (saved above).
    const double sixteen_bit_logits = act_ < kLogitBytes && !keeps_logits ? act_ : 0.0;
    const double beside_copy = cross_entropy_ == CrossEntropy::pytorch ? kLogitBytes : 0.0;
    loss.transient_bytes = (sixteen_bit_logits + beside_copy) * s_ * b_ * V;
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
    n.memory_traffic = norm_traffic(sbh);
    return n;
  }

  /// A norm over `elements`: one kernel reading its input and writing its output (a fused RMSNorm,
  /// and LayerNorm eager or not: PyTorch's layer_norm is one native kernel). Eager RMSNorm is the
  /// decomposition transformers' LlamaRMSNorm and torchtitan run, each op a kernel over the whole
  /// tensor of `in` bytes per element: x.float() (read in, write 4 bytes), pow(2) (4, 4), mean (4),
  /// x * rsqrt (4, 4), .to(dtype) (4, in), weight * x (in, in); on an fp32 input the two casts are
  /// no-ops.
  double norm_traffic(double elements) const { return norm_traffic(elements, act_); }
  double norm_traffic(double elements, double in) const {
    if (eager_ && m_.norm == NormKind::rmsnorm) {
      const double casts = in < kFp32Bytes ? 2.0 * (in + kFp32Bytes) : 0.0;
      return (casts + 5.0 * kFp32Bytes + 2.0 * in) * elements;
    }
    return 2.0 * in * elements;
  }
  /// A pre-norm on the residual stream, and where the stream is wider than the activations
  /// (autocast) the linear after it casting its output (read the stream's bytes, write the
  /// activation's).
  double stream_norm_traffic(double elements) const {
    return norm_traffic(elements, stream_) + (stream_ > act_ ? (stream_ + act_) * elements : 0.0);
  }
  /// Rotary embedding of Q and K (`elements` of them): a fused kernel reads and writes them once
  /// (Transformer Engine, Megatron's apex kernel); eager PyTorch (torchtitan's complex product, as
  /// transformers' rotate_half) casts to fp32, multiplies and casts back: read act, write 4; read 4
  /// (and the small table), write 4; read 4, write act.
  double rotary_traffic(double elements) const {
    if (m_.position_embedding != PositionEmbedding::rotary) return 0.0;
    return eager_ ? (2.0 * act_ + 4.0 * kFp32Bytes) * elements : 2.0 * act_ * elements;
  }
  /// Dropout reads and writes the tensor (`bytes` per element) and writes its mask; nothing when
  /// dropout is off.
  double dropout_traffic(double elements, double bytes) const {
    return m_.hidden_dropout > 0 ? elements * (2.0 * bytes + kMaskBytes) : 0.0;
  }
  /// Fused bias-dropout-residual add after a row-parallel projection: reads the projection output
  /// and the residual, writes the sum (and the dropout mask).
  double residual_traffic(double sbh) const {
    // Eager, the dropout is its own kernel before the add: it reads and writes the tensor too.
    const double dropout = m_.hidden_dropout > 0 ? (eager_ ? 2.0 * act_ + kMaskBytes : kMaskBytes) * sbh : 0.0;
    // The projection's output and the residual in, the sum out in the stream's dtype.
    return (act_ + 2.0 * stream_) * sbh + dropout;
  }

  OpId add(Op op, std::optional<OpId> from) {
    double in_bytes = from ? g_[*from].output_bytes : 0.0;
    OpId id = boost::add_vertex(std::move(op), g_);
    if (from) boost::add_edge(*from, id, TensorEdge{in_bytes}, g_);
    return id;
  }

  /// DeepSeek-V2 multi-head latent attention (DeepSeek-AI 2024 §2.1; transformers
  /// DeepseekV2Attention): a down-projection h → q_lora_rank (absent when queries come straight
  /// from h) and h → kv_lora_rank + qk_rope_head_dim, RMSNorms on both latents, then per-head
  /// up-projections to Q (nope + rope) and to K_nope and V. The down-projections are replicated over
  /// TP (Megatron-Core MLA builds them "duplicated"); the up-projections are column-parallel.
  /// Returns the op that produces Q, K and V.
  OpId add_latent_projections(int layer, OpId norm_out) {
    const double h = m_.hidden_size, sb = s_ * b_, a = m_.num_heads;
    const double dq = m_.q_lora_rank, dkv = m_.kv_lora_rank, rope = m_.qk_rope_head_dim;
    const double qk = m_.qk_nope_head_dim + rope, v = m_.v_head_dim;
    auto name = [&](const char* what) { return fmt::format("layer{}.{}", layer, what); };

    Op down{.name = name("latent_down"), .kind = OpKind::qkv_projection, .layer = layer};
    down.params_replicated = h * (dq + dkv + rope) + (m_.attention_bias ? dq + dkv + rope : 0.0);
    down.forward_flops = 2.0 * sb * h * (dq + dkv + rope);
    if (dq > 0) down.gemms.push_back({sb, dq, h, 1.0, GemmSplit::none});
    down.gemms.push_back({sb, dkv + rope, h, 1.0, GemmSplit::none});
    down.backward_flops = 2.0 * down.forward_flops;
    down.tp_replicated = true;
    // Two linears read h (the Q and KV down-projections, or q_proj beside the KV one): in 16 bits
    // they keep it once; under FP8 each keeps its own FP8 copy.
    down.saved.push_back(
        {"attention latent projection input", (fp8_inputs_ ? 2.0 * kFp8Bytes : act_) * sb * h, Split::sequence});
    down.output_bytes = act_ * sb * (dq + dkv + rope);
    OpId id = add(down, norm_out);

    Op norm{.name = name("latent_norm"), .kind = OpKind::norm, .layer = layer};
    norm.params_replicated = dq + dkv;  // RMSNorm gains of q_a_layernorm and kv_a_layernorm
    norm.saved.push_back({"Q and KV latents", act_ * sb * (dq + dkv), Split::sequence});
    norm.output_bytes = act_ * sb * (dq + dkv + rope);
    norm.memory_traffic = norm_traffic(sb * (dq + dkv));
    id = add(norm, id);

    // Queries from the normed latent, or straight from h (q_proj, V2-Lite): h is the
    // down-projection's input, already kept (and its FP8 copy for q_proj).
    const double q_in = dq > 0 ? dq : h;
    Op up{.name = name("qkv"), .kind = OpKind::qkv_projection, .layer = layer};
    up.params_split = q_in * a * qk + dkv * a * (qk - rope + v);  // no biases on q_b/q_proj and kv_b
    up.forward_flops = 2.0 * sb * (q_in * a * qk + dkv * a * (qk - rope + v));
    up.gemms = {{sb, a * qk, q_in, 1.0, GemmSplit::n}, {sb, a * (qk - rope + v), dkv, 1.0, GemmSplit::n}};
    up.backward_flops = 2.0 * up.forward_flops;
    // The normed latents: the small per-token K/V state MLA keeps (kv_lora_rank + the shared rope key).
    up.saved.push_back({"normed KV latent", linear_input_bytes() * sb * dkv, Split::sequence});
    if (dq > 0) up.saved.push_back({"normed Q latent", linear_input_bytes() * sb * dq, Split::sequence});
    up.output_bytes = act_ * sb * (a * qk + a * (qk - rope + v));
    // Both up-projections fuse their latent's norm (TELayerNormColumnParallelLinear); q_proj reads h
    // after the block's own norm and casts it.
    up.input_from_norm = dq > 0;
    return add(up, id);
  }

  OpId add_block(int layer, OpId block_input) {
    const double h = m_.hidden_size, s = s_, b = b_;
    const double sbh = s * b * h;
    const double a = m_.num_heads;
    // Widths of Q, K, V and the attention output: K and V are per KV head for multi-head attention;
    // latent attention rebuilds them for every head, K with the shared rotary part broadcast.
    const double qw = static_cast<double>(m_.q_width());
    const double kw = m_.latent() ? qw : static_cast<double>(m_.kv_width());
    const double vw = m_.latent() ? a * static_cast<double>(m_.v_head_dim) : static_cast<double>(m_.kv_width());
    const double ow = static_cast<double>(m_.attn_out_width());
    auto name = [&](const char* what) { return fmt::format("layer{}.{}", layer, what); };

    Op n1{.name = name("attn_norm"), .kind = OpKind::norm, .layer = layer};
    n1.params_replicated = norm_params();
    n1.saved.push_back({"attention norm input", stream_ * sbh, Split::sequence, false, true});
    n1.output_bytes = stream_ * sbh;
    n1.memory_traffic = stream_norm_traffic(sbh);
    OpId id = add(n1, block_input);

    if (m_.latent()) {
      id = add_latent_projections(layer, id);
    } else {
      Op qkv{.name = name("qkv"), .kind = OpKind::qkv_projection, .layer = layer};
      const double qkv_out = qw + 2.0 * kw;
      qkv.params_split = h * qkv_out + (m_.attention_bias ? qkv_out : 0.0);
      qkv.forward_flops = 2.0 * s * b * h * qkv_out;
      qkv.gemms = {{s * b, qkv_out, h, 1.0, GemmSplit::n}};
      qkv.backward_flops = 2.0 * qkv.forward_flops;
      qkv.saved.push_back({"QKV input", linear_input_bytes() * sbh, linear_input_split_});
      qkv.output_bytes = act_ * s * b * qkv_out;
      qkv.memory_traffic = rotary_traffic(s * b * (qw + kw));
      qkv.traffic_split = Split::tensor;  // per head
      qkv.native_matmuls = {qw, kw, vw};
      qkv.input_from_norm = true;
      id = add(qkv, id);
    }
    if (m_.qk_norm) {
      // Qwen3 q_norm/k_norm: an RMSNorm of head_dim gains over every head of Q and of K; it keeps
      // its inputs for backward.
      Op qkn{.name = name("qk_norm"), .kind = OpKind::norm, .layer = layer};
      qkn.params_replicated = 2.0 * static_cast<double>(m_.head_dim);
      qkn.saved.push_back({"Q and K before their norms", act_ * s * b * (qw + kw), Split::tensor});
      qkn.output_bytes = act_ * s * b * (qw + 2.0 * kw);
      qkn.memory_traffic = norm_traffic(s * b * (qw + kw));
      qkn.traffic_split = Split::tensor;
      id = add(qkn, id);
    }

    // Korthikanti et al. 2022 §4.1: Q, K (4sbh), V (2sbh), softmax output (2as²b), its dropout mask
    // (as²b) and dropout output (2as²b); GQA shrinks K and V to kv_heads·head_dim.
    Op core{.name = name("attention"), .kind = OpKind::attention_core, .layer = layer};
    // A sliding window bounds the keys per query, but only fused kernels skip the masked blocks
    // (FlashAttention-2 window_size, Dao 2023); eager attention computes the full s×s scores.
    const double keys =
        flash_ && m_.windowed(layer) ? std::min(s, static_cast<double>(m_.sliding_window)) : s;
    core.forward_flops = 2.0 * b * s * keys * (qw + ow);  // QK^T over Q's width, attention·V over V's
    // One head width for the fused kernel's FLOPs: the mean of the score and value widths (latent
    // attention: 192 and 128), which gives the same 4·b·heads·s·keys·width.
    const double head_dim = (qw + ow) / (2.0 * a);
    if (flash_) core.fused_attention = AttentionShape{b, a, s, keys, head_dim, keys >= s};
    else core.gemms = {{s, keys, qw / a, b * a, GemmSplit::count}, {s, ow / a, keys, b * a, GemmSplit::count}};
    core.backward_flops = 2.0 * core.forward_flops;
    core.saved.push_back({"Q", act_ * s * b * qw, Split::tensor});
    core.saved.push_back({"K", act_ * s * b * kw, Split::tensor});
    core.saved.push_back({"V", act_ * s * b * vw, Split::tensor});
    core.traffic_split = Split::tensor;
    if (flash_) {
      // Fused attention recomputes the scores in backward; it keeps only the row logsumexp.
      core.saved.push_back({"softmax logsumexp", kFp32Bytes * a * s * b, Split::tensor});
      core.memory_traffic = act_ * s * b * (qw + kw + vw + ow);  // read Q, K, V; write O
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
    core.output_bytes = act_ * s * b * ow;
    id = add(core, id);

    Op out{.name = name("attn_out"), .kind = OpKind::attention_output, .layer = layer};
    out.params_split = ow * h;
    out.params_replicated = m_.attention_output_bias ? h : 0.0;  // row-parallel bias is added after the reduce
    out.forward_flops = 2.0 * s * b * ow * h;
    out.gemms = {{s * b, h, ow, 1.0, GemmSplit::k}};
    out.backward_flops = 2.0 * out.forward_flops;
    // The attention output: fused attention's backward reads it too (D = rowsum(dO · O)), so in
    // 16 bits; the projection keeps its FP8 copy beside it where the framework saves that, and the
    // 16-bit one is then the core's alone (selective recompute reruns the core and rebuilds it).
    if (flash_ && fp8_inputs_) {
      out.saved.push_back({"attention projection input", act_ * s * b * ow, Split::tensor, true});
      out.saved.push_back({"attention projection input (FP8)", kFp8Bytes * s * b * ow, Split::tensor});
    } else {
      out.saved.push_back({"attention projection input", linear_input_bytes() * s * b * ow, Split::tensor});
    }
    if (m_.hidden_dropout > 0) out.saved.push_back({"attention residual dropout mask", kMaskBytes * sbh, Split::sequence});
    out.output_bytes = act_ * sbh;
    out.memory_traffic = residual_traffic(sbh);
    if (!m_.latent()) out.native_matmuls = {h};
    id = add(out, id);
    if (m_.sandwich_norm) id = add(post_norm(name("attn_post_norm"), layer, "attention post-norm input"), id);
    boost::add_edge(block_input, id, TensorEdge{stream_ * sbh}, g_);  // residual
    OpId attn_residual = id;

    Op n2{.name = name("mlp_norm"), .kind = OpKind::norm, .layer = layer};
    n2.params_replicated = norm_params();
    // With a parallel residual the MLP norm reads the block input, already kept by the attention
    // norm (transformers GPTNeoXLayer passes the same tensor to both norms).
    if (!m_.parallel_residual) n2.saved.push_back({"MLP norm input", stream_ * sbh, Split::sequence});
    n2.output_bytes = stream_ * sbh;
    n2.memory_traffic = stream_norm_traffic(sbh);
    id = add(n2, id);

    const bool moe = m_.moe_layer(layer);
    const double E = static_cast<double>(m_.num_experts);
    const double shared = moe ? static_cast<double>(m_.num_shared_experts * m_.shared_expert_intermediate_size) : 0.0;
    if (moe) {
      Op router{.name = name("router"), .kind = OpKind::router, .layer = layer};
      router.params_replicated = h * E + (m_.router_bias ? E : 0.0);
      router.forward_flops = 2.0 * s * b * h * E;
      router.gemms = {{s * b, E, h, 1.0, GemmSplit::none}};
      if (m_.shared_expert_gate) {
        // Qwen2-MoE shared_expert_gate: Linear(h, 1) whose sigmoid scales the shared expert.
        router.params_replicated += h;
        router.forward_flops += 2.0 * s * b * h;
        router.gemms.push_back({s * b, 1.0, h, 1.0, GemmSplit::none});
      }
      router.backward_flops = 2.0 * router.forward_flops;
      router.tp_replicated = true;
      router.saved.push_back({"router logits", kFp32Bytes * s * b * m_.num_experts, Split::sequence});
      router.output_bytes = kFp32Bytes * s * b * m_.num_experts;
      id = add(router, id);
    }
    // Routed experts (each one an MLP of moe_intermediate_size) or the dense MLP; MoE multiplies
    // work and activations by the experts each token visits and weights by the number of experts.
    const double I = static_cast<double>(moe ? m_.moe_intermediate_size : m_.intermediate_size);
    const double visits = moe ? static_cast<double>(m_.experts_per_token) : 1.0;
    const double copies = moe ? E : 1.0;
    id = add_mlp(layer, id, moe ? "experts" : "mlp", moe ? OpKind::experts : OpKind::mlp_up,
                 moe ? OpKind::experts : OpKind::mlp_down, I, visits, copies, true);
    if (shared > 0) {
      // Shared experts: one dense MLP of n_shared · width every token passes through (DeepSeek's
      // DeepseekV2MLP(intermediate_size = moe_intermediate_size · n_shared_experts); Qwen2-MoE's
      // shared_expert). It reads the MLP norm output the routed experts already keep.
      id = add_mlp(layer, id, "shared_experts", OpKind::mlp_up, OpKind::mlp_down, shared, 1.0, 1.0, false);
    }
    if (m_.sandwich_norm) id = add(post_norm(name("mlp_post_norm"), layer, "MLP post-norm input"), id);
    boost::add_edge(attn_residual, id, TensorEdge{stream_ * sbh}, g_);  // residual
    return id;
  }

  /// An MLP of width I: up (gate·up when gated), activation, down. `visits` copies of each token's
  /// work and activations (the routed experts it goes to), `copies` of the weights (the experts).
  /// The first MLP of a block keeps its input and adds the residual; a shared expert beside the
  /// routed ones reads the same kept input and adds its output to theirs.
  OpId add_mlp(int layer, OpId from, const char* prefix, OpKind up_kind, OpKind down_kind, double I, double visits,
               double copies, bool first) {
    const double h = m_.hidden_size, s = s_, b = b_;
    const double sbh = s * b * h;
    const bool gated = m_.mlp == MlpKind::gated;
    const double up_width = gated ? 2.0 * I : I;
    const bool routed = up_kind == OpKind::experts;
    auto name = [&](const char* what) {
      return std::string(prefix) == "mlp" ? fmt::format("layer{}.mlp_{}", layer, what)
                                          : fmt::format("layer{}.{}_{}", layer, prefix, what);
    };

    Op up{.name = name("up"), .kind = up_kind, .layer = layer};
    up.params_split = copies * (h * up_width + (m_.mlp_bias ? up_width : 0.0));
    up.forward_flops = visits * 2.0 * s * b * h * up_width;
    // An expert sees the tokens routed to it: visits/experts of them on average.
    up.gemms = {{s * b * visits / copies, up_width, h, copies, GemmSplit::n}};
    up.backward_flops = 2.0 * up.forward_flops;
    // The block's MLP, not a shared expert beside routed ones (first is false for those).
    const bool dense = first && !routed;
    // The router reads a MoE block's MLP input too and keeps it in 16 bits.
    if (first)
      up.saved.push_back(
          {"MLP input", (dense ? linear_input_bytes() : act_) * sbh, dense ? linear_input_split_ : Split::sequence});
    if (routed && visits > 1.0)
      up.saved.push_back({"routed token copies", (visits - 1.0) * act_ * sbh, Split::sequence});
    if (routed) up.active_fraction = visits / copies;
    // Routed: Megatron-Core's alltoall dispatcher first permutes each token's copies into expert
    // order (moe_utils.permute: gather, read and write every copy), and sorts them by local expert
    // after the all-to-all (expert_sort_traffic).
    const double copies_bytes = visits * act_ * sbh;
    if (routed) {
      up.memory_traffic = 2.0 * copies_bytes;
      up.expert_sort_traffic = 2.0 * copies_bytes;
    }
    up.output_bytes = visits * act_ * s * b * up_width;
    if (dense) up.native_matmuls = gated ? std::vector<double>{I, I} : std::vector<double>{I};
    // The block's MLP reads its norm's output directly; shared experts share it with the router.
    up.input_from_norm = dense;
    OpId id = add(up, from);

    // The routed experts' activation keeps the dense MLP's op name (reports and traces name it).
    Op act{.name = routed ? fmt::format("layer{}.mlp_act", layer) : name("act"), .kind = OpKind::mlp_activation, .layer = layer};
    if (gated) {
      act.saved.push_back({"gate projection output", visits * act_ * s * b * I, Split::tensor});
      act.saved.push_back({"up projection output", visits * act_ * s * b * I, Split::tensor});
    } else {
      act.saved.push_back({"activation input", visits * act_ * s * b * I, Split::tensor});
    }
    act.output_bytes = visits * act_ * s * b * I;
    // Fused: read the gate (and up), write. Eager SwiGLU, act(gate) * up, is two kernels: the
    // activation (read, write) and the product (read two, write).
    const double tensors = gated ? (eager_ ? 5.0 : 3.0) : 2.0;
    act.memory_traffic = visits * act_ * s * b * I * tensors;
    act.traffic_split = Split::tensor;
    id = add(act, id);

    Op down{.name = name("down"), .kind = down_kind, .layer = layer};
    down.params_split = copies * I * h;
    down.params_replicated = m_.mlp_bias ? copies * h : 0.0;
    down.forward_flops = visits * 2.0 * s * b * I * h;
    down.gemms = {{s * b * visits / copies, h, I, copies, GemmSplit::k}};
    down.backward_flops = 2.0 * down.forward_flops;
    // The activation's output is read by this linear alone (experts' grouped linears alike).
    down.saved.push_back({"down projection input", visits * linear_input_bytes() * s * b * I, Split::tensor});
    if (routed) down.active_fraction = visits / copies;
    if (first && m_.hidden_dropout > 0)
      down.saved.push_back({"MLP residual dropout mask", kMaskBytes * sbh, Split::sequence});
    down.output_bytes = act_ * sbh;
    // The first adds the residual; a shared expert's output is added to the routed experts' sum
    // (read both, write one).
    down.memory_traffic = first ? residual_traffic(sbh) : 3.0 * act_ * sbh;
    // Routed: the copies unsorted before the combine (expert_sort_traffic) and unpermuted after it,
    // summed back into one row per token (moe_utils.unpermute: read every copy, write the tokens).
    if (routed) {
      down.memory_traffic += copies_bytes + act_ * sbh;
      down.expert_sort_traffic = 2.0 * copies_bytes;
    }
    if (dense) down.native_matmuls = {h};
    return add(down, id);
  }

  const ModelSpec& m_;
  double s_, b_, act_;
  double stream_;  ///< the residual stream's bytes per element (GraphShape::residual_bytes)
  bool flash_;
  bool eager_;
  CrossEntropy cross_entropy_;
  double logit_metrics_;
  bool fp8_inputs_;
  Split linear_input_split_;  ///< how the column-parallel linears' kept inputs divide over TP
  ComputeGraph g_;

  /// Bytes per element an FP8 linear keeps of its input for the weight gradient: the FP8 copy its
  /// GEMM read where the framework saves that (GraphShape::fp8_saved_linear_inputs), else the input.
  double linear_input_bytes() const { return fp8_inputs_ ? kFp8Bytes : act_; }
};

}  // namespace

ComputeGraph build_compute_graph(const ModelSpec& model, const GraphShape& shape) {
  ComputeGraph g = GraphBuilder(model, shape).build();
  // Under autocast every matmul reads its weight through a cast to the compute precision, and
  // autograd keeps what the matmul read (the cast) until its backward (PyTorch's autocast_mode.cpp;
  // docs/references.md, Framework behaviour). Norms and the embedding use their fp32 weights directly.
  if (shape.autocast_weight_bytes > 0.0)
    for (auto v : boost::make_iterator_range(boost::vertices(g))) {
      Op& op = g[v];
      if (op.gemms.empty() || op.params() <= 0.0) continue;
      const double b = shape.autocast_weight_bytes;
      if (op.params_split > 0.0)
        op.saved.push_back({"weight cast (autocast)", b * op.params_split, Split::tensor, false, false, true});
      if (op.params_replicated > 0.0)
        op.saved.push_back({"weight cast (autocast)", b * op.params_replicated, Split::replicated, false, false, true});
    }
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

double active_parameters(const ComputeGraph& graph) {
  double total = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph)))
    if (!graph[v].shares_embedding) total += graph[v].params() * graph[v].active_fraction;
  return total;
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
  p.active = active_parameters(graph);
  return p;
}

double model_flops(const ComputeGraph& graph) {
  double total = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph)))
    total += graph[v].forward_flops + graph[v].backward_flops;
  return total;
}

}  // namespace strata
