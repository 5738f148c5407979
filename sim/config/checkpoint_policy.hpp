#pragma once

/// Checkpoint strategies as types. Each strategy is one struct: its name and one-line doc (the
/// policy catalog and `strata describe` read them from here), the `checkpoint` keys it takes, their
/// validation against the scenario, and the behaviour it asks of the DAG emitter and the analysis
/// (`CheckpointBehaviour`). Everything after `config` works from the behaviour, or visits the
/// variant; nothing compares a strategy's name.
///
/// Adding a strategy: a struct here, listed in `CheckpointStrategy`; its reading and checks in
/// checkpoint_policy.cpp; and, only if it needs a behaviour the existing traits cannot express, that
/// trait where it is emitted (docs/extending.md).

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "sim/config/tier.hpp"
#include "sim/core/params.hpp"

namespace strata {

/// How a tiered checkpoint's background hops drain.
enum class DrainPolicy { eager, congestion_aware };

/// What a strategy asks of the DAG emitter and of the analysis of its costs.
struct CheckpointBehaviour {
  bool writes_checkpoints = true;  ///< false: failures are survived another way (no checkpoint data moves)
  bool blocks_until_durable = false;  ///< training waits for every hop, not only the snapshot
  std::int64_t chunks = 1;            ///< pieces streamed through the tiers as a pipeline
  bool background_yields = false;     ///< background hops are scavenger flows that yield to others
  std::int64_t peer_replicas = 0;     ///< copies of each node's snapshot in its peers' DRAM
  std::int64_t persist_every = 1;     ///< every n-th checkpoint goes past the first tier (peer replicas)
  bool optimizer_on_ssd = false;      ///< the optimizer step runs on computational SSDs holding the states
  bool replicates_next_stage = false;  ///< each stage keeps and updates a replica of the next stage
};

struct SyncCheckpoint {
  static constexpr const char* name = "sync";
  static constexpr const char* doc = "training stops until the checkpoint is durable in the last tier";
};

struct AsyncCheckpoint {
  static constexpr const char* name = "async";
  static constexpr const char* doc = "snapshot to host DRAM, persist in the background (CheckFreq, DCP async_save)";
};

struct TieredCheckpoint {
  static constexpr const char* name = "tiered";
  static constexpr const char* doc = "GPU -> CXL/DRAM -> local SSD -> object store, pipelined in checkpoint.chunks "
                                     "pieces";
  std::int64_t chunks = 8;
  DrainPolicy drain = DrainPolicy::eager;
};

struct InMemoryCheckpoint {
  static constexpr const char* name = "in_memory";
  static constexpr const char* doc = "snapshot to DRAM, copy to checkpoint.replicas peer nodes' DRAM; every "
                                     "checkpoint.persist_every-th also goes to the later tiers (Gemini)";
  std::int64_t replicas = 1;
  std::int64_t persist_every = 10;
};

struct RedundantCompute {
  static constexpr const char* name = "redundant_compute";
  static constexpr const char* doc = "no checkpoint: each pipeline stage keeps the next stage's weights and "
                                     "optimizer states and runs its forward and step redundantly (Bamboo); a "
                                     "failure loses at most the current iteration";
};

struct NearStorageCheckpoint {
  static constexpr const char* name = "near_storage";
  static constexpr const char* doc = "the optimizer runs on computational SSDs: 16-bit gradients down, 16-bit "
                                     "weights up; fp32 states stay on the SSD, so checkpoints need no transfer";
};

using CheckpointStrategy = std::variant<SyncCheckpoint, AsyncCheckpoint, TieredCheckpoint, InMemoryCheckpoint,
                                        RedundantCompute, NearStorageCheckpoint>;

/// The strategy's name as a scenario spells it.
std::string to_string(const CheckpointStrategy& strategy);
std::string to_string(DrainPolicy drain);

CheckpointBehaviour behaviour(const CheckpointStrategy& strategy);

/// Every strategy's name and doc, in declaration order (the catalog and the `strategy` choices).
struct StrategyDoc {
  std::string name, doc;
  ParamTable params;  ///< the strategy's own `checkpoint` keys
};
std::vector<StrategyDoc> checkpoint_strategy_docs();
std::vector<std::string> drain_policy_names();

/// The `checkpoint` keys only some strategies take, with the strategies that take them.
const ParamTable& checkpoint_strategy_params();

/// What a strategy needs of the rest of the scenario, for its checks.
struct CheckpointContext {
  std::vector<Tier> tiers;
  std::int64_t pp = 1;
  std::int64_t nodes = 0;
  Tier optimizer_offload = Tier::none;
  bool computational_ssd = false;
  bool has_nic = false;
  std::string hardware;
};

/// Reads the strategy `name` (the `checkpoint.strategy` choice) with its own keys; a key of another
/// strategy is an error naming the strategies it applies to. Then checks the strategy against the
/// scenario.
CheckpointStrategy read_checkpoint_strategy(ObjectReader& checkpoint, const std::string& name,
                                            const CheckpointContext& context);

/// Checks that need the cluster's size (known after the cross-field checks), reported at
/// `/checkpoint` of the top-level reader.
void check_checkpoint_cluster(const CheckpointStrategy& strategy, std::int64_t nodes, ObjectReader& top);

}  // namespace strata
