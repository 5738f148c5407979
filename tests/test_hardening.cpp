// Hardening: every input of the hardening issue, end to end through the strata binary, with the exit
// code it must have, the line it must print and the output it must not leave behind; output paths
// that are FIFOs, symlinks and directories; guards against runs that would exhaust memory or time.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "sim/core/params.hpp"
#include "sim/core/units.hpp"
#include "support.hpp"

using strata::test::Result;
using strata::test::strata_cli;
using strata::test::temp_file;

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count_lines(const std::string& text) { return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')); }

struct Refusal {
  std::string args;      ///< after `strata`
  int code;              ///< the exit code it must have
  std::string expected;  ///< a line (or the start of one) it must print on stderr
};

/// Runs each case with a --json output that must not appear, and checks the exit code and message.
void check_refusals(const std::vector<Refusal>& cases) {
  for (const Refusal& c : cases) {
    const std::string out = temp_file("refused.json"), err = temp_file("refused.err");
    const bool is_run = c.args.starts_with("run ") && c.args.find("--json") == std::string::npos;
    const Result r = strata_cli(c.args + (is_run ? " -q --json " + out : ""), err);
    const std::string text = read_text(err);
    INFO(c.args << "\nstderr: " << text);
    CHECK(r.code == c.code);
    CHECK(text.find(c.expected) != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(out));
    std::filesystem::remove(err);
  }
}

}  // namespace

TEST_CASE("Units: a bare number where a dimension is expected is refused with a spelling", "[hardening][units]") {
  check_refusals({
      {"run default --set failures.gpu_mtbf=50000", 2,
       "--set failures.gpu_mtbf=50000: /failures/gpu_mtbf: 50000 has no unit; write \"50000 h\" or \"50000 s\""},
      {"run default --set hardware.gpu.hbm=80", 2,
       "--set hardware.gpu.hbm=80: /hardware/gpu/hbm: 80 has no unit; write \"80 GiB\" or \"80 B\""},
      {"run default --set 'hardware.object_store.bandwidth=\"25\"'", 2, "25 has no unit"},
      {"solve default --vary hardware.object_store.bandwidth --target 'checkpoint.overhead_fraction<=0.02' "
       "--range '10:1000 GB/s' --executor list",
       2, "--range: /: '10': 10 has no unit; write \"10 GB/s\" or \"10 Gb/s\""},
      {"run default --set 'hardware.gpu.hbm=1e300 EB'", 2, "/hardware/gpu/hbm: invalid quantity: number too large"},
  });
  // Zero is zero in every unit, and common spellings parse.
  const Result ok = strata_cli("run default --executor list -q --json - --set failures.gpu_mtbf='50000 hours' "
                               "--set failures.restart_time='10 minutes' --set failures.horizon='1 day' "
                               "--set hardware.nic.bandwidth='400 Gbit/s' --set hardware.nvlink.latency=0 "
                               "--set hardware.object_store.bandwidth='100 GBps'");
  const Result same = strata_cli("run default --executor list -q --json - --set failures.gpu_mtbf='180000000 s' "
                                 "--set failures.restart_time='600 s' --set failures.horizon='86400 s' "
                                 "--set hardware.nic.bandwidth='50 GB/s' --set hardware.nvlink.latency=0 "
                                 "--set hardware.object_store.bandwidth='100 GB/s'");
  REQUIRE(ok.code == 0);
  REQUIRE(same.code == 0);
  CHECK(nlohmann::json::parse(ok.out) == nlohmann::json::parse(same.out));
  std::string why;
  using strata::Dimension;
  for (const char* text : {"50000 hr", "50000 hrs", "3 hours", "2 min", "5 minutes", "7 sec", "1 d", "2 days"})
    CHECK(strata::parse_quantity(text, Dimension::seconds, &why));
  CHECK(strata::parse_quantity("800 Gbit/s", Dimension::bytes_per_second, &why).value() == Approx(100e9));
  CHECK(strata::parse_quantity("800 Gbps", Dimension::bytes_per_second, &why).value() == Approx(100e9));
  CHECK(strata::parse_quantity("25 GBps", Dimension::bytes_per_second, &why).value() == Approx(25e9));
  CHECK(strata::parse_quantity("1 EiB", Dimension::bytes, &why).value() == Approx(1152921504606846976.0));
  CHECK_FALSE(strata::parse_quantity("50000", Dimension::seconds, &why));
  CHECK(why == "50000 has no unit; write \"50000 h\" or \"50000 s\"");
  CHECK(strata::parse_quantity("0", Dimension::seconds, &why).value() == 0.0);
}

