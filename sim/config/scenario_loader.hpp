#pragma once

/// Composes a scenario document: reads the scenario, inlines the model and hardware documents it
/// names, applies `--set PATH=VALUE` overrides, and keeps a source map so that every error names
/// the file (or override) the offending value came from.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/scenario_spec.hpp"
#include "sim/core/diagnostics.hpp"

namespace strata {

/// Finds named documents. The CLI implements it over the shipped folders; `sim/` never hard-codes
/// where models or profiles live.
class DocumentResolver {
 public:
  virtual ~DocumentResolver() = default;
  /// Path of the document `name` of `kind` ("model", "hardware", "scenario"), if it exists.
  virtual std::optional<std::filesystem::path> find(const std::string& kind, const std::string& name) const = 0;
  /// Every name of `kind`, sorted, for "expected one of" messages and `strata describe`.
  virtual std::vector<std::string> list(const std::string& kind) const = 0;
  /// How to show a path in messages (relative to the working directory when inside it).
  virtual std::string display(const std::filesystem::path& path) const;
};

/// `--set a.b.c=VALUE`: VALUE is parsed as JSON, else taken as a string.
struct Override {
  std::string path;   ///< dotted path, e.g. "parallelism.tp"
  std::string value;  ///< raw text
  /// How errors name it: `--set PATH=VALUE`, a long value shortened so the error stays one line.
  std::string label() const;
};

/// Parses "PATH=VALUE"; throws InputError when there is no '='.
Override parse_override(const std::string& text);

struct ComposedScenario {
  nlohmann::json doc;
  SourceMap sources;
};

/// Reads the scenario file and builds the composed document. Throws InputError.
ComposedScenario compose_scenario(const std::filesystem::path& scenario_file,
                                  const std::vector<Override>& overrides, const DocumentResolver& resolver);
/// Same, from a document already in memory (sweeps, tests). `display_name` names it in errors,
/// `base_dir` anchors relative paths.
ComposedScenario compose_scenario(nlohmann::json scenario, const std::string& display_name,
                                  const std::filesystem::path& base_dir,
                                  const std::vector<Override>& overrides, const DocumentResolver& resolver);

/// compose_scenario + parse_scenario.
Scenario load_scenario(const std::filesystem::path& scenario_file, const std::vector<Override>& overrides,
                       const DocumentResolver& resolver);

}  // namespace strata
