#pragma once

/// The one place where unit-bearing text ("80 GiB", "200 Gb/s", "312 TFLOPS", "10 min") becomes SI.

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/quantity.hpp"

namespace strata {

/// Parses `text` as a quantity of dimension `dim`. Returns the value in SI base units, or nullopt with
/// `why` set to a short reason ("unknown unit 'GiBs'"). A number without a unit is refused (zero
/// aside), with a suggested spelling.
std::optional<double> parse_quantity(std::string_view text, Dimension dim, std::string* why);
/// The SI base unit reports use for a dimension ("B", "s", "B/s", "FLOP", "FLOPS").
const char* si_unit(Dimension dim);
/// `50000 has no unit; write "50000 h" or "50000 s"`: the message for a bare number `number`.
std::string missing_unit_message(std::string_view number, Dimension dim);

/// Formats bytes with a binary prefix ("45.56 GiB"), for tables.
std::string format_bytes(double bytes);
/// Formats a duration with a fitting unit ("13.75 s", "2.1 ms", "3.2 h").
std::string format_seconds(double seconds);
/// Formats a plain count with SI prefix ("175.0 B" for 1.75e11 params uses "G"; here "175.0G").
std::string format_count(double count);
/// A value in SI units with a fitting unit of its dimension ("53.9 GB/s", "45.56 GiB", "2.1 ms",
/// "312 TFLOPS"): what a table shows next to a raw SI number.
std::string format_quantity(double si, Dimension dim);
/// "-0.0 us" → "0.0 us": text whose number rounds to zero loses its minus sign (a tiny negative
/// difference such as DES − list contention is zero at the precision shown).
std::string unsigned_zero(std::string text);

}  // namespace strata
