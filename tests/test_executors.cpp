// The two executors against closed forms and against each other: ring collectives (Patarasuk &
// Yuan 2009: all-reduce 2(n-1)/n·S/B + 2(n-1)·α; reduce-scatter and all-gather (n-1)/n·S/B +
// (n-1)·α; plus NCCL's once-per-call cost), bandwidth sharing on one link, screening = DES when nothing contends, and
// symmetry folding = simulating every rank.

#include <catch2/catch.hpp>

#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/dag/collectives.hpp"
#include "sim/platform/platform_layout.hpp"
#include "collective_dag.hpp"
#include "support.hpp"

namespace {

using namespace strata;

HardwareSpec a100(std::int64_t gpus_per_node) {
  HardwareSpec hw = test::load("default").hardware;
  hw.gpus_per_node = gpus_per_node;
  hw.nvlink_latency = Seconds(2e-6);
  hw.nvlink_collective_latency = Seconds(20e-6);
  hw.nic.latency = Seconds(5e-6);
  hw.nic.collective_latency = Seconds(30e-6);
  return hw;
}

using test::collective_dag;
using test::makespan;

}  // namespace

TEST_CASE("Ring collectives take their closed-form time on NVLink and across nodes", "[analytic][simulation]") {
  const double S = 512.0 * (1 << 20);
  for (bool inter_node : {false, true}) {
    const HardwareSpec hw = a100(inter_node ? 1 : 8);
    // Per-GPU bandwidth and per-step latency of the ring's hop.
    const double B = strata::test::hop_bandwidth(hw, inter_node);
    const double alpha = inter_node ? hw.nic.latency.value : hw.nvlink_latency.value;
    // Once per NCCL call, whatever its steps.
    const double call = inter_node ? hw.nic.collective_latency.value : hw.nvlink_collective_latency.value;
    for (std::int64_t n : {2, 4, 8}) {
      const RankLayout layout{1, 1, n, hw.gpus_per_node};
      std::vector<std::int64_t> group;
      for (std::int64_t r = 0; r < n; ++r) group.push_back(r);
      for (Collective c : {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather}) {
        const double share = (n - 1.0) / n * S / B;
        const double expected =
            call + (c == Collective::all_reduce ? 2 * share + 2 * (n - 1) * alpha : share + (n - 1) * alpha);
        for (bool folded : {false, true})
          for (bool des : {false, true}) {
            INFO(fmt::format("{} n={} collective {} folded {} des {}", inter_node ? "inter-node" : "NVLink", n,
                             static_cast<int>(c), folded, des));
            CHECK(makespan(collective_dag(c, group, S, folded, layout), hw, n, des) == Approx(expected).epsilon(1e-6));
          }
      }
    }
  }
}

