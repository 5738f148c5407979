#include "tools/cli/quick_scenario.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "sim/config/model_spec.hpp"
#include "sim/core/diagnostics.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/params.hpp"

namespace strata::cli {

namespace {

using nlohmann::json;

struct QuickOption {
  const char* name;
  const char* path;  ///< dotted scenario path
  const char* doc;
  const char* value = "N";  ///< what --help shows the value as
};

// The scenario fields a quick question needs most; any other goes through --set PATH=VALUE.
constexpr QuickOption kOptions[] = {
    {"--model", "model", "quick form: model name or config.json path (instead of a scenario file)", "NAME"},
    {"--hardware", "hardware", "quick form: hardware profile name or path", "NAME"},
    {"--gpus", "gpus", "quick form: GPUs in the cluster (or --nodes)"},
    {"--nodes", "nodes", "quick form: whole nodes of the hardware profile"},
    {"--tp", "parallelism.tp", "quick form: tensor-parallel degree (default 1)"},
    {"--pp", "parallelism.pp", "quick form: pipeline stages (default 1)"},
    {"--dp", "parallelism.dp", "quick form: data-parallel replicas (default gpus / (tp·cp·pp))"},
    {"--cp", "parallelism.cp", "quick form: context-parallel degree, the sequence split over cp ranks (default 1)"},
    {"--sp", "parallelism.sequence_parallel", "quick form: sequence parallelism, true or false (default false)", "BOOL"},
    {"--schedule", "parallelism.schedule", "quick form: pipeline schedule: 1f1b (default), gpipe, interleaved", "NAME"},
    {"--virtual-stages", "parallelism.virtual_stages", "quick form: chunks per stage with --schedule interleaved"},
    {"--zero", "parallelism.zero_stage", "quick form: ZeRO stage 0-3 (default 0)"},
    {"--recompute", "memory.recompute", "quick form: none (default), selective or full", "NAME"},
    {"--seq", "training.seq_len", "quick form: sequence length (default: the model's max_position_embeddings)"},
    {"--batch", "training.global_batch_size",
     "quick form: global batch in sequences (default: pp micro-batches per replica)"},
    {"--micro-batch", "training.micro_batch_size", "quick form: micro-batch size (default 1)"},
    {"--precision", "training.precision", "quick form: compute precision (default bf16)", "NAME"},
    {"--iterations", "training.iterations", "quick form: simulated iterations (default 2)"},
};

/// "4" → 4, "true" → true, "bf16" → "bf16": as --set reads a value.
json option_value(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error&) {
    return json(text);
  }
}

std::string pointer_of(const std::string& dotted) {
  std::string p = "/" + dotted;
  std::replace(p.begin(), p.end(), '.', '/');
  return p;
}

void set_at(json& doc, const std::string& dotted, json value) {
  json* node = &doc;
  std::size_t start = 0;
  while (true) {
    const auto dot = dotted.find('.', start);
    node = &(*node)[dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start)];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  *node = std::move(value);
}

/// A model or hardware name (or path) that resolves, or an error naming the option.
std::filesystem::path resolve(const FolderCatalog& catalog, const std::string& option, const std::string& kind,
                              const std::string& ref) {
  const bool looks_like_path = ref.find('/') != std::string::npos || ref.ends_with(".json");
  if (looks_like_path && std::filesystem::exists(ref)) return ref;
  if (!looks_like_path)
    if (auto found = catalog.find(kind, ref)) return *found;
  std::string names;
  for (const auto& n : catalog.list(kind)) names += (names.empty() ? "" : ", ") + n;
  throw InputError({Diagnostic{option + " " + ref, "", looks_like_path
      ? fmt::format("{} file not found", kind)
      : fmt::format("unknown {} (expected one of: {})", kind, names)}});
}

}  // namespace

void add_quick_scenario_options(CLI::App& run, QuickScenarioOptions& options) {
  for (const QuickOption& o : kOptions) {
    const std::string name = o.name;
    run.add_option_function<std::string>(name, [&options, name](const std::string& v) { options.given[name] = v; },
                                         o.doc)
        ->type_name(o.value)
        ->group("Quick form (no scenario file)");
  }
  run.add_flag("--print-scenario", options.print,
               "quick form: print the scenario document the options make, and do not run it")
      ->group("Quick form (no scenario file)");
}

