// The DAG cache (sim/analysis/dag_cache): what a sweep's families share must not change a result.
// No DAG reads a link's bandwidth (built at two values of each path dag_neutral names, the DAGs are
// equal); a screening sweep whose families share their DAGs gives exactly the reports of the same
// points run alone; the cache bounds what it keeps.

#include <catch2/catch.hpp>

#include <fstream>

#include "sim/analysis/dag_cache.hpp"
#include "sim/analysis/pipeline_balance.hpp"
#include "sim/exec/simulation_memo.hpp"
#include "sim/plan/sweep_results.hpp"
#include "support.hpp"

namespace {

using namespace strata;
using nlohmann::json;

/// A DAG's structure as bytes: its simulation key, its costs priced on one reference platform (so
/// that only the DAGs can differ).
std::string structure(const Scenario& reference, const TaskDag& dag) {
  const PlatformLayout layout(reference.hardware, reference.gpus);
  return simulation_key(dag, TaskCosts(reference.hardware, reference.training.precision, layout, dag), layout);
}

std::vector<std::string> dags_of(const Scenario& sc, const Scenario& reference) {
  const ComputeGraph graph = build_compute_graph(
      sc.model, GraphShape{.seq_len = sc.training.seq_len, .micro_batch = sc.training.micro_batch_size,
                           .activation_bytes = 2.0, .flash_attention = sc.training.flash_attention,
                           .eager_elementwise = !sc.training.behaviour.fused_elementwise});
  const PipelinePartition part = scenario_partition(sc, graph);
  const MemoryEstimate memory = estimate_memory(sc, graph, part);
  std::vector<std::string> out;
  // The training run and a checkpoint window with its persist hops.
  for (const DagOptions& opt : {DagOptions{true}, DagOptions{true, 0, 3, true}})
    out.push_back(structure(reference, build_training_dag(sc, graph, part, memory, opt)));
  return out;
}

}  // namespace

TEST_CASE("No task DAG reads a link bandwidth, so families differing only there share their DAGs",
          "[simulation][sweep]") {
  // Offload to DRAM and NVMe, a CXL checkpoint tier, data parallelism across nodes, pipelines.
  for (const std::string name : {"gpt3-175b-64-h100", "llama-3-70b-h100-cxl-tiered", "llama-2-7b-rtx4090-zero2-offload",
                                 "llama-3-8b-zero-infinity-h100"}) {
    const Scenario reference = test::load(name);
    const auto expected = dags_of(reference, reference);
    for (const std::string& path : dag_neutral_paths()) {
      INFO(name << " with " << path << " changed");
      const Scenario changed = test::load(name, {path + "=\"3.5 GB/s\""});
      CHECK(dags_of(changed, reference) == expected);
    }
  }
  CHECK(dag_neutral("hardware.object_store.bandwidth"));
  CHECK_FALSE(dag_neutral("hardware.gpu.hbm_bandwidth"));  // memory-bound kernels are priced with it
  CHECK_FALSE(dag_neutral("checkpoint.strategy"));
}

TEST_CASE("A screening sweep whose families share DAGs gives the reports of its points run alone",
          "[simulation][sweep][screening]") {
  // Two object-store bandwidths and two strategies: four families, two DAG groups.
  const std::string dir = test::temp_file("dag-cache-sweep");
  const std::string file = dir + ".json";
  std::ofstream(file) << json{{"base", "gpt3-175b-64-h100"},
                              {"grid", {{"hardware.object_store.bandwidth", {"20 GB/s", "200 GB/s"}},
                                        {"checkpoint.interval_iterations", {10, 200}}}},
                              {"zip", {{"checkpoint.strategy", {"async", "tiered"}},
                                       {"checkpoint.tiers", {{"dram", "object_store"}, {"cxl", "local_ssd", "object_store"}}}}}}
                                 .dump();
  REQUIRE(test::strata_cli(fmt::format("sweep '{}' --out '{}' -j 1 -q --executor list", file, dir)).code == 0);
  std::ifstream rows(std::filesystem::path(dir) / "results.jsonl");
  std::string line;
  int compared = 0;
  while (std::getline(rows, line)) {
    const json row = json::parse(line);
    std::vector<std::string> sets;
    for (const auto& [path, value] : row.at("params").items()) sets.push_back(path + "=" + value.dump());
    const Scenario sc = test::load("gpt3-175b-64-h100", sets);
    const json alone = flatten_report(make_report(sc, run_scenario(sc, {ExecutorKind::list, true, false})));
    INFO(row.at("params").dump());
    // As the sweep writes its rows (rounded to the digits it keeps).
    CHECK(row.at("report") == json::parse(row_line(alone)));
    ++compared;
  }
  CHECK(compared == 8);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(file);
}

TEST_CASE("The DAG cache returns what it kept, names it, and keeps at most its bound", "[unit][simulation]") {
  DagCache cache(12);
  int built = 0;
  auto small = [&] {
    ++built;
    TaskDag dag;
    Task t;
    t.ranks = {0};
    dag.add(t);
    dag.add(t);
    return dag;
  };
  const auto first = cache.get("a", small);
  CHECK(cache.get("a", small) == first);
  CHECK(built == 1);
  CHECK(cache.hits() == 1);
  CHECK_FALSE(first->shared_identity.empty());
  REQUIRE(first->stream_order);
  CHECK((*first->stream_order)[1].size() == 1);  // the second task follows the first on its stream
  const auto other = cache.get("b", small);
  CHECK(other->shared_identity != first->shared_identity);
  // Bounded by tasks (12: six two-task DAGs): filling it pushes the least recently used out.
  for (int i = 0; i < 5; ++i) cache.get("fill" + std::to_string(i), small);
  const int before = built;
  cache.get("b", small);  // still there: "a" went first
  CHECK(built == before);
  cache.get("a", small);
  CHECK(built == before + 1);
}
