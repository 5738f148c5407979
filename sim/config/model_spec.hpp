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
  bool attention_bias = false;
  bool mlp_bias = false;
  double hidden_dropout = 0.0;
  double attention_dropout = 0.0;
  std::int64_t num_experts = 0;  ///< 0: dense MLP
  std::int64_t experts_per_token = 0;
  bool flash_attention = true;  ///< default for training.flash_attention

  bool is_moe() const { return num_experts > 0; }
  /// Width of the K (or V) projection: kv_heads × head_dim.
  std::int64_t kv_width() const { return num_kv_heads * head_dim; }
  /// Width of the Q projection and attention output: heads × head_dim.
  std::int64_t q_width() const { return num_heads * head_dim; }
};

/// Parameter table of a Strata model file.
const ParamTable& model_param_table();

/// True when the document looks like a HuggingFace config.json (has `model_type`, `architectures`
/// or `transformers_version`); such documents are read leniently, ignoring keys Strata does not use.
bool is_huggingface_config(const nlohmann::json& doc);

/// Reads a model document (Strata or HuggingFace form) found at `pointer` of the composed input.
ModelSpec parse_model(const nlohmann::json& doc, const std::string& pointer, Diagnostics& diag);

}  // namespace strata
