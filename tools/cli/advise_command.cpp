#include <unistd.h>

#include <fmt/format.h>

#include <cstdio>

#include "sim/core/units.hpp"
#include "sim/plan/advisor.hpp"
#include "tools/cli/commands.hpp"

namespace strata::cli {

namespace {

double num(const nlohmann::json& j, const std::string& key) {
  return j.contains(key) && j.at(key).is_number() ? j.at(key).get<double>() : 0.0;
}

std::string text(const nlohmann::json& j, const std::string& key) {
  if (!j.contains(key)) return "-";
  return j.at(key).is_string() ? j.at(key).get<std::string>() : j.at(key).dump();
}

}  // namespace

int advise_command(const FolderCatalog& catalog, const AdviseOptions& o) {
  AdviseRequest r;
  r.scenario = find_scenario(catalog, o.scenario);
  for (const auto& t : o.overrides) r.overrides.push_back(parse_override(t));
  r.objective = o.objective;
  r.top = o.top;
  r.confirm = o.confirm;
  const bool tty = ::isatty(2) != 0;
  const AdviseResult a = advise(r, catalog, [&](const std::string& stage, std::int64_t done, std::int64_t total) {
    if (o.quiet) return;
    if (tty) std::fprintf(stderr, "\r%-8s %lld/%lld", stage.c_str(), static_cast<long long>(done),
                          static_cast<long long>(total));
    else if (done == total) std::fprintf(stderr, "%-8s %lld/%lld\n", stage.c_str(), static_cast<long long>(done),
                                         static_cast<long long>(total));
    if (tty && done == total) std::fputc('\n', stderr);
  });
  if (a.ranked.empty()) {
    std::printf("%s\n", a.note.c_str());
    return 3;
  }
  // A cp column only when the search tried context parallelism (long sequences).
  bool with_cp = false;
  for (const auto& c : a.ranked) with_cp = with_cp || c.settings.contains("parallelism.cp");
  // Likewise an ep column only when it searched expert parallelism (MoE models).
  bool with_ep = false;
  for (const auto& c : a.ranked) with_ep = with_ep || c.settings.contains("parallelism.ep");
  // "h" after the ZeRO stage: sharded within each node, replicated across nodes (HSDP).
  const auto hsdp = [](const nlohmann::json& settings) { return settings.value("parallelism.dp_replicate", 1) > 1; };
  bool with_hsdp = false;
  for (const auto& c : a.ranked) with_hsdp = with_hsdp || hsdp(c.settings);
  // "full N": the first N blocks of each model chunk recompute.
  const auto recompute = [](const nlohmann::json& settings) {
    const std::int64_t blocks = settings.value("memory.recompute_layers", std::int64_t{0});
    return text(settings, "memory.recompute") + (blocks > 0 ? fmt::format(" {}", blocks) : "");
  };
  bool with_partial = false;
  for (const auto& c : a.ranked) with_partial = with_partial || c.settings.value("memory.recompute_layers", 0) > 0;
  std::printf("%-4s %3s %s%3s %4s %s%2s %3s %4s %-9s %-8s %-22s %9s %10s %6s %9s %s\n", "rank", "tp",
              with_cp ? " cp " : "", "pp", "dp", with_ep ? " ep " : "", "v", "mbs", "zero", "recompute", "offload", "checkpoint", "iteration", "tokens/s", "MFU", "HBM peak", "why");
  int rank = 0;
  for (const auto& c : a.ranked) {
    const auto& f = c.report;
    const std::string ckpt = f.contains("checkpoint.strategy")
                                 ? fmt::format("{} every {}", text(f, "checkpoint.strategy"),
                                               text(f, "checkpoint.interval_iterations"))
                                 : "-";
    const std::string cp = with_cp ? fmt::format("{:>3} ", c.settings.contains("parallelism.cp")
                                                               ? text(c.settings, "parallelism.cp")
                                                               : std::string("1"))
                                   : "";
    // "f": folded over tp·cp·dp with the experts whole (expert TP 1).
    const bool folded = c.settings.contains("parallelism.etp") && c.settings.at("parallelism.etp") == 1 &&
                        c.settings.at("parallelism.tp").get<std::int64_t>() > 1;
    const std::string ep_degree = c.settings.contains("parallelism.ep")
                                      ? text(c.settings, "parallelism.ep") + (folded ? "f" : "")
                                      : std::string("1");
    const std::string ep = with_ep ? fmt::format("{:>3} ", ep_degree) : "";
    std::printf("%-4d %3s %s%3s %4s %s%2s %3s %4s %-9s %-8s %-22s %9s %10s %5.1f%% %9s %s\n", ++rank,
                text(c.settings, "parallelism.tp").c_str(), cp.c_str(), text(c.settings, "parallelism.pp").c_str(),
                text(c.settings, "parallelism.dp").c_str(), ep.c_str(), text(c.settings, "parallelism.virtual_stages").c_str(),
                text(c.settings, "training.micro_batch_size").c_str(),
                ((c.settings.at("parallelism.distributed_optimizer").get<bool>()
                      ? std::string("DO")
                      : text(c.settings, "parallelism.zero_stage")) +
                 (hsdp(c.settings) ? "h" : ""))
                    .c_str(),
                recompute(c.settings).c_str(), text(c.settings, "memory.offload.optimizer").c_str(),
                ckpt.c_str(), format_seconds(num(f, "throughput.iteration_time_s")).c_str(),
                format_count(num(f, "throughput.tokens_per_s")).c_str(),
                100 * num(f, "throughput.mfu"), format_bytes(num(f, "memory.gpu_peak_bytes")).c_str(),
                c.verdict.c_str());
  }
  std::printf("columns: tp, %spp, dp%s parallel degrees; v model chunks per pipeline stage (interleaved schedule); mbs "
              "micro-batch size; zero ZeRO stage, or DO for Megatron's distributed optimizer%s; recompute activation "
              "recomputation%s; offload where optimizer states live; checkpoint strategy and interval in iterations; "
              "iteration the steady-state iteration time; tokens/s for the whole cluster; MFU model FLOPs "
              "utilisation; HBM peak per GPU; why the reason for its rank\n",
              with_cp ? "cp (context parallel), " : "",
              with_ep ? ", ep (expert parallel: within dp, or f folded over tp·cp·dp with experts whole)" : "",
              with_hsdp ? " (h: sharded within each node and replicated across nodes, HSDP)" : "",
              with_partial ? " (full N: only the first N blocks of each model chunk)" : "");
  std::printf("objective %s; %lld configurations generated (%lld invalid, %lld do not fit), %lld screened, "
              "%lld simulated with the DES, %lld checkpoint trials; %.1f s\n",
              o.objective.c_str(), static_cast<long long>(a.generated), static_cast<long long>(a.invalid),
              static_cast<long long>(a.too_big), static_cast<long long>(a.screened),
              static_cast<long long>(a.confirmed), static_cast<long long>(a.checkpoint_trials), a.seconds);
  return 0;
}

}  // namespace strata::cli
