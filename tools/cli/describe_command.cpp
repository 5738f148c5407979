#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "sim/config/hardware_spec.hpp"
#include "sim/config/model_spec.hpp"
#include "sim/config/policy_catalog.hpp"
#include "sim/config/scenario_spec.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/units.hpp"
#include "sim/graph/compute_graph.hpp"
#include "sim/report/report.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/describe_documents.hpp"

namespace strata::cli {

namespace {

void print_table(const std::string& section, const ParamTable& table) {
  std::printf("  %s\n", section.empty() ? "(top level)" : section.c_str());
  for (const auto& p : table)
    std::printf("    %-24s %-22s %s (%s)\n", p.key.c_str(), default_text(p).c_str(), p.doc.c_str(),
                expected_text(p).c_str());
}

void describe_models(const FolderCatalog& catalog) {
  std::printf("%-18s %10s %10s %7s %6s %6s  %s\n", "model", "parameters", "active", "hidden", "layers", "heads",
              "description");
  for (const auto& name : catalog.list("model")) {
    try {
      auto doc = read_json_file(*catalog.find("model", name), name);
      Diagnostics diag;
      ModelSpec m = parse_model(doc, "", diag);
      if (!diag.empty()) throw InputError(diag.items());
      GraphShape shape{.seq_len = std::max<std::int64_t>(1, m.max_position_embeddings)};
      const ComputeGraph graph = build_compute_graph(m, shape);
      // A HuggingFace config has no description: its model_type says what it is.
      std::string desc = m.format == "huggingface" ? fmt::format("HuggingFace config.json ({})", m.model_type)
                                                   : doc.value("description", std::string{});
      std::printf("%-18s %10s %10s %7lld %6lld %6lld  %s\n", name.c_str(),
                  format_count(total_parameters(graph)).c_str(), format_count(active_parameters(graph)).c_str(),
                  static_cast<long long>(m.hidden_size), static_cast<long long>(m.num_layers),
                  static_cast<long long>(m.num_heads), desc.c_str());
    } catch (const std::exception& e) {
      std::printf("%-18s (invalid: %s)\n", name.c_str(), e.what());
    }
  }
}

/// One model in detail: how its document was read and its parameters by kind.
void describe_model(const FolderCatalog& catalog, const std::string& name) {
  std::filesystem::path path = name;
  bool looks_like_path = name.find('/') != std::string::npos || name.ends_with(".json");
  std::optional<std::filesystem::path> found =
      looks_like_path ? (std::filesystem::exists(path) ? std::optional(path) : std::nullopt) : catalog.find("model", name);
  if (!found) {
    std::string names;
    for (const auto& n : catalog.list("model")) names += (names.empty() ? "" : ", ") + n;
    throw InputError({Diagnostic{name, "", looks_like_path ? "model file not found"
                                                           : fmt::format("unknown model (expected one of: {})", names)}});
  }
  std::string shown = catalog.display(*found);
  auto doc = read_json_file(*found, shown);
  SourceMap sources(shown);
  Diagnostics diag(&sources);
  ModelSpec m = parse_model(doc, "", diag);
  diag.throw_if_any();
  GraphShape shape{.seq_len = std::max<std::int64_t>(1, m.max_position_embeddings)};
  ComputeGraph graph = build_compute_graph(m, shape);
  nlohmann::json d = model_description(m, parameter_breakdown(graph));
  if (m.name.empty() || m.name == shown) std::printf("%s\n", shown.c_str());
  else std::printf("%s (%s)\n", m.name.c_str(), shown.c_str());
  // Wide enough for the longest key (shared_expert_intermediate_size).
  std::printf("  %-32s %s\n", "parameters", format_count(total_parameters(graph)).c_str());
  std::printf("  %-32s %s\n", "active_params", format_count(active_parameters(graph)).c_str());
  for (const auto& [key, value] : d.items()) {
    if (key == "parameters_by_kind" || key == "active_params") continue;
    std::printf("  %-32s %s\n", key.c_str(), value.is_string() ? value.get<std::string>().c_str() : value.dump().c_str());
  }
  std::printf("  parameters by kind\n");
  for (const char* kind : {"embedding", "attention", "mlp", "norms", "lm_head"})
    std::printf("    %-20s %s\n", kind, format_count(d["parameters_by_kind"][kind].get<double>()).c_str());
  describe_model_reading(doc);
}

void describe_hardware(const FolderCatalog& catalog) {
  std::printf("%-18s %5s %10s %10s  %s\n", "hardware", "GPUs", "HBM", "bf16", "description");
  for (const auto& name : catalog.list("hardware")) {
    try {
      auto doc = read_json_file(*catalog.find("hardware", name), name);
      Diagnostics diag;
      HardwareSpec h = parse_hardware(doc, "", diag);
      if (!diag.empty()) throw InputError(diag.items());
      auto bf16 = h.gpu.peak.find(Precision::bf16);
      std::printf("%-18s %5lld %10s %10s  %s\n", name.c_str(), static_cast<long long>(h.gpus_per_node),
                  format_bytes(h.gpu.hbm.value).c_str(),
                  bf16 == h.gpu.peak.end() ? "-" : fmt::format("{:.0f} TF", bf16->second.value / 1e12).c_str(),
                  h.description.c_str());
    } catch (const std::exception& e) {
      std::printf("%-18s (invalid: %s)\n", name.c_str(), e.what());
    }
  }
  std::printf("\nProfile keys:\n");
  for (const auto& [section, table] : hardware_param_tables()) print_table(section, *table);
}

void describe_policies() {
  for (const auto& cat : policy_catalog().categories()) {
    std::printf("%s  (%s): %s\n", cat.name.c_str(), cat.scenario_key.c_str(), cat.doc.c_str());
    for (const auto& p : cat.policies) {
      std::printf("  %-14s %s\n", p.name.c_str(), p.doc.c_str());
      for (const auto& param : p.params)
        std::printf("      %-20s %s (default %s)\n", param.key.c_str(), param.doc.c_str(), default_text(param).c_str());
    }
  }
  std::printf("\nScenario keys:\n");
  for (const auto& [section, table] : scenario_param_tables()) print_table(section, *table);
}

}  // namespace

int describe_command(const FolderCatalog& catalog, const std::string& what, const std::string& name) {
  if (what == "metrics") {
    if (!name.empty())
      throw InputError({Diagnostic{"describe metrics " + name, "", "takes no name (expected strata describe metrics)"}});
    describe_metrics();
    return 0;
  }
  if (!name.empty()) {
    if (what == "models") describe_model(catalog, name);
    else if (what == "hardware") describe_hardware_profile(catalog, name);
    else if (what == "scenarios") describe_scenario(catalog, name);
    else
      throw InputError({Diagnostic{"describe " + what + " " + name, "",
                                   "a name is taken by describe models, hardware and scenarios"}});
    return 0;
  }
  if (what.empty() || what == "models") describe_models(catalog);
  if (what.empty()) std::printf("\n");
  if (what.empty() || what == "hardware") describe_hardware(catalog);
  if (what.empty()) std::printf("\n");
  if (what.empty() || what == "policies") describe_policies();
  if (what == "scenarios") {
    for (const auto& name : catalog.list("scenario")) {
      auto doc = read_json_file(*catalog.find("scenario", name), name);
      std::printf("%-28s %s\n", name.c_str(), doc.value("description", std::string{}).c_str());
    }
  }
  return 0;
}

}  // namespace strata::cli
