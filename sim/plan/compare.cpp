#include "sim/plan/compare.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "sim/core/diagnostics.hpp"
#include "sim/core/params.hpp"
#include "sim/plan/sweep_results.hpp"

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

std::vector<OrderingRule> parse_rules(const json& doc, const std::string& file) {
  SourceMap sources(file);
  Diagnostics diag(&sources);
  ObjectReader top(doc, "", kRules, diag);
  top.string("description");
  std::vector<OrderingRule> rules;
  if (!top.ok() || !doc.contains("rules") || !doc.at("rules").is_array() || doc.at("rules").empty()) {
    diag.add("/rules", "missing or empty (expected a list of {\"metric\", \"op\"} rules)");
    diag.throw_if_any();
  }
  const json& list = doc.at("rules");
  for (std::size_t i = 0; i < list.size(); ++i) {
    ObjectReader r(list[i], "/rules/" + std::to_string(i), kRule, diag);
    OrderingRule rule;
    rule.metric = r.string("metric");
    rule.op = r.choice("op");
    rule.tolerance = r.number("tolerance");
    rule.why = r.string("why");
    rules.push_back(rule);
  }
  diag.throw_if_any();
  return rules;
}

RuleOutcome check_rule(const OrderingRule& rule, const json& a, const json& b) {
  const json fa = flatten_report(a), fb = flatten_report(b);
  RuleOutcome out{rule, false, ""};
  auto value = [&](const json& f) -> std::optional<double> {
    if (!f.contains(rule.metric) || !f.at(rule.metric).is_number()) return std::nullopt;
    return f.at(rule.metric).get<double>();
  };
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
  out.detail = fmt::format("{:.6g} {} {:.6g}", *x, op, *y);
  return out;
}

}  // namespace strata
