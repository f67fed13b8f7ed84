// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln's sort order, defined once per key type: the interpreter's comparator (std::stable_sort), the CPU
// runtime's radix sort (runtime/sort.cpp) and the CUDA radix kernels (codegen/cuda/sort_kernels.cpp, from
// `cuda_encode`) all take it from here.
//
// The order is NumPy's: ascending; for floats NaN after everything (all NaNs equal among themselves, so a
// stable sort keeps them in input order), -0.0 equal to +0.0 (kept in input order), -inf and +inf in place;
// false before true. Every sort in kiln is stable: equal keys keep their input order.
//
// A radix sort needs an unsigned integer whose order is the key order: `encode` maps each key to one, equal
// keys to the same code (so -0.0 and +0.0 share +0.0's code and every NaN has all bits set, after +inf).
// A new element type adds a specialization here and nothing else changes.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kiln/dtype.hpp"

namespace kiln::ir::sort {

template <class T>
struct SortKey;

/// Signed integers: the sign bit flipped, so the two's complement order becomes the unsigned one.
template <class T>
  requires(std::is_integral_v<T> && std::is_signed_v<T>)
struct SortKey<T> {
  using Code = std::make_unsigned_t<T>;
  static constexpr Code kSign = Code(1) << (sizeof(T) * 8 - 1);
  static Code encode(T x) { return static_cast<Code>(static_cast<Code>(x) ^ kSign); }
  static bool less(T a, T b) { return a < b; }
  /// The same map in CUDA C on a `x` of the key type, giving `code`.
  static constexpr const char* cuda_code = sizeof(T) == 1   ? "unsigned char"
                                           : sizeof(T) == 2 ? "unsigned short"
                                           : sizeof(T) == 4 ? "unsigned int"
                                                            : "unsigned long long";
  static constexpr const char* cuda_encode =
      sizeof(T) == 1   ? "code = (unsigned char)((unsigned char)x ^ 0x80u);"
      : sizeof(T) == 2 ? "code = (unsigned short)((unsigned short)x ^ 0x8000u);"
      : sizeof(T) == 4 ? "code = (unsigned int)x ^ 0x80000000u;"
                       : "code = (unsigned long long)x ^ 0x8000000000000000ull;";
  /// The key back from `code` in CUDA C (every key comes back from its code), or null.
  static constexpr const char* cuda_decode = sizeof(T) == 1   ? "x = (signed char)(code ^ 0x80u);"
                                             : sizeof(T) == 2 ? "x = (short)(code ^ 0x8000u);"
                                             : sizeof(T) == 4 ? "x = (int)(code ^ 0x80000000u);"
                                                              : "x = (long long)(code ^ 0x8000000000000000ull);";
};

/// Unsigned integers are their own codes.
template <class T>
  requires(std::is_integral_v<T> && std::is_unsigned_v<T> && !std::is_same_v<T, bool>)
struct SortKey<T> {
  using Code = T;
  static constexpr Code kSign = 0;
  static Code encode(T x) { return x; }
  static bool less(T a, T b) { return a < b; }
  static constexpr const char* cuda_code = sizeof(T) == 1   ? "unsigned char"
                                           : sizeof(T) == 2 ? "unsigned short"
                                           : sizeof(T) == 4 ? "unsigned int"
                                                            : "unsigned long long";
  static constexpr const char* cuda_encode = "code = x;";
  static constexpr const char* cuda_decode = "x = code;";
};

/// f16 and bf16 (held as their bits on the GPU): ordered as their values, as the wider floats below, on
/// 16-bit codes. Keys are gathered, as for the wider floats.
template <class T>
  requires(std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
struct SortKey<T> {
  using Code = std::uint16_t;
  static constexpr Code kSign = 0x8000u;
  static constexpr Code kInf = std::is_same_v<T, half> ? 0x7c00u : 0x7f80u;
  static Code encode(T x) {
    Code u = x.bits;
    if ((u & 0x7fffu) > kInf) return 0xffffu;
    if ((u & 0x7fffu) == 0) u = 0;
    return static_cast<Code>((u & kSign) ? ~u : (u | kSign));
  }
  static bool less(T a, T b) {
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    return fa < fb || (std::isnan(fb) && !std::isnan(fa));
  }
  static constexpr const char* cuda_code = "unsigned short";
  static constexpr const char* cuda_encode =
      std::is_same_v<T, half>
          ? "{ unsigned short u = x; if ((u & 0x7fffu) > 0x7c00u) code = 0xffffu; else { if ((u & 0x7fffu) == 0u) u = 0;"
            " code = (u & 0x8000u) ? (unsigned short)~u : (unsigned short)(u | 0x8000u); } }"
          : "{ unsigned short u = x; if ((u & 0x7fffu) > 0x7f80u) code = 0xffffu; else { if ((u & 0x7fffu) == 0u) u = 0;"
            " code = (u & 0x8000u) ? (unsigned short)~u : (unsigned short)(u | 0x8000u); } }";
  /// The key back from `code`: exact except for -0.0 (comes back +0.0) and NaN payloads (0x7fff); the CUDA
  /// sort puts the zeros and NaNs it saw back in their input order (codegen/cuda/sort_kernels.cpp).
  static constexpr const char* cuda_decode =
      "x = (code & 0x8000u) ? (unsigned short)(code & 0x7fffu) : (unsigned short)~code;";
};

template <>
struct SortKey<bool> {
  using Code = std::uint8_t;
  static Code encode(bool x) { return x ? 1 : 0; }
  static bool less(bool a, bool b) { return !a && b; }
  static constexpr const char* cuda_code = "unsigned char";
  static constexpr const char* cuda_encode = "code = x ? 1 : 0;";
  static constexpr const char* cuda_decode = "x = code != 0;";
};

/// Floats: negative values have every bit flipped (a larger magnitude is smaller), others the sign bit set;
/// -0.0 first becomes +0.0 and every NaN the all-ones code.
template <class T>
  requires std::is_floating_point_v<T>
struct SortKey<T> {
  using Code = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr Code kSign = Code(1) << (sizeof(T) * 8 - 1);
  static Code encode(T x) {
    if (std::isnan(x)) return ~Code(0);
    if (x == T(0)) x = T(0);
    Code u;
    std::memcpy(&u, &x, sizeof u);
    return (u & kSign) ? ~u : (u | kSign);
  }
  static bool less(T a, T b) { return a < b || (std::isnan(b) && !std::isnan(a)); }
  static constexpr const char* cuda_code = sizeof(T) == 4 ? "unsigned int" : "unsigned long long";
  static constexpr const char* cuda_encode =
      sizeof(T) == 4
          ? "if (isnan(x)) code = 0xffffffffu; else { if (x == 0.0f) x = 0.0f; unsigned int u = __float_as_uint(x);"
            " code = (u & 0x80000000u) ? ~u : (u | 0x80000000u); }"
          : "if (isnan(x)) code = 0xffffffffffffffffull; else { if (x == 0.0) x = 0.0;"
            " unsigned long long u = (unsigned long long)__double_as_longlong(x);"
            " code = (u & 0x8000000000000000ull) ? ~u : (u | 0x8000000000000000ull); }";
  /// The key back from `code`: exact except for -0.0 (comes back +0.0) and NaN payloads (all-ones payload);
  /// the CUDA sort puts the zeros and NaNs it saw back in their input order (codegen/cuda/sort_kernels.cpp).
  static constexpr const char* cuda_decode =
      sizeof(T) == 4 ? "x = __uint_as_float((code & 0x80000000u) ? (code & 0x7fffffffu) : ~code);"
                     : "x = __longlong_as_double((long long)((code & 0x8000000000000000ull) ? (code & 0x7fffffffffffffffull) : ~code));";
};

/// Whether sorting the codes alone gives back the keys: when equal codes mean equal bits. Floats lose that
/// for -0.0 (coded as +0.0) and NaN payloads; the sorts then carry the original values.
template <class T>
bool code_is_value(T x) {
  if constexpr (std::is_floating_point_v<T>) return !std::isnan(x) && !(x == T(0) && std::signbit(x));
  else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return SortKey<T>::encode(x) != 0xffffu && x.bits != 0x8000u;
  else return true;
}

/// The key back from its code when code_is_value held.
template <class T>
T decode(typename SortKey<T>::Code c) {
  using K = SortKey<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return c != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<typename K::Code>(c ^ K::kSign));
  } else {
    const typename K::Code u = (c & K::kSign) ? (c & ~K::kSign) : ~c;
    T x;
    std::memcpy(&x, &u, sizeof x);
    return x;
  }
}

}  // namespace kiln::ir::sort
