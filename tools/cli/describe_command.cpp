#include <fmt/format.h>

#include <cstdio>

#include "sim/config/hardware_spec.hpp"
#include "sim/config/model_spec.hpp"
#include "sim/config/policy_catalog.hpp"
#include "sim/config/scenario_spec.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/units.hpp"
#include "sim/graph/compute_graph.hpp"
#include "tools/cli/commands.hpp"

namespace strata::cli {

namespace {

void print_table(const std::string& section, const ParamTable& table) {
  std::printf("  %s\n", section.empty() ? "(top level)" : section.c_str());
  for (const auto& p : table)
    std::printf("    %-24s %-22s %s (%s)\n", p.key.c_str(), default_text(p).c_str(), p.doc.c_str(),
                expected_text(p).c_str());
}

void describe_models(const FolderCatalog& catalog) {
  std::printf("%-18s %10s %7s %6s %6s  %s\n", "model", "parameters", "hidden", "layers", "heads", "description");
  for (const auto& name : catalog.list("model")) {
    try {
      auto doc = read_json_file(*catalog.find("model", name), name);
      Diagnostics diag;
      ModelSpec m = parse_model(doc, "", diag);
      if (!diag.empty()) throw InputError(diag.items());
      GraphShape shape{.seq_len = std::max<std::int64_t>(1, m.max_position_embeddings)};
      double params = total_parameters(build_compute_graph(m, shape));
      std::string desc = doc.value("description", std::string{});
      std::printf("%-18s %10s %7lld %6lld %6lld  %s\n", name.c_str(), format_count(params).c_str(),
                  static_cast<long long>(m.hidden_size), static_cast<long long>(m.num_layers),
                  static_cast<long long>(m.num_heads), desc.c_str());
    } catch (const std::exception& e) {
      std::printf("%-18s (invalid: %s)\n", name.c_str(), e.what());
    }
  }
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

int describe_command(const FolderCatalog& catalog, const std::string& what) {
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
