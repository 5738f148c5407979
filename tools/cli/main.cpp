// strata: wiring only. Parses the command line and hands over to a subcommand.

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <malloc.h>

#include <cstdio>
#include <cstdlib>

#include "sim/core/diagnostics.hpp"
#include "sim/core/output_file.hpp"
#include "tools/cli/commands.hpp"

namespace {

constexpr const char* kCheckpointWindowHelp =
    "iterations simulated after a checkpoint before the background hops' steady pace is extrapolated "
    "(64: simulate every iteration up to the next checkpoint; default 4 for the DES, 1 for screening)";

constexpr const char* kMaxTasksHelp =
    "refuse a simulation whose task DAG is estimated above this many tasks (about 550 bytes each; default 1e7)";

/// --data-dir if given, else $STRATA_DATA_DIR, else the source tree the binary was built from.
strata::FolderCatalog locate_data(const std::string& option) {
  if (!option.empty()) return strata::FolderCatalog(option);
  if (const char* env = std::getenv("STRATA_DATA_DIR"); env && *env) return strata::FolderCatalog(env);
  return strata::FolderCatalog(STRATA_DATA_DIR);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace strata::cli;
  // A run builds and drops task DAGs of up to a few hundred MiB, one after another: keep freed
  // memory in the heap for the next one instead of unmapping it and faulting it in again.
  ::mallopt(M_MMAP_THRESHOLD, 512 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  CLI::App app{"Strata: simulate the memory and storage systems behind large-model training"};
  app.set_version_flag("--version", std::string("strata ") + STRATA_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // global flags (-v, --data-dir) also after the subcommand
  bool verbose = false;
  std::string data_dir;
  app.add_flag("-v,--verbose", verbose, "log details to stderr");
  app.add_option("--data-dir", data_dir, "folder with models/, hardware_profiles/, scenarios/");

  RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "simulate one scenario: memory, iteration time, throughput");
  run_cmd->add_option("scenario", run.scenario, "scenario file or shipped scenario name (or the quick form: "
                                                "--model M --hardware H --gpus N ...)");
  add_quick_scenario_options(*run_cmd, run.quick);
  run_cmd->add_option("--set", run.overrides, "override a field: PATH=VALUE, e.g. parallelism.tp=4")
      ->allow_extra_args(false);
  run_cmd->add_option("--json", run.json_out, "write the JSON report to FILE, or - for stdout");
  run_cmd->add_flag("-q,--quiet", run.quiet, "no summary table");
  run_cmd->add_option("--executor", run.executor, "des (SimGrid, bandwidth sharing) or list (screening: the same sharing, in process)")
      ->check(CLI::IsMember({"des", "list"}));
  run_cmd->add_flag("--no-fold", run.no_fold, "simulate every rank instead of one per group of identical ranks");
  run_cmd->add_option("--html", run.html_out, "write a self-contained HTML report with plots to FILE");
  run_cmd->add_option("--trace", run.trace_out, "write a Chrome/Perfetto trace-event JSON of the schedule to FILE");
  run_cmd->add_option("--checkpoint-window", run.checkpoint_window, kCheckpointWindowHelp)->check(CLI::Range(1, 64));
  run_cmd->add_option("--max-tasks", run.max_tasks, kMaxTasksHelp)->check(CLI::Range(1.0, 1e10));
  run_cmd->add_option("--max-trace-tasks", run.max_trace_tasks,
                      "refuse a --trace of more tasks than this (about 700 bytes each; default 5e5)")
      ->check(CLI::Range(1.0, 1e9));

  SweepCommandOptions sweep;
  auto* sweep_cmd = app.add_subcommand("sweep", "run a parameter sweep (grid, zip, sample) in parallel workers; "
                                                "resumable; shardable; --merge combines shards");
  sweep_cmd->add_option("sweep", sweep.sweep, "sweep file: {base, grid, zip, sample}");
  sweep_cmd->add_option("--out", sweep.out, "output folder: sweep.json, results.jsonl, results.csv")->required();
  sweep_cmd->add_option("-j,--jobs", sweep.jobs, "worker processes (default: one per core)")
      ->check(CLI::Range(1, 1024));
  sweep_cmd->add_option("--shard", sweep.shard, "run only shard i of N (whole families of points that share a training run, balanced by expected cost), e.g. 2/8");
  sweep_cmd->add_option("--executor", sweep.executor, "des, or list to screen fast (the same bandwidth sharing, in process)")
      ->check(CLI::IsMember({"des", "list"}));
  sweep_cmd->add_option("--checkpoint-window", sweep.checkpoint_window, kCheckpointWindowHelp)
      ->check(CLI::Range(1, 64));
  sweep_cmd->add_option("--max-tasks", sweep.max_tasks, kMaxTasksHelp)->check(CLI::Range(1.0, 1e10));
  auto* confirm = sweep_cmd->add_option("--confirm", sweep.confirm,
                         "with --executor list: run the best N points again with the DES, into OUT/confirm")
      ->check(CLI::Range(1, 1000000));
  sweep_cmd->add_option("--by", sweep.by,
                        "flattened report key ranking the points for --confirm (default: "
                        "run.effective_tokens_per_s, or throughput.tokens_per_s without failures)")
      ->needs(confirm);
  sweep_cmd->add_flag("--lowest", sweep.lowest, "for --confirm, the best points have the lowest --by value")
      ->needs(confirm);
  sweep_cmd->add_option("--merge", sweep.merge, "merge these shard output folders into --out instead of running")
      ->expected(1, -1);
  sweep_cmd->add_flag("--allow-partial", sweep.allow_partial,
                      "with --merge: merge even when points are missing, marking the result partial");
  sweep_cmd->add_flag("-q,--quiet", sweep.quiet, "no progress bar");
  sweep_cmd->add_option("--html", sweep.html_out, "write a self-contained HTML report of every point to FILE");
  auto* slurm = sweep_cmd->add_flag("--slurm-script", sweep.slurm_script,
                                    "print an sbatch script running the sweep as a Slurm job array (shard i into "
                                    "OUT/shards/i, -j cores each) instead of running it");
  sweep_cmd->add_option("--shards", sweep.shards, "with --slurm-script: array tasks, one shard each (default 16)")
      ->check(CLI::Range(1, 1000000))->needs(slurm);
  sweep_cmd->add_option("--partition", sweep.partition, "with --slurm-script: #SBATCH --partition")->needs(slurm);
  sweep_cmd->add_option("--time", sweep.time, "with --slurm-script: #SBATCH --time per task, e.g. 2:00:00")
      ->needs(slurm);

  CompareOptions compare;
  auto* compare_cmd = app.add_subcommand("compare", "diff two reports (metric, A, B, change); --check ordering "
                                                    "rules (exit 3 when one fails)");
  compare_cmd->add_option("a", compare.a, "report A (strata run --json)")->required();
  compare_cmd->add_option("b", compare.b, "report B")->required();
  compare_cmd->add_option("--check", compare.rules, "rules file: {\"rules\": [{\"metric\", \"op\", \"why\"}]}, "
                                                    "each checked as A op B");
  compare_cmd->add_option("--html", compare.html_out, "write a self-contained HTML page of A and B side by side to FILE");

  SolveOptions solve;
  auto* solve_cmd = app.add_subcommand("solve", "find the smallest (or largest) input value that meets a target, "
                                                "by bisection");
  solve_cmd->add_option("scenario", solve.scenario, "scenario file or shipped scenario name")->required();
  solve_cmd->add_option("--vary", solve.vary, "the numeric input, e.g. hardware.object_store.bandwidth")->required();
  solve_cmd->add_option("--target", solve.target, "METRIC<=VALUE (or <, >=, >), e.g. "
                                                  "checkpoint.overhead_fraction<=0.02")->required();
  solve_cmd->add_option("--range", solve.range, "LO:HI, with units if the input has them, e.g. '10 GB/s:1 TB/s'")
      ->required();
  solve_cmd->add_option("--find", solve.find, "min (default) or max")->check(CLI::IsMember({"min", "max"}));
  solve_cmd->add_option("--tolerance", solve.tolerance, "relative precision (default 0.001)")
      ->check(CLI::Range(1e-9, 0.5));
  solve_cmd->add_option("--set", solve.overrides, "override a field: PATH=VALUE")->allow_extra_args(false);
  solve_cmd->add_option("--executor", solve.executor, "des or list")->check(CLI::IsMember({"des", "list"}));

  AdviseOptions advise;
  auto* advise_cmd = app.add_subcommand("advise", "search parallelism, memory and checkpoint policies for the "
                                                  "scenario's model, cluster and batch; rank what fits");
  advise_cmd->add_option("scenario", advise.scenario, "scenario file or shipped scenario name")->required();
  advise_cmd->add_option("--objective", advise.objective, "tokens_per_s (default) or goodput (effective tokens/s)")
      ->check(CLI::IsMember({"tokens_per_s", "goodput"}));
  advise_cmd->add_option("--top", advise.top, "configurations to show (default 5)")->check(CLI::Range(1, 1000));
  advise_cmd->add_option("--confirm", advise.confirm, "screened configurations re-simulated with the DES (default 8)")
      ->check(CLI::Range(1, 1000));
  advise_cmd->add_option("--set", advise.overrides, "override a field: PATH=VALUE")->allow_extra_args(false);
  advise_cmd->add_flag("-q,--quiet", advise.quiet, "no progress on stderr");

  std::string what;
  auto* describe_cmd = app.add_subcommand("describe", "list models, hardware profiles, policies, scenarios, report "
                                                    "metrics; one of them in detail with a NAME");
  describe_cmd->add_option("what", what, "models | hardware | policies | scenarios | metrics")
      ->check(CLI::IsMember({"models", "hardware", "policies", "scenarios", "metrics"}));
  std::string describe_name;
  describe_cmd->add_option("name", describe_name, "with models, hardware or scenarios: one name or path, in detail "
                                                  "(values as written and as read, with units)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  auto logger = spdlog::stderr_color_mt("strata");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(verbose ? spdlog::level::debug : spdlog::level::warn);

  try {
    strata::FolderCatalog catalog = locate_data(data_dir);
    int code = 0;
    if (run_cmd->parsed()) code = run_command(catalog, run);
    else if (describe_cmd->parsed()) code = describe_command(catalog, what, describe_name);
    else if (sweep_cmd->parsed()) code = sweep_command(catalog, sweep);
    else if (compare_cmd->parsed()) code = compare_command(compare);
    else if (solve_cmd->parsed()) code = solve_command(catalog, solve);
    else if (advise_cmd->parsed()) code = advise_command(catalog, advise);
    // What went to standard output must have arrived (a full device or a closed pipe is a failure).
    strata::flush_standard_output();
    return code;
  } catch (const strata::InputError& e) {
    print_input_error(e);
    return 2;
  } catch (const strata::OutputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 1;
  }
}
