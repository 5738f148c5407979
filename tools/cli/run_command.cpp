#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

#include "sim/config/scenario_loader.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/json_file.hpp"
#include "sim/exec/run.hpp"
#include "sim/report/report.hpp"
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

int run_command(const FolderCatalog& catalog, const RunOptions& options) {
  std::vector<Override> overrides;
  for (const auto& text : options.overrides) overrides.push_back(parse_override(text));

  const std::filesystem::path scenario_path = find_scenario(catalog, options.scenario);

  auto started = std::chrono::steady_clock::now();
  Scenario sc = load_scenario(scenario_path, overrides, catalog);
  spdlog::debug("validated {} ({} GPUs, TP {} PP {} DP {})", scenario_path.string(), sc.gpus, sc.parallelism.tp,
                sc.parallelism.pp, sc.parallelism.dp);
  SimulationOptions sim;
  sim.executor = options.executor == "list" ? ExecutorKind::list : ExecutorKind::des;
  sim.fold = !options.no_fold;
  sim.keep_schedule = !options.trace_out.empty();
  sim.checkpoint_window = options.checkpoint_window;
  RunResult result = run_scenario(sc, sim);
  spdlog::debug("ran in {:.3f} s", std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  const std::string report = canonical_dump(make_report(sc, result));
  const bool json_to_stdout = options.json_out == "-";
  if (json_to_stdout) {
    std::fwrite(report.data(), 1, report.size(), stdout);
  } else if (!options.json_out.empty()) {
    write_file_atomically(options.json_out, report);
    spdlog::info("report written to {}", options.json_out);
  }
  if (!options.trace_out.empty()) {
    const SimulationResult& s = *result.simulation;
    write_file_atomically(options.trace_out, trace_json(*s.dag, *s.times, s.link_names));
    spdlog::info("trace written to {}", options.trace_out);
  }
  if (!options.quiet) {
    std::string table = summary_table(sc, result);
    std::fputs(table.c_str(), json_to_stdout ? stderr : stdout);
  }
  return 0;
}

}  // namespace strata::cli
