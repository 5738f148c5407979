#include <unistd.h>

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string_view>
#include <map>
#include <thread>

#include "sim/core/diagnostics.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/output_file.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/slurm_script.hpp"
#include "sim/plan/sweep_runner.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/metrics.hpp"
#include "tools/cli/commands.hpp"

namespace strata::cli {

namespace {

std::string duration(double s) {
  if (!(s >= 0) || s > 360000) return "--";
  const auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

/// "[#####     ] 123/2000  6.1 points/s  ETA 5m07s" on stderr: redrawn in place on a terminal, a
/// line per tenth otherwise (logs).
class ProgressBar {
 public:
  explicit ProgressBar(bool quiet) : quiet_(quiet), tty_(::isatty(2) != 0) {}
  void operator()(std::int64_t done, std::int64_t total) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
      first_ = done;
    }
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done - first_) / elapsed : 0.0;
    const double eta = rate > 0 ? static_cast<double>(total - done) / rate : -1.0;
    const int width = 30;
    const int filled = total > 0 ? static_cast<int>(width * done / total) : width;
    const std::string line = fmt::format("[{}{}] {}/{}  {:.1f} points/s  ETA {}", std::string(filled, '#'),
                                         std::string(width - filled, ' '), done, total, rate, duration(eta));
    if (tty_) {
      std::fprintf(stderr, "\r%s", line.c_str());
      if (done == total) std::fputc('\n', stderr);
    } else if (total > 0 && (done * 10 / total != last_tenth_ || done == total)) {
      last_tenth_ = done * 10 / total;
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

 private:
  bool quiet_, tty_, started_ = false;
  std::chrono::steady_clock::time_point start_;
  std::int64_t first_ = 0, last_tenth_ = -1;
};

/// "i/N": two whole numbers and nothing else (no spaces, signs or trailing text).
std::pair<std::int64_t, std::int64_t> parse_shard(const std::string& text) {
  auto whole = [](std::string_view s) -> std::optional<std::int64_t> {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty() || s.front() == '-') return std::nullopt;
    return v;
  };
  const auto slash = text.find('/');
  if (slash != std::string::npos) {
    const auto i = whole(std::string_view(text).substr(0, slash)), n = whole(std::string_view(text).substr(slash + 1));
    if (i && n && *n >= 1 && *n <= 1000000 && *i >= 1 && *i <= *n) return {*i, *n};
  }
  throw InputError({Diagnostic{"--shard", "", fmt::format("'{}' is not a shard (expected i/N with 1 <= i <= N, "
                                                          "N <= 1000000, e.g. 3/8)", text)}});
}

/// Runs the best screened points again with the DES into OUT/confirm (resumable like any sweep) and
/// prints both values of the ranking metric side by side.
void confirm_best(const SweepSpec& spec, const SweepResults& screened, const FolderCatalog& catalog,
                  const std::filesystem::path& file, const SweepCommandOptions& o, SweepOptions options) {
  std::string metric = o.by;
  if (metric.empty()) {
    const auto first = nlohmann::json::parse(screened.done().begin()->second);
    metric = first.contains("report") && first.at("report").contains("run.effective_tokens_per_s")
                 ? "run.effective_tokens_per_s"
                 : "throughput.tokens_per_s";
  }
  const std::vector<std::int64_t> best = best_points(screened.done(), metric, o.confirm, o.lowest);
  if (best.empty())
    throw InputError({Diagnostic{"--by", "", fmt::format("no ok row reports '{}' (expected a flattened report "
                                                         "key, as in results.csv)", metric)}});
  SweepSpec chosen = spec;
  chosen.points.clear();
  for (std::int64_t p : best) chosen.points.push_back(spec.points[static_cast<std::size_t>(p)]);
  options.simulation.executor = ExecutorKind::des;
  options.shard.reset();
  SweepResults confirmed(std::filesystem::path(o.out) / "confirm", spec.document, sweep_settings(options.simulation),
                         static_cast<std::int64_t>(spec.points.size()));
  ProgressBar bar(o.quiet);
  run_sweep(chosen, confirmed, catalog, file.parent_path(), options,
            [&](std::int64_t done, std::int64_t total) { bar(done, total); });
  confirmed.finish();
  std::printf("%-8s %-8s %16s %16s %9s\n", "rank", "point", "screened", "DES", "change");
  for (std::size_t i = 0; i < best.size(); ++i) {
    const auto screened_row = nlohmann::json::parse(screened.done().at(best[i]));
    const auto it = confirmed.done().find(best[i]);
    const auto des_row = it == confirmed.done().end() ? nlohmann::json() : nlohmann::json::parse(it->second);
    const double a = metric_number(screened_row.at("report"), metric).value_or(0.0);
    if (des_row.value("status", "") != "ok" || !des_row.at("report").contains(metric)) {
      std::printf("%-8zu %-8lld %16s %16s %9s\n", i + 1, static_cast<long long>(best[i]),
                  format_metric(metric, a).c_str(), "-", "-");
      continue;
    }
    const double b = metric_number(des_row.at("report"), metric).value_or(0.0);
    std::printf("%-8zu %-8lld %16s %16s %9s\n", i + 1, static_cast<long long>(best[i]), format_metric(metric, a).c_str(),
                format_metric(metric, b).c_str(),
                unsigned_zero(fmt::format("{:.2f}%", a != 0 ? 100.0 * (b - a) / a : 0.0)).c_str());
  }
  std::fprintf(stderr, "confirmed the best %zu of %s by %s with the DES into %s\n", best.size(),
               o.out.c_str(), metric.c_str(), (std::filesystem::path(o.out) / "confirm").string().c_str());
}

/// --slurm-script: the sbatch script of a job array, one shard per task, on stdout; OUT/shards made
/// for the tasks' logs (Slurm does not create an --output folder).
int print_slurm_script(const SweepSpec& spec, const nlohmann::json& doc, const std::filesystem::path& file,
                       const SweepCommandOptions& o) {
  std::vector<Diagnostic> errors;
  if (o.shard != "1/1") errors.push_back({"--shard", "", "the script gives each array task its shard (expected no "
                                                         "--shard with --slurm-script)"});
  if (o.confirm > 0) errors.push_back({"--confirm", "", "is not run by the script (expected no --confirm with "
                                                        "--slurm-script; confirm after the merge)"});
  if (!errors.empty()) throw InputError(std::move(errors));
  SlurmScriptOptions s;
  std::error_code ec;
  s.strata = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) s.strata = "strata";
  s.sweep = std::filesystem::absolute(file);
  s.out = std::filesystem::absolute(o.out).lexically_normal();
  if (!s.out.has_filename()) s.out = s.out.parent_path();
  s.name = doc.is_object() && doc.contains("name") && doc.at("name").is_string() ? doc.at("name").get<std::string>()
                                                                               : file.stem().string();
  s.shards = o.shards;
  s.cpus = o.jobs > 0 ? o.jobs : 1;
  s.partition = o.partition;
  s.time = o.time;
  s.sweep_options = {"--executor", o.executor};
  if (o.checkpoint_window > 0) {  // unset: each executor's own window
    s.sweep_options.push_back("--checkpoint-window");
    s.sweep_options.push_back(std::to_string(o.checkpoint_window));
  }
  if (o.max_tasks != SimulationOptions::kDefaultMaxTasks) {
    s.sweep_options.push_back("--max-tasks");
    s.sweep_options.push_back(fmt::format("{}", o.max_tasks));
  }
  const std::string script = slurm_script(s);
  std::filesystem::create_directories(s.out / "shards", ec);
  if (ec) throw InputError({Diagnostic{(s.out / "shards").string(), "", "cannot create the shards' folder: " + ec.message()}});
  std::fputs(script.c_str(), stdout);
  std::vector<const SweepPoint*> all;
  for (const SweepPoint& p : spec.points) all.push_back(&p);
  const auto families = static_cast<std::int64_t>(sweep_families(all).size());
  std::fprintf(stderr, "%s: %zu points in %lld families over %lld array tasks of %d core(s)%s; submit with sbatch, "
               "then merge (the script's comment has the command)\n", file.string().c_str(), spec.points.size(),
               static_cast<long long>(families), static_cast<long long>(o.shards), s.cpus,
               families < o.shards ? fmt::format(" ({} of them with no family: fewer shards would do)",
                                                 o.shards - families).c_str()
                                   : "");
  return 0;
}

}  // namespace

