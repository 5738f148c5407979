// Offload timing against closed forms and orderings (issue: heterogeneous memory). ZeRO-Offload moves
// each gradient shard to host memory, runs Adam on the CPU at the profile's CPU-Adam rate and copies
// the updated 16-bit shard back; ZeRO-Infinity fetches parameters from NVMe through a pinned DRAM
// buffer; GPUs behind one PCIe switch share its uplink.

#include <catch2/catch.hpp>

#include <limits>

#include "sim/exec/executor.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/platform/platform_layout.hpp"
#include "support.hpp"

namespace {

using namespace strata;

double iteration(const Scenario& sc, ExecutorKind executor = ExecutorKind::des) {
  return run_scenario(sc, {executor, true, false}).simulation->throughput.iteration_time;
}

}  // namespace

TEST_CASE("NVMe parameter fetch takes bytes / min(NVMe share per GPU, PCIe)", "[analytic][simulation][offload]") {
  HardwareSpec hw = test::load("default").hardware;
  const double bytes = 2.0e9;
  // Eight GPUs of a node fetch at once: the node's drives, its DRAM bounce buffer and each PCIe
  // switch uplink are shared; each GPU's own x16 link is not.
  const double ssd = static_cast<double>(hw.local_ssd.count) * hw.local_ssd.read_bandwidth.value / 8;
  const double dram = hw.host.dram_bandwidth.value / 8;
  const double uplink = hw.pcie.bandwidth.value * hw.efficiency.pcie / static_cast<double>(hw.pcie.gpus_per_switch);
  const double expected = bytes / std::min({ssd, dram, uplink});
  for (bool folded : {false, true}) {
    TaskDag dag;
    dag.fold_group = folded ? 8 : 1;
    for (std::int64_t r = 0; r < (folded ? 1 : 8); ++r) {
      Task t;
      t.kind = TaskKind::offload;
      t.stream = Stream::offload_in;
      t.ranks = {r};
      t.flows = {{Device{DeviceKind::local_ssd, 0}, Device::gpu(r), bytes, false}};
      dag.add(t);
    }
    for (std::int64_t r = 0; r < (folded ? 1 : 8); ++r) {
      dag.resident[r] = {};
      dag.represents[r] = folded ? 8 : 1;
    }
    const PlatformLayout layout(hw, 8);
    const TaskCosts costs(hw, Precision::bf16, layout, dag);
    INFO("folded " << folded);
    CHECK(run_des(dag, costs, layout).makespan() == Approx(expected).epsilon(0.01));
  }
}

TEST_CASE("ZeRO-Offload step on an idle platform: gradients down, CPU Adam, weights up",
          "[analytic][simulation][offload]") {
  // With unbounded GPU compute nothing overlaps the copies, so the iteration is exactly
  // grads/B + params/rate + weights/B (B: the GPU's PCIe path to DRAM; rate: CPU-Adam of one node).
  Scenario sc = test::load_inline({{"model", "llama-2-7b"},
                                   {"hardware", "dgx-a100-80g"},
                                   {"gpus", 1},
                                   {"training", {{"seq_len", 1024}, {"global_batch_size", 1}, {"iterations", 2}}},
                                   {"parallelism", {{"zero_stage", 1}}},
                                   {"memory", {{"offload", {{"optimizer", "cpu"}}}}}});
  const double inf = std::numeric_limits<double>::infinity();
  sc.hardware.gpu.peak[sc.training.precision].value = inf;
  sc.hardware.gpu.hbm_bandwidth.value = inf;
  sc.hardware.kernels = KernelSpec{};  // the roofline: no per-kernel launch cost either
  const ComputeGraph graph = build_compute_graph(sc.model, {1024, 1, 2.0, true});
  const double params = total_parameters(graph);
  const double pcie = sc.hardware.pcie.bandwidth.value * sc.hardware.efficiency.pcie;
  const double expected = params * 2.0 / pcie + params / sc.hardware.host.cpu_adam_params_per_s + params * 2.0 / pcie;
  const RunResult r = run_scenario(sc, {ExecutorKind::des, true, false});
  test::Comparison table("ZeRO-Offload step, 1 GPU, Llama-2-7B", "s");
  table.add("iteration (copies + CPU step)", expected, r.simulation->throughput.iteration_time);
  table.add("exposed offload", expected, r.simulation->analysis.breakdown.exposed_offload());
  table.print();
  CHECK(table.max_error() <= 0.01);
}

