// Context parallelism (parallelism.cp): the rank layout, input checks, activation memory divided
// over CP, the K/V ring's bytes against the closed form, and runs with TP, PP, DP and ZeRO.

#include <catch2/catch.hpp>

#include "sim/dag/context_parallel_emitter.hpp"
#include "sim/dag/training_dag.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "support.hpp"

namespace strata::test {

namespace {

/// Llama 3 8B on DGX H100 nodes, one micro-batch of `seq` tokens per replica.
nlohmann::json cp_doc(int gpus, int tp, int cp, int pp, std::int64_t seq) {
  return {{"model", "llama-3-8b"},
          {"hardware", "dgx-h100"},
          {"gpus", gpus},
          {"training",
           {{"seq_len", seq}, {"micro_batch_size", 1}, {"global_batch_size", gpus / (tp * cp * pp) * pp},
            {"iterations", 1}}},
          {"parallelism", {{"tp", tp}, {"cp", cp}, {"pp", pp}, {"sequence_parallel", tp > 1}}}};
}

struct Built {
  Scenario sc;
  ComputeGraph graph;
  PipelinePartition part;
  MemoryEstimate memory;
  TaskDag dag;
};

Built build(const Scenario& sc, bool fold = true) {
  Built b{sc, build_compute_graph(sc.model, {sc.training.seq_len, sc.training.micro_batch_size, 2.0,
                                              sc.training.flash_attention}),
          {}, {}, {}};
  b.part = partition_layers(static_cast<int>(sc.model.num_layers), static_cast<int>(sc.parallelism.pp),
                            static_cast<int>(sc.parallelism.virtual_stages));
  b.memory = estimate_memory(sc, b.graph, b.part);
  DagOptions options;
  options.fold = fold;
  b.dag = build_training_dag(sc, b.graph, b.part, b.memory, options);
  return b;
}

}  // namespace

TEST_CASE("Rank layout with CP: TP innermost, then CP, DP, PP (Megatron-Core's order)", "[cp][schedule]") {
  const RankLayout l{.tp = 2, .pp = 2, .dp = 3, .gpus_per_node = 8, .cp = 4};
  CHECK(l.replicas() == 12);
  // rank = ((stage·dp + d)·cp + c)·tp + t
  const std::int64_t r = l.rank(1, 2 * 4 + 3, 1);
  CHECK(r == ((1 * 3 + 2) * 4 + 3) * 2 + 1);
  CHECK(l.stage_of(r) == 1);
  CHECK(l.dp_index(r) == 2);
  CHECK(l.cp_index(r) == 3);
  CHECK(l.tp_index(r) == 1);
  // The CP ring: same stage, DP index and TP index, consecutive CP indices tp apart.
  const std::vector<std::int64_t> ring = l.cp_group(r);
  REQUIRE(ring.size() == 4);
  for (std::int64_t c = 0; c < 4; ++c) CHECK(ring[static_cast<std::size_t>(c)] == ((1 * 3 + 2) * 4 + c) * 2 + 1);
  // Gradients reduce over DP × CP: every rank of the stage with the same TP index.
  const std::vector<std::int64_t> dp = l.dp_group(r);
  CHECK(dp.size() == 12);
  for (std::int64_t m : dp) {
    CHECK(l.stage_of(m) == 1);
    CHECK(l.tp_index(m) == 1);
  }
  // cp = 1 keeps the old layout.
  const RankLayout old{.tp = 2, .pp = 2, .dp = 3, .gpus_per_node = 8};
  CHECK(old.rank(1, 2, 1) == (1 * 3 + 2) * 2 + 1);
}

TEST_CASE("CP inputs: cp >= 1, tp·cp·pp·dp = gpus, 2·cp divides the sequence; one line each, exit 2",
          "[cp][config][cli]") {
  auto run = [](const std::string& sets) {
    return strata_cli("run --model llama-3-8b --hardware dgx-h100 --gpus 16 --tp 2 --seq 8192 -q " + sets, "&1");
  };
  Result r = run("--set parallelism.cp=0");
  CHECK(r.code == 2);
  CHECK(r.out.find("/parallelism/cp") != std::string::npos);
  r = run("--set parallelism.cp=4 --set parallelism.dp=4");
  CHECK(r.code == 2);
  CHECK(r.out.find("tp·cp·pp·dp = 2·4·1·4 = 32 does not equal gpus=16") != std::string::npos);
  r = strata_cli("run --model llama-3-8b --hardware dgx-h100 --gpus 24 --tp 1 --seq 8188 -q --set parallelism.cp=3",
                 "&1");
  CHECK(r.code == 2);
  CHECK(r.out.find("/parallelism/cp: 2·cp = 6 does not divide seq_len=8188") != std::string::npos);
  // A cp that leaves the default dp fractional is named with its factors.
  r = run("--set parallelism.cp=3");
  CHECK(r.code == 2);
  CHECK(r.out.find("tp·cp·pp = 2·3·1 = 6 does not divide gpus=16") != std::string::npos);
}

TEST_CASE("CP divides every rank's activations by cp and adds the ring's receive buffers", "[cp][memory]") {
  const Scenario one = load_inline(cp_doc(8, 2, 1, 1, 8192));
  const Scenario four = load_inline(cp_doc(8, 2, 4, 1, 8192));
  REQUIRE(four.parallelism.dp == 1);
  REQUIRE(one.parallelism.dp == 4);
  const Built a = build(one), b = build(four);
  const StageMemory& sa = a.memory.stages.at(0);
  const StageMemory& sb = b.memory.stages.at(0);
  CHECK(sb.hbm.activations == Approx(sa.hbm.activations / 4.0).epsilon(1e-12));
  CHECK(sb.num_ranks == 8);
  // Two K/V blocks and two dK/dV blocks: 4 · 2 (K, V) · 2 B · (s/cp) · kv_width / tp.
  const double block = 2.0 * 2.0 * (8192.0 / 4.0) * 1024.0 / 2.0;
  CHECK(cp_kv_block_bytes(four) == Approx(block));
  // The loss's transient (the last stage's, here the only one) divides by cp like every activation.
  CHECK(sb.transient == Approx(sa.transient / 4.0).epsilon(1e-12));
  CHECK((sb.hbm.workspace - sb.transient) - (sa.hbm.workspace - sa.transient) == Approx(4.0 * block));
  // DP × CP = 4 ranks hold the same weights in both layouts: the same model states.
  CHECK(sb.hbm.params == Approx(sa.hbm.params));
}

TEST_CASE("CP ring bytes per rank equal the closed form 3·(cp−1)·B per layer and micro-batch", "[cp][analytic]") {
  for (int cp : {2, 4, 8}) {
    INFO("cp = " << cp);
    const Scenario sc = load_inline(cp_doc(16, 2, cp, 1, 16384));
    const Built b = build(sc);
    const std::int64_t rank = b.dag.represents.begin()->first;
    double sent = 0.0;
    int sends = 0;
    for (const Task& t : b.dag.tasks) {
      if (t.kind != TaskKind::cp_comm || t.iteration != 0) continue;
      ++sends;
      for (const Flow& f : t.flows)
        if (f.src == Device::gpu(rank)) sent += f.bytes;
    }
    const double B = 2.0 * 2.0 * (16384.0 / cp) * 1024.0 / 2.0;  // K and V, bf16, s/cp tokens, kv_width/tp
    const double layers = static_cast<double>(sc.model.num_layers);
    const double closed = layers * 3.0 * (cp - 1) * B;
    std::cout << fmt::format("cp {:>2}: ring bytes per rank per iteration {:.6g}, closed form L·3(cp−1)·B = {:.6g}\n",
                             cp, sent, closed);
    CHECK(sent == Approx(closed).epsilon(1e-12));
    CHECK(sends == static_cast<int>(layers) * (2 * cp - 1));
    ContextParallelPlan plan{cp, B, 0.0};
    CHECK(ring_bytes(plan, true) + ring_bytes(plan, false) == Approx(3.0 * (cp - 1) * B));
  }
}

TEST_CASE("CP model FLOPs per rank are 1/cp of the layer's, and the ring overlaps the attention",
          "[cp][simulation]") {
  const Scenario one = load_inline(cp_doc(8, 2, 1, 1, 8192));
  const Scenario four = load_inline(cp_doc(8, 2, 4, 1, 8192));
  const Built a = build(one), b = build(four);
  auto flops = [](const TaskDag& dag) {
    double f = 0.0;
    for (const Task& t : dag.tasks)
      if (t.iteration == 0 && (t.kind == TaskKind::forward || t.kind == TaskKind::backward)) f += t.flops;
    return f;
  };
  CHECK(flops(b.dag) == Approx(flops(a.dag) / 4.0).epsilon(1e-9));
  // The iteration's model FLOPs count the sequences trained: cp = 4 trains one where DP 4 trains
  // four. The ring's exposed time is reported apart.
  const RunResult ra = run_scenario(one), rb = run_scenario(four);
  REQUIRE(rb.simulation);
  CHECK(rb.flops_per_iteration == Approx(ra.flops_per_iteration / 4.0));
  const auto& exposed = rb.simulation->analysis.breakdown.exposed_comm;
  const double cp_exposed = exposed.count(TaskKind::cp_comm) ? exposed.at(TaskKind::cp_comm) : 0.0;
  std::cout << fmt::format("llama-3-8b s=8192 TP2: cp 1 iteration {:.4f} s; cp 4 iteration {:.4f} s, CP exposed {:.4f} s\n",
                           ra.simulation->throughput.iteration_time, rb.simulation->throughput.iteration_time,
                           cp_exposed);
  CHECK(cp_exposed < 0.25 * rb.simulation->throughput.iteration_time);
}

TEST_CASE("CP works with PP, DP and ZeRO, folded or every rank simulated", "[cp][simulation]") {
  nlohmann::json doc = cp_doc(32, 2, 2, 2, 8192);
  doc["parallelism"]["zero_stage"] = 1;
  const Scenario sc = load_inline(doc);
  REQUIRE(sc.parallelism.dp == 4);
  const Built folded = build(sc, true), every = build(sc, false);
  CHECK(topological_order(folded.dag).size() == folded.dag.tasks.size());
  CHECK(topological_order(every.dag).size() == every.dag.tasks.size());
  CHECK(every.dag.represents.size() == 32);
  // ZeRO-1 shards the optimizer over DP × CP = 8 ranks.
  const double states = folded.memory.stages.at(0).parameters * 12.0 / 8.0;
  CHECK(folded.memory.stages.at(0).hbm.optimizer == Approx(states));
  // Checkpoint shards: the DP × CP ranks share the writing.
  const auto per_rank = checkpoint_bytes_per_rank(sc, folded.memory);
  CHECK(per_rank.at(0) == Approx(folded.memory.stages.at(0).parameters * 14.0 / 8.0));
  SimulationOptions fold_opt, every_opt;
  every_opt.fold = false;
  const RunResult a = run_scenario(sc, fold_opt), b = run_scenario(sc, every_opt);
  REQUIRE(a.simulation);
  REQUIRE(b.simulation);
  CHECK(b.simulation->throughput.iteration_time ==
        Approx(a.simulation->throughput.iteration_time).epsilon(0.005));
}

TEST_CASE("Report and summary show CP", "[cp][cli]") {
  Result r = strata_cli("run --model llama-3-8b --hardware dgx-h100 --gpus 8 --tp 2 --seq 8192 --cp 4 "
                        "--json - -q");
  REQUIRE(r.code == 0);
  const nlohmann::json report = nlohmann::json::parse(r.out);
  CHECK(report["scenario"]["parallelism"]["cp"] == 4);
  CHECK(report["time_breakdown"].contains("exposed_cp_comm_s"));
  Result s = strata_cli("run --model llama-3-8b --hardware dgx-h100 --gpus 8 --tp 2 --seq 8192 --cp 4",
                        "&1");
  REQUIRE(s.code == 0);
  CHECK(s.out.find("TP 2 · CP 4 · PP 1 · DP 1") != std::string::npos);
}

}  // namespace strata::test
