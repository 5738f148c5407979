// Real HuggingFace config.json files (tests/data/hf_configs, sources in its manifest and in
// docs/references.md "Model configurations") read through the scenario loader: each is counted within
// 0.5 % of its published parameter total (within half the last digit where the total is given to two
// digits, as Qwen3-4B's "4.0B"; and against the non-embedding figure where the card gives one), or
// refused naming the key Strata does not model.

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "sim/graph/compute_graph.hpp"
#include "support.hpp"

using namespace strata;

namespace {

nlohmann::json scenario_for(const std::string& config_path) {
  return {{"model", config_path}, {"hardware", "dgx-a100-80g"}, {"gpus", 8},
          {"training", {{"seq_len", 1024}, {"global_batch_size", 8}}}};  // within every n_positions
}

double count(const ModelSpec& m) { return total_parameters(build_compute_graph(m, GraphShape{.seq_len = 2048})); }

}  // namespace

TEST_CASE("Real HuggingFace configs are counted within 0.5 % of their published totals or refused",
          "[validation][params][hf]") {
  std::ifstream in(test::source_path("tests/data/hf_configs/manifest.json"));
  REQUIRE(in.good());
  const nlohmann::json manifest = nlohmann::json::parse(in);
  test::Comparison table("HuggingFace configs: published parameter totals vs Strata", "");
  test::Comparison rounded("Published totals too coarse for 0.5 % (4.0B): within half of their last digit", "");
  test::Comparison non_embedding("Published non-embedding totals (embedding and untied head left out)", "");
  test::Comparison disputed("Published figures that disagree with their own config (manifest: differs)", "");
  for (const auto& entry : manifest.at("models")) {
    const std::string name = entry.at("name");
    const std::string expected = entry.at("expected");
    const double published = entry.at("published_total");
    const std::string path = "tests/data/hf_configs/" + name + "/config.json";
    INFO(name);
    if (expected.starts_with("refused: ")) {
      const std::string key = expected.substr(9);
      std::string messages;
      bool named = false;
      try {
        test::load_inline(scenario_for(path));
      } catch (const InputError& e) {
        for (const auto& d : e.diagnostics()) {
          messages += d.to_string() + "\n";
          named = named || (d.file.ends_with(path) && d.pointer == "/" + key &&
                            d.message.find("not modelled by Strata yet") != std::string::npos);
        }
      }
      std::cout << fmt::format("{:<44} {:>16.6g} {:>16} refused\n{}", name, published, "-", messages);
      CHECK(named);
      continue;
    }
    Scenario sc = test::load_inline(scenario_for(path));
    CHECK(sc.model.format == "huggingface");
    if (expected.starts_with("differs: ")) {
      disputed.add(name, published, count(sc.model));
      continue;
    }
    if (entry.contains("published_non_embedding")) {
      // The model cards' second figure: what the blocks and the final norm hold.
      const ParameterBreakdown p = parameter_breakdown(build_compute_graph(sc.model, GraphShape{.seq_len = 2048}));
      const double published_blocks = entry.at("published_non_embedding");
      const double blocks = count(sc.model) - p.embedding - p.lm_head;
      non_embedding.add(name, published_blocks, blocks);
      // Given to two digits (3.6B) it holds within half the last one, else within 0.5 %.
      CHECK(std::abs(blocks - published_blocks) <=
            std::max(0.005 * published_blocks, entry.value("published_non_embedding_precision", 0.0) / 2.0));
    }
    if (expected == "within rounding") {
      // A figure published to two significant digits (Qwen3-4B's "4.0B") holds any count that rounds to it.
      const double precision = entry.at("published_precision");
      rounded.add(name, published, count(sc.model));
      CHECK(std::abs(count(sc.model) - published) <= precision / 2.0);
      continue;
    }
    REQUIRE(expected == "within 0.5%");
    table.add(name, published, count(sc.model));
  }
  table.print();
  rounded.print();
  non_embedding.print();
  CHECK(non_embedding.rows().size() >= 4);
  disputed.print();
  for (const auto& row : disputed.rows()) CHECK(test::Comparison::error(row.source, row.strata) > 0.005);
  for (const auto& row : table.rows()) {
    INFO(row.label);
    CHECK(test::Comparison::error(row.source, row.strata) < 0.005);
  }
  CHECK(table.rows().size() >= 16);
}

