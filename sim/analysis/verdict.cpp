#include "sim/analysis/verdict.hpp"

namespace strata {

namespace {

/// Host tiers the executed schedule overfills on some node although the static estimate fits.
std::vector<Overflow> tier_timeline_overflows(const Scenario& sc, const RunResult& r) {
  std::vector<Overflow> out;
  if (!r.simulation) return out;
  for (const auto& [tier, peak] : r.simulation->analysis.node_tiers) {
    const double capacity = tier_capacity(sc.hardware, tier);
    auto it = r.memory.tiers.find(tier);
    const bool static_overflow =
        it != r.memory.tiers.end() && it->second.peak_per_node > it->second.capacity_per_node;
    if (peak.bytes > capacity && !static_overflow) out.push_back({"node", peak.node, tier, peak.bytes, capacity});
  }
  return out;
}

/// Node tiers a checkpoint's staging (with training's own use of the tier) overfills.
std::vector<Overflow> checkpoint_overflows(const Scenario& sc, const RunResult& r) {
  std::vector<Overflow> out;
  if (!r.checkpoint) return out;
  for (const auto& [tier, peak] : r.checkpoint->staging) {
    const double capacity = tier_capacity(sc.hardware, tier);
    if (peak.bytes > capacity) out.push_back({"node", peak.node, tier, peak.bytes, capacity});
  }
  return out;
}

/// GPUs whose executed memory timeline peaks above HBM although the static estimate fits (prefetched
/// ZeRO-3 gathers, transient buffers overlapping).
std::vector<Overflow> timeline_overflows(const Scenario& sc, const RunResult& r) {
  std::vector<Overflow> out;
  if (!r.simulation) return out;
  const double capacity = sc.hardware.gpu.hbm.value;
  for (const auto& st : r.memory.stages) {
    auto it = r.simulation->analysis.memory.find(st.first_rank);
    if (it == r.simulation->analysis.memory.end() || !it->second.peak.count(Tier::hbm)) continue;
    const double need = it->second.peak.at(Tier::hbm);
    if (need > capacity && st.hbm.total() <= capacity) out.push_back({"gpu", st.first_rank, Tier::hbm, need, capacity});
  }
  return out;
}

}  // namespace

Verdict decide_verdict(const Scenario& sc, const RunResult& r) {
  Verdict v;
  v.fits = r.memory.fits;
  auto add = [&](const Overflow& o, const char* found_by, std::optional<double> time) {
    v.overflows.push_back({o, found_by, time});
    if (found_by != std::string("static")) v.fits = false;
  };
  for (const Overflow& o : tier_timeline_overflows(sc, r))
    add(o, "timeline", r.simulation->analysis.node_tiers.at(o.tier).time);
  for (const Overflow& o : r.memory.overflows) add(o, "static", std::nullopt);
  for (const Overflow& o : checkpoint_overflows(sc, r)) add(o, "checkpoint", r.checkpoint->staging.at(o.tier).time);
  for (const Overflow& o : timeline_overflows(sc, r))
    add(o, "timeline", r.simulation->analysis.memory.at(o.index).peak_time);
  return v;
}

}  // namespace strata
