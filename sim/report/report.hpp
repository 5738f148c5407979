#pragma once

/// The run's results as one canonical JSON report (sorted keys, fixed precision, schema-versioned)
/// and as a human summary table.

#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/scenario_spec.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"

namespace strata {

inline constexpr const char* kReportSchema = "strata.report/v1";

/// Everything a run produced, before formatting.
struct RunResult {
  double parameters = 0.0;
  double flops_per_iteration = 0.0;  ///< model FLOPs, whole cluster, no recompute
  PipelinePartition partition;
  MemoryEstimate memory;
};

nlohmann::json make_report(const Scenario& sc, const RunResult& result);

/// Serialises with sorted keys and doubles rounded to 10 significant digits, so two runs of one
/// scenario give byte-identical files.
std::string canonical_dump(const nlohmann::json& report);

/// A summary readable at 100 columns, with units.
std::string summary_table(const Scenario& sc, const RunResult& result);

}  // namespace strata
