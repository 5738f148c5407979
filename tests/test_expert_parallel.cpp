// Expert parallelism against closed forms: the all-to-all's time on NVLink inside a node and over
// the NICs across nodes (each rank sends (n-1)/n of its bytes, all pairs at once), the memory of
// experts under EP × DP (weights and unsharded states: dense + experts/ep per rank; sharded states:
// everything over dp), the checkpoint with experts sharded, and the scenario checks of parallelism.ep.

#include <catch2/catch.hpp>

#include "sim/analysis/run.hpp"
#include "sim/dag/expert_parallel_emitter.hpp"
#include "sim/dag/layer_work.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/graph/expert_sharding.hpp"
#include "sim/graph/kernel_costs.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "sim/platform/platform_layout.hpp"
#include "collective_dag.hpp"
#include "support.hpp"

namespace {

using namespace strata;

HardwareSpec h100(std::int64_t gpus_per_node) {
  HardwareSpec hw = test::load("mixtral-8x7b-ep-h100").hardware;
  hw.gpus_per_node = gpus_per_node;
  return hw;
}

/// One all-to-all over ranks 0..n-1; folded: rank 0 stands for the group.
TaskDag all_to_all_dag(std::int64_t n, double bytes, bool folded, const RankLayout& layout) {
  std::vector<std::int64_t> group;
  for (std::int64_t r = 0; r < n; ++r) group.push_back(r);
  const std::vector<std::int64_t> simulated = folded ? std::vector<std::int64_t>{0} : group;
  TaskDag dag;
  dag.add(all_to_all(group, simulated, bytes, layout));
  for (std::int64_t r : simulated) {
    dag.resident[r] = {};
    dag.represents[r] = folded ? n : 1;
  }
  dag.fold_group = folded ? n : 1;
  return dag;
}

using test::makespan;

struct Built {
  Scenario sc;
  ComputeGraph graph;
  PipelinePartition part;
  MemoryEstimate memory;
};

Built build(const std::vector<std::string>& sets) {
  Built b{test::load("mixtral-8x7b-ep-h100", sets), {}, {}, {}};
  b.graph = build_compute_graph(b.sc.model, {b.sc.training.seq_len, b.sc.training.micro_batch_size, 2.0,
                                             b.sc.training.flash_attention});
  b.part = partition_layers(static_cast<int>(b.sc.model.num_layers), static_cast<int>(b.sc.parallelism.pp), 1);
  b.memory = estimate_memory(b.sc, b.graph, b.part);
  return b;
}

/// Routed experts' weights of the whole model (gated MLP: up, gate and down per expert).
double expert_weights(const ModelSpec& m) {
  return static_cast<double>(m.num_layers * m.num_experts) * 3.0 * static_cast<double>(m.hidden_size) *
         static_cast<double>(m.intermediate_size);
}

}  // namespace

TEST_CASE("All-to-all takes (n-1)/n of each rank's bytes over its link: NVLink in a node, NICs across nodes",
          "[analytic][simulation][ep]") {
  const double S = 256.0 * (1 << 20);
  for (bool inter_node : {false, true}) {
    const HardwareSpec hw = h100(inter_node ? 1 : 8);
    const double B = strata::test::hop_bandwidth(hw, inter_node);
    const PlatformLayout platform(hw, 8);
    // Every pair at once: one route latency, and NCCL's once-per-call cost.
    double alpha = 0.0;
    for (LinkId l : platform.route(Device::gpu(0), Device::gpu(1), inter_node))
      alpha += platform.link(l).latency + platform.link(l).call_latency;
    for (std::int64_t n : {2, 4, 8}) {
      const RankLayout layout{.tp = 1, .pp = 1, .dp = n, .gpus_per_node = hw.gpus_per_node, .ep = n};
      const double expected = (n - 1.0) / n * S / B + alpha;
      for (bool folded : {false, true})
        for (bool des : {false, true}) {
          INFO(fmt::format("{} n={} folded {} des {}", inter_node ? "inter-node" : "NVLink", n, folded, des));
          CHECK(makespan(all_to_all_dag(n, S, folded, layout), hw, n, des) == Approx(expected).epsilon(1e-6));
        }
    }
  }
}

