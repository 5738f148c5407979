#include "sim/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "sim/analysis/memory_timeline.hpp"
#include "sim/report/html_assets.hpp"
#include "sim/report/report.hpp"

namespace strata {

using nlohmann::json;

namespace {

/// Points per plotted memory series: enough for a wide screen, small enough that a 64-GPU report
/// stays well under 5 MB.
constexpr std::size_t kMaxSeriesPoints = 1500;
/// Bars in the Gantt before adjacent tasks of one kind on one stream are merged.
constexpr std::size_t kMaxGanttBars = 30000;
/// Simulated GPUs plotted over time; past this, one per pipeline stage.
constexpr std::size_t kMaxTimelineGpus = 32;

/// Plotted values need no more than 6 significant digits; fewer digits, a smaller file.
double plotted(double v) {
  if (!std::isfinite(v)) return 0.0;
  return std::strtod(fmt::format("{:.6g}", v).c_str(), nullptr);
}

/// At most `max_points` of a step series: per interval of time, its first point and its highest and
/// lowest ones in time order, so every peak (and trough) stays on the plot.
json decimated(const MemorySeries& s, std::size_t max_points = kMaxSeriesPoints) {
  json t = json::array(), b = json::array();
  auto keep = [&](std::size_t i) {
    t.push_back(plotted(s.time_s[i]));
    b.push_back(plotted(s.bytes[i]));
  };
  const std::size_t n = s.time_s.size();
  if (n <= max_points) {
    for (std::size_t i = 0; i < n; ++i) keep(i);
  } else {
    const std::size_t buckets = max_points / 4;  // at most 4 points kept per interval
    const double t0 = s.time_s.front(), span = std::max(s.time_s.back() - t0, 1e-30);
    std::size_t i = 0;
    for (std::size_t k = 0; k < buckets && i < n; ++k) {
      const double end = k + 1 == buckets ? std::numeric_limits<double>::infinity()
                                          : t0 + span * static_cast<double>(k + 1) / static_cast<double>(buckets);
      const std::size_t first = i;
      std::size_t hi = i, lo = i;
      for (; i < n && s.time_s[i] < end; ++i) {
        if (s.bytes[i] > s.bytes[hi]) hi = i;
        if (s.bytes[i] < s.bytes[lo]) lo = i;
      }
      if (i == first) continue;
      std::set<std::size_t> picked = {first, hi, lo, i - 1};
      for (std::size_t p : picked) keep(p);
    }
  }
  return {{"t", t}, {"b", b}};
}

/// The page: the template with ECharts and the data inlined. '<' is escaped inside the data (it can
/// only occur in strings there), so no value can close the script element.
std::string page(const json& data) {
  std::string payload = data.dump();
  std::string escaped;
  escaped.reserve(payload.size());
  for (char c : payload) {
    if (c == '<') escaped += "\\u003c";
    else escaped += c;
  }
  std::string out(html_template());
  auto put = [&](std::string_view marker, std::string_view text) {
    const auto at = out.find(marker);
    if (at == std::string::npos) throw std::logic_error(fmt::format("html template: no {}", marker));
    out.replace(at, marker.size(), text);
  };
  put("/*@STRATA_ECHARTS@*/", echarts_js());
  put("/*@STRATA_DATA@*/", escaped);
  return out;
}

std::string device_name(DeviceKind k) { return to_string(k); }

/// The last iteration without a checkpoint task: [end of the one before, end of its last compute task].
std::pair<double, double> steady_window(const TaskDag& dag, const TaskTimes& times) {
  std::map<std::int32_t, double> compute_end;
  std::set<std::int32_t> checkpointed;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    if (t.kind == TaskKind::checkpoint) checkpointed.insert(t.iteration);
    if (t.stream == Stream::compute && t.kind != TaskKind::checkpoint)
      compute_end[t.iteration] = std::max(compute_end[t.iteration], times.finish[id]);
  }
  if (compute_end.empty()) return {0.0, times.makespan()};
  auto chosen = compute_end.rbegin();
  for (auto it = compute_end.rbegin(); it != compute_end.rend(); ++it)
    if (!checkpointed.count(it->first)) {
      chosen = it;
      break;
    }
  auto before = std::next(chosen);
  return {before == compute_end.rend() ? 0.0 : before->second, chosen->second};
}

json gantt_json(const TaskDag& dag, const TaskTimes& times) {
  const auto [from, to] = steady_window(dag, times);
  // (rank, stream) -> bars (kind, start, end), in start order.
  std::map<std::pair<std::int64_t, int>, std::vector<std::tuple<double, double, int>>> rows;
  std::size_t count = 0;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    const double s = std::max(from, times.start[id]), f = std::min(to, times.finish[id]);
    if (f <= s && !(times.start[id] >= from && times.start[id] < to)) continue;
    for (std::int64_t r : t.ranks) {
      rows[{r, static_cast<int>(t.stream)}].emplace_back(s - from, f - from, static_cast<int>(t.kind));
      ++count;
    }
  }
  // Too many bars to draw: adjacent bars of one kind closer than a pixel at 4000 px become one.
  const double gap = count > kMaxGanttBars ? (to - from) / 4000.0 : -1.0;
  json row_names = json::array(), bars = json::array();
  int row = 0;
  for (auto& [key, list] : rows) {
    std::sort(list.begin(), list.end());
    row_names.push_back(fmt::format("GPU {} {}", key.first, to_string(static_cast<Stream>(key.second))));
    std::vector<std::tuple<double, double, int>> merged;
    for (const auto& [s, f, kind] : list) {
      if (!merged.empty() && std::get<2>(merged.back()) == kind && s - std::get<1>(merged.back()) <= gap)
        std::get<1>(merged.back()) = std::max(std::get<1>(merged.back()), f);
      else
        merged.emplace_back(s, f, kind);
    }
    for (const auto& [s, f, kind] : merged) bars.push_back({row, kind, plotted(s), plotted(f)});
    ++row;
  }
  json kinds = json::array();
  for (int k = 0; k < kNumTaskKinds; ++k) kinds.push_back(to_string(static_cast<TaskKind>(k)));
  return {{"window_s", plotted(to - from)}, {"rows", row_names}, {"kinds", kinds}, {"bars", bars},
          {"merged", gap > 0}};
}

