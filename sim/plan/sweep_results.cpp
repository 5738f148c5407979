#include "sim/plan/sweep_results.hpp"

#include "sim/report/metrics.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <variant>

#include "sim/core/diagnostics.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/sweep_spec.hpp"
#include "sim/report/report.hpp"

namespace strata {

namespace {

using nlohmann::json;

void flatten_into(const json& j, const std::string& prefix, json& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten_into(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (!j.is_array()) {
    out[prefix] = j;
  }
}

std::string csv_cell(const json& v) {
  if (v.is_null()) return "";
  std::string s = v.is_string() ? v.get<std::string>() : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

/// Lines of a results file; a last line without its newline (a kill mid-write) is dropped and, if
/// `trim`, cut from the file.
std::vector<ResultLine> read_lines(const std::filesystem::path& file, bool trim) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const std::size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (trim && complete < text.size()) std::filesystem::resize_file(file, complete);
  return complete_lines(text);
}

std::string location(const std::filesystem::path& file, std::size_t line) {
  return fmt::format("{}:{}", file.string(), line);
}

}  // namespace

std::vector<ResultLine> complete_lines(const std::string& text) {
  std::vector<ResultLine> lines;
  std::size_t start = 0, number = 0;
  while (true) {
    const auto end = text.find('\n', start);
    if (end == std::string::npos) break;
    ++number;
    if (end > start) lines.push_back({number, text.substr(start, end - start)});
    start = end + 1;
  }
  return lines;
}

std::variant<std::int64_t, std::string> result_point(const std::string& line, std::int64_t point_count) {
  // A results file is ours but lives on disk, where a kill, a full disk or a hand edit can damage it:
  // every field that finish(), rows_to_csv() and best_points() rely on is checked here.
  json row;
  try {
    row = parse_json_text(line, "results.jsonl");  // depth-limited: cells are dumped recursively for the CSV
  } catch (const InputError&) {
    return std::string("damaged line (not JSON)");
  }
  if (!row.is_object()) return std::string("damaged line (expected a result row, an object)");
  const auto point = row.find("point");
  if (point == row.end() || !point->is_number_integer() ||
      (point->is_number_unsigned() ? point->get<std::uint64_t>() >= static_cast<std::uint64_t>(point_count)
                                   : point->get<std::int64_t>() < 0 || point->get<std::int64_t>() >= point_count))
    return point != row.end() && point->is_number_integer()
               ? fmt::format("a row for point {}, which the sweep does not have (expected 0 to {})", point->dump(),
                             point_count - 1)
               : std::string("damaged line (expected a point number, an integer from 0)");
  const auto status = row.find("status");
  if (status == row.end() || !status->is_string() || (*status != "ok" && *status != "invalid" && *status != "failed"))
    return std::string("damaged line (expected status ok, invalid or failed)");
  const auto params = row.find("params"), report = row.find("report");
  if (params == row.end() || !params->is_object()) return std::string("damaged line (expected params, an object)");
  if ((report == row.end() && *status == "ok") || (report != row.end() && !report->is_object()))
    return std::string("damaged line (expected the report, an object)");
  return point->get<std::int64_t>();
}

json flatten_report(const json& report) {
  json out = json::object();
  flatten_into(report, "", out);
  return out;
}

std::string row_line(const json& row) {
  json copy = row;
  round_doubles(copy);
  return copy.dump();
}

/// The SI value of a swept quantity as the user wrote it ("100 GB/s" -> 1e11), for the numeric column
/// beside it; null when the value is not a quantity of that dimension.
json si_value(const json& v, Dimension dim) {
  if (v.is_number()) return v;
  if (!v.is_string()) return nullptr;
  const auto si = parse_quantity(v.get<std::string>(), dim, nullptr);
  return si ? json(*si) : json(nullptr);
}

std::string rows_to_csv(const std::vector<json>& rows, const std::string& comment) {
  static const json kEmpty = json::object();
  auto section = [](const json& row, const char* key) -> const json& {
    auto it = row.find(key);
    return it == row.end() ? kEmpty : *it;
  };
  std::set<std::string> params, metrics;
  for (const json& r : rows) {
    for (const auto& [k, v] : section(r, "params").items()) params.insert(k);
    for (const auto& [k, v] : section(r, "report").items()) metrics.insert(k);
  }
  // A swept quantity also gets a numeric column in SI base units beside the text the user wrote, so
  // that a table tool sorts and plots it without parsing units ("1 TB/s" sorts before "100 GB/s").
  std::map<std::string, Dimension> quantities;
  for (const auto& p : params)
    if (const Param* declared = scenario_param_at(p); declared && declared->kind == ParamKind::quantity)
      quantities[p] = declared->dim;
  std::vector<std::string> header = {"point", "status", "error"};
  for (const auto& p : params) {
    header.push_back("params." + p);
    if (auto q = quantities.find(p); q != quantities.end())
      header.push_back(fmt::format("params.{} [{}]", p, si_unit(q->second)));
  }
  header.insert(header.end(), metrics.begin(), metrics.end());
  std::string out;
  if (!comment.empty()) out += "# " + comment + "\n";
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i) out.push_back(',');
    out.append(csv_cell(json(header[i])));
  }
  out.push_back('\n');
  for (const json& r : rows) {
    std::vector<json> cells = {r.at("point"), r.at("status"), r.contains("error") ? r.at("error") : json()};
    const json& ps = section(r, "params");
    const json& rep = section(r, "report");
    for (const auto& p : params) {
      cells.push_back(ps.contains(p) ? ps.at(p) : json());
      if (auto q = quantities.find(p); q != quantities.end())
        cells.push_back(ps.contains(p) ? si_value(ps.at(p), q->second) : json());
    }
    for (const auto& m : metrics) cells.push_back(rep.contains(m) ? rep.at(m) : json());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out.push_back(',');
      out.append(csv_cell(cells[i]));
    }
    out.push_back('\n');
  }
  return out;
}