int sweep_command(const FolderCatalog& catalog, const SweepCommandOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  std::optional<OutputPath> html_out;
  if (!o.html_out.empty()) html_out.emplace(o.html_out, "--html");
  if (!o.merge.empty()) {
    if (o.slurm_script)
      throw InputError({Diagnostic{"--slurm-script", "", "writes a script to run a sweep (expected a sweep file, "
                                                          "not --merge)"}});
    std::vector<std::filesystem::path> dirs(o.merge.begin(), o.merge.end());
    SweepResults::merge(dirs, o.out, o.allow_partial);
    std::fprintf(stderr, "merged %zu folders into %s\n", dirs.size(), o.out.c_str());
    if (html_out) {
      // The merged folder as written: its sweep document and its rows.
      const std::filesystem::path out = o.out;
      std::vector<nlohmann::json> rows;
      std::ifstream lines(out / "results.jsonl");
      for (std::string line; std::getline(lines, line);)
        if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
      write_output(*html_out, html_sweep_report(out.filename().string(),
                                                read_json_file(out / "sweep.json", (out / "sweep.json").string()), rows));
    }
    return 0;
  }
  if (o.sweep.empty())
    throw InputError({Diagnostic{"sweep", "", "missing the sweep file (expected SWEEP.json, or --merge DIR...)"}});
  const std::filesystem::path file = o.sweep;
  const nlohmann::json doc = read_json_file(file, file.string());
  const SweepSpec spec = parse_sweep(doc, file.string());
  if (spec.base.is_string()) base_scenario_file(spec, catalog, file.parent_path());  // refuse a bad base now
  if (o.slurm_script) return print_slurm_script(spec, doc, file, o);
  SweepOptions options;
  options.jobs = o.jobs > 0 ? o.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto [shard, shards] = parse_shard(o.shard);
  options.simulation.executor = o.executor == "list" ? ExecutorKind::list : ExecutorKind::des;
  options.simulation.checkpoint_window = o.checkpoint_window;
  options.simulation.max_tasks = o.max_tasks;
  if (o.confirm > 0 && options.simulation.executor != ExecutorKind::list)
    throw InputError({Diagnostic{"--confirm", "", "confirms a screening run (expected --executor list with it)"}});
  // Ranked by a report metric (strata describe metrics): a misspelt one is refused before any point runs.
  if (!o.by.empty())
    if (auto problem = metric_key_problem(o.by)) throw InputError({Diagnostic{"--by", "", *problem}});
  nlohmann::json settings = sweep_settings(options.simulation);
  if (shards > 1) {
    options.shard = assign_shard(spec, catalog, file.parent_path(), shard, shards, options.simulation);
    settings["shard"] = options.shard->describe();
  }
  SweepResults results(o.out, doc, settings, static_cast<std::int64_t>(spec.points.size()));
  ProgressBar bar(o.quiet);
  const std::int64_t ran = run_sweep(spec, results, catalog, file.parent_path(), options,
                                     [&](std::int64_t done, std::int64_t total) { bar(done, total); });
  results.finish();
  if (html_out) {
    std::vector<nlohmann::json> rows;
    for (const auto& [p, line] : results.done()) rows.push_back(nlohmann::json::parse(line));
    write_output(*html_out, html_sweep_report(file.filename().string(), doc, rows));
  }
  std::map<std::string, int> status;
  for (const auto& [p, line] : results.done()) ++status[nlohmann::json::parse(line).at("status").get<std::string>()];
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "%s: %lld point(s) run now in %.1f s (%.2f points/s, %d worker(s)); %s holds ok %d, "
               "invalid %d, failed %d\n", file.string().c_str(), static_cast<long long>(ran), wall,
               wall > 0 ? static_cast<double>(ran) / wall : 0.0, options.jobs, o.out.c_str(), status["ok"],
               status["invalid"], status["failed"]);
  if (o.confirm > 0 && status["ok"] > 0) confirm_best(spec, results, catalog, file, o, options);
  return status["failed"] > 0 ? 1 : 0;
}

}  // namespace strata::cli