TEST_CASE("Errors name their cause: the --set, every divisibility constraint, the kind of file", "[hardening]") {
  check_refusals({
      {"run default --set paralelism.tp=2", 2, "--set paralelism.tp=2: /paralelism: unknown key"},
      {"run default --set parallelism.tp=3", 2, "--set parallelism.tp=3: /parallelism/tp: tp·pp·dp = 3·8·1"},
      {"run default --set gpus=60", 2, "--set gpus=60: /gpus: tp·pp·dp = 8·8·1 = 64 does not equal gpus=60"},
      {"run models/llama-3-8b.json", 2,
       "models/llama-3-8b.json: /: is a model configuration, not a scenario (expected a scenario; use the model in "
       "one:"},
      {"run scenarios/sweeps/gpt3-175b-h100-checkpoint.json", 2, "is a sweep file, not a scenario"},
      {"run hardware_profiles/dgx-h100.json", 2, "is a hardware profile, not a scenario"},
  });
  // Every violated constraint, each naming the --set.
  const std::string err = temp_file("tp3.err");
  CHECK(strata_cli("run llama-3-8b-zero3-h100 -q --set parallelism.tp=3", err).code == 2);
  const std::string text = read_text(err);
  CHECK(text.find("--set parallelism.tp=3: /parallelism/tp: 3 does not divide num_attention_heads=32\n") !=
        std::string::npos);
  CHECK(text.find("--set parallelism.tp=3: /parallelism/tp: 3 does not divide num_key_value_heads=8\n") !=
        std::string::npos);
  CHECK(text.find("--set parallelism.tp=3: /parallelism/tp: 3 does not divide intermediate_size=14336\n") !=
        std::string::npos);
  CHECK(text.find("does not divide gpus=8") != std::string::npos);
  // A model config given as a scenario is one line, not one per key.
  const std::string one = temp_file("model-as-scenario.err");
  CHECK(strata_cli("run models/llama-3-8b.json", one).code == 2);
  CHECK(count_lines(read_text(one)) == 1);
}

TEST_CASE("Numbers that overflow, wrap or divide by zero are input errors", "[hardening]") {
  const std::string big = temp_file("big.json");
  std::ofstream(big) << R"({"name": "x", "model": "llama-3-8b", "hardware": "dgx-h100", "gpus": 1e400,
    "training": {"seq_len": 1024, "global_batch_size": 8}})";
  const std::string dup = temp_file("dup.json");
  std::ofstream(dup) << R"({"name": "x", "model": "llama-3-8b", "hardware": "dgx-h100", "gpus": 8, "gpus": 16,
    "training": {"seq_len": 1024, "global_batch_size": 8}})";
  check_refusals({
      {"run " + big, 2, big + ": /: invalid JSON at line 1, column 74: number too large for a double"},
      {"run " + dup, 2, dup + ": /gpus: duplicate key (expected each key once in an object)"},
      {"run default --set checkpoint.interval_iterations=18446744073709551615", 2,
       "/checkpoint/interval_iterations: out of range (got 18446744073709551615, expected an integer in [1, "
       "1000000000])"},
      {"run default --set failures.seed=18446744073709551615", 2, "/failures/seed: out of range"},
      {"run default --set seed=9223372036854775808", 2, "/seed: out of range"},
      {"run default --set parallelism.tp=1e400", 2, "/parallelism/tp: wrong type"},
      {"run llama-3-70b-h100-cxl-async --set hardware.cxl.bandwidth=0", 2,
       "/hardware/cxl/bandwidth: must be greater than 0 when cxl.capacity is set"},
      {"run default --set hardware.local_ssd.read_bandwidth=0", 2,
       "/hardware/local_ssd/read_bandwidth: must be greater than 0 when local_ssd.count > 0"},
      {"run default --set hardware.gpu.peak_tflops.bf16=0", 2, "/hardware/gpu/peak_tflops/bf16: out of range"},
      {"run default --set hardware.nic.bandwidth=0", 2, "/hardware/nic/bandwidth: must be greater than 0"},
      // An NVSwitch that reduces without NVLink to reach it (dgx-h100 states nvlink.sharp).
      {"run llama-3-8b-zero3-h100 --set hardware.nvlink.bandwidth=0", 2,
       "/hardware/nvlink/bandwidth: must be greater than 0 when nvlink.sharp is true"},
  });
  // A 60,000-deep --set value is refused, not a stack overflow.
  const std::string deep(60000, '[');
  check_refusals({{"run default --set 'parallelism.tp=" + deep + std::string(60000, ']') + "'", 2,
                   "value nested too deep (got depth 60000, expected at most 64)"}});
}

