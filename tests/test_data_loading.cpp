// Training-data loading against closed forms: each first-stage rank reads its share of the batch
// (global / dp / tp samples) from the data tier. From the object store a rank gets the least of its
// share of the store's read bandwidth, its client rate (Little's law: max_in_flight × request_size /
// latency) and its NIC, plus one request latency per round of max_in_flight requests. Without
// prefetching the GPU waits for every read; one batch ahead hides a read shorter than an iteration.

#include <catch2/catch.hpp>

#include "support.hpp"

namespace {

using namespace strata;

constexpr const char* kScenario = "llama-3-70b-h100-cxl-async";

RunResult run(const std::vector<std::string>& sets) {
  return run_scenario(test::load(kScenario, sets), {ExecutorKind::des, true, false});
}

}  // namespace

TEST_CASE("A read without prefetching costs bytes / bottleneck + request latency, all of it exposed",
          "[analytic][data]") {
  // Large samples (1 GiB each, e.g. video clips) make the read long enough to measure. The updated
  // weights are gathered after the step, so that only the read stands before the first forward: gathered
  // in it, they would run beside the read and shorten the stall by what they hide.
  const std::vector<std::string> big = {"data.sample_bytes=1 GiB", "training.overlap_param_gather=false"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), big.begin(), big.end());
    return more;
  };
  const Scenario sc = test::load(kScenario, with({"data.prefetch_iterations=0"}));
  const RunResult sync = run(with({"data.prefetch_iterations=0"}));
  const RunResult ahead = run(with({"data.prefetch_iterations=1"}));
  // Already in host memory: nothing to read.
  const RunResult none = run({"data.tier=dram", "training.overlap_param_gather=false"});

  const ParallelismSpec& p = sc.parallelism;
  const ObjectStoreSpec& store = sc.hardware.object_store;
  const double readers = static_cast<double>(p.tp * p.dp);
  const double samples = static_cast<double>(sc.training.global_batch_size) / readers;
  const double bytes = samples * sc.data.sample_bytes;
  const double client = static_cast<double>(store.max_in_flight) * store.request_size.value / store.latency.value;
  const double rate = std::min({store.bandwidth.value / readers, client,
                                sc.hardware.nic.bandwidth.value * sc.hardware.efficiency.network});
  const double rounds = std::ceil(samples * static_cast<double>(sc.data.requests_per_sample) /
                                  static_cast<double>(store.max_in_flight));
  const double read = bytes / rate + rounds * store.latency.value;
  const double T0 = none.simulation->throughput.iteration_time;

  test::Comparison table("Data reads, Llama 3 70B on 64 H100, 1 GiB samples from the object store", "s");
  table.add("read per rank", read, sync.data->read_s);
  table.add("iteration without prefetch - without reads", read, sync.simulation->throughput.iteration_time - T0);
  table.add("data stall of a reading GPU", read, sync.data->stall_s);
  table.add("start-up: the first batch", read, sync.data->startup_read_s);
  table.print();
  CHECK(table.max_error() <= 0.01);

  // One batch ahead: the read (about 2 s) hides behind an 18 s iteration.
  REQUIRE(read < T0);
  CHECK(ahead.data->stall_s == Approx(0.0).margin(1e-9));
  CHECK(ahead.simulation->throughput.iteration_time == Approx(T0).epsilon(1e-6));
  CHECK(ahead.simulation->analysis.breakdown.exposed_comm.count(TaskKind::data_load) == 0);
  // ... but the first batch still has to arrive before anything runs.
  CHECK(ahead.data->startup_read_s == Approx(read).epsilon(0.01));
}

TEST_CASE("Data stall appears in the time breakdown and sums with the rest to the iteration", "[data]") {
  const Scenario sc = test::load(kScenario, {"data.prefetch_iterations=0", "data.sample_bytes=1 GiB"});
  const RunResult r = run_scenario(sc, {ExecutorKind::des, true, false});
  const nlohmann::json report = make_report(sc, r);
  const auto& b = report["time_breakdown"];
  const double total = b["compute_s"].get<double>() + b["recompute_s"].get<double>() +
                       b["exposed_comm_s"].get<double>() + b["exposed_offload_s"].get<double>() +
                       b["data_stall_s"].get<double>() + b["bubble_s"].get<double>();
  CHECK(b["data_stall_s"].get<double>() > 0.0);
  // Averaged over every GPU: the first stage's (1/pp of them) stall.
  CHECK(b["data_stall_s"].get<double>() * static_cast<double>(sc.parallelism.pp) == Approx(r.data->stall_s));
  CHECK(total == Approx(report["throughput"]["iteration_time_s"].get<double>()).epsilon(1e-6));
}
