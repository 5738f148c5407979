#include "sim/config/checkpoint_policy.hpp"

#include <algorithm>
#include <map>
#include <type_traits>

#include <fmt/format.h>

namespace strata {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

/// Calls `f(Strategy{})` for every alternative of the variant, in declaration order.
template <class F, std::size_t... I>
void for_each_strategy(F&& f, std::index_sequence<I...>) {
  (f(std::variant_alternative_t<I, CheckpointStrategy>{}), ...);
}
template <class F>
void for_each_strategy(F&& f) {
  for_each_strategy(std::forward<F>(f), std::make_index_sequence<std::variant_size_v<CheckpointStrategy>>{});
}

constexpr std::pair<DrainPolicy, const char*> kDrainNames[] = {{DrainPolicy::eager, "eager"},
                                                                {DrainPolicy::congestion_aware, "congestion_aware"}};

/// Which strategies take each strategy-specific key.
const std::map<std::string, std::vector<std::string>>& key_owners() {
  static const std::map<std::string, std::vector<std::string>> owners = {
      {"chunks", {TieredCheckpoint::name}},
      {"drain", {TieredCheckpoint::name}},
      {"replicas", {InMemoryCheckpoint::name}},
      {"persist_every", {InMemoryCheckpoint::name}}};
  return owners;
}

/// Keys of other strategies are errors: they would silently do nothing. Except when a `--set` chose
/// the strategy and the key comes from the file: the user switched an existing scenario's strategy,
/// and the keys of the one it had simply no longer apply.
void refuse_foreign_keys(ObjectReader& ck, const std::string& strategy) {
  for (const auto& [key, owners] : key_owners()) {
    if (!ck.has(key) || std::find(owners.begin(), owners.end(), strategy) != owners.end()) continue;
    if (ck.overridden("strategy") && !ck.overridden(key)) continue;
    ck.error(key, fmt::format("applies to the {} strategy (got strategy {})", fmt::join(owners, " or "), strategy));
  }
}

DrainPolicy drain_from_string(const std::string& s) {
  for (const auto& [drain, name] : kDrainNames)
    if (s == name) return drain;
  return DrainPolicy::eager;  // the reader has reported an invalid choice
}

}  // namespace

std::string to_string(const CheckpointStrategy& strategy) {
  return std::visit([](const auto& s) -> std::string { return std::decay_t<decltype(s)>::name; }, strategy);
}

std::string to_string(DrainPolicy drain) {
  for (const auto& [d, name] : kDrainNames)
    if (d == drain) return name;
  return "eager";
}

CheckpointBehaviour behaviour(const CheckpointStrategy& strategy) {
  CheckpointBehaviour b;
  std::visit(Overloaded{[&](const SyncCheckpoint&) { b.blocks_until_durable = true; },
                        [&](const AsyncCheckpoint&) {},
                        [&](const TieredCheckpoint& s) {
                          b.chunks = s.chunks;
                          b.background_yields = s.drain == DrainPolicy::congestion_aware;
                        },
                        [&](const InMemoryCheckpoint& s) {
                          b.peer_replicas = s.replicas;
                          b.persist_every = s.persist_every;
                        },
                        [&](const RedundantCompute&) {
                          b.writes_checkpoints = false;
                          b.replicates_next_stage = true;
                        },
                        [&](const NearStorageCheckpoint&) { b.optimizer_on_ssd = true; }},
             strategy);
  return b;
}

std::vector<StrategyDoc> checkpoint_strategy_docs() {
  std::vector<StrategyDoc> out;
  for_each_strategy([&](auto s) {
    StrategyDoc d{decltype(s)::name, decltype(s)::doc, {}};
    for (const Param& p : checkpoint_strategy_params()) {
      const auto& owners = key_owners().at(p.key);
      if (std::find(owners.begin(), owners.end(), d.name) != owners.end()) d.params.push_back(p);
    }
    out.push_back(std::move(d));
  });
  return out;
}

