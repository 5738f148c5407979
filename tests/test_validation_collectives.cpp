// Collectives as measured: nccl-tests curves of 8-GPU nodes and of 2 and 10 such nodes
// (tests/data/validation/collectives.json) against the time Strata's DES gives the same collective on the profile
// the curve's node is, at every measured size. The NVLink fields of the profiles (efficiency.nvlink,
// efficiency.nvlink_p2p, efficiency.nvlink_sharp, nvlink.latency, nvlink.collective_latency) and the A100 profiles'
// nic.latency were fitted on these curves, and the curves found after the fit (H100 all-gather, reduce-scatter and
// send/recv, a B200 send across nodes) check it; this test keeps both true and writes the table between the
// collectives markers of docs/validation.md. A curve with a known gap is shown with its reason and not held to the
// tolerance.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>

#include "doc_region.hpp"
#include "collective_dag.hpp"
#include "support.hpp"

namespace {

using namespace strata;

/// The collective a curve measures; nullopt for sendrecv (one point-to-point send, as a pipeline stage's).
std::optional<Collective> parse_collective(const std::string& name) {
  if (name == "all_reduce") return Collective::all_reduce;
  if (name == "all_gather") return Collective::all_gather;
  if (name == "reduce_scatter") return Collective::reduce_scatter;
  if (name == "sendrecv") return std::nullopt;
  throw std::invalid_argument("unknown collective " + name);
}

/// One send of `bytes` from the group's first member to its second, built as the pipeline emitter
/// builds a stage's send (one flow, one latency step, no NCCL call cost).
TaskDag send_dag(const std::vector<std::int64_t>& group, double bytes, const RankLayout& layout) {
  TaskDag dag;
  Task t;
  t.kind = TaskKind::pp_transfer;
  t.stream = Stream::p2p;
  t.ranks = {group[0]};
  t.flows.push_back({Device::gpu(group[0]), Device::gpu(group[1]), bytes, layout.node(group[0]) != layout.node(group[1])});
  dag.add(std::move(t));
  for (std::int64_t r : {group[0], group[1]}) {
    dag.resident[r] = {};
    dag.represents[r] = 1;
  }
  return dag;
}

/// The DES's time for one collective (or send) of `bytes` over n ranks of `hw`, `per_node` on each
/// node from its first GPU (all of a node's GPUs, then the next node's, when per_node is the node's size).
double simulated_seconds(const HardwareSpec& hw, std::optional<Collective> c, std::int64_t n, std::int64_t per_node,
                         double bytes) {
  const std::int64_t nodes = (n + per_node - 1) / per_node, gpus = nodes * hw.gpus_per_node;
  RankLayout layout{1, 1, gpus, hw.gpus_per_node};
  layout.switch_reduce_from = switch_all_reduce_from(hw);
  std::vector<std::int64_t> group;
  for (std::int64_t r = 0; r < n; ++r) group.push_back(r / per_node * hw.gpus_per_node + r % per_node);
  const TaskDag dag = c ? test::collective_dag(*c, group, bytes, false, layout) : send_dag(group, bytes, layout);
  return test::makespan(dag, hw, gpus, true, Precision::fp16);
}

std::string size_label(double bytes) {
  return bytes >= 1024.0 * 1024 * 1024 ? fmt::format("{:.0f} GiB", bytes / (1024.0 * 1024 * 1024))
                                       : fmt::format("{:.0f} MiB", bytes / (1024.0 * 1024));
}

}  // namespace

TEST_CASE("Validation: NCCL collectives inside a node against nccl-tests curves", "[validation][simulation]") {
  const auto data =
      nlohmann::json::parse(std::ifstream(strata::test::source_path("tests/data/validation/collectives.json")));
  const double point_tolerance = data.at("point_tolerance").get<double>();
  const double mean_tolerance = data.at("mean_tolerance").get<double>();
  std::string table = fmt::format(
      "## Collectives inside a node and across nodes (tests/test_validation_collectives.cpp)\n\nnccl-tests curves (out-of-place "
      "time) against the time Strata's DES gives the same collective on the named profile, every measured size "
      "from 4 MiB. Error on time: negative = Strata faster. Tolerance: each point within {:.0f} %, each curve's "
      "mean within {:.0f} %; curves with a known gap are shown with the reason and not held to it.\n\n| curve | "
      "source | profile | sizes | points | mean error | largest error (size) |\n|---|---|---|---|---|---|---|\n",
      100.0 * point_tolerance, 100.0 * mean_tolerance);
  for (const auto& curve : data.at("curves")) {
    const std::string id = curve.at("id");
    const std::string gap = curve.value("known_gap", "");
    const HardwareSpec hw =
        strata::test::load("default", {fmt::format("hardware=\"{}\"", curve.at("hardware").get<std::string>()),
                                       "training.precision=\"fp16\""})  // every GPU here has fp16
            .hardware;
    const std::optional<Collective> c = parse_collective(curve.at("collective"));
    const auto n = curve.at("ranks").get<std::int64_t>();
    const auto per_node = curve.value("ranks_per_node", std::min(n, hw.gpus_per_node));
    strata::test::Comparison cmp(fmt::format("{} on {} ({})", id, curve.at("hardware").get<std::string>(),
                                             gap.empty() ? "held" : "known gap"),
                                 "us");
    double worst = 0.0, worst_bytes = 0.0, worst_signed = 0.0;
    const auto& points = curve.at("points");
    for (const auto& p : points) {
      const double bytes = p.at(0).get<double>(), measured_us = p.at(1).get<double>();
      const double strata_us = 1e6 * simulated_seconds(hw, c, n, per_node, bytes);
      cmp.add(size_label(bytes), measured_us, strata_us);
      const double e = strata_us / measured_us - 1.0;
      if (std::fabs(e) > worst) {
        worst = std::fabs(e);
        worst_signed = e;
        worst_bytes = bytes;
      }
    }
    cmp.print();
    table += fmt::format("| {} | {} | {} | {} - {} | {} | {:.1f} % | {:+.1f} % ({}){} |\n", id,
                         curve.at("source").get<std::string>(), curve.at("hardware").get<std::string>(),
                         size_label(points.front().at(0).get<double>()), size_label(points.back().at(0).get<double>()),
                         points.size(), 100.0 * cmp.mean_error(), 100.0 * worst_signed, size_label(worst_bytes),
                         gap.empty() ? "" : " (known gap: " + gap + ")");
    if (gap.empty()) {
      INFO(id);
      CHECK(cmp.max_error() <= point_tolerance);
      CHECK(cmp.mean_error() <= mean_tolerance);
    }
  }
  table += "\nAcross nodes the 2-node curves and one 10-node H100 curve are held; the published A100 curves of "
           "4-16 nodes come from clusters run below their NICs' rate (untuned RoCE, one InfiniBand port per 8-GPU "
           "pod), and with 2 nodes NCCL may pick its tree algorithm, which Strata does not model (it runs rings: "
           "h100-2node-all-reduce). Training's data-parallel collectives are these rings. Inside a node "
           "whose NVSwitch reduces (NVLink SHARP), an all-reduce runs there (NCCL's NVLS) where it beats the ring, "
           "at the profile's efficiency.nvlink_sharp; across nodes NCCL's NVLS-tree all-reduce is not modelled.\n";
  const bool changed = strata::test::rewrite_region(strata::test::source_path("docs/validation.md"),
                                                    "<!-- collectives:begin -->", "<!-- collectives:end -->", table,
                                                    "# Validation\n");
  INFO("docs/validation.md was out of date and has been regenerated: commit it");
  CHECK_FALSE(changed);
}
