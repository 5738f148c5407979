// Partial recomputation (memory.recompute_layers: Megatron-Core's recompute_method block): full
// recomputation of the first N blocks of each model chunk, the others keeping every activation. Each
// block is then exactly a fully recomputed block or a block without recomputation, so a stage's
// activations and its recomputation time interpolate, block by block, between the two policies.

#include <catch2/catch.hpp>

#include <algorithm>

#include "sim/analysis/run.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/plan/advisor.hpp"
#include "support.hpp"

using namespace strata;

namespace {

/// Korthikanti et al.'s 175B on 64 A100 (TP8, PP8 of 3 interleaved chunks of 4 blocks), one iteration.
RunResult run_175b(const std::string& recompute, std::int64_t layers = 0) {
  std::vector<std::string> sets = {"memory.recompute=" + recompute, "training.iterations=1"};
  if (layers > 0) sets.push_back("memory.recompute_layers=" + std::to_string(layers));
  return run_scenario(test::load("korthikanti-175b-full", sets));
}

}  // namespace

TEST_CASE("Partial recomputation keeps the later blocks of each chunk and reruns the first ones",
          "[recompute][memory][simulation]") {
  const RunResult none = run_175b("none"), full = run_175b("full");
  const int chunk = full.partition.chunks.front().num_layers;
  REQUIRE(chunk == 4);
  REQUIRE(std::all_of(full.partition.chunks.begin(), full.partition.chunks.end(),
                      [&](const ModelChunk& c) { return c.num_layers == chunk; }));
  const auto activations = [](const RunResult& r) { return r.memory.stages.front().hbm.activations; };
  const auto recompute_s = [](const RunResult& r) { return r.simulation->analysis.breakdown.recompute; };
  const auto iteration = [](const RunResult& r) { return r.simulation->throughput.iteration_time; };
  double previous = iteration(none);
  for (int n = 1; n <= chunk; ++n) {
    const RunResult partial = run_175b("full", n);
    const double kept = static_cast<double>(chunk - n) / chunk;  // share of blocks keeping everything
    INFO(n << " of " << chunk << " blocks per chunk recomputed");
    // Stage 0 holds the most micro-batches in flight; its blocks' activations are the fully recomputed
    // ones' plus, for each block left out, what none keeps beyond full.
    CHECK(activations(partial) == Approx(activations(full) + kept * (activations(none) - activations(full))));
    // Each chunk reruns n of its blocks' forward (homogeneous blocks).
    CHECK(recompute_s(partial) == Approx(recompute_s(full) * n / chunk).epsilon(0.01));
    CHECK(iteration(partial) > previous);
    previous = iteration(partial);
    // Which blocks recompute: the first n of each chunk.
    const std::vector<Recompute> policy = block_recompute(test::load("korthikanti-175b-full",
                                                                     {"memory.recompute_layers=" + std::to_string(n)}),
                                                          partial.partition);
    for (const ModelChunk& c : partial.partition.chunks)
      for (int l = c.first_layer; l < c.first_layer + c.num_layers; ++l)
        CHECK((policy[static_cast<std::size_t>(l)] == Recompute::full) == (l < c.first_layer + n));
  }
  // Every block of every chunk: full recomputation itself.
  CHECK(previous == Approx(iteration(full)).epsilon(1e-9));
}

TEST_CASE("A run with partial recomputation says no published run checks it", "[recompute][confidence]") {
  const auto warned = [](const RunResult& r) {
    return std::any_of(r.confidence.warnings.begin(), r.confidence.warnings.end(),
                       [](const std::string& w) { return w.find("partial recomputation") != std::string::npos; });
  };
  CHECK(warned(run_175b("full", 1)));
  CHECK(warned(run_175b("full", 3)));
  // As many blocks as a chunk holds (4) or more is full recomputation, which the table checks.
  CHECK_FALSE(warned(run_175b("full", 4)));
  CHECK_FALSE(warned(run_175b("full", 6)));
  CHECK_FALSE(warned(run_175b("full")));
}

TEST_CASE("Partial recomputation needs full recomputation", "[recompute][input]") {
  CHECK_THROWS_AS(test::load("korthikanti-175b-selective", {"memory.recompute_layers=2"}), InputError);
  // 0 is every block, the default, under any policy (the advisor resets a base scenario's with it).
  CHECK(test::load("korthikanti-175b-selective", {"memory.recompute_layers=0"}).memory.recompute_layers == 0);
}

TEST_CASE("advise recomputes the fewest blocks that fit where only full recomputation does", "[recompute][advise]") {
  AdviseRequest request;
  request.scenario = test::source_path("scenarios/llama-3-8b-zero3-h100.json");
  const AdviseResult a = advise(request, test::catalog(), nullptr);
  const auto partial = std::find_if(a.ranked.begin(), a.ranked.end(), [](const AdvisedConfig& c) {
    return c.settings.value("memory.recompute_layers", 0) > 0;
  });
  REQUIRE(partial != a.ranked.end());
  INFO(partial->settings.dump());
  const std::int64_t n = partial->settings.at("memory.recompute_layers").get<std::int64_t>();
  std::vector<std::string> sets;
  for (const auto& [path, value] : partial->settings.items())
    if (path != "memory.recompute_layers") sets.push_back(path + "=" + value.dump());
  const auto with_layers = [&](std::int64_t layers) {
    std::vector<std::string> s = sets;
    s.push_back("memory.recompute_layers=" + std::to_string(layers));
    return run_scenario(test::load("llama-3-8b-zero3-h100", s));
  };
  // Fewest: one block fewer does not fit; the same layout recomputing every block is slower.
  CHECK(with_layers(n).memory.fits);
  if (n > 1) CHECK_FALSE(with_layers(n - 1).memory.fits);
  const RunResult every_block = run_scenario(test::load("llama-3-8b-zero3-h100", sets));
  CHECK(partial->report.at("throughput.iteration_time_s").get<double>() <
        every_block.simulation->throughput.iteration_time);
}

TEST_CASE("advise searches its own recomputation whatever the base scenario's", "[recompute][advise]") {
  // A base that recomputes 2 blocks per chunk with distributed checkpoints: neither may leak into
  // layouts that recompute nothing or run sequence parallelism, where both are refused.
  AdviseRequest request;
  request.scenario = test::source_path("scenarios/korthikanti-22b-full.json");
  request.overrides = {{"memory.recompute_layers", "2"}, {"memory.distribute_saved_activations", "true"}};
  const AdviseResult a = advise(request, test::catalog(), nullptr);
  request.overrides.clear();
  const AdviseResult plain = advise(request, test::catalog(), nullptr);
  REQUIRE_FALSE(a.ranked.empty());
  CHECK(a.invalid == plain.invalid);
  CHECK(a.generated == plain.generated);
}
