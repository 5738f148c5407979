#include "sim/core/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace strata {

namespace {

struct Prefix {
  std::string_view symbol;
  double factor;
};

// SI and IEC prefixes. Binary prefixes first so that "Gi" is not read as "G" followed by "i".
constexpr std::array<Prefix, 13> kPrefixes{{{"Ki", 1024.0},
                                            {"Mi", 1048576.0},
                                            {"Gi", 1073741824.0},
                                            {"Ti", 1099511627776.0},
                                            {"Pi", 1125899906842624.0},
                                            {"Ei", 1152921504606846976.0},
                                            {"k", 1e3},
                                            {"K", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"E", 1e18}}};

struct Unit {
  std::string_view symbol;
  Dimension dim;
  double factor;  // to SI base
  bool takes_prefix;
};

// Bits are 1/8 byte: network line rates are quoted in Gb/s (also written Gbit/s or Gbps); bytes per
// second also as GBps. Durations in the spellings people write in configs and papers.
constexpr std::array<Unit, 37> kUnits{{{"B", Dimension::bytes, 1.0, true},
                                       {"byte", Dimension::bytes, 1.0, true},
                                       {"bytes", Dimension::bytes, 1.0, true},
                                       {"b", Dimension::bytes, 0.125, true},
                                       {"bit", Dimension::bytes, 0.125, true},
                                       {"bits", Dimension::bytes, 0.125, true},
                                       {"B/s", Dimension::bytes_per_second, 1.0, true},
                                       {"Bps", Dimension::bytes_per_second, 1.0, true},
                                       {"b/s", Dimension::bytes_per_second, 0.125, true},
                                       {"bit/s", Dimension::bytes_per_second, 0.125, true},
                                       {"bps", Dimension::bytes_per_second, 0.125, true},
                                       {"FLOP", Dimension::flops, 1.0, true},
                                       {"FLOPs", Dimension::flops, 1.0, true},
                                       {"FLOPS", Dimension::flops_per_second, 1.0, true},
                                       {"FLOP/s", Dimension::flops_per_second, 1.0, true},
                                       {"W", Dimension::watts, 1.0, true},
                                       {"s", Dimension::seconds, 1.0, false},
                                       {"sec", Dimension::seconds, 1.0, false},
                                       {"secs", Dimension::seconds, 1.0, false},
                                       {"second", Dimension::seconds, 1.0, false},
                                       {"seconds", Dimension::seconds, 1.0, false},
                                       {"ms", Dimension::seconds, 1e-3, false},
                                       {"us", Dimension::seconds, 1e-6, false},
                                       {"\u00b5s", Dimension::seconds, 1e-6, false},
                                       {"ns", Dimension::seconds, 1e-9, false},
                                       {"min", Dimension::seconds, 60.0, false},
                                       {"mins", Dimension::seconds, 60.0, false},
                                       {"minute", Dimension::seconds, 60.0, false},
                                       {"minutes", Dimension::seconds, 60.0, false},
                                       {"h", Dimension::seconds, 3600.0, false},
                                       {"hr", Dimension::seconds, 3600.0, false},
                                       {"hrs", Dimension::seconds, 3600.0, false},
                                       {"hour", Dimension::seconds, 3600.0, false},
                                       {"hours", Dimension::seconds, 3600.0, false},
                                       {"d", Dimension::seconds, 86400.0, false},
                                       {"day", Dimension::seconds, 86400.0, false},
                                       {"days", Dimension::seconds, 86400.0, false}}};

std::optional<std::pair<Dimension, double>> lookup_unit(std::string_view text) {
  for (const Unit& u : kUnits)
    if (text == u.symbol) return std::pair{u.dim, u.factor};
  for (const Prefix& p : kPrefixes) {
    if (!text.starts_with(p.symbol)) continue;
    std::string_view rest = text.substr(p.symbol.size());
    for (const Unit& u : kUnits)
      if (u.takes_prefix && rest == u.symbol) return std::pair{u.dim, u.factor * p.factor};
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

const char* dimension_example(Dimension dim) {
  switch (dim) {
    case Dimension::bytes: return "a size like \"80 GiB\"";
    case Dimension::seconds: return "a duration like \"10 min\"";
    case Dimension::bytes_per_second: return "a bandwidth like \"25 GB/s\"";
    case Dimension::flops: return "a FLOP count like \"3.1 PFLOP\"";
    case Dimension::flops_per_second: return "a compute rate like \"312 TFLOPS\"";
    case Dimension::watts: return "a power like \"700 W\"";
    case Dimension::dimensionless: return "a number";
  }
  return "a quantity";
}

const char* si_unit(Dimension dim) {
  switch (dim) {
    case Dimension::bytes: return "B";
    case Dimension::seconds: return "s";
    case Dimension::bytes_per_second: return "B/s";
    case Dimension::flops: return "FLOP";
    case Dimension::flops_per_second: return "FLOPS";
    case Dimension::watts: return "W";
    case Dimension::dimensionless: return "";
  }
  return "";
}

std::string missing_unit_message(std::string_view number, Dimension dim) {
  const auto [large, base] = [dim]() -> std::pair<const char*, const char*> {
    switch (dim) {
      case Dimension::bytes: return {"GiB", "B"};
      case Dimension::seconds: return {"h", "s"};
      case Dimension::bytes_per_second: return {"GB/s", "Gb/s"};
      case Dimension::flops: return {"PFLOP", "FLOP"};
      case Dimension::flops_per_second: return {"TFLOPS", "FLOPS"};
      case Dimension::watts: return {"kW", "W"};
      case Dimension::dimensionless: return {"", ""};
    }
    return {"", ""};
  }();
  return fmt::format("{} has no unit; write \"{} {}\" or \"{} {}\"", number, number, large, number, base);
}

std::optional<double> parse_quantity(std::string_view text, Dimension dim, std::string* why) {
  std::string_view s = trim(text);
  double number = 0.0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), number);
  if (ec == std::errc::result_out_of_range) {
    if (why) *why = "number too large";
    return std::nullopt;
  }
  if (ec != std::errc() || end == s.data()) {
    if (why) *why = "no number";
    return std::nullopt;
  }
  if (!std::isfinite(number)) {
    if (why) *why = "not a finite number";
    return std::nullopt;
  }
  std::string_view unit = trim(std::string_view(end, s.data() + s.size() - end));
  if (unit.empty()) {
    // A bare number is ambiguous (50000 what?): only zero, the same in every unit, or a number
    // where no dimension is expected, stands alone.
    if (number == 0.0 || dim == Dimension::dimensionless) return number;
    if (why) *why = missing_unit_message(std::string_view(s.data(), end - s.data()), dim);
    return std::nullopt;
  }
  auto found = lookup_unit(unit);
  if (!found) {
    if (why) *why = fmt::format("unknown unit '{}'", unit);
    return std::nullopt;
  }
  if (found->first != dim) {
    if (why) *why = fmt::format("unit '{}' is not {}", unit, dimension_example(dim));
    return std::nullopt;
  }
  const double si = number * found->second;
  if (!std::isfinite(si)) {
    if (why) *why = "number too large";
    return std::nullopt;
  }
  return si;
}

std::string unsigned_zero(std::string text) {
  const auto digits = text.find_first_of("0123456789");
  if (digits == std::string::npos || digits == 0 || text[digits - 1] != '-') return text;
  // Only the first number counts: the digits up to the first character that cannot be in it.
  const auto end = text.find_first_not_of("0123456789.", digits);
  const std::string number = text.substr(digits, end == std::string::npos ? std::string::npos : end - digits);
  if (number.find_first_of("123456789") == std::string::npos) text.erase(digits - 1, 1);
  return text;
}

std::string format_bytes(double bytes) {
  constexpr std::array<const char*, 6> names{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = bytes;
  std::size_t i = 0;
  while (std::fabs(v) >= 1024.0 && i + 1 < names.size()) {
    v /= 1024.0;
    ++i;
  }
  return unsigned_zero(i == 0 ? fmt::format("{:.0f} B", v) : fmt::format("{:.2f} {}", v, names[i]));
}

std::string format_seconds(double seconds) {
  double a = std::fabs(seconds);
  if (a == 0.0) return "0 s";
  if (a < 1e-3) return unsigned_zero(fmt::format("{:.1f} us", seconds * 1e6));
  if (a < 1.0) return unsigned_zero(fmt::format("{:.2f} ms", seconds * 1e3));
  if (a < 600.0) return unsigned_zero(fmt::format("{:.2f} s", seconds));
  if (a < 3 * 3600.0) return unsigned_zero(fmt::format("{:.1f} min", seconds / 60.0));
  return unsigned_zero(fmt::format("{:.2f} h", seconds / 3600.0));
}

std::string format_count(double count) {
  constexpr std::array<const char*, 5> names{"", "K", "M", "B", "T"};
  double v = count;
  std::size_t i = 0;
  while (std::fabs(v) >= 1000.0 && i + 1 < names.size()) {
    v /= 1000.0;
    ++i;
  }
  return unsigned_zero(i == 0 ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}{}", v, names[i]));
}

}  // namespace strata

namespace strata {

std::string format_quantity(double si, Dimension dim) {
  // Decimal prefixes for rates (link and disk bandwidths are quoted so), binary for capacities.
  auto decimal = [](double v, const char* unit) {
    constexpr std::array<const char*, 6> prefixes{"", "k", "M", "G", "T", "P"};
    std::size_t i = 0;
    while (std::fabs(v) >= 1000.0 && i + 1 < prefixes.size()) {
      v /= 1000.0;
      ++i;
    }
    return unsigned_zero(fmt::format("{:.4g} {}{}", v, prefixes[i], unit));
  };
  switch (dim) {
    case Dimension::bytes: return format_bytes(si);
    case Dimension::seconds: return format_seconds(si);
    case Dimension::bytes_per_second: return decimal(si, "B/s");
    case Dimension::flops: return decimal(si, "FLOP");
    case Dimension::flops_per_second: return decimal(si, "FLOPS");
    case Dimension::watts: return decimal(si, "W");
    case Dimension::dimensionless: break;
  }
  return unsigned_zero(fmt::format("{:.6g}", si));
}

}  // namespace strata
