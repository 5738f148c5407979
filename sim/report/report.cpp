#include "sim/report/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "sim/core/units.hpp"

namespace strata {

using nlohmann::json;

namespace {

json breakdown_json(const MemoryBreakdown& b) {
  return {{"params", b.params},         {"gradients", b.gradients}, {"optimizer", b.optimizer},
          {"activations", b.activations}, {"workspace", b.workspace}, {"buffers", b.buffers}};
}

void round_doubles(json& j) {
  if (j.is_number_float()) {
    double v = j.get<double>();
    if (!std::isfinite(v)) {
      j = nullptr;
      return;
    }
    double r = std::strtod(fmt::format("{:.10g}", v).c_str(), nullptr);
    if (r == std::floor(r) && std::fabs(r) < 9.0e15) j = static_cast<std::int64_t>(r);
    else j = r;
    return;
  }
  if (j.is_structured())
    for (auto& item : j) round_doubles(item);
}

}  // namespace

json make_report(const Scenario& sc, const RunResult& r) {
  const MemoryEstimate& mem = r.memory;
  json gpus = json::array();
  for (const auto& st : mem.stages) {
    json offloaded = json::object();
    for (const auto& [tier, bytes] : st.offloaded) offloaded[to_string(tier)] = bytes;
    gpus.push_back({{"rank", st.first_rank},
                    {"stage", st.stage},
                    {"identical_ranks", st.num_ranks},
                    {"layers", st.layers},
                    {"parameters", st.parameters},
                    {"microbatches_in_flight", st.microbatches_in_flight},
                    {"peak_bytes", st.hbm.total()},
                    {"breakdown", breakdown_json(st.hbm)},
                    {"offloaded_bytes", offloaded}});
  }
  json tiers = json::object();
  for (const auto& [tier, u] : mem.tiers)
    tiers[to_string(tier)] = {{"capacity_bytes", u.capacity_per_node},
                              {"peak_bytes", u.peak_per_node},
                              {"peak_node", u.peak_node}};
  json overflows = json::array();
  for (const auto& o : mem.overflows)
    overflows.push_back({{"device", o.device},
                         {o.device == "gpu" ? "rank" : "node", o.index},
                         {"tier", to_string(o.tier)},
                         {"need_bytes", o.need},
                         {"capacity_bytes", o.capacity},
                         {"excess_bytes", o.need - o.capacity}});
  const auto& most = mem.stages.at(static_cast<std::size_t>(mem.most_loaded_stage));
  const ParallelismSpec& p = sc.parallelism;
  return {
      {"schema", kReportSchema},
      {"strata_version", STRATA_VERSION},
      {"scenario",
       {{"name", sc.name},
        {"seed", sc.seed},
        {"hardware", sc.hardware.name},
        {"gpus", sc.gpus},
        {"nodes", sc.nodes},
        {"parallelism",
         {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp}, {"sequence_parallel", p.sequence_parallel},
          {"schedule", to_string(p.schedule)}, {"virtual_stages", p.virtual_stages},
          {"zero_stage", p.zero_stage}, {"distributed_optimizer", p.distributed_optimizer}}},
        {"microbatches", sc.num_microbatches()},
        {"recompute", to_string(sc.memory.recompute)},
        {"flash_attention", sc.training.flash_attention}}},
      {"model",
       {{"name", sc.model.name},
        {"parameters", r.parameters},
        {"layers", sc.model.num_layers},
        {"flops_per_iteration", r.flops_per_iteration}}},
      {"fits", mem.fits},
      {"memory",
       {{"gpu_peak_bytes", mem.gpu_peak},
        {"gpu_capacity_bytes", sc.hardware.gpu.hbm.value},
        {"most_loaded", {{"stage", most.stage},
                         {"first_rank", most.first_rank},
                         {"last_rank", most.first_rank + most.num_ranks - 1}}},
        {"gpus", gpus},
        {"tiers", tiers},
        {"overflows", overflows}}},
  };
}