/// Each hop of the checkpoint (a snapshot in place, or a copy from one device kind to the next):
/// from its first task's start to its last task's end, when that copy is durable, relative to the
/// checkpoint's start.
json hops_json(const TaskDag& dag, const TaskTimes& times) {
  struct Hop {
    double start = std::numeric_limits<double>::infinity(), durable = 0.0, bytes = 0.0;
    std::size_t order = 0;
  };
  std::map<std::string, Hop> hops;
  double first = std::numeric_limits<double>::infinity();
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    const Task& t = dag.tasks[id];
    if (t.kind != TaskKind::checkpoint) continue;
    std::string name;
    double bytes = 0.0;
    if (!t.flows.empty()) {
      const Flow& f = t.flows.front();
      // A copy between two devices of one kind goes to a peer (in-memory checkpoints' replicas).
      name = fmt::format("{} -> {}{}", device_name(f.src.kind), device_name(f.dst.kind),
                         f.src.kind == f.dst.kind && f.src.index != f.dst.index ? " (peer)" : "");
      for (const Flow& f : t.flows) bytes += f.bytes;
    } else {
      name = t.allocate.empty() ? "snapshot" : fmt::format("snapshot in {}", to_string(t.allocate.front().tier));
      for (const MemoryChange& c : t.allocate) bytes += c.bytes;
    }
    auto [it, fresh] = hops.try_emplace(name);
    if (fresh) it->second.order = hops.size();
    it->second.start = std::min(it->second.start, times.start[id]);
    it->second.durable = std::max(it->second.durable, times.finish[id]);
    it->second.bytes += bytes * static_cast<double>(dag.represents.count(t.rank()) ? dag.represents.at(t.rank()) : 1);
    first = std::min(first, times.start[id]);
  }
  std::vector<std::pair<std::string, Hop>> ordered(hops.begin(), hops.end());
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return std::tie(a.second.start, a.second.order) < std::tie(b.second.start, b.second.order);
  });
  json out = json::array();
  for (const auto& [name, h] : ordered)
    out.push_back({{"hop", name}, {"start_s", plotted(h.start - first)}, {"durable_s", plotted(h.durable - first)},
                   {"bytes", plotted(h.bytes)}});
  return out;
}

/// The series held until the end of the schedule, so that every curve spans the whole plot.
MemorySeries until(MemorySeries s, double end) {
  if (!s.time_s.empty() && s.time_s.back() < end) {
    s.time_s.push_back(end);
    s.bytes.push_back(s.bytes.back());
  }
  return s;
}

json timelines_json(const Scenario& sc, const RunResult& r, const TaskDag& dag, const TaskTimes& times) {
  const auto ranks = rank_memory_timelines(dag, times);
  const double end = times.makespan();
  std::set<std::int64_t> shown;
  if (ranks.size() <= kMaxTimelineGpus)
    for (const auto& [rank, tiers] : ranks) shown.insert(rank);
  else
    for (const auto& st : r.memory.stages)
      if (ranks.count(st.first_rank)) shown.insert(st.first_rank);
  json gpus = json::array();
  for (std::int64_t rank : shown) {
    const auto& tiers = ranks.at(rank);
    auto hbm = tiers.find(Tier::hbm);
    if (hbm == tiers.end()) continue;
    gpus.push_back({{"rank", rank}, {"represents", dag.represents.at(rank)}, {"hbm", decimated(until(hbm->second, end))}});
  }
  // Host tiers: the node that peaked highest, in the schedule these timelines come from.
  std::map<Tier, std::int64_t> peak_node;
  for (const auto& [tier, peak] : r.simulation->analysis.node_tiers) peak_node[tier] = peak.node;
  if (r.checkpoint && r.checkpoint->dag)
    for (const auto& [tier, peak] : r.checkpoint->staging) peak_node[tier] = peak.node;
  json host = json::array();
  std::map<std::int64_t, std::map<Tier, MemorySeries>> by_node;
  for (const auto& [tier, node] : peak_node) {
    if (tier == Tier::hbm || tier == Tier::object_store) continue;
    if (!by_node.count(node)) by_node[node] = node_memory_timelines(dag, times, sc.gpus, sc.hardware.gpus_per_node, node);
    auto it = by_node[node].find(tier);
    if (it == by_node[node].end()) continue;
    auto cap = r.memory.tiers.find(tier);
    host.push_back({{"tier", to_string(tier)}, {"node", node},
                    {"capacity_bytes", cap == r.memory.tiers.end() ? json(nullptr) : json(cap->second.capacity_per_node)},
                    {"series", decimated(until(it->second, end))}});
  }
  return {{"gpus", gpus}, {"host", host}};
}