TEST_CASE("An all-reduce inside a node whose NVSwitch reduces (NVLink SHARP) moves its buffer once each way, at "
          "efficiency.nvlink_sharp, where that beats the ring",
          "[analytic][simulation]") {
  // NCCL's NVLS all-reduce: each GPU sends S to the switch once and receives the sum once, at the
  // switch's rate; its latency terms stay the ring's (nvlink.source). The tuner keeps the ring where
  // 2(n-1)/n·S at efficiency.nvlink is faster: 2(n-1)/n·0.564 > 0.82 from n = 4 on the H100 profile.
  const HardwareSpec hw = test::load("default", {"hardware=\"dgx-h100\""}).hardware;
  REQUIRE(hw.nvlink_sharp);
  REQUIRE(hw.efficiency.nvlink_sharp == Approx(0.564));
  REQUIRE(hw.efficiency.nvlink == Approx(0.82));
  CHECK(switch_all_reduce_from(hw) == 4);
  HardwareSpec ring_only = hw;
  ring_only.nvlink_sharp = false;
  CHECK(switch_all_reduce_from(ring_only) == 0);
  CHECK(switch_all_reduce_from(a100(8)) == 0);
  const double S = 1024.0 * (1 << 20);
  const double alpha = hw.nvlink_latency.value, call = hw.nvlink_collective_latency.value;
  const double line = hw.nvlink_bandwidth.value;
  auto group_of = [](std::int64_t n) {
    std::vector<std::int64_t> g;
    for (std::int64_t r = 0; r < n; ++r) g.push_back(r);
    return g;
  };
  for (std::int64_t n : {2, 3, 4, 8}) {
    RankLayout layout{1, 1, n, hw.gpus_per_node};
    layout.switch_reduce_from = switch_all_reduce_from(hw);
    const auto group = group_of(n);
    const double latency = call + 2 * (n - 1) * alpha;
    const double ring = latency + 2.0 * (n - 1.0) / n * S / (line * hw.efficiency.nvlink);
    const double in_switch = latency + S / (line * hw.efficiency.nvlink_sharp);
    for (bool folded : {false, true})
      for (bool des : {false, true}) {
        INFO(fmt::format("n={} folded {} des {}", n, folded, des));
        CHECK(makespan(collective_dag(Collective::all_reduce, group, S, folded, layout), hw, n, des) ==
              Approx(n >= 4 ? in_switch : ring).epsilon(1e-6));
        // The switch reduces all-reduces only: a reduce-scatter + all-gather pair (a TP sub-block's
        // under sequence parallelism) keeps the ring's volume.
        CHECK(makespan(collective_dag(Collective::scatter_gather, group, S, folded, layout), hw, n, des) ==
              Approx(ring).epsilon(1e-6));
      }
  }
  // Its flows cross the GPUs' NVLink ports too: beside a send from GPU 0 to GPU 1 (no latency) that
  // outlasts it, the two share GPU 0's port (0.82 of the line rate) fairly, 0.41 each, which is
  // below the switch's 0.564. The send runs alone during the all-reduce's latency.
  {
    const std::int64_t n = 8;
    RankLayout layout{1, 1, n, hw.gpus_per_node};
    layout.switch_reduce_from = switch_all_reduce_from(hw);
    TaskDag dag = collective_dag(Collective::all_reduce, group_of(n), S, false, layout);
    Task send;
    send.kind = TaskKind::pp_transfer;
    send.stream = Stream::p2p;
    send.ranks = {0};
    send.latency_steps = 0;
    send.flows = {{Device::gpu(0), Device::gpu(1), 4.0 * S, false}};
    const TaskId all_reduce = 0, send_id = dag.add(std::move(send));
    const PlatformLayout platform(hw, n);
    const TaskCosts costs(hw, Precision::bf16, platform, dag);
    const double shared = 0.5 * line * hw.efficiency.nvlink;
    const double latency = call + 2 * (n - 1) * alpha;
    for (bool des : {false, true}) {
      INFO(fmt::format("beside a send, des {}", des));
      const TaskTimes t = des ? run_des(dag, costs, platform) : run_list_schedule(dag, costs);
      CHECK(t.finish[all_reduce] == Approx(latency + S / shared).epsilon(1e-6));
      CHECK(t.finish[send_id] > t.finish[all_reduce]);
    }
  }
  // While it runs it holds NCCL's NVLS channels (nvlink.sharp_sms, 16 on H100), where a ring holds
  // the collective's (nvlink.collective_sms, 24).
  {
    REQUIRE(hw.nvlink_sharp_sms == 16);
    REQUIRE(hw.nvlink_collective_sms == 24);
    const auto sms = static_cast<double>(hw.kernels.sm_count);
    for (std::int64_t n : {3, 8}) {
      RankLayout layout{1, 1, n, hw.gpus_per_node};
      layout.switch_reduce_from = switch_all_reduce_from(hw);
      const TaskDag dag = collective_dag(Collective::all_reduce, group_of(n), S, false, layout);
      const PlatformLayout platform(hw, n);
      const TaskCosts costs(hw, Precision::bf16, platform, dag);
      CHECK(costs.sm_share(0) == Approx((n == 8 ? 16.0 : 24.0) / sms));
    }
  }
  // Across nodes the all-reduce stays a ring whatever the switch does: 2 nodes x 8 GPUs, as with
  // the ring only.
  {
    const std::int64_t n = 16;
    RankLayout layout{1, 1, n, hw.gpus_per_node};
    const double ring_time =
        makespan(collective_dag(Collective::all_reduce, group_of(n), S, false, layout), hw, n, true);
    layout.switch_reduce_from = switch_all_reduce_from(hw);
    CHECK(makespan(collective_dag(Collective::all_reduce, group_of(n), S, false, layout), hw, n, true) ==
          Approx(ring_time).epsilon(1e-12));
  }
}

