#include "sim/report/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <algorithm>

#include "sim/core/units.hpp"
#include "sim/report/metrics.hpp"

namespace strata {

using nlohmann::json;

json model_description(const ModelSpec& m, const ParameterBreakdown& p) {
  json doc = json::object();
  write_metrics(ReportInputs{.model = &m, .parameters = &p}, doc, /*model_only=*/true);
  return doc.at("model");
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

json make_report(const Scenario& sc, const RunResult& r) {
  json report = json::object();
  write_metrics(ReportInputs{.scenario = &sc, .result = &r, .model = &sc.model, .parameters = &r.parameters_by_kind},
                report);
  return report;
}

std::string canonical_dump(const json& report) {
  json copy = report;
  round_doubles(copy);
  return copy.dump(2) + "\n";
}

namespace {

/// `text` after a 10-column label, word-wrapped so no line passes `width` columns (ASCII text);
/// continuation lines are indented under the text.
std::string labelled_paragraph(const std::string& label, const std::string& text, std::size_t width = 100) {
  const std::string indent(11, ' ');
  std::string out = fmt::format("{:10} ", label);
  std::size_t column = out.size();
  std::size_t start = 0;
  bool first_word = true;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    start = end + 1;
    // A number keeps its percent sign: "31 %" never breaks before the sign.
    while (start < text.size() && text[start] == '%') {
      end = std::min(text.find(' ', start), text.size());
      word += ' ' + text.substr(start, end - start);
      start = end + 1;
    }
    if (word.empty()) continue;
    if (!first_word && column + 1 + word.size() > width) {
      out += "\n" + indent;
      column = indent.size();
    } else if (!first_word) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first_word = false;
  }
  return out;
}

}  // namespace

std::string summary_table(const Scenario& sc, const RunResult& r) {
  const MemoryEstimate& mem = r.memory;
  const ParallelismSpec& p = sc.parallelism;
  std::string out;
  auto line = [&](std::string s) { out += s + "\n"; };
  line(fmt::format("Strata {} — {}", STRATA_VERSION, sc.name.empty() ? sc.model.name : sc.name));
  // A MoE's active parameters: one token's share of the weights, what its FLOPs scale with.
  const std::string active = sc.model.is_moe()
                                 ? fmt::format(", {} active per token", format_count(r.parameters_by_kind.active))
                                 : "";
  line(fmt::format("model      {} ({} parameters{}, {} layers)", sc.model.name, format_count(r.parameters), active,
                   sc.model.num_layers));
  line(fmt::format("hardware   {} × {} GPUs ({} node(s) of {}), HBM {}", sc.hardware.name, sc.gpus, sc.nodes,
                   sc.hardware.gpus_per_node, format_bytes(sc.hardware.gpu.hbm.value)));
  std::string ep;
  if (p.ep > 1) {
    const MoeSpec& moe = sc.training.moe;
    ep = fmt::format(" (EP {}{}: {} expert(s) per GPU, load imbalance {:.2f}{})", p.ep,
                     p.experts_folded() ? " folded over TP·CP·DP, experts whole" : "", sc.model.num_experts / p.ep,
                     moe.load_imbalance,
                     moe.capacity_factor > 0.0 ? fmt::format(", capacity factor {:.2f}", moe.capacity_factor) : "");
  }
  // CP and EP show only when used, so the line of a run without them is unchanged.
  line(fmt::format("parallel   TP {}{} · PP {} · DP {}{}{}, {} schedule, {} micro-batches", p.tp,
                   p.cp > 1 ? fmt::format(" · CP {}", p.cp) : "", p.pp, p.dp, p.sequence_parallel ? " + SP" : "", ep,
                   to_string(p.schedule), sc.num_microbatches()));
  {
    const FrameworkBehaviour& b = sc.training.behaviour;
    std::string overlaps;
    const bool async_tp = b.tp_overlap_method == TpOverlapMethod::async_tp;
    for (auto [what, on] : {std::pair{"grads", b.overlap_grad_reduce}, {"gathers", b.overlap_param_gather},
                            {"TP", b.overlap_tp_comm && !async_tp},
                            {"TP forward+recompute (async TP)", b.overlap_tp_comm && async_tp},
                            {"TP backward", b.async_tp_backward && !overlaps_tp_backward(b)},
                            {"PP", b.overlap_p2p_comm}})
      if (on) overlaps += fmt::format("{}{}", overlaps.empty() ? "" : ", ", what);
    // The accumulation pass shows only where there is one, so the line of a run without it is unchanged.
    const bool pass = b.grad_accumulation != GradAccumulation::none && sc.accumulates_whole_gradients();
    line(fmt::format("framework  {} (overlaps: {}; attention {}{})", to_string(sc.training.framework),
                     overlaps.empty() ? "none" : overlaps,
                     sc.training.flash_attention ? to_string(b.attention) : "unfused",
                     pass ? fmt::format("; gradients accumulated by a pass ({})", to_string(b.grad_accumulation)) : ""));
  }
  if (p.pp > 1) {
    // Blocks per stage, runs of equal counts as n×k so that deep pipelines fit on a line.
    std::vector<int> per_stage;
    for (int s = 0; s < r.partition.stages; ++s) per_stage.push_back(r.partition.layers_on_stage(s));
    std::string runs;
    for (std::size_t i = 0; i < per_stage.size();) {
      std::size_t j = i;
      while (j < per_stage.size() && per_stage[j] == per_stage[i]) ++j;
      runs += fmt::format("{}{}", runs.empty() ? "" : " ",
                          j - i > 1 ? fmt::format("{}×{}", per_stage[i], j - i) : std::to_string(per_stage[i]));
      i = j;
    }
    line(fmt::format("pipeline   {} partition, blocks per stage {}",
                     p.pipeline_layers.empty() ? to_string(p.pipeline_partition) : std::string("explicit"), runs));
  }
  std::string offload;
  const OffloadSpec& o = sc.memory.offload;
  for (auto [what, tier] : {std::pair{"optimizer", o.optimizer}, {"params", o.params}, {"activations", o.activations}})
    if (tier != Tier::none) offload += fmt::format("{}{}→{}", offload.empty() ? "" : ", ", what, to_string(tier));
  const bool per_op = sc.memory.recompute == Recompute::selective &&
                      sc.training.behaviour.selective_recompute == SelectiveRecompute::every_other_matmul;
  line(fmt::format("memory     ZeRO {}{}{}, recompute {}{}{}, offload {}{}", p.zero_stage,
                   p.distributed_optimizer ? " (distributed optimizer)" : "",
                   p.dp_replicate > 1 ? fmt::format(" over shard groups of {}, {} replicas (HSDP)", p.shard_size(),
                                                    p.dp_replicate)
                                      : "",
                   to_string(sc.memory.recompute),
                   per_op                           ? " (per op: every other matmul)"
                   : sc.memory.recompute_layers == 1 ? " (the first block of each model chunk)"
                   : sc.memory.recompute_layers > 1 ? fmt::format(" (the first {} blocks of each model chunk)",
                                                                  sc.memory.recompute_layers)
                                                    : "",
                   sc.memory.distribute_saved_activations ? ", its checkpoints split over TP" : "",
                   offload.empty() ? "none" : offload + (o.gpudirect ? " (GPUDirect Storage)" : ""),
                   sc.training.autocast() ? fmt::format(", {} parameters (autocast)",
                                                        to_string(sc.training.param_precision))
                                          : ""));
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
  std::map<Tier, NodeTierPeak> executed_tiers;
  if (r.simulation) executed_tiers = r.simulation->analysis.node_tiers;
  for (const auto& [tier, u] : mem.tiers)
    if (u.peak_per_node > 0.0 || u.capacity_per_node > 0.0)
      line(fmt::format("tier {:<10} peak {:>12} of {:>12} per node{}", to_string(tier),
                       format_bytes(u.peak_per_node), format_bytes(u.capacity_per_node),
                       executed_tiers.count(tier)
                           ? fmt::format(" (executed {})", format_bytes(executed_tiers.at(tier).bytes))
                           : ""));
  line("");
  // Static first, then the executed HBM timeline, host-tier timelines and checkpoint staging.
  std::vector<Overflow> overflows;
  for (const auto& [found_by, device] : {std::pair{"static", ""}, {"timeline", "gpu"}, {"timeline", "node"},
                                         {"checkpoint", ""}})
    for (const FoundOverflow& o : r.verdict.overflows)
      if (o.found_by == found_by && (*device == '\0' || o.overflow.device == device)) overflows.push_back(o.overflow);
  double executed = 0.0;
  if (r.simulation)
    for (const auto& [rank, m] : r.simulation->analysis.memory)
      if (m.peak.count(Tier::hbm)) executed = std::max(executed, m.peak.at(Tier::hbm));
  line(fmt::format("GPU peak   {} of {}{}  →  {}", format_bytes(mem.gpu_peak), format_bytes(sc.hardware.gpu.hbm.value),
                   r.simulation ? fmt::format(" (executed timeline {})", format_bytes(executed)) : "",
                   r.verdict.fits ? "FITS" : "DOES NOT FIT"));
  if (r.simulation) {
    const SimulationResult& sim = *r.simulation;
    const Throughput& t = sim.throughput;
    const TimeBreakdown& b = sim.analysis.breakdown;
    line("");
    line(fmt::format("iteration  {} ({} executor, {} tasks on {} simulated GPUs{}), contention {}",
                     format_seconds(t.iteration_time), sim.executor, format_count(static_cast<double>(sim.tasks)),
                     sim.simulated_gpus, sim.folded ? ", folded" : "", format_seconds(sim.contention_time)));
    line(fmt::format("throughput {} tokens/s, {:.1f} TFLOP/s per GPU (hardware {:.1f}), MFU {:.1f} %, HFU {:.1f} %",
                     format_count(t.tokens_per_s), t.flops_per_gpu / 1e12, t.hw_flops_per_gpu / 1e12, 100 * t.mfu, 100 * t.hfu));
    auto pct = [&](double s) { return unsigned_zero(fmt::format("{:.1f}%", 100.0 * s / t.iteration_time)); };
    auto exposed = [&](TaskKind k) {
      auto it = b.exposed_comm.find(k);
      return it == b.exposed_comm.end() ? 0.0 : it->second;
    };
    line(fmt::format("{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}{}", "time", "compute", "recompute",
                     "TP comm", "PP comm", "DP comm", "ZeRO-3", "offload", "bubble",
                     p.ep > 1 ? fmt::format(" {:>9}", "EP a2a") : ""));
    line(fmt::format("{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}{}", "share", pct(b.compute),
                     pct(b.recompute), pct(exposed(TaskKind::tp_comm)), pct(exposed(TaskKind::pp_transfer)),
                     pct(exposed(TaskKind::dp_comm)), pct(exposed(TaskKind::param_gather)), pct(b.exposed_offload()),
                     pct(b.bubble), p.ep > 1 ? fmt::format(" {:>9}", pct(exposed(TaskKind::ep_comm))) : ""));
    if (p.cp > 1)
      line(fmt::format("{:>10} {} exposed (K/V ring not hidden behind attention)", "CP comm",
                       pct(exposed(TaskKind::cp_comm))));
  }
  if (r.data) {
    const double stall = r.data->stall_s;
    line(fmt::format("data       {} per iteration from {}: read {}, stall {}, start-up burst {}",
                     format_bytes(r.data->bytes_per_iteration), to_string(sc.data.tier),
                     format_seconds(r.data->read_s), format_seconds(stall), format_seconds(r.data->startup_read_s)));
  }
  if (r.checkpoint && !behaviour(sc.checkpoint.strategy).writes_checkpoints) {
    const CheckpointResult& c = *r.checkpoint;
    const Recovery& node = c.recovery.at("node");
    line(fmt::format("redundant  each stage replicates the next: +{} per iteration ({:.2f} %), no checkpoint stall",
                     format_seconds(c.redundant_overhead_s), 100 * c.overhead_fraction));
    line(fmt::format("{:10} restore {} from the previous stage (after a node failure: {})", "",
                     format_seconds(c.restore_s), node.survives ? format_seconds(node.restore_s) : "lost"));
  } else if (r.checkpoint) {
    const CheckpointResult& c = *r.checkpoint;
    line(fmt::format("checkpoint {} {} every {} iterations: stall {} ({:.2f} % of the interval)",
                     to_string(sc.checkpoint.strategy),
                     format_bytes(c.size_bytes), sc.checkpoint.interval_iterations, format_seconds(c.stall_s),
                     100 * c.overhead_fraction));
    line(fmt::format("{:10} snapshot {}, interference {}, back-pressure {}", "", format_seconds(c.snapshot_stall_s),
                     format_seconds(c.interference_s), format_seconds(c.backpressure_s)));
    const Recovery& node = c.recovery.at("node");
    line(fmt::format("{:10} durable after {}, restore {} (after a node failure: {})", "", format_seconds(c.persist_s),
                     format_seconds(c.restore_s), node.survives ? format_seconds(node.restore_s) : "lost"));
  }
  if (r.run) {
    const RunLevelResult& g = *r.run;
    line(fmt::format("goodput    {:.2f} % ± {:.2f} over {}: {:.2f} failures, {} lost (job MTBF {})",
                     100 * g.goodput, 100 * g.goodput_ci95, format_seconds(sc.failures.horizon.value), g.failures,
                     format_seconds(g.lost_work_s), format_seconds(g.job_mtbf_s)));
    if (r.checkpoint && behaviour(sc.checkpoint.strategy).writes_checkpoints) {
      const bool yours = g.best_interval_iterations == static_cast<double>(sc.checkpoint.interval_iterations);
      // An interval shorter than the persist shows what waiting for the previous persist costs.
      const std::string pressure =
          g.backpressure_at_best_s > 0.0
              ? fmt::format(", back-pressure {} per checkpoint", format_seconds(g.backpressure_at_best_s))
              : "";
      line(fmt::format("{:10} best interval {} ({:.0f} iterations{}): goodput {:.2f} %{}", "",
                       format_seconds(g.best_interval_s), g.best_interval_iterations, yours ? ", yours" : "",
                       100 * g.goodput_at_best, pressure));
      line(fmt::format("{:10} Young {} / Daly {} for a cost δ = {} (goodput {:.2f} % / {:.2f} %)", "",
                       format_seconds(g.young_interval_s), format_seconds(g.daly_interval_s),
                       format_seconds(g.young_daly_delta_s), 100 * g.goodput_at_young, 100 * g.goodput_at_daly));
    }
  }
  for (const auto& o : overflows)
    line(fmt::format("overflow   {} {} {}: needs {}, has {} (short by {})", o.device, o.index, to_string(o.tier),
                     format_bytes(o.need), format_bytes(o.capacity), format_bytes(o.need - o.capacity)));
  for (const auto& w : r.confidence.warnings) line(labelled_paragraph("warning", w));
  return out;
}

}  // namespace strata
