// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP Philox-4x32-10 for the random rows (rows_random.cpp): what a careful programmer
// writes for the same numbers as kiln::random, one block per element in a parallel simd loop. The float
// steps are the ones docs/random.md specifies, each its own statement (ISO C++ mode contracts nothing), so
// the row can check kiln's output bit for bit.
#include "reference_random.hpp"

#include <cmath>
#include <cstring>

namespace ref {
namespace {

struct Block {
  std::uint32_t x0, x1, x2, x3;
};

inline Block philox(std::uint64_t key, std::uint64_t counter, std::uint32_t c2 = 0) {
  std::uint32_t k0 = static_cast<std::uint32_t>(key), k1 = static_cast<std::uint32_t>(key >> 32);
  std::uint32_t c0 = static_cast<std::uint32_t>(counter), c1 = static_cast<std::uint32_t>(counter >> 32), c3 = 0;
  for (int r = 0; r < 10; ++r) {
    const std::uint64_t p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
    const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<std::uint32_t>(p1);
    c3 = static_cast<std::uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

inline double from_bits(std::uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
inline std::uint64_t to_bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

/// Box-Muller of a block: out[0] = sqrt(-2 ln u1) cos(2 pi c 2^-53) and, for two outputs, out[1] its sine.
inline void box_muller(const Block& b, double* out, int outputs) {
  // ln u1, u1 = (53 bits + 1) 2^-53 in (0, 1]: 2 atanh((f - 1) / (f + 1)) on f in [sqrt(1/2), sqrt(2)).
  const double u1 = static_cast<double>(((std::uint64_t{b.x1} << 32 | b.x0) >> 11) + 1) * 0x1p-53;
  const std::uint64_t bits = to_bits(u1);
  std::int64_t e = static_cast<std::int64_t>(bits >> 52) - 1023;
  double f = from_bits((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  const bool above = f > 0x1.6a09e667f3bcdp+0;
  f = above ? f * 0.5 : f;
  e = above ? e + 1 : e;
  const double s = (f - 1.0) / (f + 1.0);
  const double z = s * s;
  double p = 2.0 / 23;
  for (int k = 21; k >= 3; k -= 2) {
    const double pz = p * z;
    p = pz + 2.0 / k;
  }
  const double zp = z * p;
  const double szp = s * zp;
  const double two_s = s * 2.0;
  const double ln_f = two_s + szp;
  const double de = static_cast<double>(e);
  const double lo = de * 0x1.a39ef35793c76p-33;
  const double hi = de * 0x1.62e42feep-1;
  const double rest = lo + ln_f;
  const double ln_u1 = hi + rest;
  const double r = std::sqrt(-2.0 * ln_u1);
  // cos(2 pi c 2^-53): quadrant and remainder in integers, then the Taylor polynomials of cos and sin.
  static constexpr double kc[9] = {0x1p+0, -0x1.3bd3cc9be45dep+4, 0x1.03c1f081b5ac4p+6, -0x1.55d3c7e3cbffap+6,
                                   0x1.e1f506891babbp+5, -0x1.a6d1f2a204a8cp+4, 0x1.f9d38a3763cc3p+2,
                                   -0x1.b6e24f44b128fp+0, 0x1.20c62c2f2d7f5p-2};
  static constexpr double ks[9] = {0x1.921fb54442d18p+2, -0x1.4abbce625be53p+5, 0x1.466bc6775aae2p+6,
                                   -0x1.32d2cce62bd86p+6, 0x1.50783487ee782p+5, -0x1.e3074fde8871fp+3,
                                   0x1.e8f434d018d63p+1, -0x1.6fadb9f155744p-1, 0x1.aaec32af93359p-4};
  const std::uint64_t c = (std::uint64_t{b.x3} << 32 | b.x2) >> 11;
  const std::int64_t n = static_cast<std::int64_t>((c + (std::uint64_t{1} << 50)) >> 51);
  const double t = static_cast<double>(static_cast<std::int64_t>(c) - (n << 51)) * 0x1p-53;
  const double w = t * t;
  double pc = kc[8], ps = ks[8];
  for (int k = 7; k >= 0; --k) {
    const double cw = pc * w, sw = ps * w;
    pc = cw + kc[k];
    ps = sw + ks[k];
  }
  const double sin_t = t * ps;
  for (int o = 0; o < outputs; ++o) {  // output 1, the sine: the quadrant one on
    const std::int64_t q = (n + 3 * o) & 3;
    const double v = (q & 1) != 0 ? sin_t : pc;
    out[o] = r * (((q + 1) & 2) != 0 ? -v : v);
  }
}

inline double normal(std::uint64_t key, std::uint64_t counter) {
  double z;
  box_muller(philox(key, counter), &z, 1);
  return z;
}

}  // namespace

void random_uniform_f32(float* out, long n, std::int64_t key, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i)
    out[i] = static_cast<float>(philox(static_cast<std::uint64_t>(key), static_cast<std::uint64_t>(i)).x0 >> 8) * 0x1p-24f;
}

void random_normal_f64(double* out, long n, std::int64_t key, int threads) {
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) out[i] = normal(static_cast<std::uint64_t>(key), static_cast<std::uint64_t>(i));
}

void random_packed_uniform_f32(float* out, long n, std::int64_t key, int threads) {
  const long blocks = n / 4;
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long j = 0; j < blocks; ++j) {
    const Block b = philox(static_cast<std::uint64_t>(key), static_cast<std::uint64_t>(j), 1);
    out[4 * j] = static_cast<float>(b.x0 >> 8) * 0x1p-24f;
    out[4 * j + 1] = static_cast<float>(b.x1 >> 8) * 0x1p-24f;
    out[4 * j + 2] = static_cast<float>(b.x2 >> 8) * 0x1p-24f;
    out[4 * j + 3] = static_cast<float>(b.x3 >> 8) * 0x1p-24f;
  }
  if (blocks * 4 < n) {
    const Block b = philox(static_cast<std::uint64_t>(key), static_cast<std::uint64_t>(blocks), 1);
    const std::uint32_t w[4] = {b.x0, b.x1, b.x2, b.x3};
    for (long f = blocks * 4; f < n; ++f) out[f] = static_cast<float>(w[f - blocks * 4] >> 8) * 0x1p-24f;
  }
}

void random_packed_normal_f64(double* out, long n, std::int64_t key, int threads) {
  const long pairs = n / 2;
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (long j = 0; j < pairs; ++j)
    box_muller(philox(static_cast<std::uint64_t>(key), static_cast<std::uint64_t>(j), 1), out + 2 * j, 2);
  if (pairs * 2 < n) box_muller(philox(static_cast<std::uint64_t>(key), static_cast<std::uint64_t>(pairs), 1), out + n - 1, 1);
}

}  // namespace ref