TEST_CASE("How a HuggingFace config was read: Gemma 2 GeGLU, head_dim, tied embeddings, four norms",
          "[config][hf]") {
  Scenario sc = test::load_inline(scenario_for("tests/data/hf_configs/gemma-2-9b-it/config.json"));
  const ModelSpec& m = sc.model;
  CHECK(m.mlp == MlpKind::gated);
  CHECK(m.hidden_act == "gelu_pytorch_tanh");
  CHECK(m.head_dim == 256);  // not 3584 / 16
  CHECK(m.num_kv_heads == 8);
  CHECK(m.tie_word_embeddings);
  CHECK(m.sandwich_norm);
  CHECK(m.sliding_window == 4096);
  CHECK(m.sliding_window_layers == WindowLayers::alternate);
  ParameterBreakdown p = parameter_breakdown(build_compute_graph(m, GraphShape{.seq_len = 2048}));
  CHECK(p.lm_head == 0.0);
  CHECK(p.embedding == 256000.0 * 3584.0);
  CHECK(p.norms == (42.0 * 4.0 + 1.0) * 3584.0);
  CHECK(p.mlp == 42.0 * 3.0 * 3584.0 * 14336.0);
  CHECK(p.attention == 42.0 * (2.0 * 3584.0 * 4096.0 + 2.0 * 3584.0 * 2048.0));
}

TEST_CASE("Qwen3: head_dim 128 over 32 heads of a 2560 model, per-head Q/K norms, tied embeddings", "[config][hf]") {
  Scenario sc = test::load_inline(scenario_for("tests/data/hf_configs/qwen3-4b/config.json"));
  const ModelSpec& m = sc.model;
  CHECK(m.head_dim == 128);  // not 2560 / 32 = 80
  CHECK(m.qk_norm);
  CHECK(m.tie_word_embeddings);
  CHECK_FALSE(m.attention_bias);
  ParameterBreakdown p = parameter_breakdown(build_compute_graph(m, GraphShape{.seq_len = 2048}));
  const double h = 2560, q = 32 * 128, kv = 8 * 128;
  CHECK(p.lm_head == 0.0);
  CHECK(p.embedding == 151936.0 * h);
  CHECK(p.mlp == 36.0 * 3.0 * h * 9728.0);
  CHECK(p.attention == 36.0 * (2.0 * h * q + 2.0 * h * kv));
  CHECK(p.norms == 36.0 * (2.0 * h + 2.0 * 128.0) + h);  // two block norms, q_norm and k_norm per layer
}

TEST_CASE("A Qwen3 config that leaves out head_dim or tie_word_embeddings is refused, not guessed", "[config][hf][errors]") {
  std::ifstream in(test::source_path("tests/data/hf_configs/qwen3-4b/config.json"));
  const nlohmann::json base = nlohmann::json::parse(in);
  for (const char* key : {"head_dim", "tie_word_embeddings"}) {
    nlohmann::json hf = base;
    hf.erase(key);
    Diagnostics diag;
    parse_model(hf, "/model", diag);
    REQUIRE(diag.size() == 1);
    CHECK(diag.items()[0].pointer == std::string("/model/") + key);
    CHECK(diag.items()[0].message.starts_with("missing (qwen3 configs state it"));
  }
}

TEST_CASE("layer_types, as newer transformers save it, must match the window the other keys give", "[config][hf]") {
  std::ifstream in(test::source_path("tests/data/hf_configs/qwen3-8b/config.json"));
  const nlohmann::json base = nlohmann::json::parse(in);
  auto read = [&](const nlohmann::json& layer_types, Diagnostics& diag) {
    nlohmann::json hf = base;
    hf["layer_types"] = layer_types;
    return parse_model(hf, "/model", diag);
  };
  const nlohmann::json full(std::vector<std::string>(36, "full_attention"));
  Diagnostics ok;
  ModelSpec all_full = read(full, ok);
  CHECK(ok.size() == 0);
  Diagnostics none;
  CHECK(count(all_full) == count(parse_model(base, "/model", none)));

  nlohmann::json one_sliding = full;
  one_sliding[30] = "sliding_attention";
  Diagnostics mixed;
  read(one_sliding, mixed);
  REQUIRE(mixed.size() == 1);
  CHECK(mixed.items()[0].pointer == "/model/layer_types/30");
  CHECK(mixed.items()[0].message.starts_with("not modelled by Strata yet (got \"sliding_attention\""));

  Diagnostics short_list;
  read(nlohmann::json::array({"full_attention"}), short_list);
  REQUIRE(short_list.size() == 1);
  CHECK(short_list.items()[0].pointer == "/model/layer_types");
  CHECK(short_list.items()[0].message ==
        "expected one entry per layer (36 of \"full_attention\" or \"sliding_attention\"), got 1 entries");

  nlohmann::json chunked = full;
  chunked[3] = "chunked_attention";  // Llama 4's, which Strata does not model
  Diagnostics other_kind;
  read(chunked, other_kind);
  REQUIRE(other_kind.size() == 1);
  CHECK(other_kind.items()[0].pointer == "/model/layer_types/3");
  CHECK(other_kind.items()[0].message.starts_with("not modelled by Strata yet (got \"chunked_attention\""));

  nlohmann::json numbered = full;
  numbered[0] = 1;
  Diagnostics not_a_string;
  read(numbered, not_a_string);
  REQUIRE(not_a_string.size() == 1);
  CHECK(not_a_string.items()[0].message == "expected \"full_attention\" or \"sliding_attention\", got 1");

  // Gemma 2's alternating window, written out, is what Strata already models.
  std::ifstream gin(test::source_path("tests/data/hf_configs/gemma-2-9b-it/config.json"));
  nlohmann::json gemma = nlohmann::json::parse(gin);
  nlohmann::json alternating = nlohmann::json::array();
  for (int i = 0; i < 42; ++i) alternating.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  gemma["layer_types"] = alternating;
  Diagnostics g;
  parse_model(gemma, "/model", g);
  CHECK(g.size() == 0);
}

