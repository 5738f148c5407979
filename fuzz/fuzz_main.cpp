// libFuzzer entry points shared by every target: a refusal (InputError) is a normal outcome, so it
// is swallowed here; any other exception escapes, terminates, and libFuzzer reports the input.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "fuzz/harness.hpp"
#include "sim/core/diagnostics.hpp"

namespace {
// A known finding not fixed yet (a number beyond double, e.g. 1e400, escaping as nlohmann's
// out_of_range 406; tests/data/fuzz_regressions/KNOWN_FAILURES) is found again within seconds and
// would hide everything else. For long local runs, STRATA_FUZZ_SKIP_NUMBER_OVERFLOW=1 counts it as
// a refusal. tools/fuzz (CI) never sets it.
bool skip_number_overflow = false;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // warnings about odd but valid inputs would flood the log
  const char* skip = std::getenv("STRATA_FUZZ_SKIP_NUMBER_OVERFLOW");
  skip_number_overflow = skip != nullptr && std::string(skip) == "1";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    strata_fuzz_input(std::string(reinterpret_cast<const char*>(data), size));
  } catch (const strata::InputError&) {
  } catch (const nlohmann::json::out_of_range& e) {
    if (!skip_number_overflow || e.id != 406) throw;
  }
  return 0;
}
