#pragma once

/// `strata describe metrics` and one document in detail (`describe hardware|scenarios NAME`).

#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/folder_catalog.hpp"

namespace strata::cli {

/// Every report key with its unit, when it is present and what it means (sim/report/metrics).
void describe_metrics();
/// A hardware profile (shipped name or path): every key as written and as read, defaults filled in.
void describe_hardware_profile(const FolderCatalog& catalog, const std::string& name);
/// A scenario (shipped name or path), composed and validated: every key as written and as read.
void describe_scenario(const FolderCatalog& catalog, const std::string& name);
/// How a model document was read: a HuggingFace config's keys with their role (modelled, ignored
/// and why), or a Strata model file's keys with defaults filled in.
void describe_model_reading(const nlohmann::json& doc);

}  // namespace strata::cli