TEST_CASE("All-to-all over two nodes: the NIC share sets the pace", "[analytic][simulation][ep]") {
  // 8 ranks on two nodes of 4: each sends 3/8 of its bytes over NVLink and 4/8 over its NIC.
  const HardwareSpec hw = h100(4);
  const double S = 256.0 * (1 << 20);
  const double nvlink = hw.nvlink_bandwidth.value * hw.efficiency.nvlink;
  const double nic = std::min(hw.nic.bandwidth.value * hw.efficiency.network, hw.pcie.bandwidth.value * hw.efficiency.pcie);
  REQUIRE(hw.nic.count >= 4);  // a NIC per GPU: no two ranks share one
  const PlatformLayout platform(hw, 8);
  // The task waits for its slowest route's latency: NVLink's or the NICs'.
  const auto route_latency = [&](std::int64_t dst, bool remote) {
    double alpha = 0.0;
    for (LinkId l : platform.route(Device::gpu(0), Device::gpu(dst), remote))
      alpha += platform.link(l).latency + platform.link(l).call_latency;
    return alpha;
  };
  const double alpha = std::max(route_latency(1, false), route_latency(4, true));
  const double expected = std::max(3.0 / 8.0 * S / nvlink, 4.0 / 8.0 * S / nic) + alpha;
  const RankLayout layout{.tp = 1, .pp = 1, .dp = 8, .gpus_per_node = 4, .ep = 8};
  for (bool des : {false, true}) {
    INFO(fmt::format("des {}", des));
    CHECK(makespan(all_to_all_dag(8, S, false, layout), hw, 8, des) == Approx(expected).epsilon(1e-6));
  }
}

TEST_CASE("Rank layout: EP groups are ep consecutive DP indices, expert-DP groups the rest", "[ep]") {
  const RankLayout l{.tp = 2, .pp = 2, .dp = 8, .gpus_per_node = 8, .ep = 4};
  const std::int64_t r = l.rank(1, 5, 1);
  CHECK(l.ep_group(r) == std::vector<std::int64_t>{l.rank(1, 4, 1), l.rank(1, 5, 1), l.rank(1, 6, 1), l.rank(1, 7, 1)});
  CHECK(l.expert_dp_group(r) == std::vector<std::int64_t>{l.rank(1, 1, 1), l.rank(1, 5, 1)});
}

TEST_CASE("Expert memory under EP × DP: weights dense + experts/ep, sharded states everything over dp",
          "[analytic][ep]") {
  // One stage, no TP: per rank, the dense weights and 1/ep of the experts.
  for (std::int64_t ep : {1, 2, 8}) {
    for (const char* opt : {"false", "true"}) {
      const Built b = build({"nodes=1", "parallelism.pp=1", "parallelism.dp=8", fmt::format("parallelism.ep={}", ep),
                             fmt::format("parallelism.distributed_optimizer={}", opt)});
      INFO(fmt::format("ep {} distributed optimizer {}", ep, opt));
      const double total = total_parameters(b.graph);
      const double experts = expert_weights(b.sc.model);
      const double dense = total - experts;
      const double dp = 8.0;
      const StageMemory& sm = b.memory.stages.front();
      CHECK(sm.parameters == Approx(dense + experts / static_cast<double>(ep)).epsilon(1e-12));
      CHECK(sm.expert_parameters == Approx(experts / static_cast<double>(ep)).epsilon(1e-12));
      CHECK(sm.hbm.params == Approx(2.0 * (dense + experts / static_cast<double>(ep))).epsilon(1e-12));
      CHECK(sm.hbm.gradients == Approx(2.0 * (dense + experts / static_cast<double>(ep))).epsilon(1e-12));
      // Distributed optimizer: dense states over dp, experts' over the dp/ep expert-DP ranks.
      const double states = opt == std::string("true") ? dense / dp + (experts / static_cast<double>(ep)) / (dp / static_cast<double>(ep))
                                                       : dense + experts / static_cast<double>(ep);
      CHECK(sm.hbm.optimizer == Approx(12.0 * states).epsilon(1e-12));
      // Checkpoint: every state saved once over the cluster, 14 B per parameter.
      const auto per_rank = checkpoint_bytes_per_rank(b.sc, b.memory);
      CHECK(per_rank.front() * dp == Approx(14.0 * total).epsilon(1e-12));
    }
  }
}

