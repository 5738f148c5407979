#include "sim/config/precision.hpp"

namespace strata {

double bytes_per_element(Precision p) {
  switch (p) {
    case Precision::fp32:
    case Precision::tf32: return 4.0;
    case Precision::fp16:
    case Precision::bf16: return 2.0;
    case Precision::fp8: return 1.0;
  }
  return 4.0;
}

std::string to_string(Precision p) {
  switch (p) {
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    case Precision::fp8: return "fp8";
  }
  return "fp32";
}

std::optional<Precision> precision_from_string(const std::string& s) {
  for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8})
    if (to_string(p) == s) return p;
  return std::nullopt;
}

std::vector<std::string> precision_names() { return {"fp32", "tf32", "fp16", "bf16", "fp8"}; }

}  // namespace strata