SweepResults::SweepResults(std::filesystem::path dir, const json& sweep, const json& settings,
                           std::int64_t point_count)
    : dir_(std::move(dir)), point_count_(point_count) {
  std::error_code ec;
  if (std::filesystem::exists(dir_, ec) && !std::filesystem::is_directory(dir_, ec))
    throw InputError({Diagnostic{dir_.string(), "", "is not a folder (expected a sweep output folder or a new path)"}});
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw InputError({Diagnostic{dir_.string(), "", "cannot create the output folder: " + ec.message()}});
  // Held until this object goes; the kernel drops it when the process dies, so no stale lock remains.
  // A POSIX record lock, owned by this process alone: the sweep's forked workers do not inherit it,
  // so a killed sweep's dying workers cannot keep the folder locked against its resumption.
  const auto lock = dir_ / ".lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0)
    throw InputError({Diagnostic{dir_.string(), "", fmt::format("cannot use the output folder: {}", std::strerror(errno))}});
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;
  if (::fcntl(lock_fd_, F_SETLK, &whole) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw InputError({Diagnostic{dir_.string(), "", "another strata sweep is writing into this folder (expected one "
                                                    "sweep per folder at a time; wait for it or choose another --out)"}});
  }
  const auto identity = dir_ / "sweep.json";
  if (std::filesystem::exists(identity)) {
    const json held = read_json_file(identity, identity.string());
    if (held != sweep)
      throw InputError({Diagnostic{dir_.string(), "", "holds results of a different sweep (expected the sweep in "
                                                      "its sweep.json, or an empty folder)"}});
  } else {
    write_file_atomically(identity, sweep.dump(2) + "\n");
  }
  const auto run_with = dir_ / "settings.json";
  if (std::filesystem::exists(run_with)) {
    const json held = read_json_file(run_with, run_with.string());
    if (held != settings)
      throw InputError({Diagnostic{dir_.string(), "", fmt::format("holds results run with {} (expected the same "
                                                                  "options as {} to add to them, or an empty folder)",
                                                                  held.dump(), settings.dump())}});
  } else {
    write_file_atomically(run_with, settings.dump(2) + "\n");
  }
  if (settings.contains("partial") && settings.at("partial").is_string())
    csv_comment_ = "partial: " + settings.at("partial").get<std::string>();
  load(true);
}

SweepResults::~SweepResults() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

void SweepResults::load(bool warn) {
  done_.clear();
  for (ResultLine& line : read_lines(jsonl(), true)) {
    const auto point = result_point(line.text, point_count_);
    if (const auto* why = std::get_if<std::string>(&point)) {
      if (warn)
        std::fprintf(stderr, "warning: %s: %s; left out, so that point runs again\n",
                   location(jsonl(), line.number).c_str(), why->c_str());
      continue;
    }
    done_.emplace(std::get<std::int64_t>(point), std::move(line.text));
  }
}

void SweepResults::finish() {
  load(false);
  std::string all;
  std::vector<json> rows;
  for (const auto& [p, line] : done_) {
    all += line + "\n";
    rows.push_back(json::parse(line));
  }
  write_file_atomically(jsonl(), all);
  write_file_atomically(csv(), rows_to_csv(rows, csv_comment_));
}

namespace {

/// "0-3, 7, 9-12" for sorted point numbers, cut after `most` ranges.
std::string point_ranges(const std::vector<std::int64_t>& points, std::size_t most = 20) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    while (j + 1 < points.size() && points[j + 1] == points[j] + 1) ++j;
    if (shown == most) return out + ", ...";
    out += (out.empty() ? "" : ", ") +
           (i == j ? std::to_string(points[i]) : fmt::format("{}-{}", points[i], points[j]));
    ++shown;
    i = j + 1;
  }
  return out;
}

}  // namespace

