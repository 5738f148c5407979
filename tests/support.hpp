#pragma once

// Shared helpers for the test suite: loading shipped scenarios with overrides, and printing the
// comparison tables every validation test shows (source value, Strata value, error).

#include <fmt/format.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "sim/config/folder_catalog.hpp"
#include "sim/config/scenario_loader.hpp"
#include "sim/analysis/run.hpp"
#include "sim/report/report.hpp"

namespace strata::test {

inline const FolderCatalog& catalog() {
  static const FolderCatalog c(STRATA_SOURCE_DIR);
  return c;
}

inline std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(STRATA_SOURCE_DIR) / relative;
}

/// What a `strata` process printed on stdout and how it exited.
struct Result {
  int code = -1;
  std::string out;
};

/// Runs `strata ARGS` (a shell command line) from the source tree; `stderr_to` chooses where stderr goes.
inline Result strata_cli(const std::string& args, const std::string& stderr_to = "/dev/null") {
  std::string cmd = fmt::format("cd '{}' && '{}' {} 2>{}", STRATA_SOURCE_DIR, STRATA_BINARY, args, stderr_to);
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// A GPU's achievable bandwidth on the hop a collective takes: NVLink inside a node, or across nodes
/// the slower of its NIC and its PCIe link (the closed forms the executor tests check against).
inline double hop_bandwidth(const HardwareSpec& hw, bool inter_node) {
  return inter_node ? std::min(hw.nic.bandwidth.value * hw.efficiency.network,
                               hw.pcie.bandwidth.value * hw.efficiency.pcie)
                    : hw.nvlink_bandwidth.value * hw.efficiency.nvlink;
}

/// A path in the temporary folder, removed if it exists; named after this process, so that test cases
/// running in parallel (ctest -j) never share one.
inline std::string temp_file(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / fmt::format("strata-cli-test-{}-{}", ::getpid(), name);
  std::filesystem::remove_all(p);
  return p.string();
}

/// Loads a scenario file by its path relative to the repository, with `--set` style overrides
/// ("parallelism.tp=4").
inline Scenario load_path(const std::string& relative, const std::vector<std::string>& sets = {}) {
  std::vector<Override> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  return load_scenario(source_path(relative), overrides, catalog());
}

/// Loads scenarios/NAME.json with `--set` style overrides.
inline Scenario load(const std::string& name, const std::vector<std::string>& sets = {}) {
  return load_path("scenarios/" + name + ".json", sets);
}

/// Validates an inline scenario document.
inline Scenario load_inline(const nlohmann::json& doc, const std::vector<std::string>& sets = {}) {
  std::vector<Override> overrides;
  for (const auto& s : sets) overrides.push_back(parse_override(s));
  ComposedScenario c = compose_scenario(doc, "inline.json", STRATA_SOURCE_DIR, overrides, catalog());
  return parse_scenario(c.doc, c.sources);
}

/// Llama 3 8B on one DGX A100 under PyTorch FSDP (ZeRO-3), one sequence of 2048 tokens per GPU and
/// micro-batch, `microbatches` of them per step, recomputation `recompute`.
inline nlohmann::json fsdp_llama3_8b(int microbatches, const std::string& recompute) {
  return {{"model", "llama-3-8b"},
          {"hardware", "dgx-a100-80g"},
          {"gpus", 8},
          {"training",
           {{"seq_len", 2048},
            {"micro_batch_size", 1},
            {"global_batch_size", 8 * microbatches},
            {"framework", "pytorch-fsdp"}}},
          {"parallelism", {{"zero_stage", 3}}},
          {"memory", {{"recompute", recompute}}}};
}

/// Rows of (what, source value, Strata value), printed as a table with the relative error.
class Comparison {
 public:
  Comparison(std::string title, std::string unit) : title_(std::move(title)), unit_(std::move(unit)) {}

  void add(std::string label, double source, double strata) { rows_.push_back({std::move(label), source, strata}); }

  static double error(double source, double strata) {
    return source == 0.0 ? std::fabs(strata) : std::fabs(strata - source) / std::fabs(source);
  }
  double max_error() const {
    double m = 0.0;
    for (const auto& r : rows_) m = std::max(m, error(r.source, r.strata));
    return m;
  }
  double mean_error() const {
    double sum = 0.0;
    for (const auto& r : rows_) sum += error(r.source, r.strata);
    return rows_.empty() ? 0.0 : sum / static_cast<double>(rows_.size());
  }
  const auto& rows() const { return rows_; }

  void print() const {
    std::cout << fmt::format("\n{}\n{:<44} {:>16} {:>16} {:>9}\n", title_, "case", "source " + unit_,
                             "strata " + unit_, "error");
    for (const auto& r : rows_)
      std::cout << fmt::format("{:<44} {:>16.6g} {:>16.6g} {:>8.3f}%\n", r.label, r.source, r.strata,
                               100.0 * error(r.source, r.strata));
    std::cout << fmt::format("mean error {:.3f}%, max {:.3f}%\n", 100.0 * mean_error(), 100.0 * max_error());
  }

 private:
  struct Row {
    std::string label;
    double source;
    double strata;
  };
  std::string title_, unit_;
  std::vector<Row> rows_;
};

}  // namespace strata::test
