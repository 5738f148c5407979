#pragma once

/// The named policies a scenario can choose, with one-line docs and their parameters. Registered in
/// one explicit function (not static constructors, which a static link can silently drop); an
/// unknown name fails with the list of valid names because validation reads the choices from here.

#include <string>
#include <vector>

#include "sim/core/params.hpp"

namespace strata {

struct PolicyInfo {
  std::string name;
  std::string doc;
  ParamTable params = {};  ///< policy-specific parameters, if any
};

struct PolicyCategory {
  std::string name;  ///< e.g. "schedule"
  std::string scenario_key;  ///< where a scenario chooses it, e.g. "parallelism.schedule"
  std::string doc;
  std::vector<PolicyInfo> policies;
};

class PolicyCatalog {
 public:
  void add(PolicyCategory category) { categories_.push_back(std::move(category)); }
  const std::vector<PolicyCategory>& categories() const { return categories_; }
  const PolicyCategory& category(const std::string& name) const;
  /// Names in a category, in registration order.
  std::vector<std::string> names(const std::string& category) const;

 private:
  std::vector<PolicyCategory> categories_;
};

/// Registers every built-in policy. The one place a new policy is added.
void register_builtin_policies(PolicyCatalog& catalog);

/// The catalog with the built-in policies.
const PolicyCatalog& policy_catalog();

}  // namespace strata
