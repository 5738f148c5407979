// GPUDirect Storage: with `memory.offload.gpudirect` or `checkpoint.gpudirect` on hardware that has it,
// GPU <-> local SSD transfers are DMAs that skip the host bounce buffer, so host DRAM carries none of
// their bytes and the route's narrowest link is the drives or the GPU's PCIe link. Without it (the
// default, and wherever the drives lack it) NVMe traffic bounces through host DRAM.

#include <catch2/catch.hpp>

#include <string>

#include "sim/dag/training_dag.hpp"
#include "sim/exec/task_costs.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/graph/memory_model.hpp"
#include "sim/platform/platform_layout.hpp"
#include "support.hpp"

using namespace strata;

namespace {

/// Bytes of GPU <-> local SSD flows of `kind` tasks, those that cross a host DRAM link, and the
/// link classes that were the narrowest on their routes.
struct SsdTraffic {
  double bytes = 0.0, through_dram = 0.0;
  std::set<std::string> bottlenecks;
};

std::string link_class(const std::string& name) {
  std::string s = name.substr(name.find('.') + 1);
  while (!s.empty() && std::isdigit(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

SsdTraffic ssd_traffic(const Scenario& sc, TaskKind kind, int checkpoint_after) {
  const ComputeGraph graph = build_compute_graph(sc.model, {sc.training.seq_len, sc.training.micro_batch_size, 2.0,
                                                            sc.training.flash_attention});
  const PipelinePartition part = partition_layers(static_cast<int>(sc.model.num_layers),
                                                  static_cast<int>(sc.parallelism.pp), 1);
  const MemoryEstimate mem = estimate_memory(sc, graph, part);
  DagOptions options{true, checkpoint_after, 1};
  const TaskDag dag = build_training_dag(sc, graph, part, mem, options);
  const PlatformLayout layout(sc.hardware, sc.gpus);
  const TaskCosts costs(sc.hardware, sc.training.precision, layout, dag);
  SsdTraffic out;
  for (TaskId id = 0; id < dag.tasks.size(); ++id) {
    if (dag.tasks[id].kind != kind) continue;
    const auto& flows = dag.tasks[id].flows;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const Flow& flow = flows[f];
      const bool gpu_ssd = (flow.src.kind == DeviceKind::gpu && flow.dst.kind == DeviceKind::local_ssd) ||
                           (flow.src.kind == DeviceKind::local_ssd && flow.dst.kind == DeviceKind::gpu);
      if (!gpu_ssd) continue;
      const RoutedFlow& routed = costs.flows(id)[f];
      out.bytes += flow.bytes;
      double narrowest = 1e300;
      std::string cls;
      for (LinkId l : routed.links) {
        const LinkSpec spec = layout.link(l);
        if (link_class(spec.name) == "dram") out.through_dram += flow.bytes;
        if (spec.bandwidth < narrowest) {
          narrowest = spec.bandwidth;
          cls = link_class(spec.name);
        }
      }
      out.bottlenecks.insert(cls);
    }
  }
  return out;
}

const std::vector<std::string> kSmall = {"training.global_batch_size=8", "hardware.local_ssd.gpudirect_storage=true"};

std::vector<std::string> with(std::vector<std::string> sets, const std::string& more) {
  sets.push_back(more);
  return sets;
}

}  // namespace

TEST_CASE("GPUDirect Storage offload: host DRAM carries none of the GPU <-> NVMe bytes", "[offload][gpudirect]") {
  const Scenario bounce = test::load("llama-3-8b-zero-infinity-h100", kSmall);
  const Scenario direct = test::load("llama-3-8b-zero-infinity-h100", with(kSmall, "memory.offload.gpudirect=true"));
  const SsdTraffic b = ssd_traffic(bounce, TaskKind::offload, -1), d = ssd_traffic(direct, TaskKind::offload, -1);
  std::printf("GPU <-> NVMe offload bytes %.3g: through DRAM %.3g with the bounce, %.3g with GPUDirect\n", b.bytes,
              b.through_dram, d.through_dram);
  REQUIRE(b.bytes > 0.0);
  CHECK(d.bytes == b.bytes);
  CHECK(b.through_dram == b.bytes);
  CHECK(d.through_dram == 0.0);
  for (const auto& cls : d.bottlenecks) {
    INFO(cls);
    CHECK((cls == "ssd_read" || cls == "ssd_write" || cls == "pcie_tx" || cls == "pcie_rx" || cls == "uplink_up" ||
           cls == "uplink_down"));
  }
  // The transfers are no slower for skipping the bounce.
  const RunResult rb = run_scenario(bounce), rd = run_scenario(direct);
  CHECK(rd.simulation->throughput.iteration_time <= rb.simulation->throughput.iteration_time * (1.0 + 1e-9));
}

TEST_CASE("GPUDirect Storage checkpoints: the snapshot to local SSDs and its reload skip host DRAM",
          "[checkpoint][gpudirect]") {
  const std::vector<std::string> base = {"hardware=\"dgx-h100\"", "hardware.local_ssd.gpudirect_storage=true",
                                         "checkpoint.strategy=async",
                                         "checkpoint.tiers=[\"local_ssd\",\"object_store\"]"};
  const Scenario bounce = test::load("gpt3-175b-64-h100", base);
  const Scenario direct = test::load("gpt3-175b-64-h100", with(base, "checkpoint.gpudirect=true"));
  const SsdTraffic b = ssd_traffic(bounce, TaskKind::checkpoint, 0), d = ssd_traffic(direct, TaskKind::checkpoint, 0);
  std::printf("snapshot bytes to local SSDs %.3g: through DRAM %.3g with the bounce, %.3g with GPUDirect\n", b.bytes,
              b.through_dram, d.through_dram);
  REQUIRE(b.bytes > 0.0);
  CHECK(b.through_dram == b.bytes);
  CHECK(d.through_dram == 0.0);
  for (const auto& cls : d.bottlenecks) {
    INFO(cls);
    CHECK((cls == "ssd_write" || cls == "pcie_tx" || cls == "uplink_up"));
  }
}

TEST_CASE("GPUDirect Storage needs drives that have it and a transfer that uses it", "[input][gpudirect]") {
  auto error_of = [](const std::vector<std::string>& sets) {
    try {
      test::load("llama-3-8b-zero-infinity-h100", sets);
      return std::string("no error");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  };
  const std::string absent = error_of({"memory.offload.gpudirect=true"});
  CHECK_THAT(absent, Catch::Contains("/memory/offload/gpudirect: needs GPUDirect Storage on the drives (hardware "
                                     "dgx-h100 has local_ssd.gpudirect_storage=false)"));
  const std::string unused = error_of({"hardware.local_ssd.gpudirect_storage=true", "memory.offload.params=none",
                                       "parallelism.zero_stage=1", "memory.offload.gpudirect=true"});
  CHECK_THAT(unused, Catch::Contains("/memory/offload/gpudirect: applies to parameters or activations offloaded to "
                                     "nvme"));
}
