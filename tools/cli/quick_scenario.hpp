#pragma once

/// The quick form of `strata run`: a scenario built in memory from command-line options
/// (`--model M --hardware H --gpus N [--tp --pp --dp --zero --recompute --seq --batch ...]`) that
/// then runs exactly like a scenario file, and errors that name the option a bad value came from.

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/config/folder_catalog.hpp"
#include "sim/config/scenario_loader.hpp"

namespace strata::cli {

struct QuickScenarioOptions {
  /// Option name ("--tp") → its text, for the options given. Values are read as JSON when they
  /// parse (4, true), else as text (bf16), and checked by the scenario's own validation.
  std::map<std::string, std::string> given;
  bool print = false;  ///< --print-scenario: print the scenario document instead of running it
  bool used() const { return !given.empty(); }
};

/// Adds the quick-form options to `run`.
void add_quick_scenario_options(CLI::App& run, QuickScenarioOptions& options);

/// The scenario document the options describe, with model and hardware by name, as a scenario
/// file would hold it, and for each value the option it came from (JSON pointer → "--tp 4").
/// Unset `training.seq_len` defaults to the model's max_position_embeddings and
/// `training.global_batch_size` to pp micro-batches per replica (the least that fills the pipeline
/// once). Throws InputError naming the option (an unknown model or hardware, a missing --gpus).
struct QuickScenario {
  nlohmann::json doc;
  std::map<std::string, std::string> labels;
};
QuickScenario build_quick_scenario(const FolderCatalog& catalog, const QuickScenarioOptions& options);

/// compose_scenario over the quick document: every error at a value an option set names the option.
ComposedScenario compose_quick_scenario(const QuickScenario& quick, const std::vector<Override>& overrides,
                                        const FolderCatalog& catalog);

}  // namespace strata::cli
