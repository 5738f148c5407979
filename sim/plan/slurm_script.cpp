#include "sim/plan/slurm_script.hpp"

#include <fmt/format.h>

#include <cctype>
#include <regex>

#include "sim/core/diagnostics.hpp"

namespace strata {

namespace {

/// One shell word, whatever it holds: as is when it has only characters the shell takes literally,
/// else in single quotes, each ' written as '\''.
std::string quoted(const std::string& word) {
  if (!word.empty() && std::regex_match(word, std::regex("[A-Za-z0-9_./:=+,@-]+"))) return word;
  std::string out;
  out.push_back('\'');
  for (char c : word) {
    if (c == '\'') out.append("'\\''");
    else out.push_back(c);
  }
  out.push_back('\'');
  return out;
}

/// A job name sbatch takes unquoted: letters, digits, '_', '.', '-'; anything else becomes '-'.
std::string job_name(const std::string& name) {
  std::string out = "strata-";
  for (char c : name.empty() ? std::string("sweep") : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ? c : '-';
  return out;
}

}  // namespace

std::filesystem::path slurm_shard_folder(const std::filesystem::path& out, std::int64_t shard) {
  return out / "shards" / std::to_string(shard);
}

std::string slurm_script(const SlurmScriptOptions& o) {
  std::vector<Diagnostic> errors;
  // Slurm's partition names, or a comma-separated list of them (sbatch --partition).
  if (!o.partition.empty() && !std::regex_match(o.partition, std::regex("[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*")))
    errors.push_back({"--partition", "", fmt::format("'{}' is not a Slurm partition name (expected letters, digits, "
                                                     "'_', '.', '-', or a comma-separated list of them)", o.partition)});
  // sbatch --time: "minutes", "minutes:seconds", "hours:minutes:seconds", "days-hours",
  // "days-hours:minutes", "days-hours:minutes:seconds" (sbatch(1)), or no limit.
  if (!o.time.empty() && !std::regex_match(o.time, std::regex("[0-9]+(:[0-9]+){0,2}|[0-9]+-[0-9]+(:[0-9]+){0,2}|"
                                                               "UNLIMITED|INFINITE")))
    errors.push_back({"--time", "", fmt::format("'{}' is not a Slurm time limit (expected M, M:S, H:M:S, D-H, "
                                                "D-H:M or D-H:M:S, e.g. 2:00:00)", o.time)});
  // The log path goes into an #SBATCH line, which has no quoting to rely on; '%' is Slurm's pattern
  // character there.
  const std::string logs = (o.out / "shards").string();
  if (logs.find_first_of(" \t\n\r'\"\\%") != std::string::npos)
    errors.push_back({"--out", "", fmt::format("'{}' cannot go into an #SBATCH --output line (expected a path "
                                               "without whitespace, quotes, '\\' or '%')", o.out.string())});
  if (!errors.empty()) throw InputError(std::move(errors));

  const std::string strata = quoted(o.strata.string()), sweep = quoted(o.sweep.string()), out = quoted(o.out.string());
  std::string options;
  for (const std::string& option : o.sweep_options) options.append(" ").append(quoted(option));
  std::string s;
  s += "#!/bin/bash\n";
  s += fmt::format("# The sweep {} as a Slurm job array: array task i runs shard i of {} (whole families of\n"
                   "# points that share a training run, dealt by expected cost) into {}/shards/i.\n",
                   o.sweep.filename().string(), o.shards, o.out.string());
  s += "# Written by `strata sweep ... --slurm-script`.\n";
  s += "#\n";
  s += "#   submit:          sbatch THIS_FILE   (sbatch --wait THIS_FILE blocks until every task ends)\n";
  s += "#   a shard failed:  sbatch --array=I THIS_FILE   (runs shard I again; it keeps the points it wrote)\n";
  s += fmt::format("#   merge:           {} sweep --merge {}/shards/{{1..{}}} --out {}\n", strata, out, o.shards, out);
  s += fmt::format("#SBATCH --job-name={}\n", job_name(o.name));
  s += fmt::format("#SBATCH --array=1-{}\n", o.shards);
  s += fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus);
  if (!o.partition.empty()) s += fmt::format("#SBATCH --partition={}\n", o.partition);
  if (!o.time.empty()) s += fmt::format("#SBATCH --time={}\n", o.time);
  s += fmt::format("#SBATCH --output={}/slurm-%A_%a.out\n", logs);
  s += "set -euo pipefail\n";
  s += "shard=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: it is a job array}\"\n";
  s += fmt::format("exec {} sweep {} --out {}/shards/\"$shard\" --shard \"$shard/{}\" -j {} -q{}\n", strata, sweep,
                   out, o.shards, o.cpus, options);
  return s;
}

}  // namespace strata
