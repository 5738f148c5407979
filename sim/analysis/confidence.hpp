#pragma once

/// How sure a run's answer is: whether the GPU's compute comes from measured kernel tables, whether
/// the GPU, framework and model size fall inside what docs/validation.md reproduces, and any number
/// beyond what a published run ever reached. Each doubt is one line of `warnings`.

#include <string>
#include <vector>

#include "sim/analysis/results.hpp"
#include "sim/config/scenario_spec.hpp"

namespace strata {

/// How a regime fared in docs/validation.md's throughput table: the runs reproduced and their
/// errors on the time an iteration takes (negative: Strata optimistic), in percent. The validation
/// test fails when the table and these stop agreeing.
struct ValidatedBand {
  int runs = 0;
  double low_percent = 0.0, high_percent = 0.0;
};
/// Mixture-of-experts models (Mixtral 8x22B, Qwen2-57B-A14B, Grok-1; Megatron-Core on H100).
inline constexpr ValidatedBand kMoeBand{3, -19.0, 15.8};
/// The pytorch-fsdp framework (MosaicML llm-foundry's MPT-7B and MPT-70B runs on A100 and H100).
inline constexpr ValidatedBand kFsdpBand{6, -17.3, -4.6};
/// The deepspeed framework (the ZeRO-Offload tutorial's 10B run and ZeRO-Infinity's runs on one DGX-2).
inline constexpr ValidatedBand kDeepspeedBand{6, -29.6, 28.4};
/// Runs with parameters, optimizer states or activations offloaded (ZeRO-Offload, ZeRO-Infinity; V100).
inline constexpr ValidatedBand kOffloadBand{5, -29.6, 28.4};

Confidence assess_confidence(const Scenario& sc, const RunResult& r);

}  // namespace strata
