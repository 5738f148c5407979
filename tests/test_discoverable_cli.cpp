// A CLI a new user can discover (issue 18 item 3): the report's metrics listed from the table that
// writes the report, one document in detail, the quick form of `run`, units and no negative zero,
// and compare --check on the repository's own orderings file.

#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "sim/core/json_file.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/sweep_results.hpp"
#include "sim/report/metrics.hpp"
#include "support.hpp"

namespace strata::test {

namespace {

/// The keys `strata describe metrics` lists (first column, up to the blank line after the table).
std::set<std::string> listed_metrics() {
  const Result r = strata_cli("describe metrics");
  REQUIRE(r.code == 0);
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);  // header
  std::set<std::string> keys;
  while (std::getline(in, line) && !line.empty()) keys.insert(line.substr(0, line.find(' ')));
  return keys;
}

/// Whether dotted `key` leads to a value in `report` (arrays included, unlike flattened reports).
bool has_path(const nlohmann::json& report, const std::string& key) {
  const nlohmann::json* node = &report;
  std::size_t start = 0;
  while (true) {
    const auto dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(part)) return false;
    node = &node->at(part);
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("describe metrics lists every key of the shipped reports, and each listed key is in one", "[cli][metrics]") {
  const std::set<std::string> listed = listed_metrics();
  std::set<std::string> table;
  for (const Metric& m : report_metrics()) table.insert(m.key);
  CHECK(listed == table);
  CHECK(listed.count("fits") == 1);
  CHECK(listed.count("memory.tiers.{tier}.peak_bytes") == 1);

  std::set<std::string> seen;  // metric keys some shipped report has
  int reports = 0;
  for (const auto& entry : std::filesystem::directory_iterator(source_path("results/baseline"))) {
    const auto report = read_json_file(entry.path(), entry.path().filename().string());
    ++reports;
    const nlohmann::json flat = flatten_report(report);
    for (const auto& [key, value] : flat.items()) {
      const Metric* m = find_metric(key);
      INFO(entry.path().filename().string() << ": " << key);
      REQUIRE(m != nullptr);
      CHECK(listed.count(m->key) == 1);
      seen.insert(m->key);
    }
    for (const Metric& m : report_metrics())
      if (m.unit == MetricUnit::list && has_path(report, m.key)) seen.insert(m.key);
  }
  CHECK(reports >= 17);
  for (const std::string& key : listed) {
    INFO(key << " is listed but in no shipped report");
    CHECK(seen.count(key) == 1);
  }
}

TEST_CASE("A fresh report is written from the metric table alone", "[cli][metrics]") {
  // Every flattened key of a fresh run belongs to a metric, and the model description is the
  // report's model section without its run-dependent keys.
  const Result r = strata_cli("run llama-2-7b-zero1-a100 --executor list -q --json -");
  REQUIRE(r.code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const nlohmann::json flat = flatten_report(report);
  for (const auto& [key, value] : flat.items()) {
    INFO(key);
    CHECK(find_metric(key) != nullptr);
  }
  CHECK(metric_key_problem("throughput.tokens_per_s") == std::nullopt);
  CHECK(metric_key_problem("fits") == std::nullopt);
  CHECK(metric_key_problem("checkpoint.recovery.node.restore_s") == std::nullopt);
  CHECK(metric_key_problem("critical_path.by_link.nvlink_tx_s") == std::nullopt);
  CHECK(metric_key_problem("checkpoint.strategy")->find("text metric") != std::string::npos);
  CHECK(metric_key_problem("throughput.token_per_s")->find("did you mean throughput.tokens_per_s") !=
        std::string::npos);
  CHECK(metric_number(nlohmann::json{{"fits", true}}, "fits") == 1.0);
  CHECK(metric_number(nlohmann::json{{"fits", false}}, "fits") == 0.0);
}

TEST_CASE("describe NAME shows one model, hardware profile or scenario as read, with units", "[cli][describe]") {
  const Result h = strata_cli("describe hardware dgx-h100");
  REQUIRE(h.code == 0);
  CHECK(h.out.find("81559 MiB") != std::string::npos);            // as written
  CHECK(h.out.find("= 8.55208e+10 B") != std::string::npos);      // as read, SI
  CHECK(h.out.find("(default)") != std::string::npos);             // what the profile leaves out
  CHECK(h.out.find("the SM clock is") == std::string::npos);       // runs at its rated power
  const Result capped = strata_cli("describe hardware grand-teton-h100");
  REQUIRE(capped.code == 0);
  CHECK(capped.out.find("at its 500 W power limit (rated 700 W) the SM clock is 0.686 of boost") != std::string::npos);
  const Result s = strata_cli("describe scenarios default");
  REQUIRE(s.code == 0);
  CHECK(s.out.find("models/gpt3-175b.json") != std::string::npos);
  CHECK(s.out.find("TP 8 · PP 8 · DP 1") != std::string::npos);
  CHECK(s.out.find("50000 h") != std::string::npos);
  const Result m = strata_cli("describe models tests/data/hf_configs/gemma-7b/config.json");
  REQUIRE(m.code == 0);
  CHECK(m.out.find("read from a HuggingFace config.json") != std::string::npos);
  CHECK(m.out.find("ignored: ") != std::string::npos);
  CHECK(strata_cli("describe hardware no-such-profile").code == 2);
  CHECK(strata_cli("describe policies interleaved").code == 2);
}

TEST_CASE("The quick form of run equals the same scenario written as a file", "[cli][quick]") {
  const std::string options =
      "--model llama-3-8b --hardware dgx-h100 --gpus 8 --tp 2 --pp 2 --zero 1 --recompute selective --seq 2048 "
      "--batch 16";
  const Result printed = strata_cli("run " + options + " --print-scenario");
  REQUIRE(printed.code == 0);
  const auto doc = nlohmann::json::parse(printed.out);
  CHECK(doc.at("model") == "llama-3-8b");
  CHECK(doc.at("parallelism").at("tp") == 2);
  CHECK(doc.at("parallelism").at("zero_stage") == 1);
  CHECK(doc.at("training").at("global_batch_size") == 16);
  CHECK(doc.at("memory").at("recompute") == "selective");

  const std::string file = temp_file("quick.json");
  std::ofstream(file) << printed.out;
  const Result quick = strata_cli("run " + options + " --executor list -q --json -");
  const Result from_file = strata_cli("run " + file + " --executor list -q --json -");
  REQUIRE(quick.code == 0);
  REQUIRE(from_file.code == 0);
  CHECK(quick.out == from_file.out);
  // --set applies on top, as for a file.
  const Result set = strata_cli("run " + options + " --set training.iterations=3 --executor list -q --json -");
  CHECK(set.code == 0);

  // Unset --seq and --batch have stated defaults: the model's context, pp micro-batches per replica.
  const Result defaults = strata_cli("run --model llama-3-8b --hardware dgx-h100 --gpus 8 --pp 2 --print-scenario");
  REQUIRE(defaults.code == 0);
  const auto d = nlohmann::json::parse(defaults.out);
  CHECK(d.at("training").at("seq_len") == 8192);
  CHECK(d.at("training").at("global_batch_size") == 8);
}

TEST_CASE("The quick form's bad values name the option, exit 2 and write nothing", "[cli][quick]") {
  const std::string out = temp_file("quick-bad.json");
  const std::string err = temp_file("quick-bad.err");
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"--model llama-3-8b --hardware dgx-h100 --gpus 8 --zero 5", "--zero 5: /parallelism/zero_stage: "},
           {"--model llama-3-8b --hardware dgx-h100 --gpus 8 --tp abc", "--tp abc: /parallelism/tp: "},
           {"--model llama-3-8b --hardware dgx-h100 --gpus 8 --recompute most", "--recompute most: /memory/recompute: "},
           {"--model llama-9b --hardware dgx-h100 --gpus 8", "--model llama-9b: /: unknown model"},
           {"--model llama-3-8b --gpus 8", "--hardware: /: missing"},
           {"default --model llama-3-8b", "the quick form builds its own scenario"},
       }) {
    INFO(c.args);
    const Result r = strata_cli(fmt::format("run {} --json {}", c.args, out), err);
    CHECK(r.code == 2);
    const std::string message = read_text(err);
    CHECK(message.find(c.expect) != std::string::npos);
    CHECK(std::count(message.begin(), message.end(), '\n') == 1);
    CHECK_FALSE(std::filesystem::exists(out));
  }
}