TEST_CASE("EP: dispatch and combine forward and backward, 4 all-to-alls per MoE layer and micro-batch",
          "[ep][schedule]") {
  const Built b = build({});
  const auto work = layer_work(b.sc, b.graph);
  const double h = static_cast<double>(b.sc.model.hidden_size), k = static_cast<double>(b.sc.model.experts_per_token);
  CHECK(work.front().ep_bytes == Approx(4096.0 * k * h * 2.0));
  const TaskDag dag = build_training_dag(b.sc, b.graph, b.part, b.memory, {true, -1, 1});
  std::size_t a2a = 0;
  for (const Task& t : dag.tasks) {
    if (t.kind != TaskKind::ep_comm || t.iteration != 0) continue;
    ++a2a;
    // Folded: the stage's representative sends bytes/ep to each of its 7 EP peers, all in its node.
    REQUIRE(t.flows.size() == 7);
    for (const Flow& f : t.flows) {
      CHECK(f.bytes == Approx(work.front().ep_bytes / 8.0));
      CHECK_FALSE(f.remote);
    }
  }
  const auto layers = static_cast<std::size_t>(b.sc.model.num_layers);
  const auto m = static_cast<std::size_t>(b.sc.num_microbatches());
  CHECK(a2a == 4 * layers * m);
  // Expert gradients over the expert-DP group: dp/ep = 2 ranks, one in another node.
  const RankLayout layout = rank_layout(b.sc);
  CHECK(layout.expert_dp_group(0) == std::vector<std::int64_t>{0, 8});
}

TEST_CASE("EP: the simulated run reports its all-to-all and keeps the dense layout's compute", "[ep][simulation]") {
  const RunResult r = run_scenario(test::load("mixtral-8x7b-ep-h100"), {ExecutorKind::des, true, false});
  REQUIRE(r.simulation);
  const auto& cp = r.simulation->analysis.critical_path.seconds;
  CHECK(cp.count(TaskKind::ep_comm) == 1);
}

TEST_CASE("parallelism.ep is checked against dp, the experts and the model", "[ep][invalid]") {
  struct Case {
    std::string sets, message;
  };
  const std::vector<Case> cases = {
      {"--set parallelism.ep=3", "/parallelism/ep: 3 does not divide num_local_experts=8"},
      {"--set nodes=4 --set parallelism.ep=4 --set parallelism.dp=2 --set parallelism.pp=4 --set parallelism.tp=4 "
       "--set parallelism.sequence_parallel=true",
       "/parallelism/ep: 4 does not divide dp=2"},
      {"--set nodes=8 --set parallelism.ep=4 --set parallelism.dp=4 --set parallelism.pp=4 --set parallelism.tp=4",
       "/parallelism/sequence_parallel: must be true with ep=4 and tp=4"},
  };
  for (const Case& c : cases) {
    const auto out = test::strata_cli("run " + test::source_path("scenarios/mixtral-8x7b-ep-h100.json").string() +
                                          " " + c.sets + " --quiet",
                                      "&1");
    INFO(out.out);
    CHECK(out.code == 2);
    CHECK(out.out.find(c.message) != std::string::npos);
  }
  const auto dense = test::strata_cli("run " + test::source_path("scenarios/llama-3-8b-zero3-h100.json").string() +
                                          " --set parallelism.ep=2 --quiet",
                                      "&1");
  INFO(dense.out);
  CHECK(dense.code == 2);
  CHECK(dense.out.find("/parallelism/ep: 2 needs a mixture-of-experts model") != std::string::npos);
}