json interval_json(const RunResult& r) {
  if (!r.run || r.run->interval_curve.empty()) return nullptr;
  const RunLevelResult& g = *r.run;
  json curve = json::array();
  for (const IntervalGoodput& p : g.interval_curve)
    curve.push_back({plotted(p.interval_s), plotted(p.first_order_goodput),
                     p.simulated_goodput ? json(plotted(*p.simulated_goodput)) : json(nullptr)});
  return {{"curve", curve}};
}

json warnings_json(const RunResult& r) {
  json out = json::array();
  if (!r.verdict.fits) out.push_back("does not fit: see the overflows below");
  for (const FoundOverflow& f : r.verdict.overflows) {
    const Overflow& o = f.overflow;
    out.push_back(fmt::format("{} {}: needs {:.4g} GiB of {} (capacity {:.4g} GiB), found by the {}{}",
                              o.device == "gpu" ? "GPU rank" : "node", o.index, o.need / (1 << 30), to_string(o.tier),
                              o.capacity / (1 << 30), f.found_by,
                              f.time_s ? fmt::format(" at {:.4g} s", *f.time_s) : std::string()));
  }
  return out;
}

json rounded(json j) {
  round_doubles(j);
  return j;
}

}  // namespace

json html_run_data(const Scenario& sc, const RunResult& r, const json& scenario_document) {
  json data = {{"kind", "run"},
               {"title", sc.name},
               {"strata_version", STRATA_VERSION},
               {"report", rounded(make_report(sc, r))},
               {"scenario_document", scenario_document},
               {"warnings", warnings_json(r)},
               {"interval", interval_json(r)}};
  if (r.simulation && r.simulation->dag && r.simulation->times) {
    const TaskDag& dag = *r.simulation->dag;
    const TaskTimes& times = *r.simulation->times;
    data["timelines"] = timelines_json(sc, r, dag, times);
    data["gantt"] = gantt_json(dag, times);
    if (r.checkpoint && r.checkpoint->dag) data["hops"] = hops_json(dag, times);
  }
  return data;
}

std::string html_run_report(const Scenario& sc, const RunResult& r, const json& scenario_document) {
  return page(html_run_data(sc, r, scenario_document));
}

std::string html_sweep_report(const std::string& name, const json& sweep_document, const std::vector<json>& rows) {
  // Columnar: the keys once, each row's values in their order (a sweep of thousands of points stays small).
  std::set<std::string> params, metrics;
  for (const json& row : rows) {
    if (row.contains("params"))
      for (const auto& [k, v] : row.at("params").items()) params.insert(k);
    if (row.contains("report"))
      for (const auto& [k, v] : row.at("report").items())
        if (v.is_number() || v.is_boolean()) metrics.insert(k);
  }
  json out_rows = json::array();
  for (const json& row : rows) {
    json p = json::array(), m = json::array();
    for (const std::string& k : params) p.push_back(row.contains("params") ? row.at("params").value(k, json()) : json());
    for (const std::string& k : metrics) m.push_back(row.contains("report") ? row.at("report").value(k, json()) : json());
    out_rows.push_back({{"point", row.value("point", -1)}, {"status", row.value("status", "")},
                        {"error", row.value("error", "")}, {"params", p}, {"metrics", m}});
  }
  const bool named = sweep_document.is_object() && sweep_document.contains("name") && sweep_document.at("name").is_string();
  json data = {{"kind", "sweep"},
               {"title", named ? sweep_document.at("name").get<std::string>() : name},
               {"strata_version", STRATA_VERSION},
               {"sweep_document", sweep_document},
               {"params", params},
               {"metrics", metrics},
               {"rows", out_rows}};
  return page(data);
}

std::string html_compare_report(const ComparedReport& a, const ComparedReport& b,
                                const std::vector<std::string>& differing) {
  json data = {{"kind", "compare"},
               {"title", a.name + " vs " + b.name},
               {"strata_version", STRATA_VERSION},
               {"a", {{"name", a.name}, {"report", a.report}, {"flat", a.flat}}},
               {"b", {{"name", b.name}, {"report", b.report}, {"flat", b.flat}}},
               {"differing", differing}};
  return page(data);
}

}  // namespace strata