TEST_CASE("A ring across nodes with m GPUs on each sends 1/m of its bytes through each GPU's NIC (NCCL's channels)",
          "[analytic][simulation]") {
  // 2 nodes x 8 GPUs, no latencies: each GPU sends 7/8 of its ring bytes over NVLink to its node
  // peer and 1/8 through its own NIC to its counterpart on the other node, both at once. A single
  // ring would push all of them through one NIC per node: 8 times the NIC time.
  HardwareSpec hw = a100(8);
  hw.nvlink_latency = hw.nvlink_collective_latency = hw.nic.latency = hw.nic.collective_latency = Seconds(0.0);
  const double S = 1024.0 * (1 << 20);
  const std::int64_t n = 16, m = 8;
  const RankLayout layout{1, 1, n, hw.gpus_per_node};
  std::vector<std::int64_t> group;
  for (std::int64_t r = 0; r < n; ++r) group.push_back(r);
  for (Collective c : {Collective::all_reduce, Collective::all_gather}) {
    const double per_member = ring_bytes_per_member(c, n, S);
    const double expected = std::max(per_member / m / strata::test::hop_bandwidth(hw, true),
                                     per_member * (m - 1) / m / strata::test::hop_bandwidth(hw, false));
    for (bool folded : {false, true})
      for (bool des : {false, true}) {
        INFO(fmt::format("collective {} folded {} des {}", static_cast<int>(c), folded, des));
        CHECK(makespan(collective_dag(c, group, S, folded, layout), hw, n, des) == Approx(expected).epsilon(1e-6));
      }
  }
}

TEST_CASE("Two flows on one link each take twice as long, in the DES and in screening; once contention-free",
          "[analytic][simulation]") {
  // GPUs 0 and 1 sit behind one PCIe switch (gpus_per_switch = 2): writing to host DRAM, both
  // cross the switch's uplink.
  const HardwareSpec hw = a100(8);
  REQUIRE(hw.pcie.gpus_per_switch == 2);
  const double bytes = 4.0e9;
  TaskDag dag;
  for (std::int64_t r : {0, 1}) {
    Task t;
    t.kind = TaskKind::dp_comm;
    t.stream = Stream::dp_comm;
    t.ranks = {r};
    t.latency_steps = 0;
    t.flows = {{Device::gpu(r), Device{DeviceKind::dram, 0}, bytes, false}};
    dag.add(t);
    dag.resident[r] = {};
    dag.represents[r] = 1;
  }
  const double alone = bytes / (hw.pcie.bandwidth.value * hw.efficiency.pcie);
  CHECK(makespan(dag, hw, 8, false) == Approx(2 * alone).epsilon(1e-9));
  CHECK(makespan(dag, hw, 8, true) == Approx(2 * alone).epsilon(1e-6));
  const PlatformLayout layout(hw, 8);
  const TaskCosts costs(hw, Precision::bf16, layout, dag);
  CHECK(run_contention_free(dag, costs).makespan() == Approx(alone).epsilon(1e-9));
}

