// Everything else with expert and context parallelism (issue 17, item 4): the checkpoint saves each
// state once whatever EP shards (state bytes × total parameters) and restores; optimizer offload
// runs with EP and with CP and moves the optimizer out of HBM; sweeps over parallelism.ep and .cp
// give a row per point; the trace puts ep_comm and cp_comm on their own tracks; folding the ranks
// of a stage agrees with simulating every rank for EP and CP together.

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/analysis/confidence.hpp"
#include "sim/analysis/run.hpp"
#include "sim/graph/memory_model.hpp"
#include "support.hpp"

namespace {

using namespace strata;
using nlohmann::json;

/// Mixtral 8x7B on two DGX H100: TP 2 (with SP, as EP needs), PP 2, DP 4, EP 4; small batch.
const std::vector<std::string> kEp = {"nodes=2", "parallelism.tp=2", "parallelism.pp=2", "parallelism.dp=4",
                                      "parallelism.ep=4", "parallelism.sequence_parallel=true",
                                      "training.global_batch_size=16"};
/// The same with CP 2 beside EP 2: tp·cp·pp·dp = 2·2·2·2 = 16.
const std::vector<std::string> kEpCp = {"nodes=2", "parallelism.tp=2", "parallelism.cp=2", "parallelism.pp=2",
                                        "parallelism.dp=2", "parallelism.ep=2", "parallelism.sequence_parallel=true",
                                        "training.global_batch_size=8"};
/// CP alone: CP 4, no EP.
const std::vector<std::string> kCp = {"nodes=2", "parallelism.tp=2", "parallelism.cp=4", "parallelism.pp=2",
                                      "parallelism.dp=1", "parallelism.ep=1", "parallelism.sequence_parallel=true",
                                      "training.global_batch_size=8"};

std::vector<std::string> with(std::vector<std::string> base, const std::vector<std::string>& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

std::string sets(const std::vector<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += " --set " + x;
  return out;
}

}  // namespace

TEST_CASE("Checkpoint with EP or CP: state bytes × all parameters, and it restores", "[ep][cp][checkpoint]") {
  // TP 1: with TP the norms and routers every TP rank replicates are saved by each of them (Strata's
  // checkpoint counts per-rank shards), which is not what this checks.
  const std::vector<std::vector<std::string>> layouts = {
      {"nodes=2", "parallelism.tp=1", "parallelism.pp=2", "parallelism.dp=8", "parallelism.ep=4"},
      {"nodes=2", "parallelism.tp=1", "parallelism.cp=2", "parallelism.pp=2", "parallelism.dp=4", "parallelism.ep=2"},
      {"nodes=2", "parallelism.tp=1", "parallelism.cp=4", "parallelism.pp=2", "parallelism.dp=2", "parallelism.ep=1"}};
  for (const auto& layout : layouts) {
    const Scenario sc = test::load("mixtral-8x7b-ep-h100",
                                   with(with(layout, {"training.global_batch_size=16"}),
                                        {"checkpoint.strategy=sync", "checkpoint.tiers=[\"object_store\"]"}));
    INFO(fmt::format("ep {} cp {}", sc.parallelism.ep, sc.parallelism.cp));
    const RunResult r = run_scenario(sc);
    REQUIRE(r.checkpoint);
    const StateBytes b = state_bytes(sc.training);
    // Experts sharded by EP, sequence by CP: each state is still saved exactly once.
    CHECK(r.checkpoint->size_bytes == Approx((b.weights + b.optimizer) * r.parameters).epsilon(1e-9));
    CHECK(b.weights + b.optimizer == 14.0);  // bf16 weights + fp32 master, momentum, variance
    CHECK(r.checkpoint->restore_s > 0.0);
    CHECK(std::isfinite(r.checkpoint->restore_s));
  }
}

TEST_CASE("ZeRO-Offload of the optimizer with EP and with CP: the optimizer leaves HBM, the run simulates",
          "[ep][cp][offload]") {
  for (const auto* layout : {&kEp, &kCp}) {
    const std::vector<std::string> sharded = with(*layout, {"parallelism.distributed_optimizer=true"});
    const Scenario in_hbm = test::load("mixtral-8x7b-ep-h100", sharded);
    const Scenario offloaded = test::load("mixtral-8x7b-ep-h100", with(sharded, {"memory.offload.optimizer=cpu"}));
    INFO(fmt::format("ep {} cp {}", in_hbm.parallelism.ep, in_hbm.parallelism.cp));
    const RunResult a = run_scenario(in_hbm), o = run_scenario(offloaded);
    REQUIRE(a.simulation);
    REQUIRE(o.simulation);
    REQUIRE(a.memory.stages.size() == o.memory.stages.size());
    for (std::size_t s = 0; s < a.memory.stages.size(); ++s) {
      const StageMemory &x = a.memory.stages[s], &y = o.memory.stages[s];
      INFO("stage " << s);
      CHECK(x.hbm.optimizer > 0.0);
      CHECK(y.hbm.optimizer == 0.0);
      // What left HBM is in host DRAM, with the fp32 gradients ZeRO-Offload streams there beside it
      // (sim/graph/memory_model.cpp): optimizer bytes + 4 per parameter of the shard.
      const StateBytes b = state_bytes(in_hbm.training);
      CHECK(y.offloaded_states.at(Tier::dram) == Approx(x.hbm.optimizer * (b.optimizer + 4.0) / b.optimizer).epsilon(1e-9));
      CHECK(y.hbm.total() < x.hbm.total());
    }
    CHECK(o.memory.gpu_peak < a.memory.gpu_peak);
    CHECK(o.simulation->throughput.iteration_time > 0.0);
  }
}

TEST_CASE("Sweeps over parallelism.ep and parallelism.cp give one row per point", "[ep][cp][sweep]") {
  namespace fs = std::filesystem;
  const fs::path dir = test::temp_file("moe-sweeps");
  fs::create_directories(dir);
  struct Axis {
    const char* name;
    json zip;
  };
  // EP 1, 2, 4 of DP 4; CP 1, 2, 4 at DP 4, 2, 1 (tp·cp·pp·dp = 16).
  const std::vector<Axis> axes = {
      {"ep", {{"parallelism.ep", {1, 2, 4}}, {"parallelism.dp", {4, 4, 4}}}},
      {"cp", {{"parallelism.cp", {1, 2, 4}}, {"parallelism.dp", {4, 2, 1}}, {"parallelism.ep", {1, 1, 1}}}},
  };
  for (const Axis& axis : axes) {
    // The fixed part of the layout as one-value grid axes.
    const json sweep = {{"base", "mixtral-8x7b-ep-h100"},
                        {"grid", {{"nodes", {2}}, {"parallelism.tp", {2}}, {"parallelism.pp", {2}},
                                  {"parallelism.sequence_parallel", {true}}, {"training.global_batch_size", {16}}}},
                        {"zip", axis.zip}};
    const fs::path file = dir / (std::string(axis.name) + ".json");
    std::ofstream(file) << sweep.dump(2);
    const fs::path out = dir / axis.name;
    const test::Result r = test::strata_cli(fmt::format("sweep {} --out {} -q", file.string(), out.string()), "&1");
    INFO(r.out);
    REQUIRE(r.code == 0);
    std::ifstream in(out / "results.jsonl");
    std::vector<std::int64_t> degrees;
    for (std::string line; std::getline(in, line);) {
      const json row = json::parse(line);
      INFO(line.substr(0, 400));
      CHECK(row.at("status") == "ok");
      degrees.push_back(row.at("params").at(std::string("parallelism.") + axis.name).get<std::int64_t>());
      CHECK(row.at("report").at("throughput.tokens_per_s").get<double>() > 0.0);
    }
    std::sort(degrees.begin(), degrees.end());
    CHECK(degrees == std::vector<std::int64_t>{1, 2, 4});
  }
  fs::remove_all(dir);
}

TEST_CASE("The trace of an EP run and of a CP run has ep_comm and cp_comm events on their own tracks",
          "[ep][cp][trace]") {
  struct Case {
    const std::vector<std::string>* layout;
    std::string kind;
  };
  for (const Case& c : {Case{&kEp, "ep_comm"}, Case{&kCp, "cp_comm"}}) {
    const std::string trace = test::temp_file("moe-trace-" + c.kind + ".json");
    const test::Result r = test::strata_cli(
        fmt::format("run mixtral-8x7b-ep-h100 -q --trace {}{}", trace, sets(*c.layout)), "&1");
    INFO(r.out);
    REQUIRE(r.code == 0);
    std::ifstream in(trace);
    const json events = json::parse(in);
    // The track: the thread named after the stream, on each GPU.
    std::set<std::pair<std::int64_t, std::int64_t>> tracks;
    for (const json& e : events)
      if (e.value("ph", "") == "M" && e.value("name", "") == "thread_name" && e.at("args").at("name") == c.kind)
        tracks.insert({e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()});
    REQUIRE(!tracks.empty());
    std::int64_t on_track = 0, elsewhere = 0;
    for (const json& e : events) {
      if (e.value("ph", "") != "X" || e.value("cat", "") != c.kind) continue;
      if (tracks.count({e.at("pid").get<std::int64_t>(), e.at("tid").get<std::int64_t>()})) ++on_track;
      else ++elsewhere;
    }
    INFO(c.kind << ": " << on_track << " on their track, " << elsewhere << " elsewhere");
    CHECK(on_track > 0);
    CHECK(elsewhere == 0);
    std::filesystem::remove(trace);
  }
}

TEST_CASE("EP and CP together: folded and every rank simulated agree within 1 %", "[ep][cp][simulation]") {
  const Scenario sc = test::load("mixtral-8x7b-ep-h100", kEpCp);
  REQUIRE(sc.parallelism.ep == 2);
  REQUIRE(sc.parallelism.cp == 2);
  const RunResult folded = run_scenario(sc, {ExecutorKind::des, true, false});
  const RunResult every = run_scenario(sc, {ExecutorKind::des, false, false});
  REQUIRE(folded.simulation);
  REQUIRE(every.simulation);
  CHECK(folded.simulation->throughput.iteration_time ==
        Approx(every.simulation->throughput.iteration_time).epsilon(0.01));
  CHECK(folded.simulation->analysis.breakdown.exposed_comm.count(TaskKind::ep_comm) == 1);
  // And through the CLI: --no-fold gives the same tokens/s within 1 %.
  auto tokens = [](const std::string& extra) {
    const test::Result r = test::strata_cli("run mixtral-8x7b-ep-h100 --json - -q" + sets(kEpCp) + extra);
    REQUIRE(r.code == 0);
    return json::parse(r.out).at("throughput").at("tokens_per_s").get<double>();
  };
  CHECK(tokens(" --no-fold") == Approx(tokens("")).epsilon(0.01));
}

TEST_CASE("advise searches EP for an MoE model and shows an ep column; a dense model's has none",
          "[ep][cp][advise]") {
  // One DGX H100, a small batch: dp up to 8, so EP 1, 2, 4, 8 of Mixtral's 8 experts.
  const test::Result moe = test::strata_cli(
      "advise mixtral-8x7b-ep-h100 -q --top 20 --confirm 12 --set nodes=1 --set training.global_batch_size=8 "
      "--set training.seq_len=2048 --set parallelism.pp=1 --set parallelism.dp=8",
      "&1");
  INFO(moe.out);
  REQUIRE(moe.code == 0);
  std::istringstream lines(moe.out);
  std::string header;
  std::getline(lines, header);
  CHECK(header.find(" ep ") != std::string::npos);
  // Column order: rank tp pp dp ep ...; the ep of every listed row, and at least one above 1. A
  // folded one ("8f": expert TP 1) divides tp·dp, a carved one dp.
  std::vector<std::int64_t> eps;
  bool any_folded = false;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::int64_t rank = 0, tp = 0, pp = 0, dp = 0;
    std::string column;
    if (!(f >> rank >> tp >> pp >> dp >> column) || column.empty() ||
        !std::isdigit(static_cast<unsigned char>(column.front())))
      continue;
    const bool folded = column.back() == 'f';
    const std::int64_t ep = std::stoll(column);
    CHECK((folded ? tp * dp : dp) % ep == 0);  // cp is 1 in this scenario
    if (folded) CHECK(tp > 1);
    CHECK(8 % ep == 0);
    eps.push_back(ep);
    any_folded = any_folded || folded;
  }
  REQUIRE(!eps.empty());
  CHECK(*std::max_element(eps.begin(), eps.end()) > 1);
  CHECK(any_folded);  // the search tries expert TP 1 beside carved EP
  CHECK(moe.out.find("ep (expert parallel") != std::string::npos);

