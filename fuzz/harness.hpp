#pragma once

// The one function each fuzz target defines. Linked either with fuzz_main.cpp (libFuzzer, in the
// STRATA_FUZZ build) or with replay_main.cpp (a plain program that runs saved inputs, in every
// build with tests, so each finding stays a regression test).

#include <string>

/// Runs one input through the code under test, loading and validating only. Returns when the
/// input is accepted; throws strata::InputError when it is refused, the expected answer to a bad
/// input. Anything else (another exception, a crash, UB, a leak) is a finding.
void strata_fuzz_input(const std::string& input);