TEST_CASE("The alltoall dispatcher permutes every routed copy, and sorts them only with more than one local expert",
          "[ep][kernels]") {
  const Built b = build({});
  const ModelSpec& m = b.sc.model;
  // build() makes the graph with 2-byte activations: a token's k copies of hidden × 2 B, over the
  // replica's micro-batch (moe_utils.permute reads and
  // writes each; unpermute reads each and writes the token once; each sort pass reads and writes each).
  const double sbh = static_cast<double>(b.sc.training.seq_len * b.sc.training.micro_batch_size * m.hidden_size);
  const double copies = 2.0 * sbh * static_cast<double>(m.experts_per_token);
  int seen = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(b.graph))) {
    const Op& op = b.graph[v];
    if (op.kind != OpKind::experts || op.layer != 0) continue;
    ++seen;
    CHECK(op.expert_sort_traffic == Approx(2.0 * copies));
    // Mixtral's 8 experts: one per rank at EP 8 (nothing to sort), two at EP 4.
    CHECK(expert_shard(op, 8, 1.5).memory_traffic == Approx(op.memory_traffic));
    const double carved = expert_shard(op, 4, 1.5, 2, 2).memory_traffic - op.memory_traffic;
    const double folded = expert_shard(op, 4, 1.5, 2, 1).memory_traffic - op.memory_traffic;
    // Split over TP the sort runs on the TP group's gathered tokens, the most loaded rank's 1.5×:
    // tp× what the sequence split leaves a rank; whole experts sort the rank's own shard.
    CHECK(carved == Approx(2.0 * 1.5 * 2.0 * copies));
    CHECK(folded == Approx(1.5 * 2.0 * copies));
  }
  CHECK(seen == 2);
}

TEST_CASE("Grouped GEMM under EP: num_experts/ep experts of ep× the rows, times the pace factor", "[ep][kernels]") {
  const Built b = build({});
  const ModelSpec& m = b.sc.model;
  int seen = 0;
  for (auto v : boost::make_iterator_range(boost::vertices(b.graph))) {
    const Op& op = b.graph[v];
    if (op.kind != OpKind::experts || op.layer != 0) continue;
    ++seen;
    const Op one = expert_shard(op, 1, 1.5);  // without EP nothing changes: every rank computes the same tokens
    CHECK(one.gemms.front().m == op.gemms.front().m);
    CHECK(one.forward_flops == op.forward_flops);
    const Op shard = expert_shard(op, 8, 1.5);
    REQUIRE(shard.gemms.size() == op.gemms.size());
    // One expert per rank: it sees the EP group's tokens routed to it, 8·s·b·k/8 = s·b·k, ×1.5.
    CHECK(shard.gemms.front().count == Approx(op.gemms.front().count / 8.0));
    CHECK(shard.gemms.front().m ==
          Approx(1.5 * static_cast<double>(b.sc.training.seq_len * m.experts_per_token)));
    CHECK(shard.forward_flops == Approx(1.5 * op.forward_flops));
    CHECK(shard.params() == Approx(op.params() / 8.0));
  }
  CHECK(seen == 2);  // up (with gate) and down
  // The kernel model prices the taller per-expert GEMMs: never slower per FLOP than 8 short ones.
  const KernelCosts kernels(b.sc.hardware, b.sc.training.precision, b.sc.training.behaviour);
  const double h = static_cast<double>(m.hidden_size), I = static_cast<double>(m.intermediate_size);
  const double tokens = static_cast<double>(b.sc.training.seq_len * m.experts_per_token);
  const double grouped = kernels.gemm_seconds(tokens / 8.0, 2.0 * I, h, 8.0);  // 8 experts on one rank
  const double sharded = kernels.gemm_seconds(tokens, 2.0 * I, h, 1.0);       // one expert, EP 8
  CHECK(sharded <= grouped * (1.0 + 1e-12));
}

TEST_CASE("EP: folding the ranks of a stage gives the unfolded iteration time", "[ep][simulation]") {
  // Two nodes, EP 4 of DP 4 with TP 2 and SP: each all-to-all spans both nodes.
  const Scenario sc = test::load("mixtral-8x7b-ep-h100",
                                 {"nodes=2", "parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4", "parallelism.ep=4",
                                  "parallelism.sequence_parallel=true", "training.global_batch_size=16"});
  const RunResult folded = run_scenario(sc, {ExecutorKind::des, true, false});
  const RunResult unfolded = run_scenario(sc, {ExecutorKind::des, false, false});
  REQUIRE(folded.simulation);
  REQUIRE(unfolded.simulation);
  const double a = folded.simulation->throughput.iteration_time, b = unfolded.simulation->throughput.iteration_time;
  CHECK(a == Approx(b).epsilon(5e-3));
  CHECK(folded.simulation->analysis.breakdown.exposed_comm.count(TaskKind::ep_comm) == 1);
}

