// libFuzzer target for the scenario loader: the JSON document, its model and hardware references,
// and `--set PATH=VALUE` overrides, composed and validated as `strata run` does before simulating.
// Built three times (see CMakeLists.txt) with STRATA_FUZZ_KIND telling what the document is:
//   scenario  - a scenario file, as `strata run FILE` reads it;
//   model     - a model document, inlined into scenarios/default.json (as `"model": {...}` is);
//   hardware  - a hardware profile, inlined the same way.
//
// Input: the document text, then optionally a line "%%" and one override per line:
//   {"model": "gpt3-175b", ...}
//   %%
//   parallelism.tp=4
//
// InputError is the expected answer to a bad input; any other exception, a crash, UB or a leak is
// a finding (fuzz_main.cpp). Nothing is simulated and nothing is written.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/spdlog.h>

#include "sim/config/folder_catalog.hpp"
#include "sim/config/scenario_loader.hpp"
#include "sim/config/scenario_spec.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/json_file.hpp"
#include "fuzz/harness.hpp"

namespace {

enum class Kind { scenario, model, hardware };
constexpr Kind kKind = Kind::STRATA_FUZZ_KIND;

// More overrides add nothing the fuzzer cannot reach with a few, and each costs a document walk.
constexpr std::size_t kMaxOverrides = 8;

const strata::FolderCatalog& catalog() {
  static const strata::FolderCatalog c(STRATA_SOURCE_DIR);
  return c;
}

// A reference that the loader would treat as a file path. The harness stays hermetic (the same
// input gives the same result on every machine, and never reads /dev or /proc), so such inputs
// are skipped; names are resolved against the shipped folders.
bool looks_like_path(std::string_view text) {
  return text.find('/') != std::string_view::npos || text.find('\\') != std::string_view::npos ||
         text.find("json") != std::string_view::npos;
}

bool has_path_reference(const nlohmann::json& doc) {
  if (!doc.is_object()) return false;
  for (const char* key : {"model", "hardware"}) {
    auto it = doc.find(key);
    if (it != doc.end() && it->is_string() && looks_like_path(it->get<std::string>())) return true;
  }
  return false;
}

}  // namespace

void strata_fuzz_input(const std::string& input) {
  std::string text = input;
  std::vector<std::string> set_lines;
  if (auto sep = input.find("\n%%\n"); sep != std::string::npos) {
    text = input.substr(0, sep);
    std::string rest = input.substr(sep + 4);
    std::size_t start = 0;
    while (start <= rest.size() && set_lines.size() < kMaxOverrides) {
      auto end = rest.find('\n', start);
      std::string line = rest.substr(start, end == std::string::npos ? std::string::npos : end - start);
      if (!line.empty()) set_lines.push_back(line);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }

  // The document is read as the CLI reads files: size and depth limits, errors with a position.
  nlohmann::json doc = strata::parse_json_text(text, "fuzz.json");
  if (kKind != Kind::scenario) {
    static const nlohmann::json base =
        strata::read_json_file(catalog().find("scenario", "default").value(), "default.json");
    nlohmann::json scenario = base;
    scenario[kKind == Kind::model ? "model" : "hardware"] = std::move(doc);
    doc = std::move(scenario);
  }
  if (has_path_reference(doc)) return;

  std::vector<strata::Override> overrides;
  for (const auto& line : set_lines) {
    strata::Override o = strata::parse_override(line);
    if ((o.path == "model" || o.path == "hardware") && looks_like_path(o.value)) return;
    overrides.push_back(std::move(o));
  }
  strata::ComposedScenario composed =
      strata::compose_scenario(std::move(doc), "fuzz.json", STRATA_SOURCE_DIR "/scenarios", overrides, catalog());
  const strata::Scenario sc = strata::parse_scenario(composed.doc, composed.sources);

  // Every integer parameter of a scenario has a minimum of 0 or more, so a negative count that
  // passed validation was wrapped on the way in (e.g. 18446744073709551615 read as -1).
  const std::pair<const char*, std::int64_t> counts[] = {
      {"gpus", sc.gpus},
      {"nodes", sc.nodes},
      {"seed", sc.seed},
      {"training.seq_len", sc.training.seq_len},
      {"training.micro_batch_size", sc.training.micro_batch_size},
      {"training.global_batch_size", sc.training.global_batch_size},
      {"training.iterations", sc.training.iterations},
      {"parallelism.tp", sc.parallelism.tp},
      {"parallelism.pp", sc.parallelism.pp},
      {"parallelism.dp", sc.parallelism.dp},
      {"parallelism.virtual_stages", sc.parallelism.virtual_stages},
      {"parallelism.zero_stage", sc.parallelism.zero_stage},
      {"memory.offload.prefetch_layers", sc.memory.offload.prefetch_layers},
      {"checkpoint.interval_iterations", sc.checkpoint.interval_iterations},
      {"checkpoint.chunks", strata::behaviour(sc.checkpoint.strategy).chunks},
      {"checkpoint.replicas", strata::behaviour(sc.checkpoint.strategy).peer_replicas},
      {"checkpoint.persist_every", strata::behaviour(sc.checkpoint.strategy).persist_every},
      {"failures.seed", sc.failures.seed},
      {"failures.runs", sc.failures.runs},
      {"data.requests_per_sample", sc.data.requests_per_sample},
      {"data.prefetch_iterations", sc.data.prefetch_iterations},
  };
  for (const auto& [name, value] : counts) {
    if (value < 0) {
      std::fprintf(stderr, "validated scenario has %s = %lld\n", name, static_cast<long long>(value));
      std::abort();
    }
  }
}
