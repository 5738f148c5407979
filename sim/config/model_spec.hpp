#pragma once

/// A transformer model's architecture, in HuggingFace `config.json` terms.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/core/diagnostics.hpp"
#include "sim/core/params.hpp"

namespace strata {

enum class MlpKind { standard, gated };
enum class NormKind { layernorm, rmsnorm };
enum class PositionEmbedding { learned, rotary };
/// Which layers a sliding attention window applies to.
enum class WindowLayers { all, alternate };
/// How a block attends: multi_head (MHA/GQA/MQA: Q, K, V projected from the hidden state) or latent
/// (DeepSeek-V2's multi-head latent attention: K and V rebuilt per head from a compressed latent).
enum class AttentionKind { multi_head, latent };

struct ModelSpec {
  std::string name;
  std::string source;
  std::int64_t hidden_size = 0;
  std::int64_t num_layers = 0;
  std::int64_t num_heads = 0;
  std::int64_t num_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  std::string hidden_act;
  MlpKind mlp = MlpKind::standard;
  NormKind norm = NormKind::layernorm;
  PositionEmbedding position_embedding = PositionEmbedding::rotary;
  bool tie_word_embeddings = false;
  bool attention_bias = false;         ///< biases on Q, K, V
  bool attention_output_bias = false;  ///< bias on the attention output projection
  bool mlp_bias = false;
  /// Attention and MLP both read the block input (GPT-NeoX, GPT-J): x + attn(ln1 x) + mlp(ln2 x).
  bool parallel_residual = false;
  /// Norms after attention and after the MLP too, four per block (Gemma 2).
  bool sandwich_norm = false;
  /// Keys each query attends to in windowed layers; 0: full attention.
  std::int64_t sliding_window = 0;
  WindowLayers sliding_window_layers = WindowLayers::all;
  double attn_logit_softcapping = 0.0;   ///< 0: none
  double final_logit_softcapping = 0.0;  ///< 0: none
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  std::int64_t num_experts = 0;  ///< routed experts per MoE layer; 0: dense MLP
  std::int64_t experts_per_token = 0;
  /// Width of one routed expert's MLP (DeepSeek/Qwen moe_intermediate_size); intermediate_size
  /// for Mixtral, whose experts are full-width MLPs.
  std::int64_t moe_intermediate_size = 0;
  /// Experts every token passes through besides the routed ones (DeepSeek n_shared_experts).
  std::int64_t num_shared_experts = 0;
  /// Width of one shared expert (Qwen2-MoE's single shared expert has its own width).
  std::int64_t shared_expert_intermediate_size = 0;
  /// A sigmoid gate h→1 scales the shared expert's output (Qwen2-MoE shared_expert_gate).
  bool shared_expert_gate = false;
  /// Blocks before the first MoE block, with a dense MLP of intermediate_size (DeepSeek).
  std::int64_t first_k_dense_replace = 0;
  /// The router has a per-expert bias (DeepSeek-V3's e_score_correction_bias).
  bool router_bias = false;
  /// Multi-token-prediction modules shipped in the checkpoint (DeepSeek-V3 num_nextn_predict_layers):
  /// read and reported, but not in parameters, work or memory (see docs/references.md).
  std::int64_t mtp_layers = 0;
  AttentionKind attention = AttentionKind::multi_head;
  /// Latent attention: rank of the query compression (0: queries projected directly from h).
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;      ///< rank of the joint K/V compression
  std::int64_t qk_nope_head_dim = 0;  ///< per-head Q/K width without rotary position
  std::int64_t qk_rope_head_dim = 0;  ///< per-head Q width with rotary position; K's is shared by all heads
  std::int64_t v_head_dim = 0;        ///< per-head V width
  /// RMSNorm over each head of Q and K before rotary (Qwen3 q_norm/k_norm).
  bool qk_norm = false;
  bool flash_attention = true;  ///< default for training.flash_attention
  /// How the document was read: "strata" or "huggingface"; HF model_type when HuggingFace.
  std::string format = "strata";
  std::string model_type;

  /// True when layer `layer` attends through the sliding window.
  bool windowed(int layer) const {
    return sliding_window > 0 && (sliding_window_layers == WindowLayers::all || layer % 2 == 0);
  }

  bool is_moe() const { return num_experts > 0; }
  /// True when block `layer` has experts (a MoE model's blocks past its first dense ones).
  bool moe_layer(int layer) const { return is_moe() && layer >= first_k_dense_replace; }
  std::int64_t moe_layers() const { return is_moe() ? num_layers - first_k_dense_replace : 0; }
  bool latent() const { return attention == AttentionKind::latent; }
  /// Width of the K (or V) projection: kv_heads × head_dim.
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
  /// Width of the Q projection: heads × head_dim (heads × (nope + rope) for latent attention).
  std::int64_t q_width() const { return latent() ? num_heads * (qk_nope_head_dim + qk_rope_head_dim) : num_heads * head_dim; }
  /// Width of the attention output (the output projection's input): heads × V width.
  std::int64_t attn_out_width() const { return latent() ? num_heads * v_head_dim : num_heads * head_dim; }
  /// Elements per token per layer a KV cache keeps: K and V of every KV head, or, for latent
  /// attention, the compressed latent and the shared rotary key (DeepSeek-V2 §2.1.2, Table 1).
  std::int64_t kv_elements_per_token() const {
    return latent() ? kv_lora_rank + qk_rope_head_dim : 2 * kv_width();
  }
};

/// Parameter table of a Strata model file.
const ParamTable& model_param_table();

/// True when the document looks like a HuggingFace config.json (has `model_type`, `architectures`
/// or `transformers_version`). Such documents are read strictly: every key is modelled, known not to
/// matter, or refused.
bool is_huggingface_config(const nlohmann::json& doc);

/// What the HuggingFace importer does with a config.json key.
enum class HfKeyRole { modelled, ignored, refused };
/// Role of `key` in a HuggingFace config.json (refused for any key not listed).
HfKeyRole huggingface_key_role(const std::string& key);
/// Why an ignored key does not matter (empty for other keys).
std::string huggingface_ignored_reason(const std::string& key);

std::string to_string(MlpKind kind);
std::string to_string(AttentionKind kind);

/// Reads a model document (Strata or HuggingFace form) found at `pointer` of the composed input.
ModelSpec parse_model(const nlohmann::json& doc, const std::string& pointer, Diagnostics& diag);

}  // namespace strata
