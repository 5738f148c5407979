// Fuzz target for parse_quantity, the one parser of unit-bearing text ("80 GiB", "10 min").
// Input: one byte choosing the dimension, then the text. A refusal (nullopt, reported here as
// InputError like every other target's) is the expected answer; a crash, UB, or a value that is
// not a finite number is a finding: parse_quantity refuses non-finite numbers, so it must not
// make one either ("1e308 EB" would be an infinite size).

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>
#include <string_view>

#include "fuzz/harness.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/units.hpp"

void strata_fuzz_input(const std::string& input) {
  if (input.empty()) return;
  constexpr strata::Dimension kDims[] = {strata::Dimension::bytes,   strata::Dimension::bytes_per_second,
                                         strata::Dimension::flops,   strata::Dimension::flops_per_second,
                                         strata::Dimension::seconds, strata::Dimension::dimensionless};
  const strata::Dimension dim = kDims[static_cast<unsigned char>(input[0]) % std::size(kDims)];
  const std::string_view text = std::string_view(input).substr(1);
  std::string why;
  std::optional<double> value = strata::parse_quantity(text, dim, &why);
  if (!value) {
    // Every refusal is shown to the user, so it must say why.
    if (why.empty()) {
      std::fprintf(stderr, "parse_quantity refused \"%.*s\" without a reason\n", static_cast<int>(text.size()),
                   text.data());
      std::abort();
    }
    throw strata::InputError({strata::Diagnostic{"units", "", why}});
  }
  if (!std::isfinite(*value)) {
    std::fprintf(stderr, "parse_quantity accepted \"%.*s\" as %g\n", static_cast<int>(text.size()), text.data(),
                 *value);
    std::abort();
  }
  // The formatters print parsed values in tables; they must take any finite value.
  (void)strata::format_bytes(*value);
  (void)strata::format_seconds(*value);
  (void)strata::format_count(*value);
}
