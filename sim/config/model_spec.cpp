#include "sim/config/model_spec.hpp"

#include <fmt/format.h>

namespace strata {

using nlohmann::json;

namespace {
// Bound of every architecture dimension: 100x beyond today's largest models, and small enough that
// products of dimensions stay exact in doubles and inside int64.
constexpr double kMaxDimension = 1e7;
}  // namespace

const ParamTable& model_param_table() {
  static const ParamTable table = {
      {.key = "name", .kind = ParamKind::string, .doc = "model name", .optional = true},
      {.key = "description", .kind = ParamKind::string, .doc = "one line", .optional = true},
      {.key = "source", .kind = ParamKind::string, .doc = "where the numbers come from", .optional = true},
      {.key = "hidden_size", .kind = ParamKind::integer, .doc = "model width h", .min = 1, .max = kMaxDimension},
      {.key = "num_hidden_layers", .kind = ParamKind::integer, .doc = "transformer blocks L", .min = 1, .max = 1e5},
      {.key = "num_attention_heads", .kind = ParamKind::integer, .doc = "query heads a", .min = 1, .max = kMaxDimension},
      {.key = "num_key_value_heads", .kind = ParamKind::integer,
       .doc = "K/V heads (GQA); default = num_attention_heads", .min = 1, .max = kMaxDimension, .optional = true},
      {.key = "head_dim", .kind = ParamKind::integer,
       .doc = "per-head width; default hidden_size / num_attention_heads", .min = 1, .max = kMaxDimension, .optional = true},
      {.key = "intermediate_size", .kind = ParamKind::integer,
       .doc = "MLP width (per expert for MoE); default 4·hidden_size", .min = 1, .max = kMaxDimension, .optional = true},
      {.key = "vocab_size", .kind = ParamKind::integer, .doc = "vocabulary V", .min = 1, .max = kMaxDimension},
      {.key = "max_position_embeddings", .kind = ParamKind::integer, .default_value = 0,
       .doc = "rows of the learned position embedding (ignored for rotary)", .min = 0,
       .max = kMaxDimension},
      {.key = "hidden_act", .kind = ParamKind::choice, .default_value = "gelu",
       .doc = "MLP activation",
       .choices = {"gelu", "gelu_new", "gelu_pytorch_tanh", "relu", "silu", "swiglu", "geglu"}},
      {.key = "mlp", .kind = ParamKind::choice,
       .doc = "standard (up, act, down) or gated (gate·up, act, down); default gated for silu/swiglu/geglu",
       .choices = {"standard", "gated"}, .optional = true},
      {.key = "norm", .kind = ParamKind::choice, .default_value = "layernorm",
       .doc = "normalisation layer", .choices = {"layernorm", "rmsnorm"}},
      {.key = "position_embedding", .kind = ParamKind::choice, .default_value = "rotary",
       .doc = "learned (a table of max_position_embeddings rows) or rotary (no parameters)",
       .choices = {"learned", "rotary"}},
      {.key = "tie_word_embeddings", .kind = ParamKind::boolean, .default_value = false,
       .doc = "LM head shares the input embedding"},
      {.key = "attention_bias", .kind = ParamKind::boolean, .default_value = false,
       .doc = "biases on QKV and output projections"},
      {.key = "mlp_bias", .kind = ParamKind::boolean, .default_value = false, .doc = "biases on MLP projections"},
      {.key = "hidden_dropout", .kind = ParamKind::number, .default_value = 0.0,
       .doc = "dropout after attention/MLP (saves a 1-byte mask when > 0)", .min = 0.0, .max = 1.0},
      {.key = "attention_dropout", .kind = ParamKind::number, .default_value = 0.0,
       .doc = "dropout on attention probabilities (saves an s² mask when > 0)", .min = 0.0, .max = 1.0},
      {.key = "num_local_experts", .kind = ParamKind::integer, .default_value = 0,
       .doc = "MoE experts per layer (0: dense)", .min = 0, .max = kMaxDimension},
      {.key = "num_experts_per_tok", .kind = ParamKind::integer, .default_value = 2,
       .doc = "experts each token is routed to", .min = 1, .max = kMaxDimension},
      {.key = "flash_attention", .kind = ParamKind::boolean, .default_value = true,
       .doc = "default of training.flash_attention for this model"},
  };
  return table;
}

bool is_huggingface_config(const json& doc) {
  return doc.is_object() &&
         (doc.contains("model_type") || doc.contains("architectures") || doc.contains("transformers_version"));
}

namespace {

/// Translates a HuggingFace config into a Strata model document. Keys Strata does not model
/// (tokenizer ids, rope scaling, dtype...) are dropped; architecture facts that HF implies by
/// `model_type` become explicit.
json from_huggingface(const json& hf) {
  json out = json::object();
  auto copy = [&](const char* to, std::initializer_list<const char*> from) {
    for (const char* k : from)
      if (hf.contains(k) && !hf.at(k).is_null()) {
        out[to] = hf.at(k);
        return;
      }
  };
  copy("name", {"_name_or_path", "name"});
  copy("hidden_size", {"hidden_size", "n_embd", "d_model"});
  copy("num_hidden_layers", {"num_hidden_layers", "n_layer", "num_layers"});
  copy("num_attention_heads", {"num_attention_heads", "n_head"});
  copy("num_key_value_heads", {"num_key_value_heads"});
  copy("head_dim", {"head_dim"});
  copy("intermediate_size", {"intermediate_size", "n_inner", "ffn_dim"});
  copy("vocab_size", {"vocab_size"});
  copy("max_position_embeddings", {"max_position_embeddings", "n_positions"});
  copy("hidden_act", {"hidden_act", "activation_function"});
  copy("tie_word_embeddings", {"tie_word_embeddings"});
  copy("attention_bias", {"attention_bias"});
  copy("mlp_bias", {"mlp_bias"});
  copy("num_local_experts", {"num_local_experts", "num_experts"});
  copy("num_experts_per_tok", {"num_experts_per_tok"});
  copy("hidden_dropout", {"hidden_dropout", "resid_pdrop"});
  copy("attention_dropout", {"attention_dropout", "attn_pdrop"});

  std::string type = hf.value("model_type", std::string{});
  bool gpt2_like = type == "gpt2" || hf.contains("n_embd");
  if (gpt2_like) {
    out["norm"] = "layernorm";
    out["position_embedding"] = "learned";
    out["attention_bias"] = true;
    out["mlp_bias"] = true;
    out["mlp"] = "standard";
    // transformers.GPT2Config ties the LM head to the token embedding by default.
    if (!out.contains("tie_word_embeddings")) out["tie_word_embeddings"] = true;
  } else {
    out["norm"] = "rmsnorm";
    out["position_embedding"] = "rotary";
    // Qwen2 configs carry no attention_bias key but use QKV biases (transformers Qwen2Attention).
    if (type == "qwen2" || type == "qwen2_moe") out["attention_bias"] = true;
    // transformers.PretrainedConfig defaults tie_word_embeddings to true.
    if (!out.contains("tie_word_embeddings")) out["tie_word_embeddings"] = true;
  }
  return out;
}

}  // namespace

ModelSpec parse_model(const json& raw, const std::string& pointer, Diagnostics& diag) {
  const json doc = is_huggingface_config(raw) ? from_huggingface(raw) : raw;
  const std::size_t errors_before = diag.size();
  ObjectReader r(doc, pointer, model_param_table(), diag);
  ModelSpec m;
  if (!r.ok()) {
    if (doc.is_null()) diag.add(pointer, "missing model (expected a name, a path or an object)");
    return m;
  }
  m.name = r.string("name");
  m.source = r.string("source");
  m.hidden_size = r.integer("hidden_size");
  m.num_layers = r.integer("num_hidden_layers");
  m.num_heads = r.integer("num_attention_heads");
  m.num_kv_heads = r.has("num_key_value_heads") ? r.integer("num_key_value_heads") : m.num_heads;
  m.head_dim = r.has("head_dim") ? r.integer("head_dim")
                                 : (m.num_heads > 0 ? m.hidden_size / m.num_heads : 0);
  m.intermediate_size = r.has("intermediate_size") ? r.integer("intermediate_size") : 4 * m.hidden_size;
  m.vocab_size = r.integer("vocab_size");
  m.max_position_embeddings = r.integer("max_position_embeddings");
  m.hidden_act = r.choice("hidden_act");
  bool gated_act = m.hidden_act == "silu" || m.hidden_act == "swiglu" || m.hidden_act == "geglu";
  m.mlp = r.has("mlp") ? (r.choice("mlp") == "gated" ? MlpKind::gated : MlpKind::standard)
                       : (gated_act ? MlpKind::gated : MlpKind::standard);
  m.norm = r.choice("norm") == "rmsnorm" ? NormKind::rmsnorm : NormKind::layernorm;
  m.position_embedding =
      r.choice("position_embedding") == "learned" ? PositionEmbedding::learned : PositionEmbedding::rotary;
  m.tie_word_embeddings = r.boolean("tie_word_embeddings");
  m.attention_bias = r.boolean("attention_bias");
  m.mlp_bias = r.boolean("mlp_bias");
  m.hidden_dropout = r.number("hidden_dropout");
  m.attention_dropout = r.number("attention_dropout");
  m.num_experts = r.integer("num_local_experts");
  m.experts_per_token = m.num_experts > 0 ? r.integer("num_experts_per_tok") : 0;
  m.flash_attention = r.boolean("flash_attention");

  if (diag.size() != errors_before) return m;  // cross-field checks need valid fields
  if (m.num_heads % m.num_kv_heads != 0)
    r.error("num_key_value_heads",
            fmt::format("{} does not divide num_attention_heads={}", m.num_kv_heads, m.num_heads));
  if (!r.has("head_dim") && m.hidden_size % m.num_heads != 0)
    r.error("num_attention_heads", fmt::format("{} does not divide hidden_size={} (set head_dim)",
                                               m.num_heads, m.hidden_size));
  if (m.num_experts > 0 && m.experts_per_token > m.num_experts)
    r.error("num_experts_per_tok", fmt::format("{} exceeds num_local_experts={}", m.experts_per_token,
                                               m.num_experts));
  if (m.position_embedding == PositionEmbedding::learned && m.max_position_embeddings == 0)
    r.error("max_position_embeddings", "must be > 0 for a learned position embedding (got 0)");
  return m;
}

}  // namespace strata
