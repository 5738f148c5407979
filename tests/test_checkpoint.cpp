// Checkpoint cost against closed forms (issue: checkpointing). Content: 16-bit weights + fp32 master +
// Adam moments = 14 B/param (PUBLISHED_NUMBERS C1; Narayanan et al. 2021 §5.10: the 1T model's
// checkpoint is 13.8 TB). Timing: a sync checkpoint takes its bytes over the bottleneck of its path;
// an async one stalls training for the snapshot to DRAM only, until the persist outlasts the interval.

#include <catch2/catch.hpp>

#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/graph/pipeline_partition.hpp"
#include "sim/graph/training_dag.hpp"
#include "support.hpp"

namespace {

using namespace strata;

RunResult run(const std::string& name, const std::vector<std::string>& sets) {
  return run_scenario(test::load(name, sets), {ExecutorKind::des, true, false});
}

}  // namespace

TEST_CASE("Checkpoint size: 14 bytes per parameter with fp32 Adam states", "[validation][checkpoint]") {
  test::Comparison table("Checkpoint size", "B");
  const RunResult gpt3 = run("default", {});
  table.add("GPT-3 175B, bytes per parameter (ZeRO 16-bit weights + 12 B states)", 14.0,
            gpt3.checkpoint->size_bytes / gpt3.parameters);
  // The 1T model's size needs no simulation: its bytes per rank from the memory model.
  const Scenario t1 = test::load("megatron-1t-3072-a100");
  const ComputeGraph graph = build_compute_graph(t1.model, {t1.training.seq_len, 1, 2.0, false});
  const auto part = partition_layers(static_cast<int>(t1.model.num_layers), static_cast<int>(t1.parallelism.pp), 1);
  double size = 0.0;
  for (double b : checkpoint_bytes_per_rank(t1, estimate_memory(t1, graph, part)))
    size += b * static_cast<double>(t1.parallelism.tp * t1.parallelism.dp);
  table.add("Megatron 1T checkpoint (Narayanan et al. 2021 §5.10: 13.8 TB)", 13.8e12, size);
  table.print();
  // Every rank saves what it holds: a TP rank its slice and its copy of the replicated norms, the last
  // pipeline stage its copy of the tied embedding (hence slightly above 14 B per model parameter).
  const Scenario gpt3_sc = test::load("default");
  double held = 0.0;  // parameters over all ranks of one DP replica
  for (const auto& stage : gpt3.memory.stages) held += stage.parameters * static_cast<double>(gpt3_sc.parallelism.tp);
  CHECK(gpt3.checkpoint->size_bytes == Approx(14.0 * held).epsilon(1e-9));
  CHECK(table.rows()[0].strata == Approx(14.0).epsilon(0.01));
  CHECK(test::Comparison::error(13.8e12, size) <= 0.03);

  // 16-bit optimizer states halve the states' part of the checkpoint.
  const RunResult half = run("default", {"training.state_precision=bf16"});
  const double weights = 2.0 * held;
  CHECK(half.checkpoint->size_bytes - weights == Approx(0.5 * (gpt3.checkpoint->size_bytes - weights)).epsilon(1e-9));
}

TEST_CASE("Sync checkpoint to the object store takes bytes / bottleneck bandwidth", "[analytic][checkpoint]") {
  // Llama 2 7B, ZeRO-1 over 8 A100s of one node: every GPU writes its 1/8 shard at once, and the
  // object store's aggregate bandwidth (100 GB/s, 12.5 GB/s per writer, below each GPU's PCIe and NIC
  // share) is the bottleneck: size × write amplification / aggregate bandwidth, plus one request
  // latency per round of max_in_flight requests of request_size (boto3's multipart defaults).
  for (const std::string redundancy : {"none", "replication:3", "ec:8+3"}) {
    const std::vector<std::string> sets = {"checkpoint.strategy=sync", "checkpoint.tiers=[\"object_store\"]",
                                           "hardware.object_store.redundancy=" + redundancy};
    const Scenario sc = test::load("llama-2-7b-zero1-a100", sets);
    const RunResult r = run_scenario(sc, {ExecutorKind::des, true, false});
    const ObjectStoreSpec& store = sc.hardware.object_store;
    const double amplification = redundancy == "none" ? 1.0 : redundancy == "replication:3" ? 3.0 : 11.0 / 8.0;
    REQUIRE(store.bandwidth.value / amplification / static_cast<double>(sc.gpus) <
            sc.hardware.nic.bandwidth.value * sc.hardware.efficiency.network);
    const double requests = std::ceil(r.checkpoint->max_rank_bytes / store.request_size.value);
    const double rounds = std::ceil(requests / static_cast<double>(store.max_in_flight));
    const double expected = r.checkpoint->size_bytes * amplification / store.bandwidth.value +
                            rounds * (store.latency.value + sc.hardware.nic.latency.value);
    test::Comparison table("Sync checkpoint, Llama 2 7B ZeRO-1 on 8 A100, straight to the object store, redundancy " +
                               redundancy, "s");
    table.add("stall", expected, r.checkpoint->stall_s);
    table.add("durable after", expected, r.checkpoint->persist_s);
    table.print();
    CHECK(table.max_error() <= 0.01);
  }
}

