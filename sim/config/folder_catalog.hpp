#pragma once

/// Finds models, hardware profiles and scenarios by name in a data folder laid out as the repository
/// is (models/, hardware_profiles/, scenarios/). Which folder is the caller's choice.

#include <filesystem>

#include "sim/config/scenario_loader.hpp"

namespace strata {

class FolderCatalog : public DocumentResolver {
 public:
  explicit FolderCatalog(std::filesystem::path root) : root_(std::move(root)) {}

  std::optional<std::filesystem::path> find(const std::string& kind, const std::string& name) const override;
  std::vector<std::string> list(const std::string& kind) const override;
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path folder(const std::string& kind) const;
  std::filesystem::path root_;
};

}  // namespace strata