std::string canonical_dump(const json& report) {
  json copy = report;
  round_doubles(copy);
  return copy.dump(2) + "\n";
}

std::string summary_table(const Scenario& sc, const RunResult& r) {
  const MemoryEstimate& mem = r.memory;
  const ParallelismSpec& p = sc.parallelism;
  std::string out;
  auto line = [&](std::string s) { out += s + "\n"; };
  line(fmt::format("Strata {} — {}", STRATA_VERSION, sc.name.empty() ? sc.model.name : sc.name));
  line(fmt::format("model      {} ({} parameters, {} layers)", sc.model.name, format_count(r.parameters),
                   sc.model.num_layers));
  line(fmt::format("hardware   {} × {} GPUs ({} node(s) of {}), HBM {}", sc.hardware.name, sc.gpus, sc.nodes,
                   sc.hardware.gpus_per_node, format_bytes(sc.hardware.gpu.hbm.value)));
  line(fmt::format("parallel   TP {} · PP {} · DP {}{}, {} schedule, {} micro-batches", p.tp, p.pp, p.dp,
                   p.sequence_parallel ? " + SP" : "", to_string(p.schedule), sc.num_microbatches()));
  std::string offload;
  const OffloadSpec& o = sc.memory.offload;
  for (auto [what, tier] : {std::pair{"optimizer", o.optimizer}, {"params", o.params}, {"activations", o.activations}})
    if (tier != Tier::none) offload += fmt::format("{}{}→{}", offload.empty() ? "" : ", ", what, to_string(tier));
  line(fmt::format("memory     ZeRO {}{}, recompute {}, offload {}", p.zero_stage,
                   p.distributed_optimizer ? " (distributed optimizer)" : "", to_string(sc.memory.recompute),
                   offload.empty() ? "none" : offload));
  line("");
  line(fmt::format("{:>5} {:>11} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "stage", "ranks",
                   "layers", "params", "grads", "optimizer", "activ.", "workspace", "buffers", "total"));
  auto gib = [](double b) { return fmt::format("{:.2f}", b / kGiB); };
  for (const auto& st : mem.stages) {
    line(fmt::format("{:>5} {:>11} {:>6} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}{}", st.stage,
                     fmt::format("{}-{}", st.first_rank, st.first_rank + st.num_ranks - 1), st.layers,
                     gib(st.hbm.params), gib(st.hbm.gradients), gib(st.hbm.optimizer), gib(st.hbm.activations),
                     gib(st.hbm.workspace), gib(st.hbm.buffers), gib(st.hbm.total()),
                     st.stage == mem.most_loaded_stage ? " *" : ""));
  }
  line(fmt::format("{:>5} {:>11} {:>6} {:>59}", "", "", "", "(GiB per GPU; * most loaded)"));
  line("");
  for (const auto& [tier, u] : mem.tiers)
    if (u.peak_per_node > 0.0 || u.capacity_per_node > 0.0)
      line(fmt::format("tier {:<10} peak {:>12} of {:>12} per node", to_string(tier),
                       format_bytes(u.peak_per_node), format_bytes(u.capacity_per_node)));
  line("");
  line(fmt::format("GPU peak   {} of {}  →  {}", format_bytes(mem.gpu_peak),
                   format_bytes(sc.hardware.gpu.hbm.value), mem.fits ? "FITS" : "DOES NOT FIT"));
  if (sc.checkpoint.enabled || sc.failures.enabled)
    line("note       checkpoint and failures settings are validated; their simulation is not built yet");
  for (const auto& o : mem.overflows)
    line(fmt::format("overflow   {} {} {}: needs {}, has {} (short by {})", o.device, o.index, to_string(o.tier),
                     format_bytes(o.need), format_bytes(o.capacity), format_bytes(o.need - o.capacity)));
  return out;
}

}  // namespace strata
