#include "sim/plan/sweep_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "sim/config/hardware_spec.hpp"
#include "sim/config/model_spec.hpp"
#include "sim/config/scenario_spec.hpp"
#include "sim/core/params.hpp"

namespace strata {

namespace {

using nlohmann::json;

const ParamTable kSweep = {
    {.key = "name", .kind = ParamKind::string, .default_value = "", .doc = "sweep name"},
    {.key = "description", .kind = ParamKind::string, .default_value = "", .doc = "one line"},
    {.key = "base", .kind = ParamKind::object, .doc = "scenario: a shipped name, a path, or inline"},
    {.key = "grid", .kind = ParamKind::object, .doc = "PATH: [values], every combination", .optional = true},
    {.key = "zip", .kind = ParamKind::object, .doc = "PATH: [values], the i-th values together", .optional = true},
    {.key = "sample", .kind = ParamKind::object, .doc = "count, seed and axes of seeded draws", .optional = true},
};

const ParamTable kSample = {
    {.key = "count", .kind = ParamKind::integer, .doc = "points drawn (without repeats)", .min = 1,
     .max = static_cast<double>(kMaxSweepPoints)},
    {.key = "seed", .kind = ParamKind::integer, .default_value = 0, .doc = "draw seed", .min = 0, .max = 9007199254740991.0},
    {.key = "axes", .kind = ParamKind::object, .doc = "PATH: [values] drawn from"},
};

const Param* find_in(const ParamTable& table, const std::string& key) {
  auto it = std::find_if(table.begin(), table.end(), [&](const Param& p) { return p.key == key; });
  return it == table.end() ? nullptr : &*it;
}

}  // namespace

const Param* scenario_param_at(const std::string& path) {
  static const Param document = {.key = "document", .kind = ParamKind::string, .doc = "a document name or path"};
  if (path == "model" || path == "hardware") return &document;
  const auto dot = path.rfind('.');
  const std::string section = dot == std::string::npos ? "" : path.substr(0, dot);
  const std::string key = dot == std::string::npos ? path : path.substr(dot + 1);
  if (section == "model") return find_in(model_param_table(), key);
  if (section == "hardware" || section.rfind("hardware.", 0) == 0) {
    const auto& tables = hardware_param_tables();
    auto it = tables.find(section == "hardware" ? "" : section.substr(9));
    return it == tables.end() ? nullptr : find_in(*it->second, key);
  }
  const auto& tables = scenario_param_tables();
  auto it = tables.find(section);
  return it == tables.end() ? nullptr : find_in(*it->second, key);
}

namespace {

const Param* param_at(const std::string& path) { return scenario_param_at(path); }

/// Checks a value against its parameter's kind with the scenario's own reader, so a sweep value is
/// refused with the same words the scenario would use.
void check_value(const Param& p, const json& value, const std::string& pointer, Diagnostics& diag) {
  if (p.kind == ParamKind::object) return;
  const ParamTable one = {p};
  const json holder = {{p.key, value}};
  Diagnostics local;
  ObjectReader reader(holder, "", one, local);
  switch (p.kind) {
    case ParamKind::integer: reader.integer(p.key); break;
    case ParamKind::number: reader.number(p.key); break;
    case ParamKind::boolean: reader.boolean(p.key); break;
    case ParamKind::string: reader.string(p.key); break;
    case ParamKind::choice: reader.choice(p.key); break;
    case ParamKind::quantity: reader.quantity(p.key); break;
    case ParamKind::string_list: reader.string_list(p.key); break;
    case ParamKind::integer_list: reader.integer_list(p.key); break;
    case ParamKind::object: break;
  }
  for (const Diagnostic& d : local.items()) {
    // The reader's message starts at the key; re-anchor it at the value's place in the sweep file.
    diag.add(pointer, d.message);
  }
}

struct Axis {
  std::string path;
  std::vector<json> values;
};

/// Reads `{PATH: [values]}` at `pointer`.
std::vector<Axis> read_axes(const json& object, const std::string& pointer, std::set<std::string>& seen,
                            Diagnostics& diag) {
  std::vector<Axis> axes;
  if (!object.is_object()) {
    diag.add(pointer, fmt::format("wrong type (got {}, expected an object of PATH: [values])", object.dump()));
    return axes;
  }
  if (object.empty()) diag.add(pointer, "no axes (expected at least one PATH: [values])");
  for (const auto& [path, values] : object.items()) {
    const std::string at = pointer + "/" + pointer_escape(path);
    const Param* p = param_at(path);
    if (!p) {
      diag.add(at, fmt::format("unknown scenario path '{}' (expected a dotted path such as parallelism.tp, "
                               "hardware.object_store.bandwidth or model.num_layers)", path));
      continue;
    }
    if (!seen.insert(path).second) diag.add(at, "path appears in more than one axis (expected it once)");
    if (!values.is_array()) {
      diag.add(at, fmt::format("wrong type (got {}, expected a list of values)", values.dump()));
      continue;
    }
    if (values.empty()) {
      diag.add(at, "empty list (expected at least one value)");
      continue;
    }
    for (std::size_t i = 0; i < values.size(); ++i) check_value(*p, values[i], at + "/" + std::to_string(i), diag);
    axes.push_back({path, {values.begin(), values.end()}});
  }
  return axes;
}

/// a·b, saturated just above the point limit so that no product of sizes can wrap around.
std::int64_t capped_product(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (a > kMaxSweepPoints || b > kMaxSweepPoints || a > (kMaxSweepPoints + 1) / b) return kMaxSweepPoints + 1;
  return a * b;
}

std::int64_t product_size(const std::vector<Axis>& axes) {
  std::int64_t n = 1;
  for (const Axis& a : axes) n = capped_product(n, static_cast<std::int64_t>(a.values.size()));
  return n;
}

/// The k-th combination of the axes (the last axis fastest).
void combination(const std::vector<Axis>& axes, std::int64_t k, json& params) {
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    const auto n = static_cast<std::int64_t>(it->values.size());
    params[it->path] = it->values[static_cast<std::size_t>(k % n)];
    k /= n;
  }
}

}  // namespace

