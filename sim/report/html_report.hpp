#pragma once

/// Formatting only: a run, a sweep or a comparison as one self-contained HTML page (`--html FILE`).
/// The page is the template sim/report/html_report.html with Apache ECharts and the data inlined
/// (html_assets.hpp), so it opens offline and fetches nothing. Every number it shows is the JSON
/// report's (same rounding); the timelines are decimated to a bounded number of points with each
/// interval's highest and lowest values kept, so peaks survive.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

/// The data the run page plots: the report itself, memory timelines (per simulated GPU, per host
/// tier of the node that peaked), one steady-state iteration's tasks per GPU and stream, the
/// checkpoint's hops, the goodput-against-interval curve, and the warnings. Timelines, the Gantt and
/// the hops need the kept schedule (SimulationOptions::keep_schedule); without it they are absent.
nlohmann::json html_run_data(const Scenario& sc, const RunResult& result, const nlohmann::json& scenario_document);

/// `scenario_document`: the resolved scenario as run (shown on the page).
std::string html_run_report(const Scenario& sc, const RunResult& result, const nlohmann::json& scenario_document);

/// `rows`: the sweep's result rows (sweep_results.hpp: point, status, params, report flattened).
std::string html_sweep_report(const std::string& name, const nlohmann::json& sweep_document,
                              const std::vector<nlohmann::json>& rows);

/// One side of a comparison: its file name, the report and its flattened scalar keys.
struct ComparedReport {
  std::string name;
  nlohmann::json report;
  nlohmann::json flat;
};

/// `differing`: the flattened keys `strata compare` lists as changed (highlighted on the page).
std::string html_compare_report(const ComparedReport& a, const ComparedReport& b,
                                const std::vector<std::string>& differing);

}  // namespace strata