TEST_CASE("solve takes a boolean target such as fits, and prints units", "[cli][solve]") {
  const Result r = strata_cli("solve default --vary hardware.gpu.hbm --target 'fits>=1' --range '1 GiB:200 GiB' "
                              "--executor list --tolerance 0.05");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("smallest hardware.gpu.hbm = ") != std::string::npos);
  CHECK(r.out.find(" GiB") != std::string::npos);
  CHECK(r.out.find("true") != std::string::npos);
  const std::string err = temp_file("solve-metric.err");
  const Result bad = strata_cli("solve default --vary hardware.gpu.hbm --target 'fit>=1' --range '1 GiB:200 GiB'", err);
  CHECK(bad.code == 2);
  CHECK(read_text(err).find("did you mean fits") != std::string::npos);
  const Result text = strata_cli("solve default --vary hardware.gpu.hbm --target 'checkpoint.strategy>=1' "
                                 "--range '1 GiB:200 GiB'", err);
  CHECK(text.code == 2);
}

TEST_CASE("compare --check accepts the shipped orderings file and boolean rules", "[cli][compare]") {
  const std::string sync = "results/baseline/llama-3-70b-h100-cxl-sync.json";
  const std::string tiered = "results/baseline/llama-3-70b-h100-cxl-tiered.json";
  const Result r = strata_cli(fmt::format("compare {} {} --check results/orderings.json", sync, tiered));
  CHECK(r.code == 0);
  CHECK(r.out.find("PASS  A.checkpoint.stall_s > B.checkpoint.stall_s") != std::string::npos);
  CHECK(r.out.find("1 of 1 rule(s) hold") != std::string::npos);
  CHECK(r.out.find(" s ") != std::string::npos);  // values with units
  const std::string err = temp_file("compare.err");
  const Result swapped = strata_cli(fmt::format("compare {} {} --check results/orderings.json", tiered, sync), err);
  CHECK(swapped.code == 2);
  CHECK(read_text(err).find("swap the two reports") != std::string::npos);

  const std::string rules = temp_file("rules.json");
  std::ofstream(rules) << R"({"rules": [{"metric": "fits", "op": "==", "why": "both fit"}]})";
  CHECK(strata_cli(fmt::format("compare {} {} --check {}", sync, tiered, rules)).code == 0);
  std::ofstream(rules) << R"({"rules": [{"metric": "checkpoint.stal_s", "op": ">"}]})";
  CHECK(strata_cli(fmt::format("compare {} {} --check {}", sync, tiered, rules), err).code == 2);
  CHECK(read_text(err).find("/rules/0/metric") != std::string::npos);
}

