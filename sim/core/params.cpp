#include "sim/core/params.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "sim/core/units.hpp"

namespace strata {

using nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

std::string number_text(double v) { return fmt::format("{}", v); }

/// Integers above 2^53 are not exact in a double, so no integer input may exceed it.
constexpr double kMaxExactInteger = 9007199254740992.0;

std::string range_text(const Param& p) {
  bool lo = std::isfinite(p.min), hi = std::isfinite(p.max);
  if (lo && hi) return fmt::format(" in [{}, {}]", number_text(p.min), number_text(p.max));
  if (lo) return fmt::format(" >= {}", number_text(p.min));
  if (hi) return fmt::format(" <= {}", number_text(p.max));
  return "";
}

}  // namespace

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

double quantity_limit(Dimension dim) {
  switch (dim) {
    case Dimension::bytes: return 1e21;             // 1 ZB: a thousand times the largest storage system
    case Dimension::seconds: return 3.2e10;         // about 1,000 years
    case Dimension::bytes_per_second: return 1e18;  // 1 EB/s
    case Dimension::flops: return 1e30;
    case Dimension::flops_per_second: return 1e21;  // 1 ZFLOPS per device
    case Dimension::watts: return 1e6;              // 1 MW per device
    case Dimension::dimensionless: return std::numeric_limits<double>::max();
  }
  return std::numeric_limits<double>::max();
}

std::string expected_text(const Param& p) {
  switch (p.kind) {
    case ParamKind::integer: return "an integer" + range_text(p);
    case ParamKind::number: return "a number" + range_text(p);
    case ParamKind::boolean: return "true or false";
    case ParamKind::string: return "a string";
    case ParamKind::choice: return "one of: " + join(p.choices, ", ");
    case ParamKind::string_list:
      return p.choices.empty() ? "a list of strings" : "a list of: " + join(p.choices, ", ");
    case ParamKind::quantity: return std::string(dimension_example(p.dim)) + (p.min > 0.0 ? " greater than 0" : "");
    case ParamKind::integer_list: return "a list of integers" + range_text(p);
    case ParamKind::object: return "an object";
  }
  return "a value";
}

std::string default_text(const Param& p) {
  if (!p.default_value.is_null()) return p.default_value.dump();
  return p.optional ? "(none)" : "required";
}

ObjectReader::ObjectReader(const json& value, std::string pointer, const ParamTable& table,
                           Diagnostics& diag)
    : value_(value), pointer_(std::move(pointer)), table_(table), diag_(diag) {
  is_object_ = value_.is_object();
  if (!is_object_) {
    if (!value_.is_null())
      diag_.add(pointer_, fmt::format("wrong type (got {}, expected an object)",
                                      show_value(value_.dump())));
    return;
  }
  std::vector<std::string> known;
  for (const Param& p : table_) known.push_back(p.key);
  for (const auto& [key, _] : value_.items()) {
    bool found = false;
    for (const Param& p : table_) found = found || p.key == key;
    if (!found)
      diag_.add(child_pointer(key),
                fmt::format("unknown key (got \"{}\", expected one of: {})", key, join(known, ", ")));
  }
}

bool ObjectReader::has(const std::string& key) const { return is_object_ && value_.contains(key); }

std::string ObjectReader::child_pointer(const std::string& key) const {
  return pointer_ + "/" + pointer_escape(key);
}

const Param& ObjectReader::param(const std::string& key) const {
  for (const Param& p : table_)
    if (p.key == key) return p;
  // A programming error, not the user's: never let it pass as a "missing key" (exit 2).
  throw std::logic_error(fmt::format("{}: getter for '{}', which its parameter table does not declare", pointer_, key));
}

void ObjectReader::wrong(const Param& p, const json& got, const char* what) {
  diag_.add(child_pointer(p.key),
            fmt::format("{} (got {}, expected {})", what, show_value(got.dump()), expected_text(p)));
}

const json* ObjectReader::value_or_default(const Param& p) {
  if (has(p.key)) {
    // An explicit null is a mistake (often a --set typo), not a request for the default.
    if (value_.at(p.key).is_null()) {
      wrong(p, value_.at(p.key), "wrong type");
      return p.default_value.is_null() ? nullptr : &p.default_value;
    }
    return &value_.at(p.key);
  }
  if (p.default_value.is_null() && !p.optional && is_object_)
    diag_.add(child_pointer(p.key), fmt::format("missing required key (expected {})", expected_text(p)));
  if (p.default_value.is_null()) return nullptr;
  return &p.default_value;
}

std::int64_t ObjectReader::integer(const std::string& key) {
  const Param& p = param(key);
  if (!std::isfinite(p.max) || p.max > kMaxExactInteger)
    throw std::logic_error(fmt::format("{}/{}: integer parameter without a bound", pointer_, key));
  const json* v = value_or_default(p);
  if (!v) return std::isfinite(p.min) ? static_cast<std::int64_t>(p.min) : 0;
  if (!v->is_number_integer()) {
    // 4.0 is an integer written as a float; accept it, reject 4.5.
    if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>() &&
        std::fabs(v->get<double>()) < 9e15) {
      double d = v->get<double>();
      if (d < p.min || d > p.max) wrong(p, *v, "out of range");
      return static_cast<std::int64_t>(d);
    }
    wrong(p, *v, "wrong type");
    return std::isfinite(p.min) ? static_cast<std::int64_t>(p.min) : 0;
  }
  double d = v->get<double>();
  if (d < p.min || d > p.max) {
    wrong(p, *v, "out of range");
    return std::isfinite(p.min) ? static_cast<std::int64_t>(p.min) : 0;
  }
  return v->get<std::int64_t>();
}

