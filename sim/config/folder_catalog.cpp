#include "sim/config/folder_catalog.hpp"

#include <algorithm>

namespace strata {

std::filesystem::path FolderCatalog::folder(const std::string& kind) const {
  if (kind == "model") return root_ / "models";
  if (kind == "hardware") return root_ / "hardware_profiles";
  return root_ / "scenarios";
}

std::optional<std::filesystem::path> FolderCatalog::find(const std::string& kind, const std::string& name) const {
  auto path = folder(kind) / (name + ".json");
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  return std::nullopt;
}

std::vector<std::string> FolderCatalog::list(const std::string& kind) const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder(kind), ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace strata
