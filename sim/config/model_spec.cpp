#include "sim/config/model_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

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
       .choices = {"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "relu", "silu", "swiglu", "geglu"}},
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
      {.key = "attention_output_bias", .kind = ParamKind::boolean,
       .doc = "bias on the attention output projection; default attention_bias", .optional = true},
      {.key = "mlp_bias", .kind = ParamKind::boolean, .default_value = false, .doc = "biases on MLP projections"},
      {.key = "parallel_residual", .kind = ParamKind::boolean, .default_value = false,
       .doc = "attention and MLP both read the block input (GPT-NeoX, GPT-J)"},
      {.key = "sandwich_norm", .kind = ParamKind::boolean, .default_value = false,
       .doc = "norms after attention and after the MLP as well, four per block (Gemma 2)"},
      {.key = "sliding_window", .kind = ParamKind::integer, .default_value = 0,
       .doc = "keys each query attends to in windowed layers (0: full attention)", .min = 0, .max = kMaxDimension},
      {.key = "sliding_window_layers", .kind = ParamKind::choice, .default_value = "all",
       .doc = "layers the window applies to: all, or alternate (even layers, Gemma 2)",
       .choices = {"all", "alternate"}},
      {.key = "attn_logit_softcapping", .kind = ParamKind::number, .default_value = 0.0,
       .doc = "cap·tanh(score/cap) on attention scores (0: none)", .min = 0.0, .max = 1e6},
      {.key = "final_logit_softcapping", .kind = ParamKind::number, .default_value = 0.0,
       .doc = "cap·tanh(logit/cap) on the LM head output (0: none)", .min = 0.0, .max = 1e6},
      {.key = "hidden_dropout", .kind = ParamKind::number, .default_value = 0.0,
       .doc = "dropout after attention/MLP (saves a 1-byte mask when > 0)", .min = 0.0, .max = 1.0},
      {.key = "attention_dropout", .kind = ParamKind::number, .default_value = 0.0,
       .doc = "dropout on attention probabilities (saves an s² mask when > 0)", .min = 0.0, .max = 1.0},
      {.key = "num_local_experts", .kind = ParamKind::integer, .default_value = 0,
       .doc = "MoE experts per layer (0: dense)", .min = 0, .max = kMaxDimension},
      {.key = "num_experts_per_tok", .kind = ParamKind::integer, .default_value = 2,
       .doc = "experts each token is routed to", .min = 1, .max = kMaxDimension},
      {.key = "moe_intermediate_size", .kind = ParamKind::integer,
       .doc = "width of one routed expert's MLP; default intermediate_size", .min = 1, .max = kMaxDimension,
       .optional = true},
      {.key = "num_shared_experts", .kind = ParamKind::integer, .default_value = 0,
       .doc = "experts every token passes through besides the routed ones (DeepSeek)", .min = 0, .max = kMaxDimension},
      {.key = "shared_expert_intermediate_size", .kind = ParamKind::integer,
       .doc = "width of one shared expert; default moe_intermediate_size", .min = 1, .max = kMaxDimension,
       .optional = true},
      {.key = "shared_expert_gate", .kind = ParamKind::boolean, .default_value = false,
       .doc = "a sigmoid gate h→1 scales the shared experts' output (Qwen2-MoE)"},
      {.key = "first_k_dense_replace", .kind = ParamKind::integer, .default_value = 0,
       .doc = "blocks before the first MoE block; they have a dense MLP of intermediate_size", .min = 0, .max = 1e5},
      {.key = "router_bias", .kind = ParamKind::boolean, .default_value = false,
       .doc = "the router has a bias per expert (DeepSeek-V3 e_score_correction_bias)"},
      {.key = "num_nextn_predict_layers", .kind = ParamKind::integer, .default_value = 0,
       .doc = "multi-token-prediction modules in the checkpoint: reported, not simulated", .min = 0, .max = 1e3},
      {.key = "attention", .kind = ParamKind::choice, .default_value = "multi_head",
       .doc = "multi_head (Q, K, V from h; GQA through num_key_value_heads) or latent (DeepSeek-V2 MLA)",
       .choices = {"multi_head", "latent"}},
      {.key = "q_lora_rank", .kind = ParamKind::integer, .default_value = 0,
       .doc = "latent attention: rank of the query compression (0: queries straight from h)", .min = 0,
       .max = kMaxDimension},
      {.key = "kv_lora_rank", .kind = ParamKind::integer, .doc = "latent attention: rank of the joint K/V latent",
       .min = 1, .max = kMaxDimension, .optional = true},
      {.key = "qk_nope_head_dim", .kind = ParamKind::integer,
       .doc = "latent attention: per-head Q/K width without rotary position", .min = 0, .max = kMaxDimension,
       .optional = true},
      {.key = "qk_rope_head_dim", .kind = ParamKind::integer,
       .doc = "latent attention: rotary Q/K width (K's shared by all heads)", .min = 1, .max = kMaxDimension,
       .optional = true},
      {.key = "v_head_dim", .kind = ParamKind::integer, .doc = "latent attention: per-head V width", .min = 1,
       .max = kMaxDimension, .optional = true},
      {.key = "qk_norm", .kind = ParamKind::boolean, .default_value = false,
       .doc = "RMSNorm over each head of Q and K (Qwen3)"},
      {.key = "flash_attention", .kind = ParamKind::boolean, .default_value = true,
       .doc = "default of training.flash_attention for this model"},
  };
  return table;
}