TEST_CASE("Derived values stay in their range: first-order goodput at a 1 h GPU MTBF", "[hardening]") {
  const Result r = strata_cli("run default --executor list -q --json - --set failures.gpu_mtbf='1 h'");
  REQUIRE(r.code == 0);
  const auto report = nlohmann::json::parse(r.out);
  const double g = report["run"]["first_order_goodput"].get<double>();
  CHECK(g >= 0.0);
  CHECK(g <= 1.0);
  CHECK(report["run"]["goodput"].get<double>() >= 0.0);
}

TEST_CASE("Guards: sizes that would exhaust memory or time are refused before they run", "[hardening][guards]") {
  const std::string never = temp_file("never-written.json");
  check_refusals({
      {"run default --set training.iterations=1000000", 2,
       "--set training.iterations=1000000: /training/iterations: the simulation would hold about"},
      {"run default --set training.global_batch_size=1000000", 2, "/training/global_batch_size: the simulation would"},
      {"run llama-3.1-405b-llama3-16k --no-fold", 2, "drop --no-fold, or raise --max-tasks"},
      {"run megatron-1t-3072-a100 --trace " + never, 2, "raise --max-trace-tasks"},
      {"run default --executor list --set failures.runs=100000 --set 'failures.horizon=10000 d'", 2,
       "/failures/runs: the run-level simulation would take about"},
  });
  CHECK_FALSE(std::filesystem::exists(never));
}

TEST_CASE("Output paths: directories refused, FIFOs written through, symlinks keep their link", "[hardening][output]") {
  const std::string dir = temp_file("out-dir");
  std::filesystem::create_directories(dir);
  check_refusals({
      {"run default --executor list --json " + dir, 2, "--json " + dir + ": /: is a directory (expected a file path)"},
      {"run default --executor list --trace " + dir + "/missing/trace.json", 2, "missing cannot be used"},
  });
  // A path under a regular file: the system's reason, exit 2, and the other output not written.
  const std::string file = temp_file("plain-file");
  std::ofstream(file) << "x";
  const std::string report = temp_file("not-written.json"), err = temp_file("enotdir.err");
  CHECK(strata_cli("run default --executor list -q --json " + report + " --trace " + file + "/trace.json", err).code ==
        2);
  CHECK(read_text(err).find("Not a directory") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(report));

  // A symlink: its target is replaced, the link stays a link.
  const std::string target = temp_file("target.json"), link = temp_file("link.json");
  std::ofstream(target) << "old";
  std::filesystem::create_symlink(target, link);
  REQUIRE(strata_cli("run default --executor list -q --json " + link).code == 0);
  CHECK(std::filesystem::is_symlink(link));
  CHECK(nlohmann::json::parse(read_text(target))["schema"] == "strata.report/v1");

  // A FIFO: written through (a reader gets the report), still a FIFO afterwards.
  const std::string fifo = temp_file("report.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] { received = read_text(fifo); });
  const Result r = strata_cli("run default --executor list -q --json " + fifo);
  reader.join();
  CHECK(r.code == 0);
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(nlohmann::json::parse(received)["schema"] == "strata.report/v1");
  // No temporary file is left beside the outputs.
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path()))
    CHECK(entry.path().filename().string().find(std::filesystem::path(link).filename().string() + ".tmp") ==
          std::string::npos);
  for (const auto& p : {dir, file, target, link, fifo}) std::filesystem::remove_all(p);
}

TEST_CASE("Files that are not what they should be: no content echoed, reports checked", "[hardening]") {
  const std::string secret = temp_file("secret.json");
  std::ofstream(secret) << "topsecret-token-42 and more";
  const std::string err = temp_file("secret.err");
  CHECK(strata_cli("run default -q --set model=" + secret, err).code == 2);
  CHECK(read_text(err).find("topsecret") == std::string::npos);
  const std::string array = temp_file("array.json");
  std::ofstream(array) << "[1, 2]";
  check_refusals({{"compare " + array + " " + array, 2, "not a Strata report"}});
}

