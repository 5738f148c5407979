#pragma once

/// The CLI's subcommands. Each returns the process exit code: 0 done, 2 invalid input.

#include <string>
#include <vector>

#include "sim/config/folder_catalog.hpp"
#include "sim/analysis/run.hpp"
#include "tools/cli/quick_scenario.hpp"

namespace strata::cli {

struct RunOptions {
  std::string scenario;  ///< "" with the quick form
  QuickScenarioOptions quick;
  std::vector<std::string> overrides;
  std::string json_out;  ///< "" none, "-" stdout
  bool quiet = false;
  std::string executor = "des";
  bool no_fold = false;
  std::string trace_out;  ///< "" none
  std::string html_out;   ///< "" none
  int checkpoint_window = SimulationOptions{}.checkpoint_window;
  double max_tasks = SimulationOptions::kDefaultMaxTasks;
  double max_trace_tasks = SimulationOptions::kDefaultMaxTraceTasks;
};

struct SweepCommandOptions {
  std::string sweep;               ///< the sweep file ("" with --merge)
  std::string out;                 ///< output folder
  int jobs = 0;                    ///< 0: one worker per core
  std::string shard = "1/1";
  std::string executor = "des";
  int checkpoint_window = SimulationOptions{}.checkpoint_window;
  double max_tasks = SimulationOptions::kDefaultMaxTasks;
  std::int64_t confirm = 0;        ///< after screening, run the best N again with the DES
  std::string by;                  ///< the metric ranking them ("" : goodput-weighted tokens/s, else tokens/s)
  bool lowest = false;             ///< the best have the lowest value of `by`
  std::vector<std::string> merge;  ///< folders to merge instead of running
  bool allow_partial = false;      ///< merge even when points are missing (marked partial)
  std::string html_out;            ///< "" none
  bool quiet = false;
  bool slurm_script = false;       ///< print the sbatch script of a job array of `shards` instead of running
  std::int64_t shards = 16;        ///< with slurm_script: array tasks, one shard each
  std::string partition, time;     ///< with slurm_script: #SBATCH --partition, --time ("" : cluster default)
};

struct CompareOptions {
  std::string a, b;   ///< report files
  std::string rules;  ///< "" none
  std::string html_out;  ///< "" none
};

int run_command(const FolderCatalog& catalog, const RunOptions& options);
/// Exit 3 when an ordering rule does not hold.
int compare_command(const CompareOptions& options);
int sweep_command(const FolderCatalog& catalog, const SweepCommandOptions& options);
/// `name`: with `what` = models, one model (a shipped name or a config.json path) in detail.
int describe_command(const FolderCatalog& catalog, const std::string& what, const std::string& name = "");

struct SolveOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string vary, target, range;
  std::string find = "min";
  double tolerance = 1e-3;
  std::string executor = "des";
};

/// Exit 3 when no value in the range meets the target.
int solve_command(const FolderCatalog& catalog, const SolveOptions& options);

struct AdviseOptions {
  std::string scenario;
  std::vector<std::string> overrides;
  std::string objective = "tokens_per_s";
  int top = 5, confirm = 8;
  bool quiet = false;
};

/// Exit 3 when nothing fits.
int advise_command(const FolderCatalog& catalog, const AdviseOptions& options);

/// A scenario file, or a shipped scenario's name. Throws InputError listing the names.
std::filesystem::path find_scenario(const FolderCatalog& catalog, const std::string& scenario);

/// Prints an InputError's diagnostics to stderr, one per line.
void print_input_error(const std::exception& e);

}  // namespace strata::cli