std::vector<std::string> drain_policy_names() {
  std::vector<std::string> out;
  for (const auto& [drain, name] : kDrainNames) out.push_back(name);
  return out;
}

const ParamTable& checkpoint_strategy_params() {
  static const ParamTable table = {
      {.key = "chunks", .kind = ParamKind::integer, .default_value = 8,
       .doc = "pieces a tiered checkpoint streams through its tiers as a pipeline", .min = 1, .max = 1024},
      {.key = "drain", .kind = ParamKind::choice, .default_value = "eager",
       .doc = "tiered: how the background hops drain", .choices = drain_policy_names()},
      {.key = "replicas", .kind = ParamKind::integer, .default_value = 1,
       .doc = "in_memory: peer nodes holding a copy of each node's snapshot", .min = 1, .max = 64},
      {.key = "persist_every", .kind = ParamKind::integer, .default_value = 10,
       .doc = "in_memory: every n-th checkpoint also goes to the tiers after dram", .min = 1, .max = 1e6},
  };
  return table;
}

CheckpointStrategy read_checkpoint_strategy(ObjectReader& ck, const std::string& name,
                                            const CheckpointContext& context) {
  CheckpointStrategy strategy = SyncCheckpoint{};
  for_each_strategy([&](auto s) {
    if (name == decltype(s)::name) strategy = s;
  });
  refuse_foreign_keys(ck, name);
  const Tier first = context.tiers.empty() ? Tier::none : context.tiers.front();
  std::visit(
      Overloaded{
          [](SyncCheckpoint&) {}, [](AsyncCheckpoint&) {},
          [&](TieredCheckpoint& s) {
            s.chunks = ck.integer("chunks");
            s.drain = drain_from_string(ck.choice("drain"));
          },
          [&](InMemoryCheckpoint& s) {
            s.replicas = ck.integer("replicas");
            s.persist_every = ck.integer("persist_every");
            if (first != Tier::dram && !context.tiers.empty())
              ck.error("tiers", fmt::format("in_memory keeps snapshots in host memory: the first tier must be dram "
                                            "(got {})", to_string(first)));
            if (!context.has_nic)
              ck.error("strategy", fmt::format("in_memory replicates over NICs (hardware {} has nic.count=0)",
                                               context.hardware));
          },
          [&](RedundantCompute&) {
            if (context.pp < 2)
              ck.error("strategy", fmt::format("redundant_compute keeps each pipeline stage's replica on the stage "
                                               "before it: needs pp >= 2 (got pp={})", context.pp));
            if (context.optimizer_offload != Tier::none)
              ck.error("strategy", "redundant_compute keeps the replica's optimizer states in HBM (expected "
                                   "memory.offload.optimizer none)");
          },
          [&](NearStorageCheckpoint&) {
            if (!context.computational_ssd)
              ck.error("strategy", fmt::format("near_storage runs the optimizer on the SSDs: hardware {} needs "
                                               "local_ssd.computational=true", context.hardware));
            if (first != Tier::local_ssd && !context.tiers.empty())
              ck.error("tiers", fmt::format("near_storage keeps the checkpoint where the optimizer runs: the first "
                                            "tier must be local_ssd (got {})", to_string(first)));
            if (context.optimizer_offload != Tier::none)
              ck.error("strategy", "near_storage places the optimizer on the SSDs itself (expected "
                                   "memory.offload.optimizer none)");
          }},
      strategy);
  return strategy;
}

void check_checkpoint_cluster(const CheckpointStrategy& strategy, std::int64_t nodes, ObjectReader& top) {
  if (const auto* s = std::get_if<InMemoryCheckpoint>(&strategy); s && s->replicas >= nodes)
    top.error("checkpoint", fmt::format("in_memory with {} peer replica(s) needs at least {} nodes (the scenario has "
                                        "{}); lower checkpoint.replicas or add nodes",
                                        s->replicas, s->replicas + 1, nodes));
}

}  // namespace strata
