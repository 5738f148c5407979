#include "sim/report/report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <algorithm>

#include "sim/core/units.hpp"

namespace strata {

using nlohmann::json;

namespace {

json breakdown_json(const MemoryBreakdown& b) {
  return {{"params", b.params},         {"gradients", b.gradients}, {"optimizer", b.optimizer},
          {"activations", b.activations}, {"workspace", b.workspace}, {"buffers", b.buffers}};
}

}  // namespace

json model_description(const ModelSpec& m, const ParameterBreakdown& p) {
  return {{"format", m.format},
          {"model_type", m.model_type.empty() ? json(nullptr) : json(m.model_type)},
          {"mlp", to_string(m.mlp)},
          {"activation", m.hidden_act},
          {"norm", m.norm == NormKind::rmsnorm ? "rmsnorm" : "layernorm"},
          {"norms_per_layer", m.sandwich_norm ? 4 : 2},
          {"position_embedding", m.position_embedding == PositionEmbedding::learned ? "learned" : "rotary"},
          {"hidden_size", m.hidden_size},
          {"heads", m.num_heads},
          {"kv_heads", m.num_kv_heads},
          {"head_dim", m.head_dim},
          {"intermediate_size", m.intermediate_size},
          {"vocab_size", m.vocab_size},
          {"experts", m.num_experts},
          {"experts_per_token", m.experts_per_token},
          {"tied_embeddings", m.tie_word_embeddings},
          {"parallel_residual", m.parallel_residual},
          {"sliding_window", m.sliding_window},
          {"sliding_window_layers", m.sliding_window == 0 ? json(nullptr)
                                    : json(m.sliding_window_layers == WindowLayers::all ? "all" : "alternate")},
          {"parameters_by_kind",
           {{"embedding", p.embedding}, {"attention", p.attention}, {"mlp", p.mlp}, {"norms", p.norms},
            {"lm_head", p.lm_head}}}};
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

namespace {

json simulation_json(const SimulationResult& sim) {
  const ScheduleAnalysis& a = sim.analysis;
  const Throughput& t = sim.throughput;
  json throughput = {{"iteration_time_s", t.iteration_time},
                     {"tokens_per_s", t.tokens_per_s},
                     {"samples_per_s", t.samples_per_s},
                     {"tflops_per_gpu", t.flops_per_gpu / 1e12},
                     {"hw_tflops_per_gpu", t.hw_flops_per_gpu / 1e12},
                     {"mfu", t.mfu},
                     {"hfu", t.hfu},
                     {"bubble_fraction", t.bubble_fraction}};
  const TimeBreakdown& b = a.breakdown;
  json breakdown = {{"compute_s", b.compute},
                    {"recompute_s", b.recompute},
                    {"exposed_comm_s", b.exposed_total()},
                    {"exposed_offload_s", b.exposed_offload()},
                    {"bubble_s", b.bubble}};
  auto exposed = [&](TaskKind k) {
    auto it = b.exposed_comm.find(k);
    return it == b.exposed_comm.end() ? 0.0 : it->second;
  };
  for (TaskKind k : {TaskKind::tp_comm, TaskKind::pp_transfer, TaskKind::dp_comm, TaskKind::param_gather})
    breakdown["exposed_" + to_string(k) + "_s"] = exposed(k);
  // The GPU idle while only its next batch is loading.
  breakdown["data_stall_s"] = exposed(TaskKind::data_load);
  json path_kinds = json::object(), path_links = json::object();
  for (const auto& [k, sec] : a.critical_path.seconds) path_kinds[to_string(k) + "_s"] = sec;
  for (const auto& [l, sec] : a.critical_path.links) path_links[l + "_s"] = sec;
  // GPU kernels of every kind count as one resource, each kind of transfer as its own.
  std::map<std::string, double> by_resource;
  for (const auto& [k, sec] : a.critical_path.seconds) by_resource[is_compute(k) ? "compute" : to_string(k)] += sec;
  std::string bound = "compute";
  double most = -1.0;
  for (const auto& [name, sec] : by_resource)
    if (sec > most) {
      most = sec;
      bound = name;
    }
  return {{"throughput", throughput},
          {"time_breakdown", breakdown},
          {"critical_path", {{"by_task_kind", path_kinds}, {"by_link", path_links}, {"bound_by", bound}}},
          {"simulation",
           {{"executor", sim.executor},
            {"folded", sim.folded},
            {"tasks", sim.tasks},
            {"simulated_gpus", sim.simulated_gpus},
            {"contention_free_iteration_time_s", sim.contention_free_iteration_time},
            {"contention_s", sim.contention_time}}}};
}

}  // namespace

namespace {

/// `checkpoint.mlperf`: one checkpoint in MLPerf Storage's checkpointing definitions
/// (Submission_guidelines.md §2.2.3; DLIO's statscounter; docs/references.md, MLPerf Storage
/// checkpointing): duration = the slowest rank's, here the save until every byte is durable and the
/// restore of every rank at once; throughput = the whole checkpoint's bytes / duration; sizes in
/// 1024^3 bytes, which the benchmark's summary labels "GB" (checkpoint_size_GB) and its log "GiB".
json mlperf_checkpoint(const CheckpointResult& c) {
  const double gib = c.size_bytes / kGiB;
  auto rate = [gib](double seconds) { return seconds > 0.0 ? json(gib / seconds) : json(nullptr); };
  return {{"size_gib", gib},
          {"save_duration_s", c.persist_s},
          {"save_throughput_gib_per_s", rate(c.persist_s)},
          {"load_duration_s", c.restore_s},
          {"load_throughput_gib_per_s", rate(c.restore_s)}};
}

}  // namespace

json make_report(const Scenario& sc, const RunResult& r) {
  const MemoryEstimate& mem = r.memory;
  json gpus = json::array();
  double timeline_peak = 0.0;
  for (const auto& st : mem.stages) {
    json offloaded = json::object();
    for (const auto& [tier, bytes] : st.offloaded) offloaded[to_string(tier)] = bytes;
    json timeline = nullptr;
    if (r.simulation) {
      const auto& tm = r.simulation->analysis.memory;
      auto it = tm.find(st.first_rank);
      if (it != tm.end()) {
        json at_peak = json::object();
        for (int u = 0; u < kNumMemoryUses; ++u)
          at_peak[to_string(static_cast<MemoryUse>(u))] = it->second.at_peak[static_cast<std::size_t>(u)];
        const double peak = it->second.peak.count(Tier::hbm) ? it->second.peak.at(Tier::hbm) : 0.0;
        timeline_peak = std::max(timeline_peak, peak);
        timeline = {{"peak_bytes", peak}, {"peak_time_s", it->second.peak_time}, {"breakdown_at_peak", at_peak}};
      }
    }
    gpus.push_back({{"rank", st.first_rank},
                    {"timeline", timeline},
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
  // Each overflow names who found it: the static memory model, the executed timeline or the
  // checkpoint's staging, and for the latter two when it happened.
  auto overflow_json = [](const FoundOverflow& found) {
    const Overflow& o = found.overflow;
    json j = {{"device", o.device},
              {o.device == "gpu" ? "rank" : "node", o.index},
              {"tier", to_string(o.tier)},
              {"need_bytes", o.need},
              {"capacity_bytes", o.capacity},
              {"excess_bytes", o.need - o.capacity},
              {"found_by", found.found_by}};
    if (found.time_s) j["time_s"] = *found.time_s;
    return j;
  };
  if (r.simulation)
    for (const auto& [tier, peak] : r.simulation->analysis.node_tiers)
      tiers[to_string(tier)]["timeline"] = {{"peak_bytes", peak.bytes}, {"peak_node", peak.node},
                                            {"peak_time_s", peak.time}};
  for (const FoundOverflow& o : r.verdict.overflows) overflows.push_back(overflow_json(o));
  const auto& most = mem.stages.at(static_cast<std::size_t>(mem.most_loaded_stage));
  const ParallelismSpec& p = sc.parallelism;
  json model_section = model_description(sc.model, r.parameters_by_kind);
  model_section.update(json{{"name", sc.model.name},
                            {"parameters", r.parameters},
                            {"layers", sc.model.num_layers},
                            {"flops_per_iteration", r.flops_per_iteration}});
  json report = {
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
        {"offload_gpudirect", sc.memory.offload.gpudirect},
        {"flash_attention", sc.training.flash_attention}}},
      {"model", model_section},
      {"fits", r.verdict.fits},
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
  if (r.simulation) {
    report["memory"]["timeline_gpu_peak_bytes"] = timeline_peak;
    report.update(simulation_json(*r.simulation));
  }
  if (r.run) {
    const RunLevelResult& g = *r.run;
    report["run"] = {{"goodput", g.goodput},
                     {"goodput_ci95", g.goodput_ci95},
                     {"runs", g.runs},
                     {"job_mtbf_s", g.job_mtbf_s},
                     {"failures", g.failures},
                     {"lost_work_s", g.lost_work_s},
                     {"restart_s", g.restart_s},
                     {"restore_s", g.restore_s},
                     {"checkpoint_s", g.checkpoint_s},
                     {"effective_tokens_per_s", g.effective_tokens_per_s}};
    // Interval advice needs a checkpoint cost; without checkpoints (or with redundant computation
    // instead) it is absent (null), not zero.
    const bool advice = r.checkpoint.has_value() && behaviour(sc.checkpoint.strategy).writes_checkpoints;
    report["run"]["first_order_goodput"] = r.checkpoint ? json(g.first_order_goodput) : json(nullptr);
    report["run"]["young_interval_s"] = advice ? json(g.young_interval_s) : json(nullptr);
    report["run"]["daly_interval_s"] = advice ? json(g.daly_interval_s) : json(nullptr);
    report["run"]["goodput_at_young"] = advice ? json(g.goodput_at_young) : json(nullptr);
    report["run"]["goodput_at_daly"] = advice ? json(g.goodput_at_daly) : json(nullptr);
    report["run"]["young_daly_delta_s"] = advice ? json(g.young_daly_delta_s) : json(nullptr);
    report["run"]["best_interval_s"] = advice ? json(g.best_interval_s) : json(nullptr);
    report["run"]["best_interval_iterations"] = advice ? json(g.best_interval_iterations) : json(nullptr);
    report["run"]["goodput_at_best"] = advice ? json(g.goodput_at_best) : json(nullptr);
    report["run"]["backpressure_at_best_s"] = advice ? json(g.backpressure_at_best_s) : json(nullptr);
  }
  if (r.data) {
    report["data"] = {{"tier", to_string(sc.data.tier)},
                      {"sample_bytes", sc.data.sample_bytes},
                      {"bytes_per_iteration", r.data->bytes_per_iteration},
                      {"prefetch_iterations", sc.data.prefetch_iterations},
                      {"read_s", r.data->read_s},
                      {"stall_s", r.data->stall_s},
                      {"startup_read_s", r.data->startup_read_s}};
  }
  if (r.checkpoint) {
    const CheckpointResult& c = *r.checkpoint;
    json staging = json::object();
    for (const auto& [tier, peak] : c.staging)
      staging[to_string(tier)] = {{"peak_bytes", peak.bytes}, {"peak_node", peak.node}, {"peak_time_s", peak.time}};
    json tiers = json::array();
    for (Tier t : sc.checkpoint.tiers) tiers.push_back(to_string(t));
    // Per iteration, amortised over the interval; not part of the iteration time above.
    report["time_breakdown"]["checkpoint_stall_s"] =
        c.stall_s / static_cast<double>(sc.checkpoint.interval_iterations);
    const CheckpointBehaviour policy = behaviour(sc.checkpoint.strategy);
    report["checkpoint"] = {{"strategy", to_string(sc.checkpoint.strategy)},
                            {"tiers", tiers},
                            {"interval_iterations", sc.checkpoint.interval_iterations},
                            {"size_bytes", c.size_bytes},
                            {"max_rank_bytes", c.max_rank_bytes},
                            {"stall_s", c.stall_s},
                            {"snapshot_stall_s", c.snapshot_stall_s},
                            {"interference_s", c.interference_s},
                            {"backpressure_s", c.backpressure_s},
                            {"persist_s", c.persist_s},
                            {"overhead_fraction", c.overhead_fraction},
                            {"restore_s", c.restore_s},
                            {"gpudirect", sc.checkpoint.gpudirect},
                            {"staging_peaks", staging}};
    if (policy.peer_replicas > 0) report["checkpoint"]["replicate_s"] = c.replicate_s;
    if (policy.replicates_next_stage) report["checkpoint"]["redundant_overhead_s"] = c.redundant_overhead_s;
    if (const auto* tiered = std::get_if<TieredCheckpoint>(&sc.checkpoint.strategy))
      report["checkpoint"]["drain"] = to_string(tiered->drain);
    json recovery = json::object();
    for (const auto& [kind, rec] : c.recovery)
      recovery[kind] = {{"survives", rec.survives},
                        {"durable_s", rec.survives ? json(rec.durable_s) : json(nullptr)},
                        {"restore_s", rec.survives ? json(rec.restore_s) : json(nullptr)}};
    report["checkpoint"]["recovery"] = recovery;
    if (policy.writes_checkpoints) report["checkpoint"]["mlperf"] = mlperf_checkpoint(c);
  }
  return report;
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
                   offload.empty() ? "none" : offload + (o.gpudirect ? " (GPUDirect Storage)" : "")));
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
    line(fmt::format("throughput {:.4g} tokens/s, {:.1f} TFLOP/s per GPU (hardware {:.1f}), MFU {:.1f} %, HFU {:.1f} %",
                     t.tokens_per_s, t.flops_per_gpu / 1e12, t.hw_flops_per_gpu / 1e12, 100 * t.mfu, 100 * t.hfu));
    auto pct = [&](double s) { return fmt::format("{:.1f}%", 100.0 * s / t.iteration_time); };
    auto exposed = [&](TaskKind k) {
      auto it = b.exposed_comm.find(k);
      return it == b.exposed_comm.end() ? 0.0 : it->second;
    };
    line(fmt::format("{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "time", "compute", "recompute",
                     "TP comm", "PP comm", "DP comm", "ZeRO-3", "offload", "bubble"));
    line(fmt::format("{:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "share", pct(b.compute),
                     pct(b.recompute), pct(exposed(TaskKind::tp_comm)), pct(exposed(TaskKind::pp_transfer)),
                     pct(exposed(TaskKind::dp_comm)), pct(exposed(TaskKind::param_gather)), pct(b.exposed_offload()),
                     pct(b.bubble)));
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
  return out;
}

}  // namespace strata
