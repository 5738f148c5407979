// `strata describe metrics` and `strata describe hardware|scenarios NAME`: what a report holds, and
// one input document as Strata reads it (each value as written, what it was read as in SI units,
// defaults filled in).

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "sim/config/hardware_spec.hpp"
#include "sim/config/model_spec.hpp"
#include "sim/config/scenario_loader.hpp"
#include "sim/core/json_file.hpp"
#include "sim/core/units.hpp"
#include "sim/report/metrics.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/describe_documents.hpp"

namespace strata::cli {

namespace {

using nlohmann::json;

/// The object at dotted `section` of `doc` (null when absent).
const json* section_of(const json& doc, const std::string& section) {
  const json* node = &doc;
  std::size_t start = 0;
  while (!section.empty() && start <= section.size()) {
    const auto dot = section.find('.', start);
    const std::string key = section.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(key)) return nullptr;
    node = &node->at(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return node;
}

/// "as written → as read": a quantity's text and its SI value; other values as they are.
std::string read_as(const Param& p, const json& value) {
  const std::string written = value.is_string() ? value.get<std::string>() : value.dump();
  if (p.kind != ParamKind::quantity || !value.is_string()) return written;
  std::string why;
  const auto si = parse_quantity(written, p.dim, &why);
  if (!si) return written;
  return fmt::format("{:<16} = {:.6g} {}", written, *si, si_unit(p.dim));
}

std::string shortened(std::string text, std::size_t at_most) {
  if (text.size() > at_most) text = text.substr(0, at_most - 3) + "...";
  return text;
}

/// Every key of every section table: its value in `doc` as written and as read, or its default.
void print_sections(const json& doc, const std::map<std::string, const ParamTable*>& tables,
                    const std::vector<std::string>& skip = {}) {
  for (const auto& [section, table] : tables) {
    const json* obj = section_of(doc, section);
    // An optional section left out turns its feature off (no checkpoints, no failures): say so
    // instead of listing defaults that do not apply.
    const auto dot = section.rfind('.');
    const std::string parent = dot == std::string::npos ? "" : section.substr(0, dot);
    const std::string last = dot == std::string::npos ? section : section.substr(dot + 1);
    bool optional = false;
    if (!section.empty() && tables.count(parent))
      for (const Param& p : *tables.at(parent)) optional = optional || (p.key == last && p.optional);
    if (!obj && optional) {
      std::printf("  %s (not set)\n", section.c_str());
      continue;
    }
    std::printf("  %s\n", section.empty() ? "(top level)" : section.c_str());
    for (const Param& p : *table) {
      if (p.kind == ParamKind::object || std::find(skip.begin(), skip.end(), p.key) != skip.end()) continue;
      const bool given = obj && obj->is_object() && obj->contains(p.key);
      if (p.key == "source" || p.key == "description") {
        if (given) std::printf("    %-24s %s\n", p.key.c_str(), shortened(obj->at(p.key).dump(), 96).c_str());
        continue;
      }
      const std::string value = given ? read_as(p, obj->at(p.key)) : default_text(p) + " (default)";
      std::printf("    %-24s %-40s %s\n", p.key.c_str(), value.c_str(), p.doc.c_str());
    }
  }
}

std::optional<std::filesystem::path> named(const FolderCatalog& catalog, const std::string& kind,
                                           const std::string& name) {
  const bool looks_like_path = name.find('/') != std::string::npos || name.ends_with(".json");
  if (looks_like_path) {
    if (std::filesystem::exists(name)) return std::filesystem::path(name);
  } else if (auto found = catalog.find(kind, name)) {
    return found;
  }
  std::string names;
  for (const auto& n : catalog.list(kind)) names += (names.empty() ? "" : ", ") + n;
  throw InputError({Diagnostic{name, "", looks_like_path ? kind + " file not found"
                                                         : fmt::format("unknown {} (expected one of: {})", kind, names)}});
}

}  // namespace

void describe_metrics() {
  std::printf("%-48s %-15s %-16s %s\n", "key", "unit", "present", "meaning");
  for (const Metric& m : report_metrics()) {
    std::string meaning = m.meaning;
    if (m.is_family()) {
      const std::string placeholder = m.key.substr(m.key.find('{'), m.key.find('}') - m.key.find('{') + 1);
      std::string names;
      for (const auto& n : m.names) names += (names.empty() ? "" : ", ") + n;
      meaning += fmt::format(" ({} is {})", placeholder, names.empty() ? "a name found in the run" : "one of " + names);
    }
    std::printf("%-48s %-15s %-16s %s\n", m.key.c_str(), unit_name(m.unit).c_str(), presence_text(m.presence).c_str(),
                meaning.c_str());
  }
  std::printf("\nKeys as in `strata run --json` and results.csv (dotted paths into the report). solve --target, "
              "compare --check rules and sweep --by take any key that is a number or true/false (true counts "
              "as 1); text and list keys are shown by compare only.\n");
}

void describe_hardware_profile(const FolderCatalog& catalog, const std::string& name) {
  const std::filesystem::path path = *named(catalog, "hardware", name);
  const std::string shown = catalog.display(path);
  const json doc = read_json_file(path, shown);
  SourceMap sources(shown);
  Diagnostics diag(&sources);
  const HardwareSpec h = parse_hardware(doc, "", diag);
  diag.throw_if_any();
  std::printf("%s (%s): %s\n", h.name.c_str(), shown.c_str(), h.description.c_str());
  std::printf("  read as: %lld GPUs per node, HBM %s at %s, NVLink %s per GPU per direction\n",
              static_cast<long long>(h.gpus_per_node), format_bytes(h.gpu.hbm.value).c_str(),
              format_quantity(h.gpu.hbm_bandwidth.value, Dimension::bytes_per_second).c_str(),
              format_quantity(h.nvlink_bandwidth.value, Dimension::bytes_per_second).c_str());
  if (power_limited(h))
    std::printf("  at its %g W power limit (rated %g W) the SM clock is %.3f of boost (f^3 power law; %.3f at the rated "
                "power)\n",
                h.gpu.power_limit.value, h.gpu.tdp.value, sustained_clock(h), h.kernels.sustained_clock);
  std::printf("  each key: as written = as read (SI), or its default; source texts shortened (full in the file)\n");
  print_sections(doc, hardware_param_tables());
}

void describe_scenario(const FolderCatalog& catalog, const std::string& name) {
  const std::filesystem::path path = find_scenario(catalog, name);
  const ComposedScenario composed = compose_scenario(path, {}, catalog);
  const Scenario sc = parse_scenario(composed.doc, composed.sources);
  const std::string shown = catalog.display(path);
  std::printf("%s (%s): %s\n", sc.name.c_str(), shown.c_str(), sc.description.c_str());
  std::printf("  model      %s (%s)\n", sc.model.name.c_str(), composed.sources.locate("/model/name").first.c_str());
  std::printf("  hardware   %s (%s)\n", sc.hardware.name.c_str(),
              composed.sources.locate("/hardware/name").first.c_str());
  std::printf("  read as: %lld GPUs on %lld node(s), TP %lld · PP %lld · DP %lld, %lld micro-batches per iteration\n",
              static_cast<long long>(sc.gpus), static_cast<long long>(sc.nodes),
              static_cast<long long>(sc.parallelism.tp), static_cast<long long>(sc.parallelism.pp),
              static_cast<long long>(sc.parallelism.dp), static_cast<long long>(sc.num_microbatches()));
  std::printf("  each key: as written = as read (SI), or its default (details: strata describe models|hardware NAME)\n");
  print_sections(composed.doc, scenario_param_tables(), {"model", "hardware"});
}

void describe_model_reading(const json& doc) {
  if (is_huggingface_config(doc)) {
    std::printf("  read from a HuggingFace config.json, key by key\n");
    for (const auto& [key, value] : doc.items()) {
      const HfKeyRole role = huggingface_key_role(key);
      const std::string what = role == HfKeyRole::modelled  ? "modelled"
                               : role == HfKeyRole::ignored ? "ignored: " + huggingface_ignored_reason(key)
                                                            : "refused";
      std::printf("    %-32s %-24s %s\n", key.c_str(), shortened(value.dump(), 24).c_str(), what.c_str());
    }
    return;
  }
  std::printf("  read from a Strata model file, key by key (HuggingFace names)\n");
  for (const Param& p : model_param_table()) {
    if (p.kind == ParamKind::object) continue;
    const bool given = doc.is_object() && doc.contains(p.key);
    const std::string value = given ? shortened(doc.at(p.key).dump(), 40) : default_text(p) + " (default)";
    std::printf("    %-32s %-40s %s\n", p.key.c_str(), value.c_str(), p.doc.c_str());
  }
}

}  // namespace strata::cli
