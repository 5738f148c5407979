#pragma once

/// Finds shipped models, hardware profiles and scenarios by name, in a data folder laid out as the
/// repository is (models/, hardware_profiles/, scenarios/).

#include <filesystem>

#include "sim/config/scenario_loader.hpp"

namespace strata::cli {

class DataCatalog : public DocumentResolver {
 public:
  explicit DataCatalog(std::filesystem::path root) : root_(std::move(root)) {}

  std::optional<std::filesystem::path> find(const std::string& kind, const std::string& name) const override;
  std::vector<std::string> list(const std::string& kind) const override;
  const std::filesystem::path& root() const { return root_; }

  /// --data-dir if given, else $STRATA_DATA_DIR, else the source tree the binary was built from.
  static DataCatalog locate(const std::string& data_dir_option);

 private:
  std::filesystem::path folder(const std::string& kind) const;
  std::filesystem::path root_;
};

}  // namespace strata::cli
