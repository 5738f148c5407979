// MosaicML llm-foundry's MPT benchmark sweep (tests/data/validation/llm_foundry_mpt.json): every
// BF16 row of its four tables (H100 80GB at 8-64 and at 128-512 GPUs, A100 80GB, A100 40GB; 125M
// to 70B parameters, sequences of 512 to 65,536 tokens, FSDP FULL_SHARD or SHARD_GRAD_OP with and
// without activation checkpointing) run from the configuration the row states, Strata's tokens/s per GPU beside the
// measured, and the table regenerated into docs/validation.md between its llm-foundry markers. A row
// without a known gap (its own, or its table's) fails past the file's tolerance; the pytorch-fsdp
// bands the confidence lines quote (sim/analysis/confidence.hpp) must be this sweep's.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include "doc_region.hpp"
#include "sim/analysis/confidence.hpp"
#include "support.hpp"

namespace {

struct Run {
  std::string table, family, label, gap;
  double measured = 0.0, strata = 0.0;
  /// Error on the time an iteration takes: negative = Strata optimistic.
  double error() const { return measured / strata - 1.0; }
};

/// The scenario a row states: the table's node, the model size's shape with the sweep's shared
/// architecture, FSDP over every GPU (FULL_SHARD: ZeRO-3; SHARD_GRAD_OP, which keeps the parameters
/// whole between forward and backward: ZeRO-2), the row's micro-batch, global batch and checkpointing.
nlohmann::json row_scenario(const nlohmann::json& data, const nlohmann::json& row) {
  const std::string size = row.at("model");
  nlohmann::json model = data.at("model");
  model.update(data.at("models").at(size));
  const std::int64_t hidden = model.at("hidden_size");
  model["name"] = "mpt-" + size;
  model["intermediate_size"] = 4 * hidden;  // expansion_ratio 4
  model["max_position_embeddings"] = row.at("seq_len");  // the learned table has max_seq_len rows
  nlohmann::json training = data.at("training");
  training["seq_len"] = row.at("seq_len");
  training["micro_batch_size"] = row.at("micro_batch");
  training["global_batch_size"] = row.at("global_batch");
  return {{"name", fmt::format("llm-foundry-{}-{}-{}-{}", row.at("table").get<std::string>(), size,
                               row.at("seq_len").get<int>(), row.at("gpus").get<int>())},
          {"model", model},
          {"hardware", data.at("tables").at(row.at("table").get<std::string>()).at("hardware")},
          {"gpus", row.at("gpus")},
          {"training", training},
          {"parallelism", {{"tp", 1}, {"pp", 1}, {"zero_stage", row.value("sharding", "FULL_SHARD") == "SHARD_GRAD_OP" ? 2 : 3}}},
          {"memory", {{"recompute", row.at("recompute")}}}};
}

}  // namespace