TEST_CASE("Sweep files: strict shards, damaged lines, rows outside the sweep, one sweep per folder",
          "[hardening][sweep]") {
  for (const char* shard : {"1/2/3", "2/2x", "'1 /2'", "0/2", "3/2", "-1/2"})
    check_refusals({{fmt::format("sweep scenarios/sweeps/llama-2-7b-rtx4090-offload.json --out {} --shard {}",
                                 temp_file("shard"), shard),
                     2, "--shard: /: "}});

  // A sweep whose axes multiply to 2^64 (16 axes of 16 values) is refused, not wrapped to 0.
  nlohmann::json huge = {{"base", "default"}, {"grid", nlohmann::json::object()}};
  const char* axes[] = {"gpus", "seed", "training.seq_len", "training.micro_batch_size", "training.global_batch_size",
                        "training.iterations", "parallelism.tp", "parallelism.pp", "parallelism.dp",
                        "parallelism.virtual_stages", "memory.offload.prefetch_layers",
                        "checkpoint.interval_iterations", "checkpoint.chunks", "checkpoint.replicas",
                        "checkpoint.persist_every", "failures.runs"};
  for (const char* a : axes) huge["grid"][a] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const std::string huge_file = temp_file("huge-sweep.json");
  std::ofstream(huge_file) << huge.dump();
  check_refusals({{"sweep " + huge_file + " --out " + temp_file("huge-out"), 2, "over 1000000 points"}});

  // Run a small sweep, damage a middle line and add a row for a point the sweep does not have.
  const std::string out = temp_file("sweep-damage");
  const std::string sweep = "sweep scenarios/sweeps/llama-2-7b-rtx4090-offload.json --executor list -q --out " + out;
  REQUIRE(strata_cli(sweep).code == 0);
  const std::string jsonl = out + "/results.jsonl";
  const std::string whole = read_text(jsonl);
  std::vector<std::string> lines;
  std::stringstream in(whole);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  REQUIRE(lines.size() >= 3);
  lines[1] = lines[1].substr(0, lines[1].size() / 2);  // damaged in the middle
  auto stray = nlohmann::json::parse(lines[0]);
  stray["point"] = 100000;
  lines.push_back(stray.dump());
  {
    std::ofstream rewrite(jsonl);
    for (const auto& l : lines) rewrite << l << "\n";
  }
  // Merging refuses both, naming the line.
  check_refusals({{"sweep --merge " + out + " --out " + temp_file("merged"), 2, jsonl + ":2: /: damaged line"}});
  // Resuming reports them with their line numbers, leaves them out and reruns the damaged point.
  const std::string err = temp_file("resume.err");
  REQUIRE(strata_cli(sweep, err).code == 0);
  const std::string warnings = read_text(err);
  CHECK(warnings.find(jsonl + ":2: damaged line") != std::string::npos);
  CHECK(warnings.find("a row for point 100000, which the sweep does not have") != std::string::npos);
  CHECK(read_text(jsonl) == whole);

  // A second sweep into a folder another sweep holds is refused.
  const int lock = ::open((out + "/.lock").c_str(), O_RDWR);
  REQUIRE(lock >= 0);
  struct flock held {};
  held.l_type = F_WRLCK;
  held.l_whence = SEEK_SET;
  REQUIRE(::fcntl(lock, F_SETLK, &held) == 0);
  check_refusals({{sweep, 2, "another strata sweep is writing into this folder"}});
  ::close(lock);
  std::filesystem::remove_all(out);
}

TEST_CASE("solve: a point that does not fit meets no target; an invalid end is named", "[hardening][solve]") {
  // The smallest HBM with any throughput at all must still hold the model.
  const Result r = strata_cli("solve default --vary hardware.gpu.hbm --target 'throughput.tokens_per_s>=1' "
                              "--range '1 GiB:200 GiB' --executor list");
  REQUIRE(r.code == 0);
  const Result need = strata_cli("run default --executor list -q --json -");
  const double peak = nlohmann::json::parse(need.out)["memory"]["gpu_peak_bytes"].get<double>();
  const auto at = r.out.find("smallest hardware.gpu.hbm = ");
  REQUIRE(at != std::string::npos);
  // "= 45.20 GiB (4.85e+10 B)": the value with its unit, then in SI.
  const auto si = r.out.find('(', at);
  REQUIRE(si != std::string::npos);
  CHECK(std::stod(r.out.substr(si + 1)) >= peak);
  // An end of the range where the scenario is invalid says why.
  const std::string err = temp_file("solve.err");
  const Result bad = strata_cli("solve default --vary training.global_batch_size --target 'throughput.tokens_per_s>=1' "
                                "--range '63:65' --find max --executor list",
                                err);
  CHECK(bad.out.find("is invalid: ") != std::string::npos);
}

TEST_CASE("Internal errors are not user errors: a getter for an undeclared key throws logic_error", "[hardening]") {
  using namespace strata;
  const ParamTable table = {{.key = "known", .kind = ParamKind::integer, .default_value = 1, .doc = "", .min = 0, .max = 10}};
  Diagnostics diag;
  const nlohmann::json doc = {{"known", 2}};
  ObjectReader reader(doc, "", table, diag);
  CHECK(reader.integer("known") == 2);
  CHECK_THROWS_AS(reader.integer("undeclared"), std::logic_error);
  CHECK(diag.empty());
}
