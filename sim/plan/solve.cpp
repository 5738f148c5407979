#include "sim/plan/solve.hpp"

#include <fmt/format.h>

#include <cmath>

#include "sim/core/diagnostics.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/sweep_results.hpp"
#include "sim/plan/sweep_spec.hpp"
#include "sim/report/metrics.hpp"
#include "sim/report/report.hpp"

namespace strata {

namespace {

InputError request_error(const std::string& what, const std::string& message) {
  return InputError({Diagnostic{what, "", message}});
}

bool meets(double metric, const std::string& op, double target) {
  if (op == "<=") return metric <= target;
  if (op == "<") return metric < target;
  if (op == ">=") return metric >= target;
  return metric > target;
}

}  // namespace

void parse_target(const std::string& text, SolveRequest& request) {
  for (const char* op : {"<=", ">=", "<", ">"}) {
    const auto at = text.find(op);
    if (at == std::string::npos || at == 0) continue;
    const std::string value = text.substr(at + std::string(op).size());
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end == value.c_str() || *end != '\0' || !std::isfinite(v)) break;
    request.metric = text.substr(0, at);
    request.op = op;
    request.target = v;
    // Only the report's numeric and true/false keys (strata describe metrics); a flag counts as 1 or 0.
    if (auto problem = metric_key_problem(request.metric)) throw request_error("--target", *problem);
    return;
  }
  throw request_error("--target", fmt::format("'{}' is not a target (expected METRIC<=VALUE, <, >= or >, e.g. "
                                              "checkpoint.overhead_fraction<=0.02)", text));
}

SolveResult solve(const SolveRequest& r, const DocumentResolver& resolver) {
  const Param* p = scenario_param_at(r.vary);
  if (!p || !(p->kind == ParamKind::integer || p->kind == ParamKind::number || p->kind == ParamKind::quantity))
    throw request_error("--vary", fmt::format("'{}' is not a numeric scenario input (expected a path such as "
                                              "hardware.object_store.bandwidth or checkpoint.interval_iterations)",
                                              r.vary));
  if (!(r.lo < r.hi)) throw request_error("--range", fmt::format("{} is not below {} (expected LO:HI)", r.lo, r.hi));
  const bool integer = p->kind == ParamKind::integer;

  SolveResult result;
  auto evaluate = [&](double v) {
    SolveEvaluation e;
    e.value = integer ? std::round(v) : v;
    std::vector<Override> overrides = r.overrides;
    // A quantity is written with its SI unit: a bare number is refused as ambiguous.
    const std::string unit = p->kind == ParamKind::quantity ? std::string(" ") + si_unit(p->dim) : "";
    overrides.push_back({r.vary, integer ? fmt::format("{}", static_cast<long long>(e.value))
                                         : fmt::format("{:.17g}{}", e.value, unit)});
    try {
      const Scenario sc = load_scenario(r.scenario, overrides, resolver);
      const nlohmann::json flat = flatten_report(make_report(sc, run_scenario(sc, r.simulation)));
      e.metric = metric_number(flat, r.metric);
      if (!e.metric) {
        const Metric* m = find_metric(r.metric);
        throw request_error("--target", fmt::format("'{}' has no number in this scenario's report (reported {}; "
                                                    "null where it does not apply)", r.metric,
                                                    m ? presence_text(m->presence) : "never"));
      }
      // A configuration that does not fit in memory meets no target, whatever its metric says.
      // (Unless the target is about fitting itself.)
      const bool fits = r.metric == "fits" || !flat.contains("fits") || flat.at("fits") == true;
      e.meets = fits && meets(*e.metric, r.op, r.target);
      if (!fits) e.error = "does not fit in memory";
    } catch (const InputError& err) {
      if (err.diagnostics().front().file == "--target") throw;
      e.error = err.diagnostics().front().to_string();
    }
    result.evaluations.push_back(e);
    return e.meets;
  };
  // The end that should meet the target, then the other.
  double good = r.find_min ? r.hi : r.lo, bad = r.find_min ? r.lo : r.hi;
  if (!evaluate(good)) {
    const SolveEvaluation& e = result.evaluations.back();
    result.reason = e.error.empty()
        ? fmt::format("{} does not meet {} {} {} at {} = {:.6g} either (widen --range)", r.metric, r.metric, r.op,
                      r.target, r.vary, good)
        : fmt::format("at {} = {:.6g}, the end of the range that should meet the target, the scenario {}", r.vary, good,
                      e.error.starts_with("does not fit") ? e.error : "is invalid: " + e.error);
    return result;
  }
  if (evaluate(bad)) {
    result.value = bad;
    return result;
  }
  const bool geometric = r.lo > 0;
  while (true) {
    const double width = geometric ? std::fabs(std::log(good / bad)) : std::fabs(good - bad) / std::fabs(r.hi);
    if (integer ? std::fabs(good - bad) <= 1.0 : width <= r.tolerance) break;
    double mid = geometric ? std::sqrt(good * bad) : 0.5 * (good + bad);
    if (integer) mid = r.find_min ? std::floor(mid) : std::ceil(mid);
    if (mid == good || mid == bad) break;
    (evaluate(mid) ? good : bad) = mid;
  }
  result.value = good;
  return result;
}

}  // namespace strata
