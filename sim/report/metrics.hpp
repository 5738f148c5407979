#pragma once

/// The report's keys, said once. Each metric has its dotted key, its unit, its meaning, when it is
/// present and how its value is read from a run; the report writer (report.cpp) writes exactly
/// these, `strata describe metrics` lists them, and `solve --target`, `compare --check` rules and
/// `sweep --by` accept exactly these. A key named in one place cannot drift from the others.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

/// What a metric's number counts. Reports use SI base units (bytes, seconds).
enum class MetricUnit {
  bytes,
  seconds,
  fraction,      ///< 0..1
  count,
  tokens_per_s,
  samples_per_s,
  tflops_per_s,  ///< 1e12 FLOP/s
  gib,           ///< 1024^3 bytes, where a benchmark's own definition counts in GiB (MLPerf Storage)
  gib_per_s,     ///< 1024^3 bytes per second, likewise
  flops,
  iterations,
  index,         ///< a rank, node or stage number
  flag,          ///< true / false (1 / 0 in targets and rules)
  text,
  list,          ///< an array, left out of flattened reports (sweep rows, compare, solve)
};

/// When a metric is in a report.
enum class MetricPresence {
  always,
  simulated,   ///< the scenario was simulated (not a memory-only run)
  failures,    ///< `failures` set: the run-level simulation ran
  data,        ///< `data` set: training-data reads were simulated
  checkpoint,  ///< `checkpoint` set
};

/// What a metric's value is read from. `scenario` and `result` are null when only the model is
/// described (`model_description`).
struct ReportInputs {
  const Scenario* scenario = nullptr;
  const RunResult* result = nullptr;
  const ModelSpec* model = nullptr;
  const ParameterBreakdown* parameters = nullptr;
};

/// Values of one metric in one report: (placeholder value, value); for a plain key one pair with an
/// empty name; none when the key is absent from this report.
using MetricValues = std::vector<std::pair<std::string, nlohmann::json>>;

struct Metric {
  /// Dotted; a family has one `{name}` placeholder, e.g. `memory.tiers.{tier}.peak_bytes`.
  std::string key;
  MetricUnit unit = MetricUnit::count;
  std::string meaning;
  MetricPresence presence = MetricPresence::always;
  std::function<MetricValues(const ReportInputs&)> values;
  /// For a family: the names its placeholder takes (empty: names found at run time, e.g. links).
  std::vector<std::string> names;
  /// Part of the model description (needs only the model and its parameter breakdown).
  bool describes_model = false;

  bool is_family() const { return key.find('{') != std::string::npos; }
  /// Numbers and booleans can be targets, rules and rankings; text and lists cannot.
  bool comparable() const { return unit != MetricUnit::text && unit != MetricUnit::list; }
};

/// Every report key, in the report's order of sections.
const std::vector<Metric>& report_metrics();

/// Writes every metric present for `in` into `report` (nested objects along the dotted keys).
/// `model_only`: just the model-description metrics, which need no scenario or result.
void write_metrics(const ReportInputs& in, nlohmann::json& report, bool model_only = false);

/// The metric a flattened key (`memory.tiers.cxl.peak_bytes`) belongs to, or null.
const Metric* find_metric(std::string_view key);

/// Checks that `key`, given by `option` (`--target`, `--by`, a rule's `/rules/0/metric`), names a
/// comparable metric; else a message saying why, with the nearest key and `strata describe metrics`.
std::optional<std::string> metric_key_problem(const std::string& key);

/// A flattened report's value for `key` as a number (true = 1, false = 0); none when absent, null
/// or text.
std::optional<double> metric_number(const nlohmann::json& flat, const std::string& key);

/// "s", "bytes", "fraction (0-1)", ...
std::string unit_name(MetricUnit unit);
/// A value with its unit, for people: "50.18 GiB", "2.35 s", "1.20 %", "57.47K tokens/s".
std::string format_metric(MetricUnit unit, double value);
/// Same for a flattened key (its metric's unit; a plain number when the key is unknown).
std::string format_metric(const std::string& key, double value);

/// When a presence applies, in words ("when the scenario sets failures").
std::string presence_text(MetricPresence presence);

}  // namespace strata
