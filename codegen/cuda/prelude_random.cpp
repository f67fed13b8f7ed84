// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The random intrinsics in CUDA C: ir/random.hpp step for step. Philox's 32 x 32 -> 64-bit products are
// __umulhi and a plain multiply; Box-Muller's angle evaluates only the polynomial it keeps. Every floating-point step is an explicitly rounded intrinsic (__dmul_rn,
// __dadd_rn, __ddiv_rn, __dsqrt_rn, ...), which NVVM never fuses or approximates, so the numbers are the
// interpreter's also under --use_fast_math. The constants are printed from ir/random.hpp's own tables.
#include "codegen/cuda/prelude_random.hpp"

#include <cstdio>

#include "ir/random.hpp"

namespace kiln::codegen::cuda {
namespace {

namespace rnd = ir::random;

/// `v` as a C++17 hexadecimal floating literal: exact.
std::string hex(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

std::string u32(std::uint32_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%08Xu", v);
  return buf;
}

/// A device function evaluating the polynomial with coefficients `c` at w by Horner's rule, innermost first.
template <int N>
std::string horner(const char* name, const double (&c)[N]) {
  std::string s = "__device__ __forceinline__ double " + std::string(name) + "(double w) {\n  double p = " + hex(c[N - 1]) + ";\n";
  for (int k = N - 2; k >= 0; --k) s += "  p = __dadd_rn(__dmul_rn(p, w), " + hex(c[k]) + ");\n";
  return s + "  return p;\n}\n";
}

}  // namespace

std::string random_prelude() {
  std::string s = "// ---- kiln random numbers: Philox-4x32-10 and the maps of ir/random.hpp ----------------------------\n";
  s += "struct kiln_words { unsigned w[4]; };\n";
  // Counter word 2 is 0 for the per-value blocks, 1 for the packed stream's (ir/random.hpp).
  s += "__device__ __forceinline__ kiln_words kiln_philox(long long key, long long counter, unsigned c2 = 0u) {\n"
       "  unsigned k0 = (unsigned)(unsigned long long)key, k1 = (unsigned)((unsigned long long)key >> 32);\n"
       "  unsigned c0 = (unsigned)(unsigned long long)counter, c1 = (unsigned)((unsigned long long)counter >> 32);\n"
       "  unsigned c3 = 0u;\n"
       "#pragma unroll\n"
       "  for (int r = 0; r < " + std::to_string(rnd::kRounds) + "; ++r) {\n"
       "    if (r > 0) { k0 += " + u32(rnd::kWeyl0) + "; k1 += " + u32(rnd::kWeyl1) + "; }\n"
       "    const unsigned h0 = __umulhi(" + u32(rnd::kMul0) + ", c0), l0 = " + u32(rnd::kMul0) + " * c0;\n"
       "    const unsigned h1 = __umulhi(" + u32(rnd::kMul1) + ", c2), l1 = " + u32(rnd::kMul1) + " * c2;\n"
       "    c0 = h1 ^ c1 ^ k0; c1 = l1; c2 = h0 ^ c3 ^ k1; c3 = l0;\n"
       "  }\n"
       "  kiln_words b = {{c0, c1, c2, c3}};\n"
       "  return b;\n"
       "}\n";
  s += "__device__ __forceinline__ unsigned long long kiln_join(unsigned lo, unsigned hi) { return (unsigned long long)hi << 32 | lo; }\n";
  s += horner("kiln_random_log_poly", rnd::kLog);
  s += "__device__ __forceinline__ double kiln_random_log_unit(double u) {\n"
       "  const unsigned long long bits = (unsigned long long)__double_as_longlong(u);\n"
       "  long long e = (long long)(bits >> 52) - 1023;\n"
       "  double f = __longlong_as_double((long long)((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull));\n"
       "  const bool above = f > " + hex(rnd::kSqrt2) + ";\n"
       "  f = above ? __dmul_rn(f, 0.5) : f;\n"
       "  e = above ? e + 1 : e;\n"
       "  const double s = __ddiv_rn(__dsub_rn(f, 1.0), __dadd_rn(f, 1.0));\n"
       "  const double z = __dmul_rn(s, s);\n"
       "  const double ln_f = __dadd_rn(__dmul_rn(s, 2.0), __dmul_rn(s, __dmul_rn(z, kiln_random_log_poly(z))));\n"
       "  const double de = __ll2double_rn(e);\n"
       "  return __dadd_rn(__dmul_rn(de, " + hex(rnd::kLn2Hi) + "), __dadd_rn(__dmul_rn(de, " + hex(rnd::kLn2Lo) + "), ln_f));\n"
       "}\n";
  // ir::random::turn evaluates both polynomials and keeps one. Here only the kept one is evaluated, Horner's
  // steps on coefficients selected by the quadrant: the same operations on the same values, so the same bits
  // (cos_t is multiplied by 1.0 where sin_t is multiplied by t: exact), at half the double-precision work.
  s += "__device__ __forceinline__ double kiln_random_turn(unsigned long long c, bool sine) {\n"
       "  const long long n = (long long)((c + (1ull << 50)) >> 51);\n"
       "  const double t = __dmul_rn(__ll2double_rn((long long)c - (n << 51)), 0x1p-53);\n"
       "  const double w = __dmul_rn(t, t);\n"
       "  const long long q = (sine ? n + 3 : n) & 3;\n"
       "  const bool odd = (q & 1) != 0;\n"
       "  double p = odd ? " + hex(rnd::kSin[rnd::kTrigTerms - 1]) + " : " + hex(rnd::kCos[rnd::kTrigTerms - 1]) + ";\n";
  for (int k = rnd::kTrigTerms - 2; k >= 0; --k)
    s += "  p = __dadd_rn(__dmul_rn(p, w), odd ? " + hex(rnd::kSin[k]) + " : " + hex(rnd::kCos[k]) + ");\n";
  s += "  const double v = __dmul_rn(odd ? t : 1.0, p);\n"
       "  return ((q + 1) & 2) != 0 ? -v : v;\n"
       "}\n";
  s += "__device__ __forceinline__ double kiln_random_box_muller(const kiln_words& b, bool sine) {\n"
       "  const double u1 = __dmul_rn(__ull2double_rn((kiln_join(b.w[0], b.w[1]) >> 11) + 1), 0x1p-53);\n"
       "  const double r = __dsqrt_rn(__dmul_rn(-2.0, kiln_random_log_unit(u1)));\n"
       "  return __dmul_rn(r, kiln_random_turn(kiln_join(b.w[2], b.w[3]) >> 11, sine));\n"
       "}\n";
  s += "__device__ __forceinline__ long long kiln_random_bits(long long key, long long counter) {\n"
       "  const kiln_words b = kiln_philox(key, counter);\n"
       "  return (long long)kiln_join(b.w[0], b.w[1]);\n"
       "}\n"
       "__device__ __forceinline__ float kiln_random_uniform_f32(long long key, long long counter) {\n"
       "  return __fmul_rn(__uint2float_rn(kiln_philox(key, counter).w[0] >> 8), 0x1p-24f);\n"
       "}\n"
       "__device__ __forceinline__ double kiln_random_uniform_f64(long long key, long long counter) {\n"
       "  const kiln_words b = kiln_philox(key, counter);\n"
       "  return __dmul_rn(__ull2double_rn(kiln_join(b.w[0], b.w[1]) >> 11), 0x1p-53);\n"
       "}\n"
       "__device__ __forceinline__ double kiln_random_normal_f64(long long key, long long counter) {\n"
       "  return kiln_random_box_muller(kiln_philox(key, counter), false);\n"
       "}\n"
       "__device__ __forceinline__ float kiln_random_normal_f32(long long key, long long counter) {\n"
       "  return __double2float_rn(kiln_random_normal_f64(key, counter));\n"
       "}\n";
  // The packed stream: word or pair `word` of block `block`. The calls of one block draw inline the same
  // kiln_philox(key, block, 1u), which NVVM computes once.
  s += "__device__ __forceinline__ unsigned long long kiln_random_pair(const kiln_words& b, long long word) {\n"
       "  return (word & 1) != 0 ? kiln_join(b.w[2], b.w[3]) : kiln_join(b.w[0], b.w[1]);\n"
       "}\n"
       "__device__ __forceinline__ long long kiln_random_packed_bits(long long key, long long block, long long word) {\n"
       "  return (long long)kiln_random_pair(kiln_philox(key, block, 1u), word);\n"
       "}\n"
       "__device__ __forceinline__ float kiln_random_packed_uniform_f32(long long key, long long block, long long word) {\n"
       "  const kiln_words b = kiln_philox(key, block, 1u);\n"
       "  const long long k = word & 3;\n"
       "  const unsigned x = k == 0 ? b.w[0] : k == 1 ? b.w[1] : k == 2 ? b.w[2] : b.w[3];\n"
       "  return __fmul_rn(__uint2float_rn(x >> 8), 0x1p-24f);\n"
       "}\n"
       "__device__ __forceinline__ double kiln_random_packed_uniform_f64(long long key, long long block, long long word) {\n"
       "  return __dmul_rn(__ull2double_rn(kiln_random_pair(kiln_philox(key, block, 1u), word) >> 11), 0x1p-53);\n"
       "}\n"
       "__device__ __forceinline__ double kiln_random_packed_normal_f64(long long key, long long block, long long word) {\n"
       "  return kiln_random_box_muller(kiln_philox(key, block, 1u), (word & 1) != 0);\n"
       "}\n"
       "__device__ __forceinline__ float kiln_random_packed_normal_f32(long long key, long long block, long long word) {\n"
       "  return __double2float_rn(kiln_random_packed_normal_f64(key, block, word));\n"
       "}\n";
  return s;
}

}  // namespace kiln::codegen::cuda
