// Runs saved fuzz inputs (tests/data/fuzz_regressions) through a target's harness without
// libFuzzer, for ctest:  fuzz_replay_TARGET [--expect refused|accepted|any] FILE...
// Exits 0 when every input had the expected outcome, 1 when one did not; a crash or an exception
// other than InputError ends the program as it would end the CLI, and fails the test.

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <spdlog/spdlog.h>

#include "fuzz/harness.hpp"
#include "sim/core/diagnostics.hpp"

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::off);
  std::string expect = "refused";
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
      expect = argv[++i];
      continue;
    }
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read\n", argv[i]);
      return 1;
    }
    std::ostringstream buf;
    buf << in.rdbuf();
    std::string outcome = "accepted";
    try {
      strata_fuzz_input(buf.str());
    } catch (const strata::InputError& e) {
      outcome = "refused";
      for (const auto& d : e.diagnostics()) std::printf("%s: %s\n", argv[i], d.to_string().c_str());
    }
    std::printf("%s: %s\n", argv[i], outcome.c_str());
    if (expect != "any" && outcome != expect) {
      std::fprintf(stderr, "%s: %s, expected %s\n", argv[i], outcome.c_str(), expect.c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
