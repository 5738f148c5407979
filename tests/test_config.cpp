// Units, HuggingFace config import, and the composed-document source map.

#include <catch2/catch.hpp>

#include "sim/core/units.hpp"
#include "sim/graph/compute_graph.hpp"
#include "support.hpp"

using namespace strata;

TEST_CASE("Quantities parse with SI and binary prefixes", "[units]") {
  auto q = [](const char* text, Dimension d) { return parse_quantity(text, d, nullptr).value(); };
  CHECK(q("80 GiB", Dimension::bytes) == 80.0 * 1024 * 1024 * 1024);
  CHECK(q("3.84 TB", Dimension::bytes) == Approx(3.84e12));
  CHECK(q("2039 GB/s", Dimension::bytes_per_second) == Approx(2.039e12));
  CHECK(q("200 Gb/s", Dimension::bytes_per_second) == Approx(25e9));  // bits
  CHECK(q("312 TFLOPS", Dimension::flops_per_second) == Approx(312e12));
  CHECK(q("10 min", Dimension::seconds) == 600.0);
  CHECK(q("50000 h", Dimension::seconds) == 1.8e8);
  CHECK(q("250 ns", Dimension::seconds) == Approx(250e-9));
  CHECK(q("0", Dimension::seconds) == 0.0);  // zero needs no unit; other bare numbers are refused
  CHECK(q("1e3 MiB", Dimension::bytes) == 1000.0 * 1024 * 1024);
  std::string why;
  CHECK_FALSE(parse_quantity("80 GB", Dimension::seconds, &why));
  CHECK(why == "unit 'GB' is not a duration like \"10 min\"");
  CHECK_FALSE(parse_quantity("fast", Dimension::seconds, &why));
  CHECK(why == "no number");
}

TEST_CASE("A HuggingFace config.json is accepted as a model as-is", "[config][hf]") {
  // meta-llama/Meta-Llama-3-8B config.json, verbatim keys (tokens and rope settings are ignored).
  nlohmann::json llama = {{"architectures", {"LlamaForCausalLM"}}, {"attention_bias", false},
                          {"attention_dropout", 0.0},  {"bos_token_id", 128000},
                          {"eos_token_id", 128001},    {"hidden_act", "silu"},
                          {"hidden_size", 4096},       {"initializer_range", 0.02},
                          {"intermediate_size", 14336}, {"max_position_embeddings", 8192},
                          {"model_type", "llama"},     {"num_attention_heads", 32},
                          {"num_hidden_layers", 32},   {"num_key_value_heads", 8},
                          {"pretraining_tp", 1},       {"rms_norm_eps", 1e-05},
                          {"rope_scaling", nullptr},   {"rope_theta", 500000.0},
                          {"tie_word_embeddings", false}, {"torch_dtype", "bfloat16"},
                          {"transformers_version", "4.40.0.dev0"}, {"use_cache", true},
                          {"vocab_size", 128256}};
  Diagnostics diag;
  ModelSpec m = parse_model(llama, "/model", diag);
  REQUIRE(diag.empty());
  CHECK(m.mlp == MlpKind::gated);
  CHECK(m.norm == NormKind::rmsnorm);
  CHECK(m.num_kv_heads == 8);
  double params = total_parameters(build_compute_graph(m, GraphShape{.seq_len = 8192}));
  CHECK(params == Approx(8.03e9).epsilon(0.001));

  // openai-community/gpt2 config.json keys (n_embd / n_layer / n_head, tied embeddings).
  nlohmann::json gpt2 = {{"activation_function", "gelu_new"}, {"architectures", {"GPT2LMHeadModel"}},
                         {"attn_pdrop", 0.1}, {"embd_pdrop", 0.1}, {"model_type", "gpt2"},
                         {"n_ctx", 1024}, {"n_embd", 768}, {"n_head", 12}, {"n_inner", nullptr},
                         {"n_layer", 12}, {"n_positions", 1024}, {"resid_pdrop", 0.1},
                         {"vocab_size", 50257}};
  ModelSpec g = parse_model(gpt2, "/model", diag);
  REQUIRE(diag.empty());
  // GPT-2 small: 124.4M parameters (124,439,808 counted from the HF checkpoint).
  CHECK(total_parameters(build_compute_graph(g, GraphShape{.seq_len = 1024})) == 124439808.0);
}

TEST_CASE("Errors inside named documents point at their file", "[config]") {
  std::filesystem::current_path(STRATA_SOURCE_DIR);
  nlohmann::json doc = {{"model", "gpt3-175b"}, {"hardware", "dgx-a100-80g"}, {"gpus", 8},
                        {"training", {{"seq_len", 2048}, {"global_batch_size", 8}}}};
  ComposedScenario c = compose_scenario(doc, "x.json", STRATA_SOURCE_DIR, {}, test::catalog());
  CHECK(c.sources.locate("/model/hidden_size") == std::pair<std::string, std::string>{"models/gpt3-175b.json", "/hidden_size"});
  CHECK(c.sources.locate("/hardware/gpu/hbm") ==
        std::pair<std::string, std::string>{"hardware_profiles/dgx-a100-80g.json", "/gpu/hbm"});
  CHECK(c.sources.locate("/training/seq_len") == std::pair<std::string, std::string>{"x.json", "/training/seq_len"});
}
