#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "sim/core/diagnostics.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/solve.hpp"
#include "sim/plan/sweep_spec.hpp"
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
  std::printf("%16s %16s  %s\n", o.vary.c_str(), r.metric.c_str(), "meets");
  for (const auto& e : s.evaluations)
    std::printf("%16.6g %16s  %s\n", e.value, e.metric ? fmt::format("{:.6g}", *e.metric).c_str() : "-",
                e.meets ? "yes" : (e.error.empty() ? "no" : ("invalid: " + e.error).c_str()));
  if (!s.value) {
    std::printf("no value in the range: %s\n", s.reason.c_str());
    return 3;
  }
  std::printf("%s %s = %.6g meets %s %s %g (%zu evaluations)\n", r.find_min ? "smallest" : "largest", o.vary.c_str(),
              *s.value, r.metric.c_str(), r.op.c_str(), r.target, s.evaluations.size());
  return 0;
}

}  // namespace strata::cli
