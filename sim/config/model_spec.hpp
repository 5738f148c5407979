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
  std::int64_t num_experts = 0;  ///< 0: dense MLP
  std::int64_t experts_per_token = 0;
  bool flash_attention = true;  ///< default for training.flash_attention
  /// How the document was read: "strata" or "huggingface"; HF model_type when HuggingFace.
  std::string format = "strata";
  std::string model_type;

  /// True when layer `layer` attends through the sliding window.
  bool windowed(int layer) const {
    return sliding_window > 0 && (sliding_window_layers == WindowLayers::all || layer % 2 == 0);
  }

  bool is_moe() const { return num_experts > 0; }
  /// Width of the K (or V) projection: kv_heads × head_dim.
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
  /// Width of the Q projection and attention output: heads × head_dim.
  std::int64_t q_width() const { return num_heads * head_dim; }
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

/// Reads a model document (Strata or HuggingFace form) found at `pointer` of the composed input.
ModelSpec parse_model(const nlohmann::json& doc, const std::string& pointer, Diagnostics& diag);

}  // namespace strata
