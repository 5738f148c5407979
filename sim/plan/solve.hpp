#pragma once

/// Inverse questions: the smallest (or largest) value of one numeric input for which a report metric
/// meets a target, by bisection over a range (geometric for positive ranges, so that a bandwidth
/// from 1 GB/s to 1 TB/s is searched evenly in ratio). The metric must be monotone in the input over
/// the range; the search reports every evaluation so that a user can see whether it was.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/scenario_loader.hpp"
#include "sim/analysis/run.hpp"

namespace strata {

struct SolveRequest {
  std::filesystem::path scenario;
  std::vector<Override> overrides;
  std::string vary;    ///< the input's dotted path
  std::string metric;  ///< a flattened report key
  std::string op;      ///< <=, <, >=, >
  double target = 0.0;
  double lo = 0.0, hi = 0.0;  ///< the range, SI units
  bool find_min = true;       ///< the smallest value that meets the target (else the largest)
  double tolerance = 1e-3;    ///< relative width at which to stop
  SimulationOptions simulation;
};

struct SolveEvaluation {
  double value = 0.0;
  std::optional<double> metric;
  bool meets = false;
  std::string error;  ///< the scenario was invalid at this value
};

struct SolveResult {
  std::optional<double> value;  ///< none when no value in the range meets the target
  std::vector<SolveEvaluation> evaluations;
  std::string reason;           ///< why there is no value
};

/// Parses "METRIC<=VALUE" (also <, >=, >) into the request. Throws InputError.
void parse_target(const std::string& text, SolveRequest& request);

/// Checks the request (the path names a numeric input, the range is ordered) and searches.
/// Throws InputError for a bad request.
SolveResult solve(const SolveRequest& request, const DocumentResolver& resolver);

}  // namespace strata
