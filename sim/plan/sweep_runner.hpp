#pragma once

/// Runs a sweep's points in worker processes (SimGrid allows one simulation per process, and the
/// points are independent): each worker takes the next family of points still to do (points that
/// share their simulations, see run_scenarios) and appends each finished row to the results as one
/// line. Workers die with the process that started them, so a killed sweep leaves only whole rows,
/// and running it again does the rest.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sim/config/scenario_loader.hpp"
#include "sim/analysis/run.hpp"
#include "sim/plan/sweep_results.hpp"
#include "sim/plan/sweep_spec.hpp"

namespace strata {

/// Shard i of N of a sweep: whole families (points that share a training run), so that N shards
/// together cost about what the unsharded sweep costs, balanced by their expected cost.
struct ShardAssignment {
  std::int64_t shard = 1, shards = 1;
  std::vector<std::int64_t> points;  ///< this shard's point indices, ascending
  std::int64_t families = 0;         ///< this shard's families
  double cost = 0.0, total_cost = 0.0;  ///< expected cost (estimated tasks) of this shard and of the sweep
  /// For the shard's settings.json.
  nlohmann::json describe() const;
};

/// Deterministic: families are costed by the tasks their first point's scenario simulates (the
/// training run and its checkpoint windows; an invalid point costs one task), then dealt largest first to the shard with
/// the least cost so far (ties to the lower shard). Beyond kMaxCostedFamilies families, each costs
/// its number of points, so that assigning stays quick.
ShardAssignment assign_shard(const SweepSpec& spec, const DocumentResolver& resolver,
                             const std::filesystem::path& base_dir, std::int64_t shard, std::int64_t shards,
                             const SimulationOptions& options);
inline constexpr std::size_t kMaxCostedFamilies = 10000;

struct SweepOptions {
  int jobs = 1;
  std::optional<ShardAssignment> shard;  ///< run only these points (none: every point)
  SimulationOptions simulation;
};

/// How many of a sweep's points are done or left, for a progress display.
using SweepProgress = std::function<void(std::int64_t finished, std::int64_t total)>;

/// The options a sweep's rows depend on, for its results folder: the executor and the checkpoint
/// window.
nlohmann::json sweep_settings(const SimulationOptions& options);

/// The base scenario's file when the sweep names one (relative to the sweep file, to the working
/// folder, or a shipped name). Throws InputError at /base when there is none.
std::filesystem::path base_scenario_file(const SweepSpec& spec, const DocumentResolver& resolver,
                                         const std::filesystem::path& base_dir);

/// Points that differ only in inputs a family of runs may differ in (run_scenarios), as one row
/// each, in order: status ok with the flattened report, invalid with the validation errors, failed
/// with the internal error. They share the simulations those inputs do not change. `base_dir`
/// anchors the relative paths of an inline base.
std::vector<nlohmann::json> run_family(const SweepSpec& spec, const std::vector<const SweepPoint*>& family,
                                       const DocumentResolver& resolver, const std::filesystem::path& base_dir,
                                       const SimulationOptions& options);

/// `points` grouped into families: equal parameters but for those a family may differ in, in the
/// order of each family's first point.
std::vector<std::vector<const SweepPoint*>> sweep_families(const std::vector<const SweepPoint*>& points);

/// Runs the points of the shard (every point without one) that `results` does not hold yet.
/// Returns how many it ran.
std::int64_t run_sweep(const SweepSpec& spec, SweepResults& results, const DocumentResolver& resolver,
                       const std::filesystem::path& base_dir, const SweepOptions& options,
                       const SweepProgress& progress);

}  // namespace strata
