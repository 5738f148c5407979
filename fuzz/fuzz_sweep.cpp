// Fuzz target for the sweep-file parser: the file is read as the CLI reads it, validated, and its
// points enumerated (parse_sweep). The base scenario is not loaded and nothing is run.

#include <string>

#include "fuzz/harness.hpp"
#include "sim/core/json_file.hpp"
#include "sim/plan/sweep_spec.hpp"

void strata_fuzz_input(const std::string& input) {
  strata::SweepSpec spec = strata::parse_sweep(strata::parse_json_text(input, "sweep.json"), "sweep.json");
  (void)spec;
}
