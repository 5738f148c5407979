#pragma once

/// Numeric formats used for compute, weights, gradients and optimizer states.

#include <optional>
#include <string>
#include <vector>

namespace strata {

enum class Precision { fp32, tf32, fp16, bf16, fp8 };

/// Storage bytes per element. tf32 is a compute mode over fp32 storage.
double bytes_per_element(Precision p);
std::string to_string(Precision p);
std::optional<Precision> precision_from_string(const std::string& s);
/// All names, for parameter tables.
std::vector<std::string> precision_names();

}  // namespace strata
