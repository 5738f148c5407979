#pragma once

/// Parameter tables (SST style): one table per input section names each key, its kind and unit, its
/// default and its meaning. The same table drives validation (ObjectReader), `strata describe` and
/// the README tables, so they cannot drift apart.

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/diagnostics.hpp"
#include "sim/core/quantity.hpp"

namespace strata {

enum class ParamKind { integer, number, boolean, string, choice, quantity, string_list, integer_list, object };

struct Param {
  std::string key;
  ParamKind kind = ParamKind::string;
  /// Default when absent; null means the key is required (unless `optional`).
  nlohmann::json default_value = nullptr;
  std::string doc;
  Dimension dim = Dimension::dimensionless;  // for quantities
  std::vector<std::string> choices = {};     // for choice and string_list
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool optional = false;  // absent and no default is fine
};

using ParamTable = std::vector<Param>;

/// The largest value a quantity of dimension `dim` may take (in SI base units): far beyond any real
/// system, small enough that products with other inputs stay finite.
double quantity_limit(Dimension dim);

/// What the parameter accepts, in words: "an integer >= 1", "one of: none, selective, full".
std::string expected_text(const Param& p);
/// The default as shown in docs ("1", "\"80 GiB\"", "required").
std::string default_text(const Param& p);

/// Reads one JSON object against its table. Unknown keys, wrong types, bad units and out-of-range
/// values become diagnostics; getters then return the default so that reading continues and every
/// error of the document is collected in one pass.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& value, std::string pointer, const ParamTable& table,
               Diagnostics& diag);

  bool ok() const { return is_object_; }
  bool has(const std::string& key) const;
  const std::string& pointer() const { return pointer_; }
  std::string child_pointer(const std::string& key) const;

  std::int64_t integer(const std::string& key);
  double number(const std::string& key);
  bool boolean(const std::string& key);
  std::string string(const std::string& key);
  std::string choice(const std::string& key);
  std::vector<std::string> string_list(const std::string& key);
  /// A list of integers, each within the parameter's min and max (errors name the item's index).
  std::vector<std::int64_t> integer_list(const std::string& key);
  /// SI value of a unit-bearing quantity; negative values are rejected.
  double quantity(const std::string& key);
  /// The raw JSON of an object-valued key (null when absent).
  const nlohmann::json& object(const std::string& key);
  /// Reports an error at this key (used for cross-field checks).
  void error(const std::string& key, std::string message);
  /// Reports an error at item `index` of this key's list.
  void error_at_item(const std::string& key, std::size_t index, std::string message);
  /// Reports a cross-field error at the first of `keys` a `--set` changed (so the error names the
  /// override that caused it), else at the first key.
  void error_at_cause(std::initializer_list<const char*> keys, std::string message);
  /// Whether a `--set` gave this key its value.
  bool overridden(const std::string& key) const { return diag_.is_overridden(child_pointer(key)); }

 private:
  const Param& param(const std::string& key) const;
  const nlohmann::json* value_or_default(const Param& p);
  /// The list `p` holds, or null when absent or not an array (reported as a wrong type).
  const nlohmann::json* list_or_default(const Param& p);
  void wrong(const Param& p, const nlohmann::json& got, const char* what);

  const nlohmann::json& value_;
  std::string pointer_;
  const ParamTable& table_;
  Diagnostics& diag_;
  bool is_object_ = false;
};

/// Escapes a key for use in a JSON pointer (RFC 6901).
std::string pointer_escape(const std::string& key);

}  // namespace strata
