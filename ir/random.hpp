// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Counter-based random numbers, defined once: Philox-4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC11) and the maps from its output words to kiln values. The interpreter and
// constant folding call these functions; the CPU backend (codegen/llvm/emit_random.cpp) and the CUDA prelude
// (codegen/cuda/prelude_random.cpp) emit the same operations in the same order, so every target produces the
// same bits. Every floating-point step is one correctly rounded IEEE operation (+ - * / sqrt, conversions of
// integers below 2^53, which are exact): no libm, no fused multiply-add. Each product below is its own
// statement: GCC in ISO C++ mode (kiln's) contracts nothing, Clang contracts only within one expression; the
// backends emit no contraction either.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>

#include "ir/ops.hpp"

namespace kiln::ir::random {

/// Philox-4x32's multipliers and key increments (the "Weyl" constants: the golden ratio and sqrt(3) - 1).
inline constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
inline constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
inline constexpr int kRounds = 10;

struct Words {
  std::uint32_t w[4];
};

/// Philox-4x32 with `rounds` rounds: each round multiplies words 0 and 2 by kMul0, kMul1 into 64-bit products
/// and mixes their halves with words 1 and 3 and the key; the key advances by the Weyl constants between rounds.
constexpr Words philox4x32(Words c, std::uint32_t k0, std::uint32_t k1, int rounds = kRounds) {
  for (int r = 0; r < rounds; ++r) {
    if (r > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    const std::uint64_t p0 = std::uint64_t{kMul0} * c.w[0];
    const std::uint64_t p1 = std::uint64_t{kMul1} * c.w[2];
    c = Words{{static_cast<std::uint32_t>(p1 >> 32) ^ c.w[1] ^ k0, static_cast<std::uint32_t>(p1),
               static_cast<std::uint32_t>(p0 >> 32) ^ c.w[3] ^ k1, static_cast<std::uint32_t>(p0)}};
  }
  return c;
}

/// The block of (key, counter): the key's low and high 32 bits are the Philox key; the counter's low and high
/// 32 bits are counter words 0 and 1, words 2 and 3 are 0.
constexpr Words block(std::int64_t key, std::int64_t counter) {
  const auto k = static_cast<std::uint64_t>(key), c = static_cast<std::uint64_t>(counter);
  return philox4x32(Words{{static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32), 0, 0}},
                    static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32));
}

/// Words 1:0 (high:low) of a block as 64 bits.
constexpr std::uint64_t low64(const Words& b) { return std::uint64_t{b.w[1]} << 32 | b.w[0]; }
constexpr std::uint64_t high64(const Words& b) { return std::uint64_t{b.w[3]} << 32 | b.w[2]; }

// ---- the polynomials of normal() ------------------------------------------------------------------------
// ln(f), f in [sqrt(1/2), sqrt(2)]: with s = (f - 1) / (f + 1), |s| <= 0.1716, ln f = 2 atanh(s) =
// 2s + s * z * P(z), z = s^2, P(z) = sum 2 / (2k + 3) z^k. Eleven terms leave a truncation error below
// 2^-56 relative.
inline constexpr int kLogTerms = 11;
inline constexpr double kLog[kLogTerms] = {2.0 / 3,  2.0 / 5,  2.0 / 7,  2.0 / 9,  2.0 / 11, 2.0 / 13,
                                           2.0 / 15, 2.0 / 17, 2.0 / 19, 2.0 / 21, 2.0 / 23};
inline constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
/// ln 2 split so that e * kLn2Hi is exact for |e| < 2^11 (fdlibm's split).
inline constexpr double kLn2Hi = 0x1.62e42feep-1, kLn2Lo = 0x1.a39ef35793c76p-33;
// cos(2 pi t) and sin(2 pi t) / t for t in [-1/8, 1/8], in w = t^2: the Taylor coefficients
// (-1)^k (2 pi)^2k / (2k)! and (-1)^k (2 pi)^(2k+1) / (2k+1)!, rounded to double; the first omitted terms
// are below 2^-58 (cos) and 2^-63 (sin) of the result.
inline constexpr int kTrigTerms = 9;
inline constexpr double kCos[kTrigTerms] = {0x1p+0,
                                            -0x1.3bd3cc9be45dep+4,
                                            0x1.03c1f081b5ac4p+6,
                                            -0x1.55d3c7e3cbffap+6,
                                            0x1.e1f506891babbp+5,
                                            -0x1.a6d1f2a204a8cp+4,
                                            0x1.f9d38a3763cc3p+2,
                                            -0x1.b6e24f44b128fp+0,
                                            0x1.20c62c2f2d7f5p-2};
inline constexpr double kSin[kTrigTerms] = {0x1.921fb54442d18p+2,
                                            -0x1.4abbce625be53p+5,
                                            0x1.466bc6775aae2p+6,
                                            -0x1.32d2cce62bd86p+6,
                                            0x1.50783487ee782p+5,
                                            -0x1.e3074fde8871fp+3,
                                            0x1.e8f434d018d63p+1,
                                            -0x1.6fadb9f155744p-1,
                                            0x1.aaec32af93359p-4};