TEST_CASE("Qwen2 has Q/K/V biases but no output-projection bias", "[config][hf]") {
  Scenario sc = test::load_inline(scenario_for("tests/data/hf_configs/qwen2.5-7b/config.json"));
  CHECK(sc.model.attention_bias);
  CHECK_FALSE(sc.model.attention_output_bias);
  ParameterBreakdown p = parameter_breakdown(build_compute_graph(sc.model, GraphShape{.seq_len = 2048}));
  const double h = 3584, kv = 4 * 128;
  CHECK(p.attention == 28.0 * (h * (h + 2 * kv) + (h + 2 * kv) + h * h));
}

TEST_CASE("A parallel residual keeps one block input for both norms", "[config][hf][memory]") {
  Scenario sc = test::load_inline(scenario_for("tests/data/hf_configs/pythia-1b/config.json"));
  REQUIRE(sc.model.parallel_residual);
  ModelSpec sequential = sc.model;
  sequential.parallel_residual = false;
  auto saved = [](const ModelSpec& m) {
    ComputeGraph g = build_compute_graph(m, GraphShape{.seq_len = 2048});
    double bytes = 0.0;
    for (auto v : boost::make_iterator_range(boost::vertices(g)))
      for (const auto& t : g[v].saved) bytes += t.bytes;
    return std::pair{bytes, model_flops(g)};
  };
  auto [par_bytes, par_flops] = saved(sc.model);
  auto [seq_bytes, seq_flops] = saved(sequential);
  CHECK(par_flops == seq_flops);  // same GEMMs
  CHECK(seq_bytes - par_bytes == Approx(16.0 * 2.0 * 2048.0 * 2048.0));  // one 2-byte s·h tensor per layer
}

TEST_CASE("Refusals name every key Strata does not model", "[config][hf][errors]") {
  nlohmann::json hf = {{"model_type", "llama"}, {"hidden_size", 64}, {"num_hidden_layers", 2},
                       {"num_attention_heads", 4}, {"vocab_size", 100}, {"qk_layernorm", true},
                       {"some_future_key", 1}};
  Diagnostics diag;
  parse_model(hf, "/model", diag);
  REQUIRE(diag.size() == 2);
  CHECK(diag.items()[0].pointer == "/model/qk_layernorm");
  CHECK(diag.items()[0].message.starts_with("not modelled by Strata yet (the Q/K LayerNorms of StableLM"));
  CHECK(diag.items()[1].pointer == "/model/some_future_key");
  CHECK(diag.items()[1].message.starts_with("not modelled by Strata yet (unknown HuggingFace key"));

  Diagnostics unknown_type;
  parse_model(nlohmann::json{{"model_type", "falcon"}, {"hidden_size", 64}}, "/model", unknown_type);
  REQUIRE(unknown_type.size() == 1);
  CHECK(unknown_type.items()[0].pointer == "/model/model_type");
  CHECK(unknown_type.items()[0].message.starts_with("not modelled by Strata yet (got \"falcon\", expected one of: llama"));
}

TEST_CASE("Setting a key a HuggingFace config does not use is an error naming the --set", "[config][hf][errors]") {
  const std::string path = "tests/data/hf_configs/llama-3.1-8b/config.json";
  auto error_of = [&](const std::string& set) {
    try {
      test::load_inline(scenario_for(path), {set});
    } catch (const InputError& e) {
      REQUIRE(e.diagnostics().size() == 1);
      return e.diagnostics()[0];
    }
    FAIL("no error for --set " << set);
    return Diagnostic{};
  };
  Diagnostic mlp = error_of("model.mlp=gated");
  CHECK(mlp.file == "--set model.mlp=gated");
  CHECK(mlp.pointer == "/model/mlp");
  CHECK(mlp.message.starts_with("a Strata model-file key, which a HuggingFace config.json does not use"));
  Diagnostic rope = error_of("model.rope_theta=10000");
  CHECK(rope.file == "--set model.rope_theta=10000");
  CHECK(rope.message.starts_with("ignored by Strata in a HuggingFace config.json"));
  // A modelled key applies.
  Scenario sc = test::load_inline(scenario_for(path), {"model.num_hidden_layers=16"});
  CHECK(sc.model.num_layers == 16);
}