void SweepResults::merge(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out,
                         bool allow_partial) {
  if (dirs.empty()) throw InputError({Diagnostic{"--merge", "", "no folders (expected the shard folders to merge)"}});
  json sweep, settings;
  std::int64_t point_count = -1, shards = 0;
  std::set<std::int64_t> shards_seen;
  std::map<std::int64_t, std::string> rows;
  // Shards share every option but which shard they are.
  auto options_of = [](json s) {
    s.erase("shard");
    return s;
  };
  for (const auto& d : dirs) {
    const auto identity = d / "sweep.json", run_with = d / "settings.json";
    if (!std::filesystem::exists(identity) || !std::filesystem::exists(run_with))
      throw InputError({Diagnostic{d.string(), "", "not a sweep output folder (no sweep.json and settings.json)"}});
    const json held = read_json_file(identity, identity.string());
    const json held_all = read_json_file(run_with, run_with.string());
    const json held_settings = options_of(held_all);
    if (held_all.contains("shard") && held_all.at("shard").is_object()) {
      shards = held_all.at("shard").value("of", std::int64_t{0});
      shards_seen.insert(held_all.at("shard").value("shard", std::int64_t{0}));
    }
    if (sweep.is_null()) {
      sweep = held;
      settings = held_settings;
    } else if (held != sweep) {
      throw InputError({Diagnostic{d.string(), "", fmt::format("holds a different sweep than {} (expected shards "
                                                               "of one sweep)", dirs.front().string())}});
    } else if (held_settings != settings) {
      throw InputError({Diagnostic{d.string(), "", fmt::format("was run with {}, {} with {} (expected shards run "
                                                               "with the same options)", held_settings.dump(),
                                                               dirs.front().string(), settings.dump())}});
    }
    if (point_count < 0) point_count = static_cast<std::int64_t>(parse_sweep(held, identity.string()).points.size());
    for (ResultLine& line : read_lines(d / "results.jsonl", false)) {
      const auto point = result_point(line.text, point_count);
      if (const auto* why = std::get_if<std::string>(&point))
        throw InputError({Diagnostic{location(d / "results.jsonl", line.number), "", *why}});
      const std::int64_t p = std::get<std::int64_t>(point);
      auto [it, fresh] = rows.emplace(p, line.text);
      if (!fresh && it->second != line.text)
        throw InputError({Diagnostic{d.string(), "", fmt::format("point {} differs from the same point in another "
                                                                 "folder (expected identical rows)", p)}});
    }
  }
  std::vector<std::int64_t> missing;
  for (std::int64_t p = 0; p < point_count; ++p)
    if (!rows.count(p)) missing.push_back(p);
  std::vector<std::int64_t> absent_shards;
  for (std::int64_t s = 1; s <= shards; ++s)
    if (!shards_seen.count(s)) absent_shards.push_back(s);
  const std::string which =
      absent_shards.empty() ? "" : fmt::format("shard(s) {} of {} absent; ", fmt::join(absent_shards, ", "), shards);
  if (!missing.empty() && !allow_partial)
    throw InputError({Diagnostic{"--merge", "", fmt::format("the folders hold {} of the sweep's {} points; {}missing: {} "
                                                            "(expected the folders of every shard, or --allow-partial)",
                                                            rows.size(), point_count, which, point_ranges(missing))}});
  if (!missing.empty())
    settings["partial"] = fmt::format("{} of {} points missing ({}), merged with --allow-partial", missing.size(),
                                      point_count, point_ranges(missing));
  SweepResults merged(out, sweep, settings, point_count);
  std::string all;
  for (const auto& [p, line] : rows) all += line + "\n";
  write_file_atomically(merged.jsonl(), all);
  merged.finish();
}

std::vector<std::int64_t> best_points(const std::map<std::int64_t, std::string>& rows, const std::string& metric,
                                      std::int64_t count, bool lowest) {
  std::vector<std::pair<double, std::int64_t>> ranked;
  for (const auto& [point, line] : rows) {
    const json row = json::parse(line);
    if (row.at("status") != "ok") continue;
    const json& report = row.at("report");
    // A flag ranks as 1 (true) or 0 (false), as in solve targets and compare rules.
    const auto value = metric_number(report, metric);
    if (!value) continue;
    ranked.emplace_back(lowest ? *value : -*value, point);
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::int64_t> out;
  for (const auto& [value, point] : ranked) {
    if (static_cast<std::int64_t>(out.size()) == count) break;
    out.push_back(point);
  }
  return out;
}

}  // namespace strata
