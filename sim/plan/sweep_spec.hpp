#pragma once

/// A parameter sweep: a base scenario and axes over scenario paths, combined as a grid (every
/// combination), zipped (the i-th values together) and sampled (seeded draws from a product).
/// The points are numbered deterministically from the file alone, so a sweep can be resumed,
/// sharded over machines and merged back.
///
///   {"base": "gpt3-175b-64-h100" | "path/to/scenario.json" | {inline scenario},
///    "grid": {"parallelism.tp": [1, 2, 4, 8]},
///    "zip": {"checkpoint.strategy": ["sync", "async"], "checkpoint.tiers": [["object_store"], ["dram", "object_store"]]},
///    "sample": {"count": 100, "seed": 1, "axes": {"hardware.object_store.bandwidth": ["50 GB/s", "100 GB/s"]}}}

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario_loader.hpp"
#include "sim/core/params.hpp"

namespace strata {

struct SweepPoint {
  std::int64_t index = 0;
  nlohmann::json params;  ///< path -> value, for the result row
  std::vector<Override> overrides;
};

struct SweepSpec {
  std::string file;           ///< for messages
  nlohmann::json document;    ///< the sweep file as read (its identity, for resume and merge)
  nlohmann::json base;        ///< scenario name, path or inline object
  std::vector<std::string> axes;  ///< every axis path: grid, then zip, then sample
  std::vector<SweepPoint> points;
};

/// The parameter a dotted scenario path names ("parallelism.tp", "hardware.nic.bandwidth",
/// "model.num_layers"), from the scenario, hardware and model parameter tables; nullptr if none.
/// "model" and "hardware" alone take a document name.
const Param* scenario_param_at(const std::string& path);

/// Most points one sweep may enumerate: every point is held with its params and overrides (about
/// 1 KB), so a million points take about 1 GB before anything runs.
inline constexpr std::int64_t kMaxSweepPoints = 1'000'000;

/// Validates the sweep document (paths against the scenario, hardware and model parameter
/// tables, non-empty axes, values of the parameter's kind, equal zip lengths) and enumerates its
/// points, at most `max_points` of them. Throws InputError naming `file` and the JSON pointer.
SweepSpec parse_sweep(const nlohmann::json& doc, const std::string& file, std::int64_t max_points = kMaxSweepPoints);

}  // namespace strata