TEST_CASE("sweep --by takes only report metrics, refused before any point runs", "[cli][sweep]") {
  const std::string out = temp_file("sweep-by");
  const std::string err = temp_file("sweep-by.err");
  const Result r = strata_cli(fmt::format("sweep scenarios/sweeps/llama-3-70b-h100-parallelism.json --out {} "
                                          "--executor list --confirm 1 --by throughput.tokens_per_second -q", out),
                              err);
  CHECK(r.code == 2);
  CHECK(read_text(err).find("--by: /: 'throughput.tokens_per_second' is not a report metric") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("advise explains its columns and prints quantities with units", "[cli][advise]") {
  const Result r = strata_cli("advise llama-2-7b-zero1-a100 --top 3 -q");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("columns: ") != std::string::npos);
  CHECK(r.out.find("DO for Megatron's distributed optimizer") != std::string::npos);
  CHECK(r.out.find(" GiB ") != std::string::npos);
  CHECK(r.out.find(" s ") != std::string::npos);
  static const std::regex negative_zero(R"((^|[^0-9.])-0(\.0*)?([^0-9.]|$))");
  CHECK_FALSE(std::regex_search(r.out, negative_zero));
}

TEST_CASE("No quantity prints as negative zero", "[cli][units]") {
  CHECK(format_seconds(-4e-11) == "0.0 us");
  CHECK(format_seconds(-2e-6) == "-2.0 us");
  CHECK(format_bytes(-0.0) == "0 B");
  CHECK(format_count(-0.2) == "0");
  CHECK(unsigned_zero("-0.00%") == "0.00%");
  CHECK(unsigned_zero("-0.01%") == "-0.01%");
  CHECK(unsigned_zero("0-0") == "0-0");
  CHECK(format_metric(MetricUnit::fraction, -1e-9) == "0.00 %");
  CHECK(format_quantity(53.8822e9, Dimension::bytes_per_second) == "53.88 GB/s");
}

}  // namespace strata::test
