#pragma once

/// Comparing two reports: a readable diff of their flattened metrics, and ordering rules (e.g.
/// `checkpoint.stall_s` of a sync run > that of an async run) for regression checks in CI.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

struct MetricChange {
  std::string metric;
  nlohmann::json a, b;            ///< null when absent on that side
  std::optional<double> relative; ///< (b - a) / |a| when both are numbers and a != 0
};

/// Metrics (flattened report keys) whose values differ, numbers beyond a relative `tolerance`.
std::vector<MetricChange> diff_reports(const nlohmann::json& a, const nlohmann::json& b, double tolerance = 1e-9);

/// "A op B" on one metric; op is one of > >= < <= == !=, `==` within a relative tolerance.
struct OrderingRule {
  std::string metric;
  std::string op;
  double tolerance = 1e-9;
  std::string why;  ///< shown with the result
};

struct RuleOutcome {
  OrderingRule rule;
  bool holds = false;
  std::string detail;  ///< "1.23 > 0.45"
};

/// Reads {"rules": [{"metric", "op", "tolerance"?, "why"?}]}. Throws InputError naming `file`.
std::vector<OrderingRule> parse_rules(const nlohmann::json& doc, const std::string& file);

/// The rules to check between reports of scenarios `a` and `b`: a rules file as above, or an
/// orderings file like results/orderings.json ({"orderings": [{"a", "b", "rules"}]}), of which the
/// entries with these two scenario names. Throws InputError naming `file` (no entry for the pair
/// lists the pairs it has).
std::vector<OrderingRule> rules_for_pair(const nlohmann::json& doc, const std::string& file, const std::string& a,
                                         const std::string& b);

/// Evaluates a rule on two reports; a metric absent or not a number on either side fails it.
RuleOutcome check_rule(const OrderingRule& rule, const nlohmann::json& a, const nlohmann::json& b);

}  // namespace strata
