// Replicated shard groups (parallelism.dp_replicate: FSDP HYBRID_SHARD, torchtitan's dp_replicate,
// MiCS): the states are ZeRO's over the shard group, the gathers and reduce-scatters stay inside it,
// and each reduced shard is all-reduced across the replicas; a checkpoint writes each shard once.

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>

#include "sim/analysis/run.hpp"
#include "sim/plan/advisor.hpp"
#include "sim/dag/training_dag.hpp"
#include "dag_support.hpp"
#include "support.hpp"

using namespace strata;
using nlohmann::json;

namespace {

/// Llama 3 8B under FSDP (ZeRO-3) on `gpus` A100s of 8 per node, `replicas` copies of the shards.
Scenario fsdp(std::int64_t gpus, std::int64_t replicas) {
  json doc = test::fsdp_llama3_8b(1, "full");
  doc["gpus"] = gpus;
  doc["training"]["global_batch_size"] = gpus;
  doc["parallelism"]["dp_replicate"] = replicas;
  return test::load_inline(doc);
}

double model_states(const RunResult& r) {
  const auto& hbm = r.memory.stages.front().hbm;
  return hbm.params + hbm.gradients + hbm.optimizer;
}

/// Rank 0's bytes in one task: what its flows out of GPU 0 move, and whether any crosses nodes.
struct RankFlows {
  double bytes = 0.0;
  bool remote = false;
};

RankFlows rank0_flows(const Task& t) {
  RankFlows out;
  for (const Flow& f : t.flows)
    if (f.src == Device::gpu(0)) {
      out.bytes += f.bytes;
      out.remote = out.remote || f.remote;
    }
  return out;
}

}  // namespace

TEST_CASE("HSDP holds ZeRO-3's states of its shard group and checkpoints the same bytes per rank", "[hsdp][memory]") {
  const Scenario hybrid = fsdp(16, 2), node = fsdp(8, 1), full = fsdp(16, 1);
  REQUIRE(hybrid.parallelism.dp == 16);
  REQUIRE(hybrid.parallelism.shard_size() == 8);
  const RunResult h = estimate_scenario(hybrid), n = estimate_scenario(node), f = estimate_scenario(full);
  // ZeRO §5.3: P_os+g+p holds every state over N_d; here N_d is the shard group's 8, not DP's 16.
  const StateBytes b = state_bytes(hybrid.training);
  const double psi = h.memory.stages.front().all_parameters;
  CHECK(model_states(h) == Approx((b.weights + b.gradients + b.optimizer) * psi / 8.0));
  CHECK(model_states(h) == Approx(model_states(n)));
  CHECK(model_states(f) == Approx(model_states(h) / 2.0));
  // Each shard is written once, its replicas sharing the writes: per rank what full sharding writes.
  CHECK(checkpoint_bytes_per_rank(hybrid, h.memory) == checkpoint_bytes_per_rank(full, f.memory));
}

TEST_CASE("HSDP's replicas share a checkpoint's writes and each reads its whole shard back", "[hsdp][checkpoint]") {
  // Synchronous checkpoints straight to the object store, whose bandwidth bounds both directions.
  const auto checkpointed = [](std::int64_t replicas) {
    json doc = test::fsdp_llama3_8b(1, "full");
    doc["gpus"] = 16;
    doc["training"]["global_batch_size"] = 16;
    doc["parallelism"]["dp_replicate"] = replicas;
    doc["checkpoint"] = {{"strategy", "sync"}, {"tiers", {"object_store"}}, {"interval_iterations", 100}};
    return run_scenario(test::load_inline(doc));
  };
  const RunResult whole = checkpointed(1), hybrid = checkpointed(2);
  REQUIRE(whole.checkpoint);
  REQUIRE(hybrid.checkpoint);
  CHECK(hybrid.checkpoint->size_bytes == Approx(whole.checkpoint->size_bytes));
  CHECK(hybrid.checkpoint->max_rank_bytes == Approx(whole.checkpoint->max_rank_bytes));
  // Twice the bytes through the same store: the restore takes about twice as long (its fixed
  // latency aside).
  CHECK(hybrid.checkpoint->restore_s == Approx(2.0 * whole.checkpoint->restore_s).epsilon(0.05));
}

