// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The two 16-bit float element types, kiln::half (IEEE 754 binary16) and kiln::bfloat16 (the upper half of a
// binary32), and their conversions. They are storage types: kiln computes with them in f32 and rounds to
// nearest-even on every conversion to them. The compiler kiln is built with here (GCC 12) has no C++23
// <stdfloat>, so these small types stand in for std::float16_t / std::bfloat16_t; their conversions are
// explicit, so that no arithmetic on them happens by accident in another precision.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace kiln {

namespace detail {

/// binary32 -> binary16, round to nearest even. NaN stays NaN (quiet, sign kept); overflow gives ±inf. The
/// CPU and CUDA backends emit the same steps, so every target rounds alike (F. Giesen's method: the
/// subnormal range is rounded by one f32 addition, the normal range by integer arithmetic).
constexpr std::uint16_t f32_to_f16_bits(float x) {
  std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = f & 0x80000000u;
  f ^= sign;
  std::uint32_t o;
  if (f >= (143u << 23)) {  // |x| >= 65536 or not finite: inf or NaN
    o = f > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (f < (113u << 23)) {  // |x| < 2^-14: the result is subnormal or zero
    constexpr std::uint32_t magic = 126u << 23;  // 0.5: aligns the 10 mantissa bits at the bottom
    o = std::bit_cast<std::uint32_t>(std::bit_cast<float>(f) + std::bit_cast<float>(magic)) - magic;
  } else {
    const std::uint32_t odd = (f >> 13) & 1u;
    o = (f + 0xc8000fffu + odd) >> 13;  // rebias the exponent ((15 - 127) << 23), add 0xfff and round
  }
  return static_cast<std::uint16_t>(o | (sign >> 16));
}

/// binary16 -> binary32, exact.
constexpr float f16_bits_to_f32(std::uint16_t h) {
  constexpr std::uint32_t exp_mask = 0x7c00u << 13;
  std::uint32_t o = (static_cast<std::uint32_t>(h) & 0x7fffu) << 13;
  const std::uint32_t exp = o & exp_mask;
  o += (127u - 15u) << 23;
  if (exp == exp_mask) {
    o += (128u - 16u) << 23;  // inf or NaN
  } else if (exp == 0) {  // zero or subnormal: renormalize with one subtraction
    o += 1u << 23;
    o = std::bit_cast<std::uint32_t>(std::bit_cast<float>(o) - std::bit_cast<float>(113u << 23));
  }
  return std::bit_cast<float>(o | ((static_cast<std::uint32_t>(h) & 0x8000u) << 16));
}

/// binary32 -> bfloat16, round to nearest even; NaN stays a quiet NaN with its sign.
constexpr std::uint16_t f32_to_bf16_bits(float x) {
  const std::uint32_t f = std::bit_cast<std::uint32_t>(x);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((f >> 16) | 0x40u);
  return static_cast<std::uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
}

/// bfloat16 -> binary32, exact.
constexpr float bf16_bits_to_f32(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

}  // namespace detail

/// IEEE 754 binary16 as an element type: 1 sign, 5 exponent, 10 mantissa bits (largest finite 65504).
/// Trivial (like float, uninitialized by default; `half{}` is +0), so that it is copied as bytes.
struct half {
  std::uint16_t bits;
  half() = default;
  constexpr explicit half(float x) : bits(detail::f32_to_f16_bits(x)) {}
  /// From any other number through f32, as kiln converts on every target.
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  constexpr explicit half(T x) : half(static_cast<float>(x)) {}
  constexpr explicit operator float() const { return detail::f16_bits_to_f32(bits); }
  constexpr explicit operator double() const { return detail::f16_bits_to_f32(bits); }
  static constexpr half from_bits(std::uint16_t b) {
    half h{};
    h.bits = b;
    return h;
  }
};

/// bfloat16 as an element type: 1 sign, 8 exponent, 7 mantissa bits (f32's range, 3 significant digits).
struct bfloat16 {
  std::uint16_t bits;
  bfloat16() = default;
  constexpr explicit bfloat16(float x) : bits(detail::f32_to_bf16_bits(x)) {}
  template <class T>
    requires(std::is_arithmetic_v<T> && !std::is_same_v<T, float>)
  constexpr explicit bfloat16(T x) : bfloat16(static_cast<float>(x)) {}
  constexpr explicit operator float() const { return detail::bf16_bits_to_f32(bits); }
  constexpr explicit operator double() const { return detail::bf16_bits_to_f32(bits); }
  static constexpr bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h{};
    h.bits = b;
    return h;
  }
};

static_assert(std::is_trivially_copyable_v<half> && std::is_trivially_default_constructible_v<half> && sizeof(half) == 2);
static_assert(std::is_trivially_copyable_v<bfloat16> && std::is_trivially_default_constructible_v<bfloat16> &&
              sizeof(bfloat16) == 2);

}  // namespace kiln