TEST_CASE("A send between two GPUs of a node moves at efficiency.nvlink_p2p, a cap per pair of GPUs, in both "
          "executors",
          "[analytic][simulation]") {
  // NCCL drives one peer with fewer channels than a collective: on A100 its send/recv reaches 195 GB/s
  // where collectives reach 228 over the same links (docs/references.md, NCCL collectives).
  const HardwareSpec hw = a100(8);
  REQUIRE(hw.efficiency.nvlink_p2p < hw.efficiency.nvlink);
  const double bytes = 2.0e9, cap = hw.nvlink_bandwidth.value * hw.efficiency.nvlink_p2p,
               link = hw.nvlink_bandwidth.value * hw.efficiency.nvlink;
  auto send = [](TaskKind kind, std::int64_t from, std::int64_t to, double b) {
    Task t;
    t.kind = kind;
    t.stream = kind == TaskKind::pp_transfer ? Stream::p2p
               : kind == TaskKind::cp_comm   ? Stream::cp_comm
                                             : Stream::dp_comm;
    t.ranks = {from};
    t.latency_steps = 0;
    t.flows = {{Device::gpu(from), Device::gpu(to), b, false}};
    return t;
  };
  auto dag_of = [](std::vector<Task> tasks) {
    TaskDag dag;
    for (auto& t : tasks) dag.add(std::move(t));
    for (std::int64_t r = 0; r < 8; ++r) {
      dag.resident[r] = {};
      dag.represents[r] = 1;
    }
    return dag;
  };
  for (bool des : {false, true}) {
    INFO((des ? "DES" : "screening"));
    // Alone: a pipeline send and a context-parallel ring step at the cap, a collective's flow at the
    // link's rate.
    auto alone = [&](TaskKind kind) { return makespan(dag_of({send(kind, 0, 1, bytes)}), hw, 8, des); };
    CHECK(alone(TaskKind::pp_transfer) == Approx(bytes / cap).epsilon(1e-6));
    CHECK(alone(TaskKind::cp_comm) == Approx(bytes / cap).epsilon(1e-6));
    CHECK(alone(TaskKind::dp_comm) == Approx(bytes / link).epsilon(1e-6));
    // Two sends at once from one GPU to two peers (a pipeline send beside a ring step): each peer has
    // its own channels, so they share the GPU's NVLink (half of 228 GB/s each, below the cap), not
    // one cap between them.
    const TaskDag two = dag_of({send(TaskKind::pp_transfer, 0, 1, bytes), send(TaskKind::cp_comm, 0, 2, bytes)});
    CHECK(makespan(two, hw, 8, des) == Approx(2 * bytes / link).epsilon(1e-6));
    // Two sends at once to the same peer share that peer's channels: one cap between them.
    const TaskDag pair = dag_of({send(TaskKind::pp_transfer, 0, 1, bytes), send(TaskKind::cp_comm, 0, 1, bytes)});
    CHECK(makespan(pair, hw, 8, des) == Approx(2 * bytes / cap).epsilon(1e-6));
  }
  // Across nodes the NIC bounds a send, not the cap.
  const HardwareSpec two_nodes = a100(1);
  const double nic = test::hop_bandwidth(two_nodes, true);
  TaskDag across;
  across.add(send(TaskKind::pp_transfer, 0, 1, bytes));
  for (std::int64_t r : {0, 1}) {
    across.resident[r] = {};
    across.represents[r] = 1;
  }
  across.tasks[0].flows[0].remote = true;
  CHECK(makespan(across, two_nodes, 2, true) == Approx(bytes / nic).epsilon(1e-6));
  // A node without NVLink sends over PCIe, which no NVLink fraction caps.
  HardwareSpec pcie_only = hw;
  pcie_only.nvlink_bandwidth = BytesPerSecond(0.0);
  const PlatformLayout pcie_layout(pcie_only, 8);
  const TaskDag over_pcie = dag_of({send(TaskKind::pp_transfer, 0, 1, bytes)});
  const TaskCosts pcie_costs(pcie_only, Precision::bf16, pcie_layout, over_pcie);
  for (const RoutedFlow& f : pcie_costs.flows(0)) CHECK(std::isinf(f.rate_cap));
  // Contention-free, the cap is the send's rate.
  const PlatformLayout layout(hw, 8);
  const TaskDag one = dag_of({send(TaskKind::pp_transfer, 0, 1, bytes)});
  const TaskCosts costs(hw, Precision::bf16, layout, one);
  CHECK(run_contention_free(one, costs).makespan() == Approx(bytes / cap).epsilon(1e-9));
}

TEST_CASE("A flow issued from inside a running kernel starts its bytes after the issue delay, beside the kernel",
          "[analytic][simulation]") {
  // Rank 0: a 2 ms kernel; beside it a copy to host DRAM ready with the kernel and issued 1.5 ms
  // into it (Task::issue_delay_s). The copy ends at 1.5 ms + bytes / bandwidth; the kernel does not
  // wait for it.
  const HardwareSpec hw = a100(8);
  const double bytes = 1.0e8, kernel = 2e-3, delay = 1.5e-3;
  TaskDag dag;
  Task k;
  k.ranks = {0};
  k.kernel_seconds = kernel;
  dag.add(k);
  Task copy;
  copy.kind = TaskKind::dp_comm;
  copy.stream = Stream::dp_comm;
  copy.ranks = {0};
  copy.latency_steps = 0;
  copy.issue_delay_s = delay;
  copy.flows = {{Device::gpu(0), Device{DeviceKind::dram, 0}, bytes, false}};
  dag.add(copy);
  dag.resident[0] = {};
  dag.represents[0] = 1;
  const double expected = delay + bytes / (hw.pcie.bandwidth.value * hw.efficiency.pcie);
  REQUIRE(expected > kernel);
  CHECK(makespan(dag, hw, 8, false) == Approx(expected).epsilon(1e-9));
  CHECK(makespan(dag, hw, 8, true) == Approx(expected).epsilon(1e-6));
  const PlatformLayout layout(hw, 8);
  const TaskCosts costs(hw, Precision::bf16, layout, dag);
  CHECK(run_contention_free(dag, costs).makespan() == Approx(expected).epsilon(1e-9));
  CHECK(dag.last_compute(0) == 0);
  CHECK(dag.last_compute(1) == kNoTask);
}

