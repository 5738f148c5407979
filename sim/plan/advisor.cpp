#include "sim/plan/advisor.hpp"

#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sim/core/diagnostics.hpp"
#include "sim/analysis/run.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/plan/sweep_results.hpp"
#include "sim/report/report.hpp"

namespace strata {

namespace {

using nlohmann::json;

/// A parallel layout and the memory policies tried on it, in order of preference.
struct Candidate {
  json settings;
  Scenario scenario;
  double screen = 0.0;
};

std::vector<Override> overrides_of(const std::vector<Override>& base, const json& settings) {
  std::vector<Override> out = base;
  for (const auto& [path, value] : settings.items()) out.push_back({path, value.dump()});
  return out;
}

/// What bounds a configuration: the largest non-compute share of the iteration (pipeline bubble,
/// exposed communication, recomputation and offload for memory, checkpoint stall); compute-bound
/// when none reaches 5 %.
std::string bound(const Scenario& sc, const RunResult& r) {
  if (!r.simulation || r.simulation->throughput.iteration_time <= 0) return "not simulated";
  const double T = r.simulation->throughput.iteration_time;
  const TimeBreakdown& b = r.simulation->analysis.breakdown;
  struct Share {
    const char* bound;
    const char* what;
    double fraction;
  };
  const Share shares[] = {
      {"bubble-bound", "bubble", b.bubble / T},
      {"comm-bound", "exposed communication", b.exposed_total() / T},
      {"memory-bound", "recompute + offload", (b.recompute + b.exposed_offload()) / T},
      {"checkpoint-bound", "checkpoint stall", r.checkpoint ? r.checkpoint->overhead_fraction : 0.0},
  };
  const Share* top = std::max_element(std::begin(shares), std::end(shares),
                                      [](const Share& x, const Share& y) { return x.fraction < y.fraction; });
  const double hbm = r.memory.gpu_peak / std::max(1.0, sc.hardware.gpu.hbm.value);
  if (top->fraction < 0.05)
    return fmt::format("compute-bound (MFU {:.1f} %, HBM {:.0f} %)", 100 * r.simulation->throughput.mfu, 100 * hbm);
  return fmt::format("{} ({} {:.1f} % of the iteration, HBM {:.0f} %)", top->bound, top->what, 100 * top->fraction,
                     100 * hbm);
}

}  // namespace

AdviseResult advise(const AdviseRequest& request, const DocumentResolver& resolver, const AdviseProgress& progress) {
  const auto started = std::chrono::steady_clock::now();
  if (request.objective != "tokens_per_s" && request.objective != "goodput")
    throw InputError({Diagnostic{"--objective", "", fmt::format("'{}' is not an objective (expected tokens_per_s or "
                                                                "goodput)", request.objective)}});
  const Scenario base = load_scenario(request.scenario, request.overrides, resolver);
  const bool goodput = request.objective == "goodput";
  if (goodput && !base.failures.enabled)
    throw InputError({Diagnostic{"--objective", "", "goodput needs a failures section in the scenario (expected "
                                                    "tokens_per_s, or a scenario with failures)"}});
  AdviseResult result;

  // 1. Every layout: TP within a node (powers of two), PP over divisors of the layer count, the rest
  //    DP; interleaving; micro-batch size; ZeRO (sharded optimizer; ZeRO-2/3 only without PP, as
  //    DeepSpeed), over all of DP or, across nodes, within each node (HSDP). For each, the least
  //    recomputation that fits; optimizer offload only if none does.
  const std::int64_t gpus = base.gpus, layers = base.model.num_layers;
  // Context parallelism is searched for long sequences only: from 32K tokens (Llama 3 trained its
  // 8K-token phase without CP and its 128K phase with CP 16, Table 4), powers of two whose 2·cp
  // chunks divide the sequence.
  std::vector<std::int64_t> cps = {1};
  constexpr std::int64_t kLongSequence = 32768;
  if (base.training.seq_len >= kLongSequence)
    for (std::int64_t cp = 2; cp <= 32 && cp <= gpus; cp *= 2)
      if (base.training.seq_len % (2 * cp) == 0) cps.push_back(cp);
  const bool moe = base.model.num_experts > 0;
  constexpr std::int64_t kMaxEp = 64;
  std::vector<json> layouts;
  for (std::int64_t cp : cps)
  for (std::int64_t tp = 1; tp <= base.hardware.gpus_per_node && tp <= gpus; tp *= 2)
    for (std::int64_t pp = 1; pp <= std::min<std::int64_t>(layers, 64); ++pp) {
      if (layers % pp != 0 || gpus % (tp * cp * pp) != 0) continue;
      const std::int64_t dp = gpus / (tp * cp * pp);
      for (std::int64_t v : {1, 2, 3, 4}) {
        if (v > 1 && (pp == 1 || layers % (pp * v) != 0)) continue;
        for (std::int64_t mbs : {1, 2, 4})
          for (std::int64_t zero : {0, 1, 2, 3}) {
            if (pp > 1 && zero > 0) continue;  // with PP: Megatron's distributed optimizer instead
            if (dp == 1 && zero > 0) continue;
            json s = {{"parallelism.tp", tp},
                      {"parallelism.pp", pp},
                      {"parallelism.dp", dp},
                      {"parallelism.virtual_stages", v},
                      {"parallelism.schedule", v > 1 ? "interleaved" : "1f1b"},
                      {"parallelism.sequence_parallel", tp > 1},
                      {"parallelism.zero_stage", zero},
                      {"parallelism.distributed_optimizer", pp > 1 && dp > 1},
                      {"training.micro_batch_size", mbs},
                      {"memory.offload.optimizer", "none"},
                      {"memory.offload.params", "none"},
                      {"memory.offload.activations", "none"}};
            // Only named when searched or set, so layouts of short sequences read as before.
            if (cp > 1 || base.parallelism.cp > 1) s["parallelism.cp"] = cp;
            if (base.parallelism.dp_replicate > 1) s["parallelism.dp_replicate"] = 1;
            // The search sets its own recomputation; the layouts with TP run sequence parallelism,
            // which distributed checkpoints are refused with.
            if (base.memory.recompute_layers > 0) s["memory.recompute_layers"] = 0;
            if (base.memory.distribute_saved_activations) s["memory.distribute_saved_activations"] = false;
            // Expert parallelism for MoE models, first carved out of DP, so ep divides dp and the
            // experts (sim/config/scenario_spec.cpp checks the same), then folded (below). Every divisor of
            // gcd(dp, num_experts) up to 64, DeepSeek-V3's training EP (
            // docs/references.md, Configuration advisor); sequence parallelism is already on with TP, as
            // Megatron-Core's MoE layers require. Named on every layout of an MoE model, so a
            // base scenario's own ep never leaks into layouts whose dp it does not divide.
            if (moe) {
              const std::int64_t g = std::gcd(dp, base.model.num_experts);
              for (std::int64_t ep = 1; ep <= std::min<std::int64_t>(g, kMaxEp); ++ep) {
                if (g % ep != 0) continue;
                json e = s;
                e["parallelism.ep"] = ep;
                // Carved out of DP: expert TP is TP, whatever the base scenario folds.
                e["parallelism.etp"] = tp;
                layouts.push_back(std::move(e));
              }
              // Folded (expert TP 1, MoE parallel folding): EP over the stage's tp·cp·dp ranks with
              // the experts whole, which differs from the carved layouts only with TP.
              const std::int64_t folded = std::gcd(tp * cp * dp, base.model.num_experts);
              for (std::int64_t ep = 2; tp > 1 && ep <= std::min<std::int64_t>(folded, kMaxEp); ++ep) {
                if (folded % ep != 0) continue;
                json e = s;
                e["parallelism.ep"] = ep;
                e["parallelism.etp"] = 1;
                layouts.push_back(std::move(e));
              }
            } else {
              // Sharded states over more than a node: also sharded within each node and replicated
              // across nodes (HSDP), which keeps the gathers on NVLink and sends only the reduced
              // shards across nodes (docs/references.md, Configuration advisor).
              const std::int64_t node_shard = base.hardware.gpus_per_node % (tp * cp) == 0
                                                  ? base.hardware.gpus_per_node / (tp * cp) : 0;
              const bool sharded = zero > 0 || (pp > 1 && dp > 1);
              if (sharded && node_shard >= 2 && dp > node_shard && dp % node_shard == 0) {
                json h = s;
                h["parallelism.dp_replicate"] = dp / node_shard;
                layouts.push_back(std::move(h));
              }
              layouts.push_back(std::move(s));
            }
          }
      }
    }

  std::vector<Candidate> fitting;
  // Where only full recomputation fits: the fewest blocks of each model chunk that must recompute
  // (Megatron-Core's block method), each block left out saving its rerun. Memory falls as the count
  // grows, so a binary search over it; nullopt when every block must.
  auto fewest_recomputed = [&](const json& settings, const RunResult& full) -> std::optional<std::int64_t> {
    int largest_chunk = 0;
    for (const ModelChunk& c : full.partition.chunks) largest_chunk = std::max(largest_chunk, c.num_layers);
    std::int64_t lo = 1, hi = largest_chunk;  // hi fits: every block of every chunk
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      json partial = settings;
      partial["memory.recompute_layers"] = mid;
      const Scenario sc = load_scenario(request.scenario, overrides_of(request.overrides, partial), resolver);
      if (estimate_scenario(sc).memory.fits) hi = mid;
      else lo = mid + 1;
    }
    return hi < largest_chunk ? std::optional<std::int64_t>(hi) : std::nullopt;
  };
  auto try_fit = [&](json settings) -> bool {
    for (const char* recompute : {"none", "selective", "full"}) {
      settings["memory.recompute"] = recompute;
      ++result.generated;
      try {
        Scenario sc = load_scenario(request.scenario, overrides_of(request.overrides, settings), resolver);
        const RunResult estimate = estimate_scenario(sc);
        if (!estimate.memory.fits) {
          ++result.too_big;
          continue;
        }
        if (sc.memory.recompute == Recompute::full && sc.memory.recompute_layers == 0) {
          if (const auto fewest = fewest_recomputed(settings, estimate)) {
            settings["memory.recompute_layers"] = *fewest;
            sc = load_scenario(request.scenario, overrides_of(request.overrides, settings), resolver);
          }
        }
        fitting.push_back({settings, std::move(sc), 0.0});
        return true;
      } catch (const InputError&) {
        ++result.invalid;
        return false;  // the layout itself is invalid: no recompute policy changes that
      }
    }
    return false;
  };
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    try_fit(layouts[i]);
    if (progress) progress("memory", static_cast<std::int64_t>(i) + 1, static_cast<std::int64_t>(layouts.size()));
  }
  if (fitting.empty()) {
    // Memory pressure beyond recomputation: ZeRO-Offload of the optimizer to host memory.
    for (json s : layouts) {
      if (s["parallelism.zero_stage"] == 0 && !s["parallelism.distributed_optimizer"].get<bool>()) continue;
      if (s.value("parallelism.dp_replicate", 1) > 1) continue;  // HSDP is not modelled with offload
      s["memory.offload.optimizer"] = "cpu";
      try_fit(s);
    }
  }
  if (fitting.empty()) {
    result.note = fmt::format("no configuration fits: {} layouts, {} invalid, {} too big even with full recompute "
                              "and optimizer offload", layouts.size(), result.invalid, result.too_big);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return result;
  }

  // 2. Screen: training alone, contention-free. Refused up front when the screens together would take
  // minutes: the DES runs about 2e5 tasks a second (BENCHMARKS.md), screening some ten times that, and
  // the estimate is about twice the real count, so 3e8 estimated tasks is minutes of screening.
  constexpr double kMaxScreenedTasks = 3e8;
  double screened_tasks = 0.0;
  for (const Candidate& c : fitting) screened_tasks += estimate_dag_size(c.scenario, true).tasks;
  if (screened_tasks > kMaxScreenedTasks)
    throw InputError({Diagnostic{"advise", "/training/global_batch_size",
                                 fmt::format("the search would screen {} configurations of about {:.2g} tasks in all, "
                                             "above the limit of {:.2g} (lower training.global_batch_size or "
                                             "training.iterations, or fix part of the layout with --set)",
                                             fitting.size(), screened_tasks, kMaxScreenedTasks)}});
  SimulationOptions list;
  list.executor = ExecutorKind::list;
  for (std::size_t i = 0; i < fitting.size(); ++i) {
    Scenario sc = fitting[i].scenario;
    sc.checkpoint.enabled = false;
    sc.failures.enabled = false;
    sc.data.enabled = false;
    fitting[i].screen = run_scenario(sc, list).simulation->throughput.tokens_per_s;
    ++result.screened;
    if (progress) progress("screen", static_cast<std::int64_t>(i) + 1, static_cast<std::int64_t>(fitting.size()));
  }
  std::stable_sort(fitting.begin(), fitting.end(), [](const Candidate& a, const Candidate& b) { return a.screen > b.screen; });

  // 3. Confirm the best with the DES and the whole scenario.
  // Decided from the typed results; the flattened report is kept only for the caller to print.
  auto simulate = [&](const Scenario& sc, const json& settings) {
    const RunResult r = run_scenario(sc);
    AdvisedConfig c;
    c.settings = settings;
    c.report = flatten_report(make_report(sc, r));
    c.objective = goodput ? (r.run ? r.run->effective_tokens_per_s : 0.0) : r.simulation->throughput.tokens_per_s;
    c.bound = bound(sc, r);
    c.daly_interval_s = r.run ? r.run->daly_interval_s : 0.0;
    c.iteration_s = r.simulation->throughput.iteration_time;
    return c;
  };
  const std::size_t confirm = std::min<std::size_t>(fitting.size(), static_cast<std::size_t>(std::max(1, request.confirm)));
  for (std::size_t i = 0; i < confirm; ++i) {
    result.ranked.push_back(simulate(fitting[i].scenario, fitting[i].settings));
    ++result.confirmed;
    if (progress) progress("confirm", static_cast<std::int64_t>(i) + 1, static_cast<std::int64_t>(confirm));
  }
  auto by_objective = [](const AdvisedConfig& a, const AdvisedConfig& b) { return a.objective > b.objective; };
  std::stable_sort(result.ranked.begin(), result.ranked.end(), by_objective);

  // 4. Checkpoints for the winner: each strategy the hardware allows, at the scenario's interval and
  //    at Daly's optimum for that strategy's cost.
  if (base.checkpoint.enabled) {
    const AdvisedConfig winner = result.ranked.front();
    std::vector<std::pair<CheckpointStrategy, json>> strategies = {
        {SyncCheckpoint{}, json::array({"object_store"})}, {AsyncCheckpoint{}, json::array({"dram", "object_store"})}};
    const bool ssd = base.hardware.local_ssd.count > 0, cxl = base.hardware.cxl.capacity.value > 0;
    if (ssd) strategies.push_back({TieredCheckpoint{}, json::array({cxl ? "cxl" : "dram", "local_ssd", "object_store"})});
    if (base.nodes >= 2) strategies.push_back({InMemoryCheckpoint{}, json::array({"dram", "object_store"})});
    json base_tiers = json::array();
    for (Tier t : base.checkpoint.tiers) base_tiers.push_back(to_string(t));
    for (const auto& [strategy, tiers] : strategies) {
      json s = winner.settings;
      // The scenario's own strategy was simulated with the winner already: only its Daly interval is new.
      const bool known = strategy.index() == base.checkpoint.strategy.index() && tiers == base_tiers;
      s["checkpoint.strategy"] = to_string(strategy);
      s["checkpoint.tiers"] = tiers;
      for (int pass = 0; pass < 2; ++pass) {
        try {
          const Scenario sc = load_scenario(request.scenario, overrides_of(request.overrides, s), resolver);
          AdvisedConfig c = known && pass == 0 ? winner : simulate(sc, s);
          if (!(known && pass == 0)) ++result.checkpoint_trials;
          const double daly = c.daly_interval_s, T = c.iteration_s;
          if (!(known && pass == 0)) result.ranked.push_back(std::move(c));
          if (pass == 1 || daly <= 0 || T <= 0) break;
          const auto every = static_cast<std::int64_t>(std::max(1.0, std::round(daly / T)));
          if (every == sc.checkpoint.interval_iterations) break;
          s["checkpoint.interval_iterations"] = every;
        } catch (const InputError&) {
          break;  // e.g. a tier this hardware lacks
        }
      }
    }
    std::stable_sort(result.ranked.begin(), result.ranked.end(), by_objective);
  }

  const double best = result.ranked.front().objective;
  for (auto& c : result.ranked) {
    const std::string against =
        &c == &result.ranked.front() ? "best" : unsigned_zero(fmt::format("{:+.1f} % vs best", 100 * (c.objective / best - 1.0)));
    c.verdict = fmt::format("{}: {}", against, c.bound);
  }
  if (result.ranked.size() > static_cast<std::size_t>(request.top)) result.ranked.resize(static_cast<std::size_t>(request.top));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace strata