TEST_CASE("Offload orderings: HBM none > cpu optimizer > nvme params+optimizer; time the reverse",
          "[regression][simulation][offload]") {
  const std::vector<std::pair<std::string, std::vector<std::string>>> policies = {
      {"none", {}},
      {"cpu optimizer", {"memory.offload.optimizer=cpu"}},
      {"nvme params+optimizer", {"memory.offload.optimizer=nvme", "memory.offload.params=nvme"}},
  };
  std::vector<double> hbm, time;
  for (const auto& [name, sets] : policies) {
    const Scenario sc = test::load("llama-3-8b-zero3-h100", sets);
    const RunResult r = run_scenario(sc, {ExecutorKind::des, true, false});
    hbm.push_back(r.memory.gpu_peak);
    time.push_back(r.simulation->throughput.iteration_time);
    std::cout << fmt::format("{:<24} HBM {:8.2f} GiB  iteration {:8.3f} s\n", name, hbm.back() / kGiB, time.back());
  }
  CHECK(hbm[0] > hbm[1]);
  CHECK(hbm[1] > hbm[2]);
  CHECK(time[0] < time[1]);
  CHECK(time[1] < time[2]);
}

TEST_CASE("PCIe-switch sharing slows the RTX 4090 server", "[simulation][offload]") {
  // Two GPUs per switch share its uplink for the gradient ring (host-bounced: no P2P on GeForce) and
  // the ZeRO-Offload copies; the same GPUs on independent uplinks are measurably faster.
  const std::string name = "llama-2-7b-rtx4090-zero2-offload";
  const Scenario shared = test::load(name);
  REQUIRE(shared.hardware.pcie.gpus_per_switch == 2);
  const Scenario independent = test::load(name, {"hardware.pcie.gpus_per_switch=1"});
  const RunResult r_shared = run_scenario(shared, {ExecutorKind::des, true, false});
  const double t_shared = r_shared.simulation->throughput.iteration_time, t_independent = iteration(independent);
  std::cout << fmt::format("4090 ZeRO-2 offload: shared switches {:.4f} s, independent uplinks {:.4f} s (+{:.2f} %)\n",
                           t_shared, t_independent, 100 * (t_shared / t_independent - 1));
  CHECK(t_shared > 1.05 * t_independent);
  // The contention-free schedule cannot see it: sharing only costs when flows overlap.
  CHECK(r_shared.simulation->contention_time > 0.0);
}

TEST_CASE("Activation offload beats full recompute only above the PCIe break-even", "[regression][simulation][offload]") {
  // Per layer, full recompute costs one forward t_f. Offloaded activations cost the part of their
  // copies (t_c = saved bytes / B each way) that compute does not hide: the copy out overlaps the next
  // layer's forward, the copy back the next layer's backward (≈ 2 t_f), so offload adds
  // max(0, t_c − t_f) + max(0, t_c − 2 t_f), which is below t_f exactly when t_c < 2 t_f:
  // break-even B* = saved / (2 t_f).
  auto scenario = [](const std::string& recompute, const std::string& offload, double pcie) {
    return test::load_inline({{"model", "llama-2-7b"},
                              {"hardware", "dgx-a100-80g"},
                              {"gpus", 1},
                              {"training", {{"seq_len", 4096}, {"global_batch_size", 1}, {"iterations", 2}}},
                              {"memory", {{"recompute", recompute}, {"offload", {{"activations", offload}}}}}},
                             {fmt::format("hardware.pcie.bandwidth={} B/s", pcie)});
  };
  const Scenario probe = scenario("full", "none", 31.5e9);
  const RunResult full = run_scenario(probe, {ExecutorKind::list, true, false});
  const double layers = static_cast<double>(probe.model.num_layers);
  const double t_f = full.simulation->analysis.breakdown.recompute / layers;
  const ComputeGraph graph = build_compute_graph(probe.model, {4096, 1, 2.0, true});
  const double saved = layer_activation_bytes(graph, 1, {1, false, Recompute::none});
  const double efficiency = probe.hardware.efficiency.pcie;
  const double break_even = saved / (2.0 * t_f) / efficiency;  // line rate whose achieved rate is B*
  std::cout << fmt::format("t_f {:.3f} ms, saved {:.1f} MiB per layer, break-even PCIe line rate {:.1f} GB/s\n",
                           1e3 * t_f, saved / (1 << 20), break_even / 1e9);
  for (double factor : {0.5, 2.0}) {
    const double pcie = factor * break_even;
    const double t_recompute = iteration(scenario("full", "none", pcie));
    const double t_offload = iteration(scenario("none", "cpu", pcie));
    INFO(fmt::format("PCIe {:.1f} GB/s: full recompute {:.4f} s, activation offload {:.4f} s", pcie / 1e9,
                     t_recompute, t_offload));
    std::cout << fmt::format("PCIe {:6.1f} GB/s: full recompute {:.4f} s, activation offload {:.4f} s\n",
                             pcie / 1e9, t_recompute, t_offload);
    if (factor > 1) CHECK(t_offload < t_recompute);
    else CHECK(t_offload > t_recompute);
  }
}