TEST_CASE("Validation: MosaicML llm-foundry's MPT benchmark sweep", "[validation][simulation][slow]") {
  const auto data =
      nlohmann::json::parse(std::ifstream(strata::test::source_path("tests/data/validation/llm_foundry_mpt.json")));
  const double tolerance = data.at("tolerance").get<double>();
  std::vector<Run> runs;
  for (const auto& row : data.at("rows")) {
    const strata::Scenario sc = strata::test::load_inline(row_scenario(data, row));
    const strata::RunResult r = strata::run_scenario(sc);
    const auto& table = data.at("tables").at(row.at("table").get<std::string>());
    Run run{row.at("table"), strata::gpu_family(sc.hardware.gpu.model),
            fmt::format("{} | {} | {} | {} x {} | {}{}", row.at("model").get<std::string>(), row.at("seq_len").get<int>(),
                        row.at("gpus").get<int>(), row.at("micro_batch").get<int>(),
                        row.at("global_batch").get<int>() / row.at("gpus").get<int>() / row.at("micro_batch").get<int>(),
                        row.at("recompute").get<std::string>(), row.contains("sharding") ? ", SHARD_GRAD_OP" : ""),
            row.value("known_gap", table.value("known_gap", "")), row.at("measured").get<double>(),
            r.simulation->throughput.tokens_per_s / static_cast<double>(sc.gpus)};
    runs.push_back(run);
  }

  std::string doc = fmt::format(
      "## MosaicML llm-foundry MPT sweep (tests/test_validation_foundry.cpp)\n\n{}. Tokens/s per GPU; the error is on "
      "the time an iteration takes (negative = Strata optimistic). Tolerance {:.0f} % per row; a row or table with a "
      "known gap is shown with the reason and not held to it. Every run is FSDP over all its GPUs (FULL_SHARD unless "
      "the row says SHARD_GRAD_OP) with FlashAttention in Triton (tests/data/validation/llm_foundry_mpt.json has the "
      "rest).\n\n"
      "| table | runs | mean error | mean abs. error | range |\n|---|---|---|---|---|\n",
      data.at("source").get<std::string>(), 100.0 * tolerance);
  std::string body;
  for (const auto& [key, table] : data.at("tables").items()) {
    int count = 0;
    double sum = 0.0, sum_abs = 0.0, low = std::numeric_limits<double>::infinity(), high = -low;
    body += fmt::format("\n### {}{}{}\n\n| model | sequence | GPUs | micro-batch x accumulation | recompute | measured | "
                        "Strata | error |\n|---|---|---|---|---|---|---|---|\n",
                        table.at("title").get<std::string>(),
                        table.contains("source") ? " (" + table.at("source").get<std::string>() + ")" : "",
                        table.contains("known_gap") ? " (known gap: " + table.at("known_gap").get<std::string>() + ")"
                                                    : "");
    for (const Run& run : runs) {
      if (run.table != key) continue;
      const double e = run.error();
      ++count;
      sum += e;
      sum_abs += std::fabs(e);
      low = std::min(low, e);
      high = std::max(high, e);
      std::cout << fmt::format("{:<16} {:<40} measured {:>8.0f} strata {:>8.0f} error {:+6.1f} %\n", key, run.label,
                               run.measured, run.strata, 100.0 * e);
      const bool own_gap = !run.gap.empty() && !table.contains("known_gap");
      body += fmt::format("| {} | {:.0f} | {:.0f} | {:+.1f} %{} |\n", run.label, run.measured, run.strata, 100.0 * e,
                          own_gap ? " (known gap: " + run.gap + ")" : "");
      if (run.gap.empty()) {
        INFO(key << " " << run.label);
        CHECK(std::fabs(e) <= tolerance);
      }
    }
    doc += fmt::format("| {} | {} | {:+.1f} % | {:.1f} % | {:+.1f} % to {:+.1f} % |\n", table.at("title").get<std::string>(),
                       count, 100.0 * sum / count, 100.0 * sum_abs / count, 100.0 * low, 100.0 * high);
  }
  doc += body;

  // The confidence lines quote the sweep per GPU (sim/analysis/confidence.hpp).
  for (const strata::GpuBand& g : strata::kFsdpBands) {
    int count = 0;
    double low = std::numeric_limits<double>::infinity(), high = -low, sum_abs = 0.0;
    for (const Run& run : runs) {
      if (run.family != g.family) continue;
      ++count;
      low = std::min(low, 100.0 * run.error());
      high = std::max(high, 100.0 * run.error());
      sum_abs += 100.0 * std::fabs(run.error());
    }
    INFO(fmt::format("{}: {} runs, {:+.1f} % to {:+.1f} %, mean |error| {:.1f} % in the sweep; confidence.hpp says {} "
                     "runs, {:+.1f} % to {:+.1f} %, {:.1f} %",
                     g.family, count, low, high, sum_abs / std::max(count, 1), g.band.runs, g.band.low_percent,
                     g.band.high_percent, g.mean_abs_percent));
    CHECK(count == g.band.runs);
    CHECK(std::fabs(low - g.band.low_percent) <= 0.5);
    CHECK(std::fabs(high - g.band.high_percent) <= 0.5);
    CHECK(std::fabs(sum_abs / std::max(count, 1) - g.mean_abs_percent) <= 0.5);
  }

  const bool changed = strata::test::rewrite_region(strata::test::source_path("docs/validation.md"),
                                                    "<!-- foundry:begin -->", "<!-- foundry:end -->", doc, "# Validation\n");
  INFO("docs/validation.md was out of date and has been regenerated: commit it");
  CHECK_FALSE(changed);
}