QuickScenario build_quick_scenario(const FolderCatalog& catalog, const QuickScenarioOptions& options) {
  const auto& g = options.given;
  auto required = [&](const char* option, const char* what) {
    if (!g.count(option))
      throw InputError({Diagnostic{option, "", fmt::format("missing: the quick form needs {} (expected --model M "
                                                           "--hardware H --gpus N, or a scenario file)", what)}});
  };
  required("--model", "a model");
  required("--hardware", "a hardware profile");
  if (!g.count("--gpus") && !g.count("--nodes")) required("--gpus", "a cluster size (--gpus or --nodes)");

  QuickScenario q;
  const std::string model = g.at("--model"), hardware = g.at("--hardware");
  const std::filesystem::path model_file = resolve(catalog, "--model", "model", model);
  resolve(catalog, "--hardware", "hardware", hardware);
  const std::string size = g.count("--gpus") ? g.at("--gpus") + " GPUs" : g.at("--nodes") + " nodes";
  q.doc = {{"name", fmt::format("{} on {} of {}", model, size, hardware)},
           {"description", "built by strata run's quick form"}};
  for (const QuickOption& o : kOptions) {
    auto it = g.find(o.name);
    if (it == g.end()) continue;
    // Model and hardware stay strings: a name that happens to parse as JSON is still a name.
    json value = std::string(o.path) == "model" || std::string(o.path) == "hardware" ? json(it->second)
                                                                                      : option_value(it->second);
    set_at(q.doc, o.path, std::move(value));
    q.labels[pointer_of(o.path)] = fmt::format("{} {}", o.name, it->second);
  }
  if (!g.count("--seq")) {
    // The context the model was trained for is the length its file states.
    Diagnostics ignored;
    const ModelSpec m = parse_model(read_json_file(model_file, model_file.string()), "", ignored);
    if (m.max_position_embeddings > 0) {
      set_at(q.doc, "training.seq_len", m.max_position_embeddings);
      q.labels["/training/seq_len"] = "--seq (default: the model's max_position_embeddings)";
    }
  }
  if (!g.count("--batch")) {
    auto whole = [&](const char* option, std::int64_t fallback) {
      auto it = g.find(option);
      if (it == g.end()) return fallback;
      const json v = option_value(it->second);
      return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
    };
    const std::int64_t tp = whole("--tp", 1), pp = whole("--pp", 1), micro = whole("--micro-batch", 1);
    const std::int64_t cp = whole("--cp", 1);
    std::int64_t dp = whole("--dp", 0);
    if (dp <= 0 && g.count("--gpus") && tp > 0 && pp > 0 && cp > 0) dp = whole("--gpus", 0) / (tp * cp * pp);
    if (dp > 0 && pp > 0 && micro > 0) {
      set_at(q.doc, "training.global_batch_size", micro * dp * pp);
      q.labels["/training/global_batch_size"] = "--batch (default: pp micro-batches per replica)";
    }
  }
  return q;
}

ComposedScenario compose_quick_scenario(const QuickScenario& quick, const std::vector<Override>& overrides,
                                        const FolderCatalog& catalog) {
  std::error_code ec;
  ComposedScenario composed =
      compose_scenario(quick.doc, "strata run (quick form)", std::filesystem::current_path(ec), overrides, catalog);
  // Each value an option set is blamed on the option, unless a --set changed it afterwards (its
  // label, given inside compose_scenario, then stands).
  for (const auto& [pointer, label] : quick.labels) {
    if (pointer == "/model" || pointer == "/hardware") continue;  // their documents' files name them
    bool overridden = false;
    for (const Override& o : overrides) {
      const std::string set = pointer_of(o.path);
      overridden = overridden || pointer == set || pointer.starts_with(set + "/") || set.starts_with(pointer + "/");
    }
    if (!overridden) composed.sources.label_prefix(pointer, label);
  }
  return composed;
}

}  // namespace strata::cli
