// Fuzz target for the sweep results reader: a results.jsonl text as a resumed sweep reads it
// (complete lines, the point of each), then what is done with the rows read back: the CSV that
// SweepResults::finish() rewrites and the ranking of `sweep --by`. Text only, no files.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/harness.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/plan/sweep_results.hpp"

/// Points of the sweep the rows are read against.
constexpr std::int64_t kPoints = 1000;

void strata_fuzz_input(const std::string& input) {
  std::map<std::int64_t, std::string> done;  // as SweepResults::load()
  for (strata::ResultLine& line : strata::complete_lines(input)) {
    const auto point = strata::result_point(line.text, kPoints);
    if (const auto* why = std::get_if<std::string>(&point))  // a merge refuses it; a resume reruns that point
      throw strata::InputError({strata::Diagnostic{"results.jsonl", "", *why}});
    done.emplace(std::get<std::int64_t>(point), std::move(line.text));
  }
  std::vector<nlohmann::json> rows;  // as SweepResults::finish()
  for (const auto& [point, line] : done) rows.push_back(nlohmann::json::parse(line));
  (void)strata::rows_to_csv(rows);
  (void)strata::best_points(done, "throughput.tokens_per_s", 3, false);  // as sweep --by
  (void)strata::best_points(done, "time.iteration_s", 3, true);
}