/// c[0] + w * (c[1] + w * (... + w * c[n-1])), innermost first.
template <int N>
double horner(const double (&c)[N], double w) {
  double p = c[N - 1];
  for (int k = N - 2; k >= 0; --k) {
    const double pw = p * w;
    p = pw + c[k];
  }
  return p;
}

/// ln(u) for u in [2^-53, 1] (a normal double): u = 2^e f with f in [sqrt(1/2), sqrt(2)).
inline double log_unit(double u) {
  const auto bits = std::bit_cast<std::uint64_t>(u);
  std::int64_t e = static_cast<std::int64_t>(bits >> 52) - 1023;
  double f = std::bit_cast<double>((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);  // [1, 2)
  const bool above = f > kSqrt2;
  f = above ? f * 0.5 : f;
  e = above ? e + 1 : e;
  const double s = (f - 1.0) / (f + 1.0);
  const double z = s * s;
  const double zp = z * horner(kLog, z);
  const double szp = s * zp;
  const double two_s = s * 2.0;
  const double ln_f = two_s + szp;
  const double de = static_cast<double>(e);
  const double lo = de * kLn2Lo;
  const double hi = de * kLn2Hi;
  const double rest = lo + ln_f;
  return hi + rest;
}

/// cos(2 pi c 2^-53) for a 53-bit c (or sin, when `sine`): the quadrant n = round(c / 2^51) and
/// t = c 2^-53 - n / 4 in [-1/8, 1/8] are exact integer arithmetic; cos(n pi / 2 + 2 pi t) is then +-cos or +-sin
/// of 2 pi t, and sin(n pi / 2 + 2 pi t) = cos((n - 1) pi / 2 + 2 pi t).
inline double turn(std::uint64_t c, bool sine) {
  const std::int64_t n = static_cast<std::int64_t>((c + (std::uint64_t{1} << 50)) >> 51);  // 0..4
  const double t = static_cast<double>(static_cast<std::int64_t>(c) - (n << 51)) * 0x1p-53;
  const double w = t * t;
  const double cos_t = horner(kCos, w);
  const double sin_t = t * horner(kSin, w);
  const std::int64_t q = (sine ? n + 3 : n) & 3;
  const double v = (q & 1) != 0 ? sin_t : cos_t;
  return ((q + 1) & 2) != 0 ? -v : v;  // quadrants 1 and 2 are negative
}
inline double cos_turn(std::uint64_t c) { return turn(c, false); }

// ---- the values ----------------------------------------------------------------------------------------

/// 64 random bits: words 1:0 of the block, as a two's-complement i64.
constexpr std::int64_t bits(std::int64_t key, std::int64_t counter) {
  return static_cast<std::int64_t>(low64(block(key, counter)));
}

/// The high 24 bits of word 0 times 2^-24: a multiple of 2^-24 in [0, 1 - 2^-24].
constexpr float uniform_f32(std::int64_t key, std::int64_t counter) {
  return static_cast<float>(block(key, counter).w[0] >> 8) * 0x1p-24f;
}

/// The high 53 bits of words 1:0 times 2^-53: a multiple of 2^-53 in [0, 1 - 2^-53].
constexpr double uniform_f64(std::int64_t key, std::int64_t counter) {
  return static_cast<double>(low64(block(key, counter)) >> 11) * 0x1p-53;
}

/// Box-Muller, one value per block: u1 = (high 53 bits of words 1:0 + 1) 2^-53 in (0, 1], and the high 53 bits
/// c of words 3:2; the value is sqrt(-2 ln u1) cos(2 pi c 2^-53), with ln and cos as above.
inline double normal_f64(std::int64_t key, std::int64_t counter) {
  const Words b = block(key, counter);
  const double u1 = static_cast<double>((low64(b) >> 11) + 1) * 0x1p-53;
  const double r = std::sqrt(-2.0 * log_unit(u1));
  return r * cos_turn(high64(b) >> 11);
}

/// normal_f64 rounded to float (one rounding).
inline float normal_f32(std::int64_t key, std::int64_t counter) { return static_cast<float>(normal_f64(key, counter)); }

// ---- the packed stream -------------------------------------------------------------------------------------
// kiln::random::packed uses every word of a block: block b of key k is Philox with counter words
// (b mod 2^32, b >> 32, 1, 0), so that it is none of the per-value blocks above (words 2 and 3 are 0 there) and
// the two streams of one key never share a block. A block holds four 32-bit values (uniform f32: word w) or two
// 64-bit values (pair w: words 2w+1:2w); a normal pair is Box-Muller's two outputs of one (u1, u2).

/// The packed stream's block b of key.
constexpr Words packed_block(std::int64_t key, std::int64_t b) {
  const auto k = static_cast<std::uint64_t>(key), c = static_cast<std::uint64_t>(b);
  return philox4x32(Words{{static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32), 1, 0}},
                    static_cast<std::uint32_t>(k), static_cast<std::uint32_t>(k >> 32));
}

/// Words 2p+1:2p of a block (p = 0 or 1).
constexpr std::uint64_t pair64(const Words& b, std::int64_t p) { return p != 0 ? high64(b) : low64(b); }