TEST_CASE("HSDP gathers and reduce-scatters inside the node and all-reduces each shard across nodes", "[hsdp][dag]") {
  // 2 nodes of 8: a shard group is a node, the replicate group rank 0 and rank 8.
  const test::BuiltDag hybrid = test::single_stage_dag(fsdp(16, 2));
  int gathers = 0, scatters = 0, across = 0;
  double scattered = 0.0, reduced = 0.0;
  for (const Task& t : hybrid.dag.tasks) {
    const RankFlows r = rank0_flows(t);
    if (r.bytes == 0.0) continue;
    if (t.kind == TaskKind::param_gather) {
      ++gathers;
      CHECK_FALSE(r.remote);
    } else if (t.kind == TaskKind::dp_comm && t.stream == Stream::dp_comm) {
      // The reduce-scatter sends (n-1)/n of the buffer over NVLink; the all-reduce of its 1/8 shard
      // between two replicas sends 2(2-1)/2 of the shard to the other node (ring_bytes_per_member).
      if (r.remote) {
        ++across;
        reduced += r.bytes;
      } else {
        ++scatters;
        scattered += r.bytes;
      }
    }
  }
  CHECK(gathers > 0);
  CHECK(scatters > 0);
  CHECK(across == scatters);
  const double buffers = scattered * 8.0 / 7.0;
  CHECK(reduced == Approx(buffers / 8.0));

  // Sharded over both nodes instead, the gathers cross them.
  bool remote_gather = false;
  for (const Task& t : test::single_stage_dag(fsdp(16, 1)).dag.tasks)
    if (t.kind == TaskKind::param_gather) remote_gather = remote_gather || rank0_flows(t).remote;
  CHECK(remote_gather);
}

TEST_CASE("HSDP simulated with one rank per symmetric group matches every rank simulated", "[hsdp][dag]") {
  // Replicas across two nodes on one 100 Gb/s port each, where the all-reduces share the port.
  json doc = test::fsdp_llama3_8b(2, "full");
  doc["gpus"] = 16;
  doc["training"]["global_batch_size"] = 32;
  doc["parallelism"]["dp_replicate"] = 2;
  const Scenario sc = test::load_inline(doc, {"hardware.nic.count=1", "hardware.nic.bandwidth=\"100 Gb/s\""});
  SimulationOptions every;
  every.fold = false;
  const RunResult folded = run_scenario(sc), all = run_scenario(sc, every);
  REQUIRE(folded.simulation);
  REQUIRE(all.simulation);
  CHECK(all.simulation->throughput.iteration_time ==
        Approx(folded.simulation->throughput.iteration_time).epsilon(0.005));
}

TEST_CASE("advise shards within each node when the network is slow, and over all of DP when it is not",
          "[hsdp][plan][advise]") {
  // Llama 2 7B under FSDP on 4 nodes of 8 A100: with one 100 Gb/s port per node the full shard's
  // gathers cross it every layer, and the best layouts keep them inside the node.
  const std::string path = test::temp_file("hsdp-advise.json");
  std::ofstream(path) << json{{"model", "llama-2-7b"},
                              {"hardware", "dgx-a100-80g"},
                              {"gpus", 32},
                              {"training",
                               {{"seq_len", 4096},
                                {"micro_batch_size", 1},
                                {"global_batch_size", 64},
                                {"framework", "pytorch-fsdp"},
                                {"iterations", 1}}},
                              {"parallelism", {{"zero_stage", 3}}}};
  const auto best_replicas = [&](const std::vector<std::string>& sets) {
    AdviseRequest r;
    r.scenario = path;
    for (const auto& s : sets) r.overrides.push_back(parse_override(s));
    const AdviseResult a = advise(r, test::catalog(), nullptr);
    REQUIRE_FALSE(a.ranked.empty());
    return a.ranked.front().settings.value("parallelism.dp_replicate", 1);
  };
  CHECK(best_replicas({"hardware.nic.count=1", "hardware.nic.bandwidth=\"100 Gb/s\""}) == 4);
  CHECK(best_replicas({}) == 1);
  // The table marks an HSDP layout's ZeRO stage with "h" and says what it means.
  const test::Result cli = test::strata_cli("advise '" + path +
                                            "' --set hardware.nic.count=1 --set 'hardware.nic.bandwidth=100 Gb/s' -q");
  REQUIRE(cli.code == 0);
  CHECK(cli.out.find("(h: sharded within each node and replicated across nodes, HSDP)") != std::string::npos);
  // The best row (rank 1) is an HSDP layout, as best_replicas found above.
  CHECK(std::regex_search(cli.out, std::regex(R"(\n1 [^\n]* \dh )")));
  std::filesystem::remove(path);
}
