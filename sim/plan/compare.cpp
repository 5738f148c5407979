#include "sim/plan/compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "sim/core/diagnostics.hpp"
#include "sim/core/params.hpp"
#include "sim/plan/sweep_results.hpp"
#include "sim/report/metrics.hpp"

namespace strata {

namespace {

using nlohmann::json;

const std::vector<std::string> kOps = {">", ">=", "<", "<=", "==", "!="};

const ParamTable kRule = {
    {.key = "metric", .kind = ParamKind::string, .doc = "a flattened report key, e.g. checkpoint.stall_s"},
    {.key = "op", .kind = ParamKind::choice, .doc = "A op B", .choices = kOps},
    {.key = "tolerance", .kind = ParamKind::number, .default_value = 1e-9, .doc = "relative, for == and !=",
     .min = 0.0, .max = 1.0},
    {.key = "why", .kind = ParamKind::string, .default_value = "", .doc = "the reason, shown with the result"},
};

const ParamTable kRules = {
    {.key = "description", .kind = ParamKind::string, .default_value = "", .doc = "one line"},
    {.key = "rules", .kind = ParamKind::object, .doc = "list of {metric, op, tolerance, why}"},
    {.key = "a", .kind = ParamKind::string, .doc = "what A is (a shipped scenario, in results/orderings.json)",
     .optional = true},
    {.key = "b", .kind = ParamKind::string, .doc = "what B is", .optional = true},
};

const ParamTable kOrderings = {
    {.key = "description", .kind = ParamKind::string, .default_value = "", .doc = "one line"},
    {.key = "orderings", .kind = ParamKind::object,
     .doc = "list of {a, b, rules}: the shipped scenarios A and B and the rules that hold between their reports"},
};

bool close(double a, double b, double tolerance) {
  return std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace

std::vector<MetricChange> diff_reports(const json& a, const json& b, double tolerance) {
  const json fa = flatten_report(a), fb = flatten_report(b);
  std::set<std::string> keys;
  for (const auto& [k, v] : fa.items()) keys.insert(k);
  for (const auto& [k, v] : fb.items()) keys.insert(k);
  std::vector<MetricChange> out;
  for (const std::string& k : keys) {
    const json va = fa.contains(k) ? fa.at(k) : json(), vb = fb.contains(k) ? fb.at(k) : json();
    MetricChange c{k, va, vb, std::nullopt};
    if (va.is_number() && vb.is_number()) {
      const double x = va.get<double>(), y = vb.get<double>();
      if (close(x, y, tolerance)) continue;
      if (x != 0.0) c.relative = (y - x) / std::fabs(x);
    } else if (va == vb) {
      continue;
    }
    out.push_back(std::move(c));
  }
  return out;
}

namespace {

/// The rules of one {rules: [...]} object at `at` (a JSON pointer; "" for the document).
void read_rules(const json& doc, const std::string& at, const ParamTable& table, Diagnostics& diag,
                std::vector<OrderingRule>& rules) {
  ObjectReader top(doc, at, table, diag);
  top.string("description");
  if (!top.ok() || !doc.contains("rules") || !doc.at("rules").is_array() || doc.at("rules").empty()) {
    diag.add(at + "/rules", "missing or empty (expected a list of {\"metric\", \"op\"} rules)");
    return;
  }
  if (doc.contains("a")) top.string("a");
  if (doc.contains("b")) top.string("b");
  const json& list = doc.at("rules");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string pointer = at + "/rules/" + std::to_string(i);
    ObjectReader r(list[i], pointer, kRule, diag);
    OrderingRule rule;
    rule.metric = r.string("metric");
    rule.op = r.choice("op");
    rule.tolerance = r.number("tolerance");
    rule.why = r.string("why");
    // A rule on a key no report has, or on text, could never hold: refuse it here.
    if (r.ok() && list[i].contains("metric") && list[i].at("metric").is_string())
      if (auto problem = metric_key_problem(rule.metric)) r.error("metric", *problem);
    rules.push_back(rule);
  }
}

}  // namespace

std::vector<OrderingRule> parse_rules(const json& doc, const std::string& file) {
  SourceMap sources(file);
  Diagnostics diag(&sources);
  std::vector<OrderingRule> rules;
  read_rules(doc, "", kRules, diag, rules);
  diag.throw_if_any();
  return rules;
}

std::vector<OrderingRule> rules_for_pair(const json& doc, const std::string& file, const std::string& a,
                                         const std::string& b) {
  if (!doc.is_object() || !doc.contains("orderings")) return parse_rules(doc, file);
  SourceMap sources(file);
  Diagnostics diag(&sources);
  ObjectReader top(doc, "", kOrderings, diag);
  top.string("description");
  const json& list = doc.at("orderings");
  if (!list.is_array() || list.empty()) {
    diag.add("/orderings", "missing or empty (expected a list of {\"a\", \"b\", \"rules\"})");
    diag.throw_if_any();
  }
  std::vector<OrderingRule> rules;
  std::string pairs, reversed;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "/orderings/" + std::to_string(i);
    const json& entry = list[i];
    const bool named = entry.is_object() && entry.contains("a") && entry.at("a").is_string() && entry.contains("b") &&
                       entry.at("b").is_string();
    if (!named) {
      diag.add(at, "expected {\"a\": SCENARIO, \"b\": SCENARIO, \"rules\": [...]}");
      continue;
    }
    const std::string ea = entry.at("a"), eb = entry.at("b");
    // Every entry is checked, so a broken rule elsewhere in the file is found on any pair.
    std::vector<OrderingRule> these;
    read_rules(entry, at, kRules, diag, these);
    if (ea == a && eb == b) rules.insert(rules.end(), these.begin(), these.end());
    if (ea == b && eb == a) reversed = fmt::format(" (it orders them the other way round: swap the two reports)");
    pairs += fmt::format("{}{} vs {}", pairs.empty() ? "" : "; ", ea, eb);
  }
  diag.throw_if_any();
  if (rules.empty())
    throw InputError({Diagnostic{file, "/orderings",
                                 fmt::format("no ordering has A = \"{}\" and B = \"{}\", the reports' scenario names{} "
                                             "(expected one of: {})", a, b, reversed, pairs)}});
  return rules;
}

RuleOutcome check_rule(const OrderingRule& rule, const json& a, const json& b) {
  const json fa = flatten_report(a), fb = flatten_report(b);
  RuleOutcome out{rule, false, ""};
  // A flag counts as 1 (true) or 0 (false), so `fits >= ` and the like work.
  auto value = [&](const json& f) { return metric_number(f, rule.metric); };
  const auto x = value(fa), y = value(fb);
  if (!x || !y) {
    out.detail = fmt::format("{} is not a number in {}", rule.metric, !x ? "A" : "B");
    return out;
  }
  const std::string& op = rule.op;
  out.holds = op == ">"    ? *x > *y
              : op == ">=" ? *x >= *y
              : op == "<"  ? *x < *y
              : op == "<=" ? *x <= *y
              : op == "==" ? close(*x, *y, rule.tolerance)
                           : !close(*x, *y, rule.tolerance);
  out.detail = fmt::format("{} {} {}", format_metric(rule.metric, *x), op, format_metric(rule.metric, *y));
  return out;
}

}  // namespace strata
