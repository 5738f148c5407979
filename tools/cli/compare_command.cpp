#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "sim/core/json_file.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/compare.hpp"
#include "sim/plan/sweep_results.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/metrics.hpp"
#include "tools/cli/commands.hpp"

namespace strata::cli {

namespace {

/// A value with its metric's unit ("12.50 GiB", "3.20 s", "41.2 %").
std::string cell(const std::string& metric, const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_number()) return format_metric(metric, v.get<double>());
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::string scenario_name(const nlohmann::json& report) {
  const auto* name = report.contains("scenario") && report.at("scenario").is_object() &&
                             report.at("scenario").contains("name") && report.at("scenario").at("name").is_string()
                         ? &report.at("scenario").at("name")
                         : nullptr;
  return name ? name->get<std::string>() : "";
}

/// A report written by `strata run --json`, or an input error naming the file.
nlohmann::json read_report(const std::string& file) {
  nlohmann::json report = read_json_file(file, file);
  if (!report.is_object() || !report.contains("schema") || !report.at("schema").is_string() ||
      !report.at("schema").get<std::string>().starts_with("strata.report/"))
    throw InputError({Diagnostic{file, "/schema", "not a Strata report (expected a JSON object with \"schema\": "
                                                  "\"strata.report/v1\", as strata run --json writes)"}});
  return report;
}

}  // namespace

int compare_command(const CompareOptions& o) {
  std::optional<OutputPath> html_out;
  if (!o.html_out.empty()) html_out.emplace(o.html_out, "--html");
  const nlohmann::json a = read_report(o.a), b = read_report(o.b);
  std::vector<OrderingRule> rules;
  // A rules file, or an orderings file (results/orderings.json) whose entry for these two scenarios applies.
  if (!o.rules.empty()) rules = rules_for_pair(read_json_file(o.rules, o.rules), o.rules, scenario_name(a), scenario_name(b));

  const auto changes = diff_reports(a, b);
  // The page on standard output must stay a page: the table and the rules go to stderr then, as
  // `run` does with its summary.
  std::FILE* text = html_out && html_out->mode() == OutputPath::Mode::standard_output ? stderr : stdout;
  std::size_t width = 6;
  for (const auto& c : changes) width = std::max(width, c.metric.size());
  std::fprintf(text, "%-*s %18s %18s %9s\n", static_cast<int>(width), "metric", "A", "B", "change");
  for (const auto& c : changes) {
    const std::string change = c.relative ? unsigned_zero(fmt::format("{:+.2f}%", 100 * *c.relative)) : "";
    std::fprintf(text, "%-*s %18s %18s %9s\n", static_cast<int>(width), c.metric.c_str(), cell(c.metric, c.a).c_str(),
                cell(c.metric, c.b).c_str(), change.c_str());
  }
  if (html_out) {
    std::vector<std::string> differing;
    for (const auto& c : changes) differing.push_back(c.metric);
    write_output(*html_out, html_compare_report({o.a, a, flatten_report(a)}, {o.b, b, flatten_report(b)}, differing));
  }
  std::fprintf(text, "%zu metric(s) differ between %s (A) and %s (B)\n", changes.size(), o.a.c_str(), o.b.c_str());

  int failed = 0;
  for (const OrderingRule& rule : rules) {
    const RuleOutcome r = check_rule(rule, a, b);
    failed += r.holds ? 0 : 1;
    std::fprintf(text, "%s  A.%s %s B.%s: %s%s\n", r.holds ? "PASS" : "FAIL", rule.metric.c_str(), rule.op.c_str(),
                rule.metric.c_str(), r.detail.c_str(), rule.why.empty() ? "" : ("  (" + rule.why + ")").c_str());
  }
  if (!rules.empty()) std::fprintf(text, "%zu of %zu rule(s) hold\n", rules.size() - failed, rules.size());
  return failed > 0 ? 3 : 0;
}

}  // namespace strata::cli
