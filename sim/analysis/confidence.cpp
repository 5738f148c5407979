#include "sim/analysis/confidence.hpp"

#include <fmt/format.h>

namespace strata {

namespace {

// The parameter counts docs/validation.md spans: MPT-7B (6.7B, llm-foundry) to the 1T model of
// Korthikanti et al. 2022. Kept beside the table's rows (tests/data/validation/throughput.json).
constexpr double kValidatedMinParameters = 6.0e9;
constexpr double kValidatedMaxParameters = 1.1e12;

}  // namespace

Confidence assess_confidence(const Scenario& sc, const RunResult& r) {
  Confidence c;
  const KernelSpec& k = sc.hardware.kernels;
  c.kernel_tables = k.present;
  c.validated_gpu = k.present && k.validated;
  for (const auto& f : framework_docs())
    if (f.framework == sc.training.framework) c.validated_framework = f.validated;

  if (!k.present)
    c.warnings.push_back(fmt::format("{} has no kernel tables: compute is a roofline at efficiency.gemm {:.2f}, not "
                                     "validated against measurements",
                                     sc.hardware.gpu.model, sc.hardware.efficiency.gemm));
  else if (!k.validated)
    c.warnings.push_back(fmt::format("{} is outside the validated GPUs (docs/validation.md): its kernel tables are "
                                     "borrowed or unmeasured",
                                     sc.hardware.gpu.model));
  if (!c.validated_framework)
    c.warnings.push_back(fmt::format("framework {} has no measured runs in docs/validation.md",
                                     to_string(sc.training.framework)));
  if (r.parameters < kValidatedMinParameters || r.parameters > kValidatedMaxParameters)
    c.warnings.push_back(fmt::format("{:.3g}B parameters is outside the validated sizes ({:.3g}B to {:.3g}T)",
                                     r.parameters / 1e9, kValidatedMinParameters / 1e9, kValidatedMaxParameters / 1e12));
  if (r.simulation && k.max_published_mfu > 0.0 && r.simulation->throughput.mfu > k.max_published_mfu)
    c.warnings.push_back(fmt::format("MFU {:.1f} % is above the highest published on {} ({:.1f} %): likely optimistic",
                                     100.0 * r.simulation->throughput.mfu, sc.hardware.gpu.model,
                                     100.0 * k.max_published_mfu));
  return c;
}

}  // namespace strata