bool is_huggingface_config(const json& doc) {
  return doc.is_object() &&
         (doc.contains("model_type") || doc.contains("architectures") || doc.contains("transformers_version"));
}

std::string to_string(MlpKind kind) { return kind == MlpKind::gated ? "gated" : "standard"; }
std::string to_string(AttentionKind kind) { return kind == AttentionKind::latent ? "latent" : "multi_head"; }

namespace {

struct KeyNote {
  const char* key;
  const char* why;
};

// Keys read by the importer below.
const std::vector<std::string>& hf_modelled_keys() {
  static const std::vector<std::string> keys = {
      "_name_or_path", "model_type", "hidden_size", "n_embd", "num_hidden_layers", "n_layer",
      "num_attention_heads", "n_head", "num_key_value_heads", "head_dim", "intermediate_size", "n_inner",
      "vocab_size", "max_position_embeddings", "n_positions", "hidden_act", "hidden_activation",
      "activation_function", "tie_word_embeddings", "attention_bias", "mlp_bias", "num_local_experts",
      "num_experts_per_tok", "attention_dropout", "attn_pdrop", "hidden_dropout", "resid_pdrop", "embd_pdrop",
      "use_parallel_residual", "sliding_window", "sliding_window_size", "use_sliding_window",
      "max_window_layers", "layer_types", "attn_logit_softcapping", "final_logit_softcapping",
      // MoE (Qwen2-MoE, Qwen3-MoE, DeepSeek-V2/V3) and DeepSeek's multi-head latent attention.
      "num_experts", "n_routed_experts", "n_shared_experts", "moe_intermediate_size",
      "shared_expert_intermediate_size", "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
      "mlp_only_layers", "num_nextn_predict_layers", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
      "qk_rope_head_dim", "v_head_dim"};
  return keys;
}

// Keys that change neither parameters, FLOPs nor activation memory of training, and why.
const std::vector<KeyNote>& hf_ignored_keys() {
  static const std::vector<KeyNote> keys = {
      {"architectures", "class names; model_type decides the architecture"},
      {"transformers_version", "library version"},
      {"torch_dtype", "checkpoint dtype; the scenario sets training precision"},
      {"dtype", "checkpoint dtype; the scenario sets training precision"},
      {"auto_map", "remote-code class names"},
      {"bos_token_id", "tokenizer id"}, {"eos_token_id", "tokenizer id"}, {"pad_token_id", "tokenizer id"},
      {"sep_token_id", "tokenizer id"}, {"decoder_start_token_id", "tokenizer id"},
      {"tokenizer_class", "tokenizer"},
      {"initializer_range", "initialisation"},
      {"use_cache", "inference KV cache"},
      {"cache_implementation", "inference KV cache"},
      {"rope_theta", "rotary base: no parameters, same FLOPs"},
      {"rotary_emb_base", "rotary base: no parameters, same FLOPs"},
      {"rope_scaling", "rotary frequency scaling: no parameters, same FLOPs"},
      {"rope_parameters", "rotary settings (transformers v5): no parameters, same FLOPs"},
      {"gradient_checkpointing", "legacy flag; the scenario's memory.recompute decides"},
      {"original_max_position_embeddings", "rotary scaling input"},
      {"rotary_pct", "share of head dims rotated: rotary has no parameters and Strata does not count its elementwise work"},
      {"partial_rotary_factor", "share of head dims rotated: rotary has no parameters and Strata does not count its elementwise work"},
      {"use_mrope", "multimodal rotary sections: same FLOPs for text"},
      {"rms_norm_eps", "numerics"}, {"layer_norm_eps", "numerics"}, {"layer_norm_epsilon", "numerics"},
      {"query_pre_attn_scalar", "score scale: numerics"},
      {"scale_attn_weights", "score scale: numerics"},
      {"scale_attn_by_inverse_layer_idx", "score scale: numerics"},
      {"reorder_and_upcast_attn", "numerics"},
      {"pretraining_tp", "slices the same GEMMs in eager mode: same parameters and FLOPs"},
      {"n_ctx", "legacy GPT-2 context length; positions come from n_positions"},
      {"summary_type", "sequence-classification head, not part of the causal LM"},
      {"summary_use_proj", "sequence-classification head, not part of the causal LM"},
      {"summary_activation", "sequence-classification head, not part of the causal LM"},
      {"summary_proj_to_labels", "sequence-classification head, not part of the causal LM"},
      {"summary_first_dropout", "sequence-classification head, not part of the causal LM"},
      {"classifier_dropout", "sequence-classification head, not part of the causal LM"},
      {"task_specific_params", "generation settings"},
      {"output_router_logits", "returns router logits to the caller"},
      {"router_aux_loss_coef", "weight of the load-balancing loss (a scalar)"},
      {"router_jitter_noise", "router input noise: elementwise, no parameters"},
      {"norm_topk_prob", "renormalises the k routing weights of a token: k scalars, no parameters"},
      {"routed_scaling_factor", "scales the routed experts' output: one scalar"},
      {"scoring_func", "softmax or sigmoid over the router logits: elementwise over the experts, no parameters"},
      {"topk_method", "how experts are picked (greedy, group-limited, noaux_tc): which experts, not how many"},
      {"n_group", "group-limited routing: which experts are picked, not how many"},
      {"topk_group", "group-limited routing: which experts are picked, not how many"},
      {"aux_loss_alpha", "weight of the load-balancing loss (a scalar)"},
      {"seq_aux", "load-balancing loss per sequence or per batch: a scalar loss"},
      {"ep_size", "expert parallelism of DeepSeek's remote inference code; the scenario sets parallelism"},
      {"output_attentions", "returns attention maps at inference"},
      {"output_hidden_states", "returns hidden states at inference"},
      {"return_dict", "Python return type"},
      {"use_bfloat16", "legacy dtype flag"},
      {"torchscript", "export flag"},
  };
  return keys;
}

// Known keys Strata refuses, with the reason.
const std::vector<KeyNote>& hf_refused_keys() {
  static const std::vector<KeyNote> keys = {
      {"qk_layernorm", "the Q/K LayerNorms of StableLM, Persimmon and Phi are not modelled yet (Qwen3's "
                       "per-head RMSNorms are read from model_type)"},
      {"use_qkv_bias", "StableLM QKV biases are not modelled yet"},
      {"multi_query", "Falcon's attention layout is not modelled yet"},
      {"parallel_attn", "Falcon's shared-norm parallel block is not modelled yet"},
      {"new_decoder_architecture", "Falcon's attention layout is not modelled yet"},
      {"alibi", "ALiBi attention biases are not modelled yet"},
      {"clip_qkv", "QKV clipping (OLMo) is not modelled yet"},
  };
  return keys;
}

const KeyNote* find_note(const std::vector<KeyNote>& notes, const std::string& key) {
  for (const auto& n : notes)
    if (key == n.key) return &n;
  return nullptr;
}

/// Architecture facts transformers implies by model_type (the modeling_<type>.py classes).
struct HfFamily {
  const char* model_type;
  MlpKind mlp;
  bool layernorm;          ///< LayerNorm (weight + bias) instead of RMSNorm
  bool learned_positions;  ///< absolute position table instead of rotary
  bool reads_attention_bias;  ///< the attention_bias key sets Q/K/V/O biases
  bool qkv_bias, out_bias, mlp_bias;  ///< fixed biases (defaults when read from keys)
  bool reads_mlp_bias;
  bool tie_default;        ///< the config class's tie_word_embeddings default
  const char* act_default;
  enum class Window { none, all, alternate, qwen } window;
  bool sandwich_norm;
  bool parallel_residual_default;
  double dropout_default;
  bool qk_norm;         ///< RMSNorm over each head of Q and K (q_norm, k_norm)
  bool explicit_shape;  ///< head_dim and tie_word_embeddings must be stated: the class defaults are no checkpoint's
};

// Each row follows transformers' configuration_<type>.py defaults and modeling_<type>.py layers.
const std::vector<HfFamily>& hf_families() {
  using W = HfFamily::Window;
  static const std::vector<HfFamily> families = {
      // LlamaMLP gate/up/down; LlamaAttention bias=config.attention_bias; mlp_bias=config.mlp_bias.
      {"llama", MlpKind::gated, false, false, true, false, false, false, true, false, "silu", W::none, false, false, 0.0, false, false},
      // MistralAttention/MixtralAttention: no biases; sliding_window on every layer.
      {"mistral", MlpKind::gated, false, false, false, false, false, false, false, false, "silu", W::all, false, false, 0.0, false, false},
      {"mixtral", MlpKind::gated, false, false, false, false, false, false, false, false, "silu", W::all, false, false, 0.0, false, false},
      // GemmaMLP gate/up/down with hidden_activation (gelu_pytorch_tanh when unset); tied head.
      {"gemma", MlpKind::gated, false, false, true, false, false, false, false, true, "gelu_pytorch_tanh", W::none, false, false, 0.0, false, false},
      // Gemma2DecoderLayer: pre/post attention and pre/post feed-forward norms; window on even layers.
      {"gemma2", MlpKind::gated, false, false, true, false, false, false, false, true, "gelu_pytorch_tanh", W::alternate, true, false, 0.0, false, false},
      // Qwen2Attention: q/k/v bias=True, o_proj bias=False.
      {"qwen2", MlpKind::gated, false, false, false, true, false, false, false, false, "silu", W::qwen, false, false, 0.0, false, false},
      // Qwen2MoeAttention: q/k/v bias=True, o_proj bias=False, as Qwen2.
      {"qwen2_moe", MlpKind::gated, false, false, false, true, false, false, false, false, "silu", W::qwen, false, false, 0.0, false, false},
      // Qwen3Attention and Qwen3MoeAttention: bias=config.attention_bias on Q/K/V/O; q_norm/k_norm
      // per head.
      {"qwen3", MlpKind::gated, false, false, true, false, false, false, false, false, "silu", W::qwen, false, false, 0.0, true, true},
      {"qwen3_moe", MlpKind::gated, false, false, true, false, false, false, false, false, "silu", W::qwen, false, false, 0.0, true, false},
      // DeepseekV2/V3Attention: q_a_proj (or q_proj), kv_a_proj_with_mqa and o_proj take
      // bias=config.attention_bias; the up-projections have none.
      {"deepseek_v2", MlpKind::gated, false, false, true, false, false, false, false, false, "silu", W::none, false, false, 0.0, false, false},
      {"deepseek_v3", MlpKind::gated, false, false, true, false, false, false, false, false, "silu", W::none, false, false, 0.0, false, false},
      // Phi3: fused qkv_proj and gate_up_proj (same weights as separate ones), no biases.
      {"phi3", MlpKind::gated, false, false, false, false, false, false, false, false, "silu", W::all, false, false, 0.0, false, false},
      // GPT2: Conv1D layers with biases, LayerNorm, learned positions, dropout 0.1 by default.
      {"gpt2", MlpKind::standard, true, true, false, true, true, true, false, true, "gelu_new", W::none, false, false, 0.1, false, false},
      // GPTNeoX: attention_bias (default True), biased MLP, LayerNorm, parallel residual by default.
      {"gpt_neox", MlpKind::standard, true, false, true, true, true, true, false, false, "gelu", W::none, false, true, 0.0, false, false},
  };
  return families;
}

bool present(const json& hf, const char* key) { return hf.contains(key) && !hf.at(key).is_null(); }

/// MoE and latent-attention keys, read as transformers' modeling_<type>.py reads them; the families
/// that do not read a key refuse it (a dense Llama with num_experts set is not a MoE).
void read_experts(const json& hf, const std::string& type, json& out,
                  const std::function<std::string(const std::string&)>& at, Diagnostics& diag) {
  const bool mixtral = type == "mixtral", qwen = type == "qwen2_moe" || type == "qwen3_moe",
             deepseek = type == "deepseek_v2" || type == "deepseek_v3";
  auto refuse_unless = [&](bool reads, std::initializer_list<const char*> keys) {
    if (reads) return;
    for (const char* k : keys)
      if (present(hf, k)) diag.add(at(k), fmt::format("not modelled by Strata yet (not read by {} models)", type));
  };
  // A key the family needs and the config leaves out: Strata does not guess an architecture.
  auto require = [&](const char* key, const char* why) {
    if (!present(hf, key)) diag.add(at(key), fmt::format("missing ({} configs state it: {})", type, why));
  };
  auto copy_to = [&](const char* to, const char* from) {
    if (present(hf, from)) out[to] = hf.at(from);
  };
  auto integer_is = [&](const char* key, std::int64_t want, const char* why) {
    if (present(hf, key) && !(hf.at(key).is_number_integer() && hf.at(key).get<std::int64_t>() == want))
      diag.add(at(key), fmt::format("not modelled by Strata yet (got {}, only {}: {})", show_value(hf.at(key).dump()),
                                    want, why));
  };
  refuse_unless(mixtral, {"num_local_experts"});
  refuse_unless(mixtral || qwen || deepseek, {"num_experts_per_tok"});
  refuse_unless(qwen, {"num_experts", "decoder_sparse_step", "mlp_only_layers"});
  refuse_unless(type == "qwen2_moe", {"shared_expert_intermediate_size"});
  refuse_unless(qwen || deepseek, {"moe_intermediate_size"});
  refuse_unless(deepseek, {"n_routed_experts", "n_shared_experts", "first_k_dense_replace", "moe_layer_freq",
                           "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  refuse_unless(type == "deepseek_v3", {"num_nextn_predict_layers"});

  if (mixtral) {
    copy_to("num_local_experts", "num_local_experts");
    copy_to("num_experts_per_tok", "num_experts_per_tok");
  }
  if (qwen) {
    for (const char* k : {"num_experts", "num_experts_per_tok", "moe_intermediate_size"})
      require(k, "the routed experts' count, top-k and width");
    copy_to("num_local_experts", "num_experts");
    copy_to("num_experts_per_tok", "num_experts_per_tok");
    copy_to("moe_intermediate_size", "moe_intermediate_size");
    // Qwen2MoeDecoderLayer: experts where (layer + 1) % decoder_sparse_step == 0 and the layer is
    // not in mlp_only_layers; Strata models every layer sparse (step 1, no dense-only layers).
    integer_is("decoder_sparse_step", 1, "dense layers between MoE layers are not modelled");
    if (present(hf, "mlp_only_layers") && !(hf.at("mlp_only_layers").is_array() && hf.at("mlp_only_layers").empty()))
      diag.add(at("mlp_only_layers"), fmt::format("not modelled by Strata yet (got {}, only []: dense layers among "
                                                  "MoE layers are not modelled)",
                                                  show_value(hf.at("mlp_only_layers").dump())));
    if (type == "qwen2_moe") {
      // Qwen2MoeSparseMoeBlock: one shared expert of its own width behind a sigmoid gate h→1.
      require("shared_expert_intermediate_size", "the shared expert's width");
      if (present(hf, "shared_expert_intermediate_size")) {
        out["num_shared_experts"] = 1;
        out["shared_expert_intermediate_size"] = hf.at("shared_expert_intermediate_size");
        out["shared_expert_gate"] = true;
      }
    }
  }
  if (deepseek) {
    for (const char* k : {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size"})
      require(k, "the routed experts' count, top-k and width");
    for (const char* k : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      require(k, "the latent attention's shapes");
    if (!hf.contains("q_lora_rank")) require("q_lora_rank", "null for queries projected straight from h");
    copy_to("num_local_experts", "n_routed_experts");
    copy_to("num_experts_per_tok", "num_experts_per_tok");
    copy_to("moe_intermediate_size", "moe_intermediate_size");
    copy_to("num_shared_experts", "n_shared_experts");  // null: none
    copy_to("first_k_dense_replace", "first_k_dense_replace");
    // DeepseekV2DecoderLayer: experts where layer >= first_k_dense_replace and layer % moe_layer_freq == 0.
    integer_is("moe_layer_freq", 1, "dense layers between MoE layers are not modelled");
    out["attention"] = "latent";
    copy_to("q_lora_rank", "q_lora_rank");  // null: q_proj straight from h
    for (const char* k : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"}) copy_to(k, k);
    // transformers DeepseekV3TopkRouter holds e_score_correction_bias (one per routed expert).
    out["router_bias"] = type == "deepseek_v3";
    copy_to("num_nextn_predict_layers", "num_nextn_predict_layers");
    // MLA rebuilds K and V for every head; num_key_value_heads (= heads in DeepSeek's configs)
    // shapes nothing.
    out.erase("num_key_value_heads");
    // transformers' DeepseekV3Config sets head_dim = qk_rope_head_dim for the rotary embedding only;
    // the heads' widths are the qk_*/v_head_dim keys.
    out.erase("head_dim");
  }
}

/// Translates a HuggingFace config into a Strata model document, or reports what it cannot model.
json from_huggingface(const json& hf, const std::string& pointer, Diagnostics& diag) {
  auto at = [&](const std::string& key) { return pointer + "/" + pointer_escape(key); };
  const std::size_t errors_before = diag.size();
  for (const auto& item : hf.items()) {
    // Named copies, not a structured binding: clang 14 cannot capture a binding in a lambda.
    const std::string& key = item.key();
    const json& value = item.value();
    switch (huggingface_key_role(key)) {
      case HfKeyRole::modelled:
      case HfKeyRole::ignored: break;
      case HfKeyRole::refused: {
        const KeyNote* note = find_note(hf_refused_keys(), key);
        if (model_param_table().end() !=
            std::find_if(model_param_table().begin(), model_param_table().end(),
                         [&](const Param& p) { return p.key == key; }))
          diag.add(at(key), fmt::format("a Strata model-file key, which a HuggingFace config.json does not use "
                                        "(got {}); edit the config's own keys instead", show_value(value.dump())));
        else
          diag.add(at(key), fmt::format("not modelled by Strata yet ({})",
                                        note ? note->why : "unknown HuggingFace key: Strata cannot tell whether it "
                                                           "changes parameters, FLOPs or memory"));
      }
    }
  }
  const std::string type = hf.contains("model_type") && hf.at("model_type").is_string()
                               ? hf.at("model_type").get<std::string>() : std::string{};
  const HfFamily* fam = nullptr;
  for (const auto& f : hf_families())
    if (type == f.model_type) fam = &f;
  if (!fam) {
    std::string names;
    for (const auto& f : hf_families()) names += (names.empty() ? "" : ", ") + std::string(f.model_type);
    diag.add(at("model_type"), hf.contains("model_type")
                                   ? fmt::format("not modelled by Strata yet (got {}, expected one of: {})",
                                                 show_value(hf.at("model_type").dump()), names)
                                   : fmt::format("missing (expected one of: {})", names));
  }
  if (diag.size() != errors_before) return json::object();

  json out = json::object();
  auto copy = [&](const char* to, std::initializer_list<const char*> from) {
    for (const char* k : from)
      if (present(hf, k)) {
        out[to] = hf.at(k);
        return;
      }
  };
  auto flag = [&](const char* key, bool fallback) {
    return present(hf, key) && hf.at(key).is_boolean() ? hf.at(key).get<bool>() : fallback;
  };
  auto number = [&](std::initializer_list<const char*> keys, double fallback) {
    for (const char* k : keys)
      if (present(hf, k) && hf.at(k).is_number()) return hf.at(k).get<double>();
    return fallback;
  };
  if (fam->explicit_shape)
    for (const char* k : {"head_dim", "tie_word_embeddings"})
      if (!present(hf, k))
        diag.add(at(k), fmt::format("missing ({} configs state it, and transformers' class default is not what its "
                                    "checkpoints use)",
                                    type));
  copy("name", {"_name_or_path"});
  copy("hidden_size", {"hidden_size", "n_embd"});
  copy("num_hidden_layers", {"num_hidden_layers", "n_layer"});
  copy("num_attention_heads", {"num_attention_heads", "n_head"});
  copy("num_key_value_heads", {"num_key_value_heads"});
  copy("head_dim", {"head_dim"});
  copy("intermediate_size", {"intermediate_size", "n_inner"});
  copy("vocab_size", {"vocab_size"});
  copy("max_position_embeddings", {"max_position_embeddings", "n_positions"});
  // Gemma reads hidden_activation (hidden_act is kept for old checkpoints); others hidden_act.
  if (type == "gemma" || type == "gemma2") copy("hidden_act", {"hidden_activation"});
  else copy("hidden_act", {"hidden_act", "activation_function"});
  if (!out.contains("hidden_act")) out["hidden_act"] = fam->act_default;
  out["mlp"] = to_string(fam->mlp);
  out["norm"] = fam->layernorm ? "layernorm" : "rmsnorm";
  out["position_embedding"] = fam->learned_positions ? "learned" : "rotary";
  out["tie_word_embeddings"] = flag("tie_word_embeddings", fam->tie_default);

  // Biases: read from keys only where transformers reads them; elsewhere they are fixed.
  bool qkv_bias = fam->qkv_bias, out_bias = fam->out_bias, mlp_bias = fam->mlp_bias;
  if (fam->reads_attention_bias) qkv_bias = out_bias = flag("attention_bias", fam->qkv_bias);
  else if (present(hf, "attention_bias") && flag("attention_bias", !fam->qkv_bias) != fam->qkv_bias)
    diag.add(at("attention_bias"), fmt::format("not modelled by Strata yet (transformers' {} has fixed attention "
                                               "biases and ignores this key)", type));
  if (fam->reads_mlp_bias) mlp_bias = flag("mlp_bias", fam->mlp_bias);
  else if (present(hf, "mlp_bias") && flag("mlp_bias", !fam->mlp_bias) != fam->mlp_bias)
    diag.add(at("mlp_bias"), fmt::format("not modelled by Strata yet (transformers' {} has fixed MLP biases and "
                                         "ignores this key)", type));
  out["attention_bias"] = qkv_bias;
  out["attention_output_bias"] = out_bias;
  out["mlp_bias"] = mlp_bias;

  read_experts(hf, type, out, at, diag);
  out["qk_norm"] = fam->qk_norm;

  // Dropout: Strata has one residual-branch setting (embedding and block outputs) and one on the
  // attention probabilities; a mask is saved when the rate is > 0.
  const double hidden = number({"hidden_dropout", "resid_pdrop"}, fam->dropout_default);
  const double embd = number({"embd_pdrop"}, type == "gpt2" ? fam->dropout_default : hidden);
  if ((embd > 0) != (hidden > 0))
    diag.add(at("embd_pdrop"), fmt::format("not modelled by Strata yet (one dropout setting covers the embedding "
                                           "and the residual branches; got embd_pdrop={} with resid_pdrop={})",
                                           embd, hidden));
  out["hidden_dropout"] = hidden;
  out["attention_dropout"] = number({"attention_dropout", "attn_pdrop"}, fam->dropout_default);

  out["parallel_residual"] = flag("use_parallel_residual", fam->parallel_residual_default);
  if (present(hf, "use_parallel_residual") && type != "gpt_neox")
    diag.add(at("use_parallel_residual"), fmt::format("not modelled by Strata yet (not read by {} models)", type));
  out["sandwich_norm"] = fam->sandwich_norm;

  // Sliding window: which layers use it depends on the family.
  using W = HfFamily::Window;
  std::optional<json> window;
  if (present(hf, "sliding_window")) window = hf.at("sliding_window");
  if (present(hf, "sliding_window_size")) {
    if (window && *window != hf.at("sliding_window_size"))
      diag.add(at("sliding_window_size"), fmt::format("disagrees with sliding_window (got {}, expected {})",
                                                      hf.at("sliding_window_size").dump(), window->dump()));
    window = hf.at("sliding_window_size");
  }
  if (fam->window == W::alternate && !window) window = 4096;  // Gemma2Config default
  switch (fam->window) {
    case W::none:
      if (window) diag.add(at("sliding_window"), fmt::format("not modelled by Strata yet ({} models do not read it)", type));
      break;
    case W::qwen:
      if (flag("use_sliding_window", false))
        diag.add(at("use_sliding_window"), "not modelled by Strata yet (a window on the layers past "
                                           "max_window_layers)");
      break;
    case W::all:
    case W::alternate:
      if (window) out["sliding_window"] = *window;
      out["sliding_window_layers"] = fam->window == W::all ? "all" : "alternate";
      break;
  }
  if (fam->window != W::qwen)
    for (const char* k : {"use_sliding_window", "max_window_layers"})
      if (present(hf, k)) diag.add(at(k), fmt::format("not modelled by Strata yet (not read by {} models)", type));

  if (type == "gemma2") {
    // Gemma2Config defaults: attention scores capped at 50, final logits at 30.
    out["attn_logit_softcapping"] = number({"attn_logit_softcapping"}, 50.0);
    out["final_logit_softcapping"] = number({"final_logit_softcapping"}, 30.0);
  } else {
    for (const char* k : {"attn_logit_softcapping", "final_logit_softcapping"})
      if (present(hf, k)) diag.add(at(k), fmt::format("not modelled by Strata yet (not read by {} models)", type));
  }
  return out;
}

}  // namespace

namespace {

/// Newer transformers write `layer_types` (one "full_attention" or "sliding_attention" per layer) into
/// the configs they save. It must name the layers the config's other keys give a window to
/// (ModelSpec::windowed), else the config is refused: a per-layer pattern Strata would count wrong.
void check_layer_types(const json& hf, const ModelSpec& m, const std::string& pointer, Diagnostics& diag) {
  if (!present(hf, "layer_types")) return;
  const std::string at = pointer + "/layer_types";
  const json& types = hf.at("layer_types");
  if (!types.is_array() || static_cast<std::int64_t>(types.size()) != m.num_layers) {
    diag.add(at, fmt::format("expected one entry per layer ({} of \"full_attention\" or \"sliding_attention\"), "
                             "got {}",
                             m.num_layers,
                             types.is_array() ? fmt::format("{} entries", types.size()) : show_value(types.dump())));
    return;
  }
  for (std::size_t i = 0; i < types.size(); ++i) {
    const json& t = types[i];
    if (!t.is_string()) {
      diag.add(at + "/" + std::to_string(i),
               fmt::format("expected \"full_attention\" or \"sliding_attention\", got {}", show_value(t.dump())));
      return;
    }
    if (t != "full_attention" && t != "sliding_attention") {  // chunked_attention, linear_attention, ...
      diag.add(at + "/" + std::to_string(i),
               fmt::format("not modelled by Strata yet (got {}; only full_attention and sliding_attention layers)",
                           show_value(t.dump())));
      return;
    }
    const bool windowed = m.windowed(static_cast<int>(i));
    if ((t == "sliding_attention") != windowed) {
      diag.add(at + "/" + std::to_string(i),
               fmt::format("not modelled by Strata yet (got {}; the config's other keys give this layer {}, and "
                           "Strata models no other per-layer pattern)",
                           t.dump(), windowed ? "a sliding window" : "full attention"));
      return;
    }
  }
}

}  // namespace

HfKeyRole huggingface_key_role(const std::string& key) {
  const auto& m = hf_modelled_keys();
  if (std::find(m.begin(), m.end(), key) != m.end()) return HfKeyRole::modelled;
  if (find_note(hf_ignored_keys(), key)) return HfKeyRole::ignored;
  return HfKeyRole::refused;
}

std::string huggingface_ignored_reason(const std::string& key) {
  const KeyNote* note = find_note(hf_ignored_keys(), key);
  return note ? note->why : "";
}

ModelSpec parse_model(const json& raw, const std::string& pointer, Diagnostics& diag) {
  ModelSpec m;
  const bool hf = is_huggingface_config(raw);
  const std::size_t errors_before = diag.size();
  const json doc = hf ? from_huggingface(raw, pointer, diag) : raw;
  if (hf) {
    m.format = "huggingface";
    if (diag.size() != errors_before) return m;  // a model_type that is not a string is one of them
    m.model_type = raw.value("model_type", std::string{});
  }
  ObjectReader r(doc, pointer, model_param_table(), diag);
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
  m.attention_output_bias = r.has("attention_output_bias") ? r.boolean("attention_output_bias") : m.attention_bias;
  m.mlp_bias = r.boolean("mlp_bias");
  m.parallel_residual = r.boolean("parallel_residual");
  m.sandwich_norm = r.boolean("sandwich_norm");
  m.sliding_window = r.integer("sliding_window");
  m.sliding_window_layers = r.choice("sliding_window_layers") == "alternate" ? WindowLayers::alternate
                                                                              : WindowLayers::all;
  m.attn_logit_softcapping = r.number("attn_logit_softcapping");
  m.final_logit_softcapping = r.number("final_logit_softcapping");
  m.hidden_dropout = r.number("hidden_dropout");
  m.attention_dropout = r.number("attention_dropout");
  m.num_experts = r.integer("num_local_experts");
  m.experts_per_token = m.num_experts > 0 ? r.integer("num_experts_per_tok") : 0;
  m.moe_intermediate_size = r.has("moe_intermediate_size") ? r.integer("moe_intermediate_size") : m.intermediate_size;
  m.num_shared_experts = r.integer("num_shared_experts");
  m.shared_expert_intermediate_size = r.has("shared_expert_intermediate_size")
                                          ? r.integer("shared_expert_intermediate_size") : m.moe_intermediate_size;
  m.shared_expert_gate = r.boolean("shared_expert_gate");
  m.first_k_dense_replace = r.integer("first_k_dense_replace");
  m.router_bias = r.boolean("router_bias");
  m.mtp_layers = r.integer("num_nextn_predict_layers");
  m.attention = r.choice("attention") == "latent" ? AttentionKind::latent : AttentionKind::multi_head;
  m.q_lora_rank = r.integer("q_lora_rank");
  for (auto [key, field] : {std::pair{"kv_lora_rank", &m.kv_lora_rank}, std::pair{"qk_nope_head_dim", &m.qk_nope_head_dim},
                            std::pair{"qk_rope_head_dim", &m.qk_rope_head_dim}, std::pair{"v_head_dim", &m.v_head_dim}})
    *field = r.has(key) ? r.integer(key) : 0;
  m.qk_norm = r.boolean("qk_norm");
  // A latent-attention head scores over nope + rope dimensions (hidden_size / heads means nothing
  // there: 56 for DeepSeek-V3).
  if (m.latent() && !r.has("head_dim")) m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
  m.flash_attention = r.boolean("flash_attention");

  if (diag.size() != errors_before) return m;  // cross-field checks need valid fields
  if (m.num_heads % m.num_kv_heads != 0)
    r.error("num_key_value_heads",
            fmt::format("{} does not divide num_attention_heads={}", m.num_kv_heads, m.num_heads));
  if (!r.has("head_dim") && !m.latent() && m.hidden_size % m.num_heads != 0)
    r.error("num_attention_heads", fmt::format("{} does not divide hidden_size={} (set head_dim)",
                                               m.num_heads, m.hidden_size));
  if (m.num_experts > 0 && m.experts_per_token > m.num_experts)
    r.error("num_experts_per_tok", fmt::format("{} exceeds the {} routed experts", m.experts_per_token, m.num_experts));
  // MoE knobs mean nothing without routed experts; a MoE needs at least one MoE block.
  if (!m.is_moe()) {
    for (const char* k : {"moe_intermediate_size", "num_shared_experts", "shared_expert_intermediate_size",
                          "shared_expert_gate", "first_k_dense_replace", "router_bias"})
      if (r.has(k) && doc.at(k) != json(0) && doc.at(k) != json(false))
        r.error(k, fmt::format("set without routed experts (num_local_experts=0; got {})", doc.at(k).dump()));
  } else if (m.first_k_dense_replace >= m.num_layers) {
    r.error("first_k_dense_replace", fmt::format("{} leaves no MoE layer of num_hidden_layers={}",
                                                 m.first_k_dense_replace, m.num_layers));
  }
  if (m.shared_expert_gate && m.num_shared_experts == 0)
    r.error("shared_expert_gate", "gates shared experts, but num_shared_experts=0");
  if (m.latent()) {
    // Multi-head latent attention needs every shape of its projections (DeepSeek-V2 §2.1).
    for (const char* k : {"kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (!r.has(k)) r.error(k, "missing (attention is latent)");
  } else {
    for (const char* k : {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      if (r.has(k) && doc.at(k) != json(0))
        r.error(k, fmt::format("a latent-attention shape, but attention is multi_head (got {}; set "
                               "attention: latent)", doc.at(k).dump()));
  }
  if (m.position_embedding == PositionEmbedding::learned && m.max_position_embeddings == 0)
    r.error("max_position_embeddings", "must be > 0 for a learned position embedding (got 0)");
  if (hf) check_layer_types(raw, m, pointer, diag);
  return m;
}

}  // namespace strata