TEST_CASE("Rank layout with EP and CP: EP groups keep their CP index, expert-DP groups take every CP rank", "[ep][cp]") {
  const RankLayout l{.tp = 2, .pp = 1, .dp = 4, .gpus_per_node = 8, .cp = 2, .ep = 2};
  // replica index = dp_index·cp + cp_index
  const std::int64_t r = l.rank(0, 3 * 2 + 1, 0);  // dp index 3, cp index 1
  CHECK(l.ep_group(r) == std::vector<std::int64_t>{l.rank(0, 2 * 2 + 1, 0), l.rank(0, 3 * 2 + 1, 0)});
  CHECK(l.expert_dp_group(r) ==
        std::vector<std::int64_t>{l.rank(0, 1 * 2 + 0, 0), l.rank(0, 1 * 2 + 1, 0), l.rank(0, 3 * 2 + 0, 0),
                                  l.rank(0, 3 * 2 + 1, 0)});
}

TEST_CASE("Folded rank layout (expert TP 1): an EP group is ep consecutive ranks of the stage, its "
          "expert-DP group the ranks ep apart",
          "[ep][cp]") {
  // Grok-1's NeMo layout per stage: TP 4 × CP 2 × DP 8 = 64 ranks, EP 8 over them, 8 GPUs a node.
  const RankLayout l{
      .tp = 4, .pp = 8, .dp = 8, .gpus_per_node = 8, .cp = 2, .ep = 8, .experts_folded = true};
  const std::int64_t stage = 3, base = stage * 64;
  const std::int64_t r =
      l.rank(stage, 5, 2);  // replica 5 (dp 2, cp 1), TP index 2: the stage's rank 22
  REQUIRE(l.local(r) == 22);
  const std::vector<std::int64_t> group = l.ep_group(r);
  std::vector<std::int64_t> expected;
  for (std::int64_t i = 16; i < 24; ++i) expected.push_back(base + i);
  CHECK(group == expected);
  // All of it on one node: dispatch and combine stay on NVLink.
  for (std::int64_t q : group) CHECK(l.node(q) == l.node(r));
  std::vector<std::int64_t> holders;
  for (std::int64_t i = 22 % 8; i < 64; i += 8) holders.push_back(base + i);
  CHECK(l.expert_dp_group(r) == holders);
  CHECK(l.expert_dp_size() == 8);
  // Carved out of DP (expert TP = TP), the same degrees leave one rank per expert-DP group.
  const RankLayout carved{.tp = 4, .pp = 8, .dp = 8, .gpus_per_node = 8, .cp = 2, .ep = 8};
  CHECK(carved.expert_dp_size() == 2);
  CHECK(carved.ep_group(r).size() == 8);
  CHECK(carved.node(carved.ep_group(r).front()) != carved.node(carved.ep_group(r).back()));
}

