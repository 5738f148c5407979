#include "sim/plan/sweep_runner.hpp"

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>

#include "sim/analysis/dag_cache.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/output_file.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/exec/simulation_memo.hpp"
#include "sim/report/report.hpp"

namespace strata {

namespace {

using nlohmann::json;

std::string joined(const InputError& e) {
  std::string out;
  for (const Diagnostic& d : e.diagnostics()) out += (out.empty() ? "" : "; ") + d.to_string();
  return out;
}

}  // namespace

json sweep_settings(const SimulationOptions& options) {
  return {{"executor", to_string(options.executor)}, {"checkpoint_window", options.window()},
          {"fold", options.fold}};
}

std::filesystem::path base_scenario_file(const SweepSpec& spec, const DocumentResolver& resolver,
                                         const std::filesystem::path& base_dir) {
  const std::string name = spec.base.get<std::string>();
  const std::filesystem::path path = name;
  if (path.is_relative() && std::filesystem::exists(base_dir / path)) return base_dir / path;
  if (std::filesystem::exists(path)) return path;
  if (auto named = resolver.find("scenario", name)) return *named;
  throw InputError({Diagnostic{spec.file, "/base", fmt::format("no such scenario file or name '{}' (expected a path, "
                                                               "relative to the sweep file or not, or a shipped "
                                                               "scenario name)", name)}});
}

std::string dag_group(const SweepSpec& spec, const SweepPoint& point) {
  json shared = {{"base", spec.base}};
  for (const auto& [path, value] : point.params.items())
    if (!family_may_differ_in(path) && !dag_neutral(path)) shared[path] = value;
  return shared.dump();
}

std::vector<json> run_family(const SweepSpec& spec, const std::vector<const SweepPoint*>& family,
                             const DocumentResolver& resolver, const std::filesystem::path& base_dir,
                             const SimulationOptions& family_options) {
  // One sweep's families with equal groups differ only in what no DAG reads: they share DAGs.
  SimulationOptions options = family_options;
  if (!family.empty()) options.dag_group = dag_group(spec, *family.front());
  std::vector<json> rows;
  std::vector<Scenario> scenarios;
  std::vector<std::size_t> simulated;  // rows whose scenario is valid, in the order of `scenarios`
  for (const SweepPoint* point : family) {
    json row = {{"point", point->index}, {"params", point->params}};
    try {
      const ComposedScenario composed =
          spec.base.is_object()
              ? compose_scenario(spec.base, spec.file + " /base", base_dir, point->overrides, resolver)
              : compose_scenario(base_scenario_file(spec, resolver, base_dir), point->overrides, resolver);
      scenarios.push_back(parse_scenario(composed.doc, composed.sources));
      simulated.push_back(rows.size());
    } catch (const InputError& e) {
      row["status"] = "invalid";
      row["error"] = joined(e);
    }
    rows.push_back(std::move(row));
  }
  auto ok = [&](std::size_t i, const RunResult& result) {
    json& row = rows[simulated[i]];
    row["status"] = "ok";
    row["report"] = flatten_report(make_report(scenarios[i], result));
  };
  try {
    const std::vector<RunResult> results = run_scenarios(scenarios, options);
    for (std::size_t i = 0; i < results.size(); ++i) ok(i, results[i]);
  } catch (const std::exception&) {
    // One member failed (e.g. its run-level simulation grew too long): run them one by one, so the
    // failure stays with its point.
    for (std::size_t i = 0; i < scenarios.size(); ++i) {
      try {
        ok(i, run_scenario(scenarios[i], options));
      } catch (const std::exception& e) {
        rows[simulated[i]]["status"] = "failed";
        rows[simulated[i]]["error"] = e.what();
      }
    }
  }
  return rows;
}

std::vector<std::vector<const SweepPoint*>> sweep_families(const std::vector<const SweepPoint*>& points) {
  std::vector<std::vector<const SweepPoint*>> families;
  std::map<std::string, std::size_t> family_of;
  for (const SweepPoint* p : points) {
    json shared = json::object();
    for (const auto& [path, value] : p->params.items())
      if (!family_may_differ_in(path)) shared[path] = value;
    auto [it, added] = family_of.try_emplace(shared.dump(), families.size());
    if (added) families.emplace_back();
    families[it->second].push_back(p);
  }
  return families;
}

/// A family's expected cost in simulated tasks: its training run, plus the checkpoint windows its
/// run simulates (analysis/checkpoint_simulator): iterations up to the checkpoint, the one with
/// it, then one more for a blocking strategy, or up to the checkpoint window and one more
/// for the steady pace when hops run in the background.
double expected_cost(const Scenario& sc, const SimulationOptions& options) {
  const DagSizeEstimate size = estimate_dag_size(sc, options.fold);
  if (!sc.checkpoint.enabled) return size.tasks;
  const double iterations = static_cast<double>(std::max<std::int64_t>(sc.training.iterations, 3));
  const double before = iterations - 1.0;
  const double window = static_cast<double>(options.window());
  const double windows = behaviour(sc.checkpoint.strategy).blocks_until_durable
                             ? before + 2.0
                             : (before + 1.0 + window) + (before + 2.0 + window);
  return size.tasks * (1.0 + windows / iterations);
}

json ShardAssignment::describe() const {
  return {{"shard", shard},
          {"of", shards},
          {"assignment", "whole families, largest expected cost first to the least loaded shard"},
          {"points", points.size()},
          {"families", families},
          {"expected_cost_share", total_cost > 0 ? cost / total_cost : 0.0}};
}

ShardAssignment assign_shard(const SweepSpec& spec, const DocumentResolver& resolver,
                             const std::filesystem::path& base_dir, std::int64_t shard, std::int64_t shards,
                             const SimulationOptions& options) {
  std::vector<const SweepPoint*> all;
  for (const SweepPoint& p : spec.points) all.push_back(&p);
  const auto families = sweep_families(all);
  const bool costed = families.size() <= kMaxCostedFamilies;
  std::vector<double> cost(families.size(), 0.0);
  for (std::size_t f = 0; f < families.size(); ++f) {
    cost[f] = static_cast<double>(families[f].size());
    if (!costed) continue;
    try {
      const SweepPoint& p = *families[f].front();
      const ComposedScenario composed =
          spec.base.is_object()
              ? compose_scenario(spec.base, spec.file + " /base", base_dir, p.overrides, resolver)
              : compose_scenario(base_scenario_file(spec, resolver, base_dir), p.overrides, resolver);
      cost[f] = expected_cost(parse_scenario(composed.doc, composed.sources), options);
    } catch (const InputError&) {
      cost[f] = 1.0;  // invalid: no simulation
    }
  }
  std::vector<std::size_t> order(families.size());
  for (std::size_t f = 0; f < order.size(); ++f) order[f] = f;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(static_cast<std::size_t>(shards), 0.0);
  ShardAssignment out;
  out.shard = shard;
  out.shards = shards;
  for (std::size_t f : order) {
    const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[least] += cost[f];
    out.total_cost += cost[f];
    if (static_cast<std::int64_t>(least) != shard - 1) continue;
    ++out.families;
    out.cost += cost[f];
    for (const SweepPoint* p : families[f]) out.points.push_back(p->index);
  }
  std::sort(out.points.begin(), out.points.end());
  return out;
}

std::int64_t run_sweep(const SweepSpec& spec, SweepResults& results, const DocumentResolver& resolver,
                       const std::filesystem::path& base_dir, const SweepOptions& options,
                       const SweepProgress& progress) {
  std::vector<const SweepPoint*> todo;
  std::int64_t in_shard = 0;
  auto consider = [&](const SweepPoint& p) {
    ++in_shard;
    if (!results.done().count(p.index)) todo.push_back(&p);
  };
  if (options.shard)
    for (std::int64_t i : options.shard->points) consider(spec.points[static_cast<std::size_t>(i)]);
  else
    for (const SweepPoint& p : spec.points) consider(p);
  const std::int64_t already = in_shard - static_cast<std::int64_t>(todo.size());
  if (progress) progress(already, in_shard);
  if (todo.empty()) return 0;
  const auto families = sweep_families(todo);
  const int workers = static_cast<int>(std::min<std::int64_t>(std::max(1, options.jobs), families.size()));

  // The next family to take, shared by the workers: each takes one at a time, so both cores stay
  // busy to the end whatever the families cost.
  void* shared = ::mmap(nullptr, sizeof(std::atomic<std::int64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                        -1, 0);
  if (shared == MAP_FAILED) throw std::runtime_error(std::string("mmap: ") + std::strerror(errno));
  auto* next = new (shared) std::atomic<std::int64_t>(0);
  static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the shared counter must work across processes");
  int beat[2];  // a byte per finished point, from the workers
  if (::pipe(beat) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  std::vector<pid_t> pids;
  for (int w = 0; w < workers; ++w) {
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::close(beat[0]);
      // Die with the sweep: a killed sweep must not go on appending rows behind the next run's back.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      // Families often share simulations (one strategy's training run at every object-store
      // bandwidth): the worker simulates each once.
      enable_process_simulation_memos();
      // Screening keeps the DAGs families share. The DES does not: it forks a child for each
      // simulation, and a worker holding a gigabyte of DAGs forks slower than it builds them (the
      // GPT-3 grid: +16 % CPU with the cache, BENCHMARKS.md).
      if (options.simulation.executor == ExecutorKind::list) enable_process_dag_cache();
      int status = 0;
      try {
        for (auto i = static_cast<std::size_t>(next->fetch_add(1)); i < families.size();
             i = static_cast<std::size_t>(next->fetch_add(1))) {
          for (const json& row : run_family(spec, families[i], resolver, base_dir, options.simulation)) {
            append_line(results.jsonl(), row_line(row));
            [[maybe_unused]] auto n = ::write(beat[1], "x", 1);
          }
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "sweep worker: %s\n", e.what());
        status = 1;
      }
      ::_exit(status);
    }
    pids.push_back(pid);
  }
  ::close(beat[1]);
  std::int64_t finished = 0;
  char buffer[256];
  while (true) {
    const ssize_t n = ::read(beat[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    finished += n;
    if (progress) progress(already + finished, in_shard);
  }
  ::close(beat[0]);
  bool ok = true;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  ::munmap(shared, sizeof(std::atomic<std::int64_t>));
  if (!ok) throw std::runtime_error("a sweep worker failed (see the messages above)");
  return finished;
}

}  // namespace strata
