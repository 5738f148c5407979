#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "sim/config/scenario_loader.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/output_file.hpp"
#include "sim/analysis/run.hpp"
#include "sim/report/html_report.hpp"
#include "sim/report/report.hpp"
#include "sim/report/trace.hpp"
#include "tools/cli/commands.hpp"

namespace strata::cli {

void print_input_error(const std::exception& e) {
  if (const auto* input = dynamic_cast<const InputError*>(&e)) {
    for (const auto& d : input->diagnostics()) std::fprintf(stderr, "%s\n", d.to_string().c_str());
  } else {
    std::fprintf(stderr, "%s\n", e.what());
  }
}

std::filesystem::path find_scenario(const FolderCatalog& catalog, const std::string& scenario) {
  std::filesystem::path path = scenario;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return path;
  const bool looks_like_path = scenario.find('/') != std::string::npos || scenario.ends_with(".json");
  auto named = looks_like_path ? std::nullopt : catalog.find("scenario", scenario);
  if (!named) {
    std::string names;
    for (const auto& n : catalog.list("scenario")) names += (names.empty() ? "" : ", ") + n;
    throw InputError({Diagnostic{scenario, "", looks_like_path
        ? std::string("file not found")
        : fmt::format("no such scenario file or name (expected a path or one of: {})", names)}});
  }
  return *named;
}

namespace {

/// The scenario of `strata run`: its file, or the quick form's options. With --print-scenario the
/// quick form's document is printed (and checked) instead.
ComposedScenario compose_run_scenario(const FolderCatalog& catalog, const RunOptions& options,
                                      const std::vector<Override>& overrides) {
  if (!options.quick.used()) {
    if (options.quick.print)
      throw InputError({Diagnostic{"--print-scenario", "", "prints the quick form's scenario (expected --model M "
                                                           "--hardware H --gpus N; a scenario file is already one)"}});
    if (options.scenario.empty())
      throw InputError({Diagnostic{"run", "", "missing the scenario (expected a scenario file or shipped name, or "
                                              "the quick form --model M --hardware H --gpus N)"}});
    return compose_scenario(find_scenario(catalog, options.scenario), overrides, catalog);
  }
  if (!options.scenario.empty())
    throw InputError({Diagnostic{options.quick.given.begin()->first, "",
                                 fmt::format("the quick form builds its own scenario, but {} was given too (expected "
                                             "either; change a file's fields with --set PATH=VALUE)", options.scenario)}});
  const QuickScenario quick = build_quick_scenario(catalog, options.quick);
  ComposedScenario composed = compose_quick_scenario(quick, overrides, catalog);
  if (options.quick.print) {
    // Validated first: a printed scenario is one that runs.
    (void)parse_scenario(composed.doc, composed.sources);
    std::printf("%s", quick.doc.dump(2).append("\n").c_str());
    if (!overrides.empty()) std::fprintf(stderr, "(and the --set overrides on top of it)\n");
  }
  return composed;
}

}  // namespace

int run_command(const FolderCatalog& catalog, const RunOptions& options) {
  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parse_override(text));
  // Output paths are checked before anything runs: a bad one costs no simulation.
  std::optional<OutputPath> json_out, trace_out;
  if (!options.json_out.empty()) json_out.emplace(options.json_out, "--json");
  if (!options.trace_out.empty()) trace_out.emplace(options.trace_out, "--trace");
  std::optional<OutputPath> html_out;
  if (!options.html_out.empty()) html_out.emplace(options.html_out, "--html");

  auto started = std::chrono::steady_clock::now();
  // A scenario file, or the quick form's document built from options; from here on they are alike.
  const ComposedScenario composed = compose_run_scenario(catalog, options, overrides);
  if (options.quick.print) return 0;
  Scenario sc = parse_scenario(composed.doc, composed.sources);
  spdlog::debug("validated {} ({} GPUs, TP {} PP {} DP {})", composed.sources.root_file(), sc.gpus, sc.parallelism.tp,
                sc.parallelism.pp, sc.parallelism.dp);
  SimulationOptions sim;
  sim.executor = options.executor == "list" ? ExecutorKind::list : ExecutorKind::des;
  sim.fold = !options.no_fold;
  sim.keep_schedule = trace_out.has_value() || html_out.has_value();
  sim.checkpoint_window = options.checkpoint_window;
  sim.max_tasks = options.max_tasks;
  // The HTML report decimates what it keeps, so only a trace is limited by its size.
  sim.max_trace_tasks = trace_out ? options.max_trace_tasks : options.max_tasks;
  {
    // Checked here too so that a size driven by a --set names it.
    Diagnostics guard(&composed.sources);
    check_simulation_size(sc, sim, guard);
    guard.throw_if_any();
  }
  RunResult result = run_scenario(sc, sim);
  spdlog::debug("ran in {:.3f} s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  OutputBatch outputs;
  if (json_out) outputs.add(*json_out, canonical_dump(make_report(sc, result)));
  if (trace_out) {
    const SimulationResult& s = *result.simulation;
    outputs.add(*trace_out, trace_json(*s.dag, *s.times, s.link_names));
  }
  if (html_out) outputs.add(*html_out, html_run_report(sc, result, composed.doc));
  outputs.commit();
  const bool json_to_stdout = (json_out && json_out->mode() == OutputPath::Mode::standard_output) ||
                              (html_out && html_out->mode() == OutputPath::Mode::standard_output);
  if (!options.quiet) {
    std::string table = summary_table(sc, result);
    std::fputs(table.c_str(), json_to_stdout ? stderr : stdout);
  }
  return 0;
}

}  // namespace strata::cli
