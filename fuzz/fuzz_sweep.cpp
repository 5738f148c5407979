// Fuzz target for the sweep-file parser: the file is read as the CLI reads it, validated, and its
// points enumerated (parse_sweep). The base scenario is not loaded and nothing is run.

#include <cstdint>
#include <string>

#include "fuzz/harness.hpp"
#include "sim/core/json_file.hpp"
#include "sim/plan/sweep_spec.hpp"

/// Enumerating a sweep costs time in its points (a million take about 10 s under the sanitizers),
/// not in how the file is written: a smaller cap keeps every input fast while the same code runs.
constexpr std::int64_t kFuzzMaxPoints = 20'000;

void strata_fuzz_input(const std::string& input) {
  strata::SweepSpec spec =
      strata::parse_sweep(strata::parse_json_text(input, "sweep.json"), "sweep.json", kFuzzMaxPoints);
  (void)spec;
}
