#pragma once

/// Dimensioned SI quantities. Values are doubles in SI base units (bytes, seconds, bytes/s, FLOP/s, W);
/// the tag makes adding bytes to seconds a compile error.

#include <compare>

namespace strata {

enum class Dimension { bytes, seconds, bytes_per_second, flops, flops_per_second, watts, dimensionless };

/// Human name of a dimension, with an example of the accepted text, for error messages.
const char* dimension_example(Dimension dim);

template <Dimension D>
struct Quantity {
  double value = 0.0;

  constexpr Quantity() = default;
  constexpr explicit Quantity(double v) : value(v) {}

  constexpr Quantity operator+(Quantity o) const { return Quantity(value + o.value); }
  constexpr Quantity operator-(Quantity o) const { return Quantity(value - o.value); }
  constexpr Quantity& operator+=(Quantity o) { value += o.value; return *this; }
  constexpr Quantity& operator-=(Quantity o) { value -= o.value; return *this; }
  constexpr Quantity operator*(double k) const { return Quantity(value * k); }
  constexpr Quantity operator/(double k) const { return Quantity(value / k); }
  constexpr double operator/(Quantity o) const { return value / o.value; }
  constexpr auto operator<=>(const Quantity&) const = default;
};

template <Dimension D>
constexpr Quantity<D> operator*(double k, Quantity<D> q) { return q * k; }

using Bytes = Quantity<Dimension::bytes>;
using Seconds = Quantity<Dimension::seconds>;
using BytesPerSecond = Quantity<Dimension::bytes_per_second>;
using Flops = Quantity<Dimension::flops>;
using FlopsPerSecond = Quantity<Dimension::flops_per_second>;
using Watts = Quantity<Dimension::watts>;

constexpr Seconds operator/(Bytes b, BytesPerSecond bw) { return Seconds(b.value / bw.value); }
constexpr Seconds operator/(Flops f, FlopsPerSecond r) { return Seconds(f.value / r.value); }

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace strata
