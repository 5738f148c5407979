#pragma once

/// The configuration advisor: for a scenario's model, cluster and global batch, searches tensor,
/// pipeline and data parallelism, interleaving, micro-batch size, ZeRO stage, recomputation and
/// (only if nothing else fits) optimizer offload, then the checkpoint strategy and interval, and
/// ranks what fits by tokens/s or by goodput-weighted tokens/s. It follows the technique-selection
/// guide of Feng et al. 2024 (J. Computer Research and Development 61(4), Figure 11 and Table 4;
/// docs/references.md, Configuration advisor) by construction: the least recomputation that fits,
/// offload only under memory pressure, and the simulation decides between TP (NVLink-rich nodes)
/// and PP (slow links).
///
/// Stages: every candidate is validated and its memory estimated (no simulation); those that fit
/// are screened with the contention-free executor (training only); the best `confirm` are
/// simulated in full with the DES (checkpoints and failures as the scenario has them); for the
/// winner, checkpoint strategies at the scenario's and at Daly's interval are tried.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario_loader.hpp"

namespace strata {

struct AdviseRequest {
  std::filesystem::path scenario;
  std::vector<Override> overrides;
  std::string objective = "tokens_per_s";  ///< or "goodput": run.effective_tokens_per_s
  int top = 5;
  int confirm = 8;  ///< candidates simulated with the DES after screening
};

struct AdvisedConfig {
  nlohmann::json settings;  ///< path -> value, over the base scenario
  nlohmann::json report;    ///< flattened DES report
  double objective = 0.0;
  std::string bound;        ///< what bounds it: its largest non-compute share of the iteration
  std::string verdict;      ///< one line: against the best, and what bounds it
  double iteration_s = 0.0;      ///< steady iteration time
  double daly_interval_s = 0.0;  ///< Daly's optimal checkpoint interval (0 without failures)
};

struct AdviseResult {
  std::vector<AdvisedConfig> ranked;  ///< best first
  std::int64_t generated = 0, invalid = 0, too_big = 0, screened = 0, confirmed = 0, checkpoint_trials = 0;
  double seconds = 0.0;
  std::string note;  ///< e.g. why nothing fits
};

/// Progress: a stage name and how far it is.
using AdviseProgress = std::function<void(const std::string& stage, std::int64_t done, std::int64_t total)>;

/// Throws InputError when the base scenario or the request is invalid.
AdviseResult advise(const AdviseRequest& request, const DocumentResolver& resolver, const AdviseProgress& progress);

}  // namespace strata