TEST_CASE("Folded EP (etp 1): whole experts on a rank, the same FLOPs and sharded states, all-to-alls "
          "inside the node",
          "[ep][simulation]") {
  // TP 2 with SP and EP 8 on one node of 8: carved out of DP it needs dp 8 (8 nodes of the stage);
  // folded over TP × DP the 8 ranks of one node form the group.
  const std::vector<std::string> common = {"nodes=4",
                                           "parallelism.tp=2",
                                           "parallelism.pp=4",
                                           "parallelism.dp=4",
                                           "parallelism.ep=8",
                                           "parallelism.sequence_parallel=true",
                                           "training.global_batch_size=16"};
  std::vector<std::string> with_etp = common;
  with_etp.push_back("parallelism.etp=1");
  const Built folded = build(with_etp);
  REQUIRE(folded.sc.parallelism.experts_folded());
  const double experts = expert_weights(folded.sc.model) / 4.0;  // one stage of four
  const StageMemory& sm = folded.memory.stages.front();
  // Whole experts, num_experts/ep of them: the expert part of a rank's weights is not divided by
  // TP.
  CHECK(sm.expert_parameters == Approx(experts / 8.0).epsilon(1e-9));
  // Sharded optimizer states: the experts over their expert-DP group (tp·dp/ep = 1 rank), the dense
  // part over dp 4: all of the stage's parameters per TP rank over dp.
  CHECK(sm.all_parameters / 4.0 * 12.0 == Approx(sm.hbm.optimizer).epsilon(1e-9));
  const auto work = layer_work(folded.sc, folded.graph);
  // The expert GEMMs' FLOPs per rank are those of the dense layout's split: s·b·k/tp tokens through
  // whole experts or s·b·k tokens through 1/tp of each.
  Scenario carved_sc = folded.sc;
  carved_sc.parallelism.etp = carved_sc.parallelism.tp;
  const auto carved = layer_work(carved_sc, folded.graph);
  CHECK(work.front().fwd_flops == Approx(carved.front().fwd_flops).epsilon(1e-12));
  // Only the attention sub-block's TP collectives are left in a block without shared experts.
  // (Block 1: block 0 also carries the embedding's.)
  CHECK(work[1].tp_fwd == 1);
  CHECK(carved[1].tp_fwd == kBlockCollectives);
  // Full recomputation reruns the block's own: one in the folded block, and block 0 the same
  // (the embedding's is not rerun).
  CHECK(work[1].tp_block == 1);
  CHECK(work[0].tp_block == 1);
  CHECK(work[0].tp_fwd == 2);
  CHECK(carved[1].tp_block == kBlockCollectives);
  // Every EP peer of the simulated ranks is on their node.
  const TaskDag dag =
      build_training_dag(folded.sc, folded.graph, folded.part, folded.memory, {true, -1, 1});
  std::size_t a2a = 0;
  for (const Task& t : dag.tasks) {
    if (t.kind != TaskKind::ep_comm) continue;
    ++a2a;
    for (const Flow& f : t.flows) CHECK_FALSE(f.remote);
  }
  CHECK(a2a > 0);
  // The executor simulating one rank per symmetric group (its rank folding, not MoE folding) gives
  // the time it gets simulating every rank.
  const RunResult a = run_scenario(folded.sc, {ExecutorKind::des, true, false});
  const RunResult b = run_scenario(folded.sc, {ExecutorKind::des, false, false});
  REQUIRE(a.simulation);
  REQUIRE(b.simulation);
  CHECK(a.simulation->throughput.iteration_time ==
        Approx(b.simulation->throughput.iteration_time).epsilon(5e-3));
}

TEST_CASE("parallelism.etp is 1 or tp, needs ep > 1, and folded EP divides tp·cp·dp",
          "[ep][invalid]") {
  struct Case {
    std::string sets, message;
  };
  const std::string moe =
      "--set nodes=4 --set parallelism.pp=4 --set parallelism.tp=4 --set parallelism.dp=2 "
      "--set parallelism.sequence_parallel=true ";
  const std::vector<Case> cases = {
      {moe + "--set parallelism.ep=8 --set parallelism.etp=2", "/parallelism/etp: 2 must be 1"},
      {moe + "--set parallelism.ep=1 --set parallelism.etp=1", "/parallelism/etp: 1 needs ep > 1"},
      {"--set nodes=2 --set parallelism.pp=8 --set parallelism.tp=2 --set parallelism.dp=1 "
       "--set parallelism.sequence_parallel=true --set parallelism.ep=4 --set parallelism.etp=1",
       "/parallelism/ep: 4 does not divide tp·cp·dp = 2·1·1 = 2"},
  };
  for (const Case& c : cases) {
    const auto out = test::strata_cli(
        "run " + test::source_path("scenarios/mixtral-8x7b-ep-h100.json").string() + " " + c.sets +
            " --quiet",
        "&1");
    INFO(out.out);
    CHECK(out.code == 2);
    CHECK(out.out.find(c.message) != std::string::npos);
  }
  // The same degrees carved out of DP are refused where folding over TP × DP is not.
  const auto carved =
      test::strata_cli("run " + test::source_path("scenarios/mixtral-8x7b-ep-h100.json").string() +
                           " " + moe + "--set parallelism.ep=8 --quiet",
                       "&1");
  CHECK(carved.code == 2);
  CHECK(carved.out.find("/parallelism/ep: 8 does not divide dp=2") != std::string::npos);
  const auto folded =
      test::strata_cli("run " + test::source_path("scenarios/mixtral-8x7b-ep-h100.json").string() +
                           " " + moe + "--set parallelism.ep=8 --set parallelism.etp=1 --quiet",
                       "&1");
  INFO(folded.out);
  CHECK(folded.code == 0);
}