/// Value w mod 2 of block b: 64 bits, words 2p+1:2p with p = w mod 2.
constexpr std::int64_t packed_bits(std::int64_t key, std::int64_t b, std::int64_t w) {
  return static_cast<std::int64_t>(pair64(packed_block(key, b), w & 1));
}

/// Value w mod 4 of block b: the high 24 bits of word w mod 4 times 2^-24, as uniform_f32.
constexpr float packed_uniform_f32(std::int64_t key, std::int64_t b, std::int64_t w) {
  return static_cast<float>(packed_block(key, b).w[w & 3] >> 8) * 0x1p-24f;
}

/// Value w mod 2 of block b: the high 53 bits of pair w mod 2 times 2^-53, as uniform_f64.
constexpr double packed_uniform_f64(std::int64_t key, std::int64_t b, std::int64_t w) {
  return static_cast<double>(pair64(packed_block(key, b), w & 1) >> 11) * 0x1p-53;
}

/// Value w mod 2 of block b: u1, r and c as in normal_f64, from the packed block; value 0 is r cos(2 pi c 2^-53),
/// value 1 is r sin(2 pi c 2^-53), the two outputs of Box-Muller (independent standard normals).
inline double packed_normal_f64(std::int64_t key, std::int64_t b, std::int64_t w) {
  const Words x = packed_block(key, b);
  const double u1 = static_cast<double>((low64(x) >> 11) + 1) * 0x1p-53;
  const double r = std::sqrt(-2.0 * log_unit(u1));
  return r * turn(high64(x) >> 11, (w & 1) != 0);
}

/// packed_normal_f64 rounded to float (one rounding).
inline float packed_normal_f32(std::int64_t key, std::int64_t b, std::int64_t w) {
  return static_cast<float>(packed_normal_f64(key, b, w));
}


// ---- the intrinsics ------------------------------------------------------------------------------------

/// True for the random intrinsics: their i64 arguments are (key, counter) or, packed, (key, block, word).
constexpr bool is_random(Intrinsic fn) { return fn >= Intrinsic::RandomBits && fn <= Intrinsic::RandomPackedNormalF64; }

/// True for the packed stream's intrinsics (three arguments).
constexpr bool is_packed(Intrinsic fn) { return fn >= Intrinsic::RandomPackedBits && fn <= Intrinsic::RandomPackedNormalF64; }

/// The result type of a random intrinsic.
constexpr DType result_type(Intrinsic fn) {
  switch (fn) {
    case Intrinsic::RandomUniformF32: case Intrinsic::RandomNormalF32:
    case Intrinsic::RandomPackedUniformF32: case Intrinsic::RandomPackedNormalF32: return DType::F32;
    case Intrinsic::RandomUniformF64: case Intrinsic::RandomNormalF64:
    case Intrinsic::RandomPackedUniformF64: case Intrinsic::RandomPackedNormalF64: return DType::F64;
    default: return DType::I64;
  }
}

/// How many values one packed block holds for `fn`: 4 for uniform f32, 2 for the other packed kinds.
constexpr int packed_width(Intrinsic fn) { return fn == Intrinsic::RandomPackedUniformF32 ? 4 : 2; }

/// The value of random intrinsic `fn` at (key, counter) or, packed, (key, block = counter, word), in the slot of
/// its result type: `as_int` for bits, `as_float` otherwise (a float result is exact in double).
struct Value {
  std::int64_t as_int = 0;
  double as_float = 0;
};
inline Value evaluate(Intrinsic fn, std::int64_t key, std::int64_t counter, std::int64_t word = 0) {
  switch (fn) {
    case Intrinsic::RandomUniformF32: return {0, uniform_f32(key, counter)};
    case Intrinsic::RandomUniformF64: return {0, uniform_f64(key, counter)};
    case Intrinsic::RandomNormalF32: return {0, normal_f32(key, counter)};
    case Intrinsic::RandomNormalF64: return {0, normal_f64(key, counter)};
    case Intrinsic::RandomPackedBits: return {packed_bits(key, counter, word), 0};
    case Intrinsic::RandomPackedUniformF32: return {0, packed_uniform_f32(key, counter, word)};
    case Intrinsic::RandomPackedUniformF64: return {0, packed_uniform_f64(key, counter, word)};
    case Intrinsic::RandomPackedNormalF32: return {0, packed_normal_f32(key, counter, word)};
    case Intrinsic::RandomPackedNormalF64: return {0, packed_normal_f64(key, counter, word)};
    default: return {bits(key, counter), 0};
  }
}

/// Element g of the packed stream of `fn` (kiln::random::packed): value g mod W of block g / W, W its
/// packed_width, g read as unsigned.
inline Value packed_element(Intrinsic fn, std::int64_t key, std::int64_t g) {
  const int shift = packed_width(fn) == 4 ? 2 : 1;
  const auto u = static_cast<std::uint64_t>(g);
  return evaluate(fn, key, static_cast<std::int64_t>(u >> shift), static_cast<std::int64_t>(u & ((1u << shift) - 1)));
}

}  // namespace kiln::ir::random