TEST_CASE("Async checkpoint stalls for the snapshot; back-pressure once persist outlasts the interval",
          "[analytic][checkpoint]") {
  const Scenario sc = test::load("default");
  const RunResult r = run("default", {});
  REQUIRE(r.checkpoint->strategy == "async");
  // Snapshot GPU -> DRAM: each GPU's x16 link, its switch uplink shared by gpus_per_switch GPUs, the
  // node's DRAM shared by its 8 GPUs.
  const double pcie = sc.hardware.pcie.bandwidth.value * sc.hardware.efficiency.pcie;
  const double rate = std::min({pcie, pcie / static_cast<double>(sc.hardware.pcie.gpus_per_switch),
                                sc.hardware.host.dram_bandwidth.value / 8.0});
  test::Comparison table("Async checkpoint, 175B on 64 A100, DRAM -> SSD -> object store", "s");
  table.add("stall = snapshot time", r.checkpoint->max_rank_bytes / rate, r.checkpoint->stall_s);
  table.print();
  CHECK(table.max_error() <= 0.01);
  CHECK(r.checkpoint->backpressure_s == 0.0);

  const double iteration = r.simulation->throughput.iteration_time, persist = r.checkpoint->persist_s;
  REQUIRE(persist > iteration);
  // An interval just shorter than the persist makes the next snapshot wait; just longer does not.
  // Back-pressure when the persist outlasts the snapshot plus the interval: the largest interval with
  // back-pressure and the smallest without.
  const double slack = (persist - r.checkpoint->snapshot_stall_s) / iteration;
  const auto every = [](int n) { return fmt::format("checkpoint.interval_iterations={}", std::max(1, n)); };
  const RunResult tight = run("default", {every(static_cast<int>(std::ceil(slack)) - 1)});
  const RunResult loose = run("default", {every(static_cast<int>(std::ceil(slack)))});
  CHECK(tight.checkpoint->backpressure_s > 0.0);
  CHECK(loose.checkpoint->backpressure_s == 0.0);
  CHECK(tight.checkpoint->stall_s > r.checkpoint->stall_s);
  CHECK(tight.checkpoint->backpressure_s ==
        Approx(persist - r.checkpoint->snapshot_stall_s - (std::ceil(slack) - 1) * iteration).epsilon(1e-6));
}

TEST_CASE("Checkpoint strategy ordering: stall sync > tiered >= async; tiered persists sooner", "[regression][checkpoint]") {
  // Llama 3 70B on 64 H100 with CXL expanders, tiers CXL -> local SSD -> object store.
  const std::string name = "llama-3-70b-h100-cxl-tiered";
  const RunResult sync = run(name, {"checkpoint.strategy=sync"});
  const RunResult async = run(name, {"checkpoint.strategy=async"});
  const RunResult tiered = run(name, {"checkpoint.strategy=tiered"});
  std::cout << fmt::format("stall: sync {:.3f} s, tiered {:.3f} s, async {:.3f} s; durable after: async {:.3f} s, "
                           "tiered {:.3f} s\n", sync.checkpoint->stall_s, tiered.checkpoint->stall_s,
                           async.checkpoint->stall_s, async.checkpoint->persist_s, tiered.checkpoint->persist_s);
  CHECK(sync.checkpoint->stall_s > tiered.checkpoint->stall_s);
  CHECK(tiered.checkpoint->stall_s >= async.checkpoint->stall_s);
  CHECK(tiered.checkpoint->persist_s < async.checkpoint->persist_s);  // the hops overlap
  CHECK(sync.run->goodput < tiered.run->goodput);
}

TEST_CASE("An async snapshot larger than the node's DRAM is reported as a DRAM overflow", "[checkpoint]") {
  // The seed's OOM risk: 8 GPUs of a node snapshot 8 × 39.5 GB (GPT-3 175B, 64 A100) into 256 GiB.
  const RunResult r = run("default", {"hardware.host.dram=256 GiB"});
  REQUIRE(r.checkpoint);
  const auto& dram = r.checkpoint->staging.at(Tier::dram);
  CHECK(dram.bytes == Approx(8 * r.checkpoint->max_rank_bytes).epsilon(1e-9));
  const nlohmann::json report = make_report(test::load("default", {"hardware.host.dram=256 GiB"}), r);
  CHECK(report["fits"] == false);
  bool found = false;
  for (const auto& o : report["memory"]["overflows"])
    found = found || (o["found_by"] == "checkpoint" && o["tier"] == "dram");
  CHECK(found);
}