TEST_CASE("Delayed parameter update hides the CPU step behind the next iteration", "[simulation][offload]") {
  for (int batch : {4, 16}) {
    const std::string b = fmt::format("training.global_batch_size={}", batch);
    const RunResult plain = run_scenario(test::load("llama-2-13b-one-a100", {b}), {});
    const RunResult dpu = run_scenario(test::load("llama-2-13b-one-a100", {b, "memory.offload.delayed_update=true"}), {});
    const double t_plain = plain.simulation->throughput.iteration_time, t_dpu = dpu.simulation->throughput.iteration_time;
    const double hidden = dpu.simulation->analysis.breakdown.exposed_offload();
    std::cout << fmt::format("batch {:2}: no DPU {:.3f} s, DPU {:.3f} s, DPU exposed offload {:.3f} s\n", batch, t_plain,
                             t_dpu, hidden);
    CHECK(t_dpu < t_plain);
    // At 16 sequences the GPU's iteration outlasts the CPU step: nothing of it stays exposed.
    if (batch == 16) CHECK(hidden == Approx(0.0).margin(1e-9));
  }
}

TEST_CASE("ZeRO-Offload exposed time = transfer + CPU step − what the backward hides", "[analytic][simulation][offload]") {
  // One A100, Llama 2 7B at 8192 tokens: each layer's gradient copy (≈ 16 ms on PCIe) is shorter than the
  // next layer's backward (≈ 27 ms), so the backward hides every copy but the last one (block 0 with
  // the embedding). Exposed after the backward: that copy + the CPU step + the weights' way back.
  Scenario sc = test::load_inline({{"model", "llama-2-7b"},
                                   {"hardware", "dgx-a100-80g"},
                                   {"gpus", 1},
                                   {"training", {{"seq_len", 8192}, {"global_batch_size", 1}, {"iterations", 2}}},
                                   {"parallelism", {{"zero_stage", 1}}},
                                   {"memory", {{"offload", {{"optimizer", "cpu"}}}}}});
  const ComputeGraph graph = build_compute_graph(sc.model, {8192, 1, 2.0, true});
  double params = 0.0, first_block = 0.0;
  for (auto v : boost::make_iterator_range(boost::vertices(graph))) {
    params += graph[v].params();
    if (graph[v].layer <= 0) first_block += graph[v].params();
  }
  const double pcie = sc.hardware.pcie.bandwidth.value * sc.hardware.efficiency.pcie;
  const double transfer = params * 2.0 / pcie + params * 2.0 / pcie;
  const double hidden = (params - first_block) * 2.0 / pcie;
  const double cpu = params / sc.hardware.host.cpu_adam_params_per_s;
  const RunResult r = run_scenario(sc, {ExecutorKind::des, true, false});
  test::Comparison table("ZeRO-Offload exposed step, 1 A100, Llama-2-7B, 8192 tokens", "s");
  table.add("exposed offload = transfer + CPU - hidden", transfer + cpu - hidden,
            r.simulation->analysis.breakdown.exposed_offload());
  table.print();
  CHECK(table.max_error() <= 0.01);
}
