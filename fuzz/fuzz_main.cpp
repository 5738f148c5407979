// libFuzzer entry points shared by every target: a refusal (InputError) is a normal outcome, so it
// is swallowed here; any other exception escapes, terminates, and libFuzzer reports the input.

#include <cstddef>
#include <cstdint>
#include <string>

#include <spdlog/spdlog.h>

#include "fuzz/harness.hpp"
#include "sim/core/diagnostics.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // warnings about odd but valid inputs would flood the log
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    strata_fuzz_input(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const strata::InputError&) {
  }
  return 0;
}