double ObjectReader::number(const std::string& key) {
  const Param& p = param(key);
  const json* v = value_or_default(p);
  if (!v) return std::isfinite(p.min) ? p.min : 0.0;
  if (!v->is_number()) {
    wrong(p, *v, "wrong type");
    return std::isfinite(p.min) ? p.min : 0.0;
  }
  double d = v->get<double>();
  if (d < p.min || d > p.max) {
    wrong(p, *v, "out of range");
    return std::isfinite(p.min) ? p.min : 0.0;
  }
  return d;
}

bool ObjectReader::boolean(const std::string& key) {
  const Param& p = param(key);
  const json* v = value_or_default(p);
  if (!v) return false;
  if (!v->is_boolean()) {
    wrong(p, *v, "wrong type");
    return false;
  }
  return v->get<bool>();
}

std::string ObjectReader::string(const std::string& key) {
  const Param& p = param(key);
  const json* v = value_or_default(p);
  if (!v) return {};
  if (!v->is_string()) {
    wrong(p, *v, "wrong type");
    return {};
  }
  return v->get<std::string>();
}

std::string ObjectReader::choice(const std::string& key) {
  const Param& p = param(key);
  const json* v = value_or_default(p);
  if (!v) return {};
  if (!v->is_string()) {
    wrong(p, *v, "wrong type");
    return p.default_value.is_string() ? p.default_value.get<std::string>() : std::string{};
  }
  std::string s = v->get<std::string>();
  for (const auto& c : p.choices)
    if (c == s) return s;
  wrong(p, *v, "unknown value");
  return p.default_value.is_string() ? p.default_value.get<std::string>() : std::string{};
}

const json* ObjectReader::list_or_default(const Param& p) {
  const json* v = value_or_default(p);
  if (v && !v->is_array()) {
    wrong(p, *v, "wrong type");
    return nullptr;
  }
  return v;
}

std::vector<std::string> ObjectReader::string_list(const std::string& key) {
  const Param& p = param(key);
  const json* v = list_or_default(p);
  std::vector<std::string> out;
  if (!v) return out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    bool valid = item.is_string();
    if (valid && !p.choices.empty()) {
      valid = false;
      for (const auto& c : p.choices) valid = valid || c == item.get<std::string>();
    }
    if (!valid) {
      diag_.add(child_pointer(p.key) + "/" + std::to_string(i),
                fmt::format("unknown value (got {}, expected {})", show_value(item.dump()),
                            p.choices.empty() ? std::string("a string") : "one of: " + join(p.choices, ", ")));
      continue;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::vector<std::int64_t> ObjectReader::integer_list(const std::string& key) {
  const Param& p = param(key);
  const json* v = list_or_default(p);
  std::vector<std::int64_t> out;
  if (!v) return out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    const bool integral = item.is_number_integer() || item.is_number_unsigned();
    const double x = integral ? item.get<double>() : 0.0;
    if (!integral || x < p.min || x > p.max) {
      diag_.add(child_pointer(p.key) + "/" + std::to_string(i),
                fmt::format("{} (got {}, expected an integer{})", integral ? "out of range" : "wrong type",
                            show_value(item.dump()), range_text(p)));
      continue;
    }
    out.push_back(item.get<std::int64_t>());
  }
  return out;
}

double ObjectReader::quantity(const std::string& key) {
  const Param& p = param(key);
  const json* v = value_or_default(p);
  if (!v) return 0.0;
  double si = 0.0;
  if (v->is_number()) {
    si = v->get<double>();
    if (si != 0.0) {  // zero is zero in every unit; any other bare number is ambiguous
      diag_.add(child_pointer(p.key), missing_unit_message(v->dump(), p.dim));
      return 0.0;
    }
  } else if (v->is_string()) {
    std::string why;
    auto parsed = parse_quantity(v->get<std::string>(), p.dim, &why);
    if (!parsed) {
      if (why.find("has no unit") != std::string::npos) diag_.add(child_pointer(p.key), why);
      else
        diag_.add(child_pointer(p.key), fmt::format("invalid quantity: {} (got {}, expected {})", why,
                                                    show_value(v->dump()), expected_text(p)));
      return 0.0;
    }
    si = *parsed;
  } else {
    wrong(p, *v, "wrong type");
    return 0.0;
  }
  if (si < 0.0) {
    wrong(p, *v, "must not be negative");
    return 0.0;
  }
  if (si < p.min) {
    wrong(p, *v, "out of range");
    return 0.0;
  }
  if (const double limit = std::min(p.max, quantity_limit(p.dim)); si > limit) {
    diag_.add(child_pointer(p.key), fmt::format("out of range (got {}, expected at most {:g} {})",
                                                show_value(v->dump()), limit, si_unit(p.dim)));
    return 0.0;
  }
  return si;
}

const json& ObjectReader::object(const std::string& key) {
  static const json null_value = nullptr;
  const Param& p = param(key);
  const json* v = value_or_default(p);
  if (!v) return null_value;
  if (!v->is_object()) {
    wrong(p, *v, "wrong type");
    return null_value;
  }
  return *v;
}

void ObjectReader::error(const std::string& key, std::string message) {
  diag_.add(child_pointer(key), std::move(message));
}

void ObjectReader::error_at_item(const std::string& key, std::size_t index, std::string message) {
  diag_.add(child_pointer(key) + "/" + std::to_string(index), std::move(message));
}

void ObjectReader::error_at_cause(std::initializer_list<const char*> keys, std::string message) {
  for (const char* key : keys)
    if (overridden(key)) return error(key, std::move(message));
  error(*keys.begin(), std::move(message));
}

}  // namespace strata