  const test::Result dense = test::strata_cli("advise llama-2-7b-zero1-a100 -q --top 3 --confirm 2", "&1");
  INFO(dense.out);
  REQUIRE(dense.code == 0);
  CHECK(dense.out.substr(0, dense.out.find('\n')).find(" ep ") == std::string::npos);
  CHECK(dense.out.find("expert parallel") == std::string::npos);
}

TEST_CASE("The report says where a MoE, EP or CP run rests on an unmeasured assumption", "[ep][cp][confidence]") {
  const auto warnings = [](const std::string& scenario, const std::vector<std::string>& sets) {
    const Scenario sc = test::load(scenario, sets);
    RunResult r;
    r.parameters = 46.7e9;  // inside the validated sizes: only the MoE/CP lines can appear
    std::string all;
    for (const auto& w : assess_confidence(sc, r).warnings) all += w + "\n";
    return all;
  };
  const auto has = [](const std::string& all, const std::string& part) { return all.find(part) != std::string::npos; };

  const std::string ep = warnings("mixtral-8x7b-ep-h100", kEp);
  INFO(ep);
  CHECK(has(ep, fmt::format("mixture-of-experts timing is checked against {} published runs", kMoeBand.runs)));
  CHECK(has(ep, "expert load assumed perfectly balanced"));
  CHECK(has(ep, "experts are split over TP 2"));
  CHECK_FALSE(has(ep, "context parallelism"));
  // Folded (expert TP 1), the experts are whole: nothing to point at.
  CHECK_FALSE(has(warnings("mixtral-8x7b-ep-h100", with(kEp, {"parallelism.etp=1"})), "experts are split"));
  // Without EP there is no folding to offer (etp=1 needs ep > 1).
  CHECK_FALSE(has(warnings("mixtral-8x7b-h100", {}), "experts are split"));

  // A measured imbalance, or a capacity factor above 1 with one, is the user's number: no warning.
  CHECK_FALSE(has(warnings("mixtral-8x7b-ep-h100", with(kEp, {"training.moe.load_imbalance=1.3"})),
                  "expert load assumed"));
  // Without EP every expert is on every rank: balance does not set a pace.
  CHECK_FALSE(has(warnings("mixtral-8x7b-ep-h100", with(kCp, {})), "expert load assumed"));

  const std::string cp = warnings("mixtral-8x7b-ep-h100", with(kCp, {"memory.recompute=full"}));
  CHECK(has(cp, "context parallelism runs as a K/V ring"));
  CHECK(has(cp, "reruns attention without its K/V exchange"));
  CHECK_FALSE(has(warnings("mixtral-8x7b-ep-h100", with(kCp, {"memory.recompute=none"})), "reruns attention"));

  const std::string dense = warnings("llama-3-70b-h100-64", {});
  CHECK_FALSE(has(dense, "mixture-of-experts"));
  CHECK_FALSE(has(dense, "experts are split"));
  CHECK_FALSE(has(dense, "context parallelism"));
}
