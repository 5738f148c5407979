// The sbatch script `strata sweep --slurm-script` writes (issue 16 item 4). tests/slurm_sweep.sh
// submits it to a real Slurm; these pin its text and its refusals without one.
#include <catch2/catch.hpp>

#include <filesystem>

#include "sim/core/diagnostics.hpp"
#include "sim/plan/slurm_script.hpp"
#include "support.hpp"

namespace strata::test {

namespace {

SlurmScriptOptions options() {
  SlurmScriptOptions o;
  o.strata = "/opt/strata/bin/strata";
  o.sweep = "/home/me/big sweep.json";
  o.out = "/scratch/runs/big";
  o.name = "big sweep";
  o.shards = 16;
  o.cpus = 2;
  o.partition = "cpu";
  o.time = "2:00:00";
  o.sweep_options = {"--executor", "des", "--checkpoint-window", "4"};
  return o;
}

std::string message(const SlurmScriptOptions& o) {
  try {
    slurm_script(o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("The Slurm script runs shard i of N per array task into OUT/shards/i", "[sweep][slurm]") {
  const std::string s = slurm_script(options());
  CHECK(s.rfind("#!/bin/bash\n", 0) == 0);
  CHECK(s.find("#SBATCH --job-name=strata-big-sweep\n") != std::string::npos);
  CHECK(s.find("#SBATCH --array=1-16\n") != std::string::npos);
  CHECK(s.find("#SBATCH --cpus-per-task=2\n") != std::string::npos);
  CHECK(s.find("#SBATCH --partition=cpu\n") != std::string::npos);
  CHECK(s.find("#SBATCH --time=2:00:00\n") != std::string::npos);
  CHECK(s.find("#SBATCH --output=/scratch/runs/big/shards/slurm-%A_%a.out\n") != std::string::npos);
  // A path with a space is one shell word.
  CHECK(s.find("exec /opt/strata/bin/strata sweep '/home/me/big sweep.json' --out /scratch/runs/big/shards/\"$shard\" "
               "--shard \"$shard/16\" -j 2 -q --executor des --checkpoint-window 4\n") != std::string::npos);
  CHECK(s.find("sweep --merge /scratch/runs/big/shards/{1..16} --out /scratch/runs/big\n") != std::string::npos);
  // No partition or time limit: the cluster's defaults, no directive.
  SlurmScriptOptions o = options();
  o.partition.clear();
  o.time.clear();
  const std::string plain = slurm_script(o);
  CHECK(plain.find("--partition") == std::string::npos);
  CHECK(plain.find("--time") == std::string::npos);
  CHECK(slurm_shard_folder("/scratch/runs/big", 3) == std::filesystem::path("/scratch/runs/big/shards/3"));
}

TEST_CASE("The Slurm script refuses what cannot go into an #SBATCH line, naming the option", "[sweep][slurm]") {
  for (const char* time : {"30", "30:00", "2:00:00", "1-0", "1-12:00", "1-12:00:00", "UNLIMITED"}) {
    SlurmScriptOptions o = options();
    o.time = time;
    CHECK(message(o).empty());
  }
  SlurmScriptOptions o = options();
  o.time = "2h";
  o.partition = "cpu gpu";
  o.out = "/scratch/runs/50%";
  const std::string m = message(o);
  CHECK(m.find("--partition") != std::string::npos);
  CHECK(m.find("--time") != std::string::npos);
  CHECK(m.find("--out") != std::string::npos);
}

TEST_CASE("strata sweep --slurm-script prints the script and refuses --shard and --merge", "[sweep][slurm]") {
  const std::string out = temp_file("slurm-out");
  const Result r = strata_cli(fmt::format("sweep tests/data/sweeps/slurm-4-families.json --out '{}' --slurm-script "
                                          "--shards 4 --partition ci --time 20 -j 2", out));
  CHECK(r.code == 0);
  CHECK(r.out.find("#SBATCH --array=1-4\n") != std::string::npos);
  CHECK(r.out.find("--shard \"$shard/4\" -j 2 -q --executor des\n") != std::string::npos);  // each executor's own window
  CHECK(std::filesystem::is_directory(std::filesystem::path(out) / "shards"));  // Slurm will not make it
  CHECK(strata_cli(fmt::format("sweep tests/data/sweeps/slurm-4-families.json --out '{}' --slurm-script --shard 1/4",
                               out)).code == 2);
  CHECK(strata_cli(fmt::format("sweep --merge a b --out '{}' --slurm-script", out)).code == 2);
  CHECK(strata_cli(fmt::format("sweep tests/data/sweeps/slurm-4-families.json --out '{}' --shards 4", out)).code != 0);
  std::filesystem::remove_all(out);
}

}  // namespace strata::test