TEST_CASE("Screening and contention-free equal the DES when nothing contends", "[simulation]") {
  // Korthikanti's 175B: TP inside a node on NVLink, one pipeline transfer per NIC at a time. The
  // backward's asynchronous TP collectives would share NVLink with the blocking ones: off here.
  const Scenario sc = test::load("korthikanti-175b-selective", {"training.async_tp_backward=false"});
  const RunResult des = run_scenario(sc, {ExecutorKind::des, true, false});
  const RunResult list = run_scenario(sc, {ExecutorKind::list, true, false});
  const double t_des = des.simulation->throughput.iteration_time, t_list = list.simulation->throughput.iteration_time;
  std::cout << fmt::format("175B iteration: DES {:.12g} s, list {:.12g} s, relative difference {:.3g}\n", t_des,
                           t_list, std::fabs(t_des - t_list) / t_list);
  CHECK(std::fabs(t_des - t_list) <= 1e-9 * t_list);
  CHECK(std::fabs(des.simulation->contention_time) <= 1e-9 * t_list);
}

TEST_CASE("Folded simulation matches simulating every rank within 0.5 %", "[simulation][slow]") {
  test::Comparison table("Folded vs unfolded iteration time (DES)", "s");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"korthikanti-22b-selective", {}},
      {"korthikanti-175b-selective", {}},
      {"mixtral-8x7b-h100", {}},
      {"llama-2-7b-zero1-a100", {}},
      {"llama-3-8b-zero3-h100", {}},
      {"llama-2-7b-rtx4090-pipeline", {}},
      {"llama-2-7b-zero1-a100", {"parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=2"}},
  };
  for (const auto& [name, sets] : cases) {
    const Scenario sc = test::load(name, sets);
    REQUIRE(sc.gpus <= 64);
    const double folded = run_scenario(sc, {ExecutorKind::des, true, false}).simulation->throughput.iteration_time;
    const double every = run_scenario(sc, {ExecutorKind::des, false, false}).simulation->throughput.iteration_time;
    table.add(sets.empty() ? name : name + " tp2 pp2 dp2", every, folded);
  }
  table.print();
  CHECK(table.max_error() <= 0.005);
}

TEST_CASE("Memory timeline peaks agree with the static model within 2 %", "[validation][simulation]") {
  test::Comparison table("Per-stage HBM peak: static model vs executed timeline", "GiB");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"default", {}}, {"korthikanti-22b-full", {}}, {"korthikanti-530b-selective", {}}, {"mixtral-8x7b-h100", {}},
      {"llama-2-7b-zero1-a100", {}}, {"llama-2-7b-rtx4090-pipeline", {}}, {"llama-3-70b-h100-64", {}},
      // Partial recomputation; FSDP in shard groups of one rank (every rank a replica: NO_SHARD, no gathers).
      {"korthikanti-175b-full", {"memory.recompute_layers=2"}},
      {"llama-3-8b-zero3-h100", {"parallelism.dp_replicate=8", "training.framework=pytorch-fsdp"}}};
  for (const auto& [name, sets] : cases) {
    const Scenario sc = test::load(name, sets);
    const RunResult r = run_scenario(sc, {ExecutorKind::list, true, false});
    for (const auto& stage : r.memory.stages) {
      const auto& timeline = r.simulation->analysis.memory.at(stage.first_rank);
      table.add(fmt::format("{}{} stage {}", name, sets.empty() ? "" : " " + sets.front(), stage.stage),
                stage.hbm.total() / kGiB, timeline.peak.at(Tier::hbm) / kGiB);
    }
  }
  table.print();
  CHECK(table.max_error() <= 0.02);
}