SweepSpec parse_sweep(const json& doc, const std::string& file, std::int64_t max_points) {
  SourceMap sources(file);
  Diagnostics diag(&sources);
  ObjectReader top(doc, "", kSweep, diag);
  if (!top.ok()) {
    diag.add("", fmt::format("wrong type (got {}, expected an object)", doc.is_null() ? "null" : doc.type_name()));
    diag.throw_if_any();
  }
  top.string("name");
  top.string("description");
  SweepSpec spec;
  spec.file = file;
  spec.document = doc;
  if (!top.has("base")) diag.add("/base", "missing (expected a scenario name, path or object)");
  else if (!doc.at("base").is_string() && !doc.at("base").is_object())
    diag.add("/base", fmt::format("wrong type (got {}, expected a scenario name, path or object)", doc.at("base").dump()));
  else spec.base = doc.at("base");

  std::set<std::string> seen;
  std::vector<Axis> grid, zip, drawn;
  if (top.has("grid")) grid = read_axes(doc.at("grid"), "/grid", seen, diag);
  if (top.has("zip")) zip = read_axes(doc.at("zip"), "/zip", seen, diag);
  std::int64_t count = 0, seed = 0;
  if (top.has("sample")) {
    ObjectReader sample(doc.at("sample"), "/sample", kSample, diag);
    count = sample.integer("count");
    seed = sample.integer("seed");
    if (sample.ok() && sample.has("axes")) drawn = read_axes(doc.at("sample").at("axes"), "/sample/axes", seen, diag);
  }
  if (!zip.empty()) {
    const std::size_t n = zip.front().values.size();
    for (const Axis& a : zip)
      if (a.values.size() != n)
        diag.add("/zip/" + pointer_escape(a.path),
                 fmt::format("{} values, but {} has {} (expected zipped axes of equal length)", a.values.size(),
                             zip.front().path, n));
  }
  if (grid.empty() && zip.empty() && drawn.empty() && diag.empty())
    diag.add("", "no axes (expected grid, zip or sample)");
  diag.throw_if_any();

  for (const auto* group : {&grid, &zip, &drawn})
    for (const Axis& a : *group) spec.axes.push_back(a.path);
  // The size first, without overflow, so an oversized sweep is refused before anything is drawn.
  const std::int64_t space = drawn.empty() ? 1 : product_size(drawn);
  const std::int64_t grid_n = product_size(grid);
  const std::int64_t zip_n = zip.empty() ? 1 : static_cast<std::int64_t>(zip.front().values.size());
  const std::int64_t total =
      capped_product(capped_product(grid_n, zip_n), drawn.empty() ? 1 : std::min(count, space));
  if (total > max_points)
    diag.add("", fmt::format("over {} points (expected at most {}: use sample to draw from a large space)", max_points,
                             max_points));
  diag.throw_if_any();

  // Sampled combinations: `count` distinct draws from the product, in draw order.
  std::vector<std::int64_t> draws = {-1};
  if (!drawn.empty()) {
    draws.clear();
    if (count >= space) {
      for (std::int64_t k = 0; k < space; ++k) draws.push_back(k);
    } else {
      std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
      std::set<std::int64_t> taken;
      while (static_cast<std::int64_t>(draws.size()) < count) {
        const auto k = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(space));
        if (taken.insert(k).second) draws.push_back(k);
      }
    }
  }

  for (std::int64_t g = 0; g < grid_n; ++g)
    for (std::int64_t z = 0; z < zip_n; ++z)
      for (std::int64_t d : draws) {
        SweepPoint p;
        p.index = static_cast<std::int64_t>(spec.points.size());
        p.params = json::object();
        combination(grid, g, p.params);
        for (const Axis& a : zip) p.params[a.path] = a.values[static_cast<std::size_t>(z)];
        if (d >= 0) combination(drawn, d, p.params);
        for (const std::string& path : spec.axes) p.overrides.push_back({path, p.params.at(path).dump()});
        spec.points.push_back(std::move(p));
      }
  return spec;
}

}  // namespace strata
