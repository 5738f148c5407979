#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "sim/core/diagnostics.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/solve.hpp"
#include "sim/plan/sweep_spec.hpp"
#include "sim/report/metrics.hpp"
#include "tools/cli/commands.hpp"

namespace strata::cli {

namespace {

/// One end of --range: a plain number, or a quantity in the input's dimension.
double range_end(const std::string& text, const Param* p) {
  std::string why = "not a number";
  if (p && p->kind == ParamKind::quantity) {
    // Each end carries its unit: '10:1000 GB/s' would otherwise read its low end as 10 B/s.
    if (auto v = parse_quantity(text, p->dim, &why)) return *v;
  } else {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && end != text.c_str() && *end == '\0' && std::isfinite(v)) return v;
  }
  throw InputError({Diagnostic{"--range", "", fmt::format("'{}': {} (expected LO:HI, e.g. '10 GB/s:1 TB/s')", text,
                                                          why)}});
}

}  // namespace

int solve_command(const FolderCatalog& catalog, const SolveOptions& o) {
  SolveRequest r;
  r.scenario = find_scenario(catalog, o.scenario);
  for (const auto& text : o.overrides) r.overrides.push_back(parse_override(text));
  r.vary = o.vary;
  parse_target(o.target, r);
  const auto colon = o.range.find(':');
  if (colon == std::string::npos)
    throw InputError({Diagnostic{"--range", "", fmt::format("'{}' has no ':' (expected LO:HI)", o.range)}});
  const Param* p = scenario_param_at(o.vary);
  r.lo = range_end(o.range.substr(0, colon), p);
  r.hi = range_end(o.range.substr(colon + 1), p);
  r.find_min = o.find == "min";
  r.tolerance = o.tolerance;
  r.simulation.executor = o.executor == "list" ? ExecutorKind::list : ExecutorKind::des;

  const SolveResult s = solve(r, catalog);
  // Every number with its unit: the input in its dimension, the metric in its own.
  auto input = [&](double v) {
    if (p && p->kind == ParamKind::quantity) return format_quantity(v, p->dim);
    return unsigned_zero(fmt::format("{:.6g}", v));
  };
  const std::string target = format_metric(r.metric, r.target);
  std::printf("%22s %22s  %s\n", o.vary.c_str(), r.metric.c_str(), fmt::format("meets {} {}", r.op, target).c_str());
  for (const auto& e : s.evaluations)
    std::printf("%22s %22s  %s\n", input(e.value).c_str(), e.metric ? format_metric(r.metric, *e.metric).c_str() : "-",
                e.meets ? "yes" : (e.error.empty() ? "no" : ("invalid: " + e.error).c_str()));
  if (!s.value) {
    std::printf("no value in the range: %s\n", s.reason.c_str());
    return 3;
  }
  std::printf("%s %s = %s (%s) meets %s %s %s (%zu evaluations)\n", r.find_min ? "smallest" : "largest", o.vary.c_str(),
              input(*s.value).c_str(),
              (fmt::format("{:.6g}", *s.value) + (p && p->kind == ParamKind::quantity ? std::string(" ") + si_unit(p->dim) : "")).c_str(), r.metric.c_str(), r.op.c_str(),
              target.c_str(), s.evaluations.size());
  return 0;
}

}  // namespace strata::cli