TEST_CASE("An oversubscribed fabric caps a node's inter-node traffic, folded or not", "[analytic][simulation]") {
  HardwareSpec hw = a100(8);
  hw.nic.oversubscription = 4.0;
  const double bytes = 1.0e9;
  // Every GPU of node 0 sends to its peer on node 1 at once: the node's fabric share
  // count·bandwidth·efficiency/4 is split eight ways.
  const double node_share = static_cast<double>(hw.nic.count) * hw.nic.bandwidth.value * hw.efficiency.network / 4.0;
  const double expected = bytes / (node_share / 8.0);
  for (bool folded : {false, true}) {
    TaskDag dag;
    dag.fold_group = folded ? 16 : 1;
    for (std::int64_t r = 0; r < (folded ? 1 : 8); ++r) {
      Task t;
      t.kind = TaskKind::pp_transfer;
      t.stream = Stream::p2p;
      t.ranks = {r};
      t.latency_steps = 0;
      t.flows = {{Device::gpu(r), Device::gpu(r + 8), bytes, true}};
      dag.add(t);
      dag.resident[r] = {};
      dag.represents[r] = folded ? 16 : 1;
    }
    if (!folded)
      for (std::int64_t r = 8; r < 16; ++r) {
        dag.resident[r] = {};
        dag.represents[r] = 1;
      }
    INFO(folded);
    CHECK(makespan(dag, hw, 16, true) == Approx(expected).epsilon(1e-6));
  }
}

TEST_CASE("A kernel beside an NCCL collective runs on the SMs the collective leaves it, in the DES and in screening",
          "[analytic][simulation]") {
  // Rank 0: a 1 ms kernel, and beside it (its own stream, no dependency) an all-gather with rank 1
  // whose bytes take 0.4 ms. NCCL's CTAs hold nvlink.collective_sms of the GPU's sm_count SMs while
  // the bytes move, so the kernel does (1 - share) of its work per second until then: it ends at
  // 0.4 ms + (1 ms - 0.4 ms·(1 - share)). A copy (no NCCL call) takes no SMs.
  HardwareSpec hw = a100(8);
  hw.nvlink_latency = hw.nvlink_collective_latency = Seconds(0.0);
  REQUIRE(hw.kernels.present);
  REQUIRE(hw.nvlink_collective_sms > 0);
  const double share = static_cast<double>(hw.nvlink_collective_sms) / static_cast<double>(hw.kernels.sm_count);
  const double kernel = 1e-3, transfer = 0.4e-3;
  const RankLayout ranks{1, 1, 2, hw.gpus_per_node};
  for (bool nccl : {true, false}) {
    TaskDag dag;
    Task k;
    k.ranks = {0};
    k.kernel_seconds = kernel;
    dag.add(k);
    // A ring of two moves S/2 each way; S/2 / B = transfer.
    const double bytes = 2.0 * transfer * strata::test::hop_bandwidth(hw, false);
    Task gather = nccl_collective(Collective::all_gather, {0, 1}, {0, 1}, bytes, TaskKind::param_gather,
                                  Stream::gather, ranks);
    gather.latency_steps = 0;
    if (!nccl) gather.collective_calls = 0;
    dag.add(gather);
    for (std::int64_t r : {0, 1}) {
      dag.resident[r] = {};
      dag.represents[r] = 1;
    }
    const PlatformLayout layout(hw, 2);
    const TaskCosts costs(hw, Precision::bf16, layout, dag);
    CHECK(costs.sm_share(1) == Approx(nccl ? share : 0.0));
    const double expected = nccl ? transfer + (kernel - transfer * (1.0 - share)) : kernel;
    INFO(fmt::format("NCCL call {}: share {:.4f}, kernel ends at {:.6g} s", nccl, share, expected));
    CHECK(run_list_schedule(dag, costs).finish[0] == Approx(expected).epsilon(1e-9));
    CHECK(run_des(dag, costs, layout).finish[0] == Approx(expected).epsilon(1e-6));
    CHECK(run_contention_free(dag, costs).finish[0] == Approx(kernel).epsilon(1e-12));
    CHECK(run_list_schedule(dag, costs).finish[1] == Approx(transfer).epsilon(1e-9));
  }
}
