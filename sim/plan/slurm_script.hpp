#pragma once

/// The sbatch script that runs a sweep as a Slurm job array, one shard per array task, so users do
/// not hand-write it (`strata sweep FILE --out DIR --slurm-script`).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace strata {

struct SlurmScriptOptions {
  std::filesystem::path strata;  ///< the strata binary the tasks run (absolute)
  std::filesystem::path sweep;   ///< the sweep file (absolute)
  std::filesystem::path out;     ///< the merged folder; shard i runs into out/shards/i (absolute)
  std::string name;              ///< the sweep's name, for the job name
  std::int64_t shards = 16;      ///< array tasks 1..shards
  int cpus = 1;                  ///< --cpus-per-task, and each shard's -j
  std::string partition;         ///< "" : the cluster's default partition
  std::string time;              ///< "" : the partition's default time limit
  std::vector<std::string> sweep_options;  ///< options every shard runs with (executor, window, ...)
};

/// The script text. Throws InputError (naming --partition, --time or --out) when a value cannot go
/// into an #SBATCH line: a partition that is not a Slurm name, a time limit not in one of Slurm's
/// formats (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S), or an output path with whitespace, quotes or '%'.
std::string slurm_script(const SlurmScriptOptions& options);

/// Where shard i of a script's sweep runs: out/shards/i.
std::filesystem::path slurm_shard_folder(const std::filesystem::path& out, std::int64_t shard);

}  // namespace strata
