#include "sim/plan/sweep_results.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sim/core/diagnostics.hpp"
#include "sim/core/json_file.hpp"
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
std::vector<std::string> read_lines(const std::filesystem::path& file, bool trim) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  std::vector<std::string> lines = complete_lines(text);
  const std::size_t complete = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
  if (trim && complete < text.size()) std::filesystem::resize_file(file, complete);
  return lines;
}

}  // namespace

std::vector<std::string> complete_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find('\n', start);
    if (end == std::string::npos) break;
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::int64_t result_point(const std::string& line, const std::string& file) {
  // A results file is ours but lives on disk, where a kill, a disk filling up or a hand edit can
  // damage it; every field that finish(), rows_to_csv() and best_points() rely on is checked here,
  // so a damaged row is an input error (exit 2) rather than a json exception later.
  auto refuse = [&](const std::string& pointer, const std::string& what) {
    return InputError({Diagnostic{file, pointer, "a line is not a result row: " + what}});
  };
  json row;
  try {
    row = parse_json_text(line, file);  // depth-limited: cells are dumped recursively for the CSV
  } catch (const InputError& e) {
    throw refuse("", e.diagnostics().front().message);
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw refuse("", e.what());
  }
  if (!row.is_object()) throw refuse("", fmt::format("wrong type (got {}, expected an object)", row.type_name()));
  constexpr auto kMaxPoint = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const auto point = row.find("point");
  const bool point_ok = point != row.end() && point->is_number_integer() &&
                        (point->is_number_unsigned() ? point->get<std::uint64_t>() <= kMaxPoint
                                                     : point->get<std::int64_t>() >= 0);
  if (!point_ok)
    throw refuse("/point", fmt::format("wrong value (got {}, expected a point number, an integer from 0)",
                                       point == row.end() ? "nothing" : show_value(point->dump())));
  const auto status = row.find("status");
  if (status == row.end() || !status->is_string() ||
      (*status != "ok" && *status != "invalid" && *status != "failed"))
    throw refuse("/status", fmt::format("wrong value (got {}, expected ok, invalid or failed)",
                                        status == row.end() ? "nothing" : show_value(status->dump())));
  for (const char* key : {"params", "report"}) {
    const auto it = row.find(key);
    const bool required = std::string(key) == "report" && *status == "ok";
    if ((it == row.end() && required) || (it != row.end() && !it->is_object()))
      throw refuse(std::string("/") + key, fmt::format("wrong type (got {}, expected an object)",
                                                       it == row.end() ? "nothing" : it->type_name()));
  }
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

void append_line(const std::filesystem::path& file, const std::string& line) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: {}", file.string(), std::strerror(errno)));
  const std::string data = line + "\n";
  const ssize_t n = ::write(fd, data.data(), data.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(data.size()))
    throw std::runtime_error(fmt::format("{}: short write: {}", file.string(), std::strerror(err)));
}

std::string rows_to_csv(const std::vector<json>& rows) {
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
  std::vector<std::string> header = {"point", "status", "error"};
  for (const auto& p : params) header.push_back("params." + p);
  header.insert(header.end(), metrics.begin(), metrics.end());
  std::string out;
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i) out.push_back(',');
    out.append(csv_cell(json(header[i])));
  }
  out.push_back('\n');
  for (const json& r : rows) {
    std::vector<json> cells = {r.at("point"), r.at("status"), r.contains("error") ? r.at("error") : json()};
    const json& ps = section(r, "params");
    const json& rep = section(r, "report");
    for (const auto& p : params) cells.push_back(ps.contains(p) ? ps.at(p) : json());
    for (const auto& m : metrics) cells.push_back(rep.contains(m) ? rep.at(m) : json());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out.push_back(',');
      out.append(csv_cell(cells[i]));
    }
    out.push_back('\n');
  }
  return out;
}

SweepResults::SweepResults(std::filesystem::path dir, const json& sweep, const json& settings)
    : dir_(std::move(dir)) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw InputError({Diagnostic{dir_.string(), "", "cannot create the output folder: " + ec.message()}});
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
  load();
}

void SweepResults::load() {
  done_.clear();
  for (std::string& line : read_lines(jsonl(), true)) {
    const std::int64_t p = result_point(line, jsonl().string());
    done_.emplace(p, std::move(line));
  }
}

void SweepResults::finish() {
  load();
  std::string all;
  std::vector<json> rows;
  for (const auto& [p, line] : done_) {
    all += line + "\n";
    rows.push_back(json::parse(line));
  }
  write_file_atomically(jsonl(), all);
  write_file_atomically(csv(), rows_to_csv(rows));
}

void SweepResults::merge(const std::vector<std::filesystem::path>& dirs, const std::filesystem::path& out) {
  if (dirs.empty()) throw InputError({Diagnostic{"--merge", "", "no folders (expected the shard folders to merge)"}});
  json sweep, settings;
  std::map<std::int64_t, std::string> rows;
  for (const auto& d : dirs) {
    const auto identity = d / "sweep.json", run_with = d / "settings.json";
    if (!std::filesystem::exists(identity) || !std::filesystem::exists(run_with))
      throw InputError({Diagnostic{d.string(), "", "not a sweep output folder (no sweep.json and settings.json)"}});
    const json held = read_json_file(identity, identity.string());
    const json held_settings = read_json_file(run_with, run_with.string());
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
    for (std::string& line : read_lines(d / "results.jsonl", false)) {
      const std::int64_t p = result_point(line, (d / "results.jsonl").string());
      auto [it, fresh] = rows.emplace(p, line);
      if (!fresh && it->second != line)
        throw InputError({Diagnostic{d.string(), "", fmt::format("point {} differs from the same point in another "
                                                                 "folder (expected identical rows)", p)}});
    }
  }
  SweepResults merged(out, sweep, settings);
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
    auto it = report.find(metric);
    if (it == report.end() || !it->is_number()) continue;
    ranked.emplace_back(lowest ? it->get<double>() : -it->get<double>(), point);
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
