// Screening (`--executor list`, the in-process fluid model) against the SimGrid DES on every shipped
// scenario: the same checkpoint stall and persist time within 5 % and the same iteration time within
// 2 % (issue 15). Both share link bandwidth max-min fairly, so where many ranks write to one store at
// once screening sees the same contention the DES does.

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "support.hpp"

namespace {

using namespace strata;

struct Agreement {
  test::Comparison iteration{"Iteration time: DES (source) vs screening (strata)", "s"};
  test::Comparison checkpoint{"Checkpoint stall and persist: DES (source) vs screening (strata)", "s"};

  void add(const std::string& label, const Scenario& sc) {
    const RunResult des = run_scenario(sc, {ExecutorKind::des, true, false});
    const RunResult list = run_scenario(sc, {ExecutorKind::list, true, false});
    if (!des.simulation || !list.simulation) return;  // rejected before simulating (does not fit)
    iteration.add(label, des.simulation->throughput.iteration_time, list.simulation->throughput.iteration_time);
    if (des.checkpoint && list.checkpoint) {
      checkpoint.add(label + " stall", des.checkpoint->stall_s, list.checkpoint->stall_s);
      checkpoint.add(label + " persist", des.checkpoint->persist_s, list.checkpoint->persist_s);
    }
  }
};

}  // namespace

TEST_CASE("Screening agrees with the DES on every shipped scenario", "[simulation][screening][slow]") {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(test::source_path("scenarios")))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 20);
  Agreement a;
  for (const auto& name : names) a.add(name, test::load(name));
  a.iteration.print();
  a.checkpoint.print();
  CHECK(a.iteration.max_error() <= 0.02);
  CHECK(a.checkpoint.max_error() <= 0.05);
}

TEST_CASE("Screening shares a slow object store as the DES does: the issue 15 case", "[simulation][screening]") {
  // A synchronous 920 GiB checkpoint to a 20 GB/s object store: every rank's shard crosses the store's
  // one write path at once. Contention-free, screening said 10.9 s against the DES's 49.3 s.
  Agreement a;
  a.add("70B sync, 20 GB/s store",
        test::load("llama-3-70b-h100-cxl-sync", {"hardware.object_store.bandwidth=\"20 GB/s\""}));
  a.add("70B async, 10 GB/s store",
        test::load("llama-3-70b-h100-cxl-async", {"hardware.object_store.bandwidth=\"10 GB/s\""}));
  a.add("GPT-3 tiered, 10 GB/s store",
        test::load("gpt3-175b-64-h100", {"checkpoint.strategy=\"tiered\"",
                                         "checkpoint.tiers=[\"cxl\",\"local_ssd\",\"object_store\"]",
                                         "hardware.object_store.bandwidth=\"10 GB/s\""}));
  a.iteration.print();
  a.checkpoint.print();
  CHECK(a.iteration.max_error() <= 0.02);
  CHECK(a.checkpoint.max_error() <= 0.05);
  REQUIRE(a.checkpoint.rows().size() == 6);
  CHECK(a.checkpoint.rows().front().strata > 40.0);  // stall: the store's share, not its whole bandwidth
}
