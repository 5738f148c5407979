#pragma once

/// Formatting only: the run's results (analysis/results.hpp) as one canonical JSON report (sorted keys, fixed precision, schema-versioned)
/// and as a human summary table.

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

inline constexpr const char* kReportSchema = "strata.report/v1";

nlohmann::json make_report(const Scenario& sc, const RunResult& result);

/// How a model document was read (format, MLP kind, activation, head and KV-head widths, experts,
/// tied embeddings, window) and its parameters by kind: the report's `model` section without the
/// run-dependent keys, also printed by `strata describe models NAME`.
nlohmann::json model_description(const ModelSpec& model, const ParameterBreakdown& params);

/// Serialises with sorted keys and doubles rounded to 10 significant digits, so two runs of one
/// scenario give byte-identical files.
std::string canonical_dump(const nlohmann::json& report);
/// The rounding canonical_dump applies: doubles to 10 significant digits (whole ones as integers),
/// non-finite ones to null.
void round_doubles(nlohmann::json& j);

/// A summary readable at 100 columns, with units.
std::string summary_table(const Scenario& sc, const RunResult& result);

}  // namespace strata
