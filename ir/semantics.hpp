// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The arithmetic of kiln, defined once: the interpreter and constant folding use these functions, and the
// backends must agree with them. Integer arithmetic wraps, division is total, shifts take the count modulo
// the width (>> is arithmetic on signed types, logical on unsigned ones), float-to-integer conversion
// saturates, min/max propagate NaN. f16 and bf16 are storage types: every operation on them converts the
// operands to f32 (exactly), computes in f32 and rounds the result to nearest-even (kiln/half.hpp); a
// conversion to them goes through f32. The builder expands their operations that way (ir/builder.cpp), so
// the backends only load, store, select and convert them; the templates below accept them too, with the
// same meaning. The order of sorts (NumPy's: NaN last, -0.0 == +0.0, stable) is defined per key type in
// ir/sort_keys.hpp.
// complex64 and complex128 are not IR types: the frontend traces a complex value as its two real parts and
// each complex operation as the real operations kiln/complex_math.hpp defines (a robust Smith quotient, a
// scaled |z|, C99 Annex G special values for exp and sqrt), so this file's real arithmetic is all a backend
// runs, and complex_math::HostOps is the host reference of the complex definitions. A complex operand with a
// real one keeps the real one real ((a + bi)x = ax + bxi); a complex array is a real array with one more,
// innermost dimension of extent 2 (re, im). Complex numbers have no order: < <= > >=, sorts and atomics on
// them are kiln::TypeErrors (docs/element_types.md, "Complex numbers").
// Atomics on array elements (kiln::atomic_*) apply this arithmetic in one indivisible, relaxed step:
// ir/atomics.hpp holds their rules (memory order, bitwise compare-exchange, which results are reproducible)
// and sem::atomic_update, what each leaves in the element.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ir/ops.hpp"
#include "kiln/half.hpp"

namespace kiln::ir::sem {

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

/// The unsigned type wrapping arithmetic on T is done in: at least `unsigned`, so that the usual
/// promotions never turn 8- and 16-bit operands into a signed int that could overflow.
template <class T>
using Unsigned = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
T int_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(a));  // MIN / -1 wraps to MIN
  return static_cast<T>(a / b);
}

template <class T>
T int_mod(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>)
    if (b == -1) return 0;
  return static_cast<T>(a % b);
}

template <class T>
T float_min(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;  // -0 < +0
  return a < b ? a : b;
}

template <class T>
T float_max(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// Prefix scans (kiln/scan.hpp) cut the scanned axis into blocks of this many elements. Each block is scanned
/// in order from its first element (not from the identity: -0.0 survives a sum); block b > 0 then combines each
/// running value v with its carry as `carry(b) op v`. The carries are the block totals (total(b), the in-order
/// fold of block b) scanned by the same rule one level up: the totals are cut into groups of kScanBlock, each
/// folded in order from its first, fold(j) = total(G) op ... op total(j) for the group starting at total(G);
/// carry(b) = fold(b - 1) in the first group, chain(g - 1) op fold(b - 1) in a later group g, where chain(g) is
/// carry(b) at the group's last total (chain(0) = fold of group 0, chain(g) = chain(g - 1) op fold of group g).
/// Up to kScanBlock + 1 blocks this is the plain chain carry(b + 1) = carry(b) op total(b); beyond, it keeps a
/// parallel scan's longest chain of dependent operations at 3 kScanBlock + n / kScanBlock^2 instead of
/// n / kScanBlock (which bounds a 1-d scan on a GPU from below), and its rounding error grows no faster. An
/// exclusive scan's element i is the inclusive scan's element i - 1 (element 0: the identity, +0 for Add,
/// ir::identity_of otherwise). Every target follows this order with no contraction (no FMA), so float scans
/// are bitwise identical for any thread count and target (ir/scan.hpp writes it down as statements).
inline constexpr std::int64_t kScanBlock = 1024;

/// Arithmetic and bitwise operators (not comparisons, not And/Or) on one type. Bool uses the bitwise ops.
template <class T>
T binary(BinaryOp op, T a, T b) {
  if constexpr (is_half_v<T>) {
    return T(binary<float>(op, static_cast<float>(a), static_cast<float>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case BinaryOp::BitAnd: case BinaryOp::And: return a && b;
      case BinaryOp::BitOr: case BinaryOp::Or: return a || b;
      case BinaryOp::BitXor: return a != b;
      default: return false;
    }
  } else if constexpr (std::is_integral_v<T>) {
    using U = Unsigned<T>;
    constexpr int bits = sizeof(T) * 8;
    switch (op) {
      case BinaryOp::Add: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case BinaryOp::Sub: return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
      case BinaryOp::Mul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case BinaryOp::Div: return int_div(a, b);
      case BinaryOp::Mod: return int_mod(a, b);
      case BinaryOp::Min: return a < b ? a : b;
      case BinaryOp::Max: return a > b ? a : b;
      case BinaryOp::BitAnd: return a & b;
      case BinaryOp::BitOr: return a | b;
      case BinaryOp::BitXor: return a ^ b;
      case BinaryOp::Shl: return static_cast<T>(static_cast<U>(a) << (static_cast<U>(b) & (bits - 1)));
      // Arithmetic on signed types, logical on unsigned ones (C++'s >> on the promoted value).
      case BinaryOp::Shr: return static_cast<T>(a >> (static_cast<U>(b) & (bits - 1)));
      default: return 0;
    }
  } else {
    switch (op) {
      case BinaryOp::Add: return a + b;
      case BinaryOp::Sub: return a - b;
      case BinaryOp::Mul: return a * b;
      case BinaryOp::Div: return a / b;
      case BinaryOp::Mod: return std::fmod(a, b);
      case BinaryOp::Min: return float_min(a, b);
      case BinaryOp::Max: return float_max(a, b);
      default: return 0;
    }
  }
}

template <class T>
bool compare(BinaryOp op, T a, T b) {
  if constexpr (is_half_v<T>) {
    return compare<float>(op, static_cast<float>(a), static_cast<float>(b));
  } else {
    switch (op) {
      case BinaryOp::Eq: return a == b;
      case BinaryOp::Ne: return a != b;
      case BinaryOp::Lt: return a < b;
      case BinaryOp::Le: return a <= b;
      case BinaryOp::Gt: return a > b;
      case BinaryOp::Ge: return a >= b;
      default: return false;
    }
  }
}

template <class T>
T unary(UnaryOp op, T a) {
  if constexpr (is_half_v<T>) {
    return T(unary<float>(op, static_cast<float>(a)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return op == UnaryOp::Not ? !a : a;
  } else if constexpr (std::is_integral_v<T>) {
    if (op == UnaryOp::Neg) return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(a));
    if (op == UnaryOp::BitNot) return static_cast<T>(~a);
    return a;
  } else {
    return op == UnaryOp::Neg ? -a : a;
  }
}

/// Conversion with kiln's rules: float to integer saturates and maps NaN to 0; integers wrap; to bool is != 0;
/// to f16/bf16 converts to f32 first, then rounds to nearest-even.
template <class To, class From>
To cast(From x) {
  if constexpr (is_half_v<From>) {
    return cast<To, float>(static_cast<float>(x));
  } else if constexpr (is_half_v<To>) {
    return To(cast<float, From>(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (std::isnan(x)) return 0;
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());
    // The first value above the range, 2^(bits-1) or 2^bits: not representable in To, exact in double.
    constexpr double hi = std::is_signed_v<To> ? -lo : 2.0 * static_cast<double>(std::uint64_t{1} << (sizeof(To) * 8 - 1));
    const double d = static_cast<double>(x);
    if (d <= lo) return std::numeric_limits<To>::min();
    if (d >= hi) return std::numeric_limits<To>::max();
    return static_cast<To>(d);
  } else if constexpr (std::is_integral_v<To> && std::is_integral_v<From>) {
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(static_cast<std::uint64_t>(static_cast<std::int64_t>(x))));
  } else {
    return static_cast<To>(x);
  }
}

/// Intrinsics returning T (for float-only ones T is float or double).
template <class T>
T call(Intrinsic fn, T a, T b = T(), T c = T()) {
  if constexpr (is_half_v<T>) {
    return T(call<float>(fn, static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
  } else if constexpr (std::is_integral_v<T>) {
    (void)b;
    (void)c;
    if constexpr (std::is_signed_v<T>)
      if (fn == Intrinsic::Abs) return a < 0 ? unary(UnaryOp::Neg, a) : a;
    return a;
  } else {
    switch (fn) {
      case Intrinsic::Sqrt: return std::sqrt(a);
      case Intrinsic::Exp: return std::exp(a);
      case Intrinsic::Exp2: return std::exp2(a);
      case Intrinsic::Expm1: return std::expm1(a);
      case Intrinsic::Log: return std::log(a);
      case Intrinsic::Log2: return std::log2(a);
      case Intrinsic::Log10: return std::log10(a);
      case Intrinsic::Log1p: return std::log1p(a);
      case Intrinsic::Pow: return std::pow(a, b);
      case Intrinsic::Cbrt: return std::cbrt(a);
      case Intrinsic::Sin: return std::sin(a);
      case Intrinsic::Cos: return std::cos(a);
      case Intrinsic::Tan: return std::tan(a);
      case Intrinsic::Asin: return std::asin(a);
      case Intrinsic::Acos: return std::acos(a);
      case Intrinsic::Atan: return std::atan(a);
      case Intrinsic::Atan2: return std::atan2(a, b);
      case Intrinsic::Sinh: return std::sinh(a);
      case Intrinsic::Cosh: return std::cosh(a);
      case Intrinsic::Tanh: return std::tanh(a);
      case Intrinsic::Erf: return std::erf(a);
      case Intrinsic::Abs: return std::fabs(a);
      case Intrinsic::Floor: return std::floor(a);
      case Intrinsic::Ceil: return std::ceil(a);
      case Intrinsic::Round: return std::round(a);
      case Intrinsic::Trunc: return std::trunc(a);
      case Intrinsic::Fma: return std::fma(a, b, c);
      case Intrinsic::Copysign: return std::copysign(a, b);
      default: return a;
    }
  }
}

/// The bool-valued intrinsics.
template <class T>
bool predicate(Intrinsic fn, T a) {
  if constexpr (is_half_v<T>) {
    return predicate<float>(fn, static_cast<float>(a));
  } else {
    switch (fn) {
      case Intrinsic::IsNan: return std::isnan(a);
      case Intrinsic::IsInf: return std::isinf(a);
      case Intrinsic::IsFinite: return std::isfinite(a);
      default: return false;
    }
  }
}

/// The smallest and largest value of an integer type, as the int64 bits kiln's constants hold them in (a u64
/// above INT64_MAX is stored with its bits).
constexpr std::int64_t int_min(DType t) {
  switch (t) {
    case DType::I8: return INT8_MIN;
    case DType::I16: return INT16_MIN;
    case DType::I32: return INT32_MIN;
    case DType::I64: return INT64_MIN;
    default: return 0;  // unsigned types and bool
  }
}
constexpr std::int64_t int_max(DType t) {
  switch (t) {
    case DType::I8: return INT8_MAX;
    case DType::I16: return INT16_MAX;
    case DType::I32: return INT32_MAX;
    case DType::I64: return INT64_MAX;
    case DType::U8: return UINT8_MAX;
    case DType::U16: return UINT16_MAX;
    case DType::U32: return UINT32_MAX;
    case DType::U64: return -1;  // all bits set
    default: return 1;  // bool
  }
}

/// An integer value in the int64 form constants hold: wrapped to the type's width, sign-extended for
/// signed types, zero-extended for unsigned ones (u64 keeps all 64 bits).
constexpr std::int64_t wrap_int(DType t, std::int64_t v) {
  switch (t) {
    case DType::Bool: return v != 0;
    case DType::I8: return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
    case DType::I16: return static_cast<std::int16_t>(static_cast<std::uint16_t>(v));
    case DType::I32: return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case DType::U8: return static_cast<std::uint8_t>(v);
    case DType::U16: return static_cast<std::uint16_t>(v);
    case DType::U32: return static_cast<std::uint32_t>(v);
    default: return v;
  }
}

/// Calls `f(T{})` with T the C++ type of `t`.
template <class F>
decltype(auto) with_type(DType t, F&& f) {
  switch (t) {
    case DType::Bool: return f(bool{});
    case DType::I32: return f(std::int32_t{});
    case DType::I64: return f(std::int64_t{});
    case DType::F32: return f(float{});
    case DType::F64: break;
    case DType::U8: return f(std::uint8_t{});
    case DType::U16: return f(std::uint16_t{});
    case DType::U32: return f(std::uint32_t{});
    case DType::U64: return f(std::uint64_t{});
    case DType::I8: return f(std::int8_t{});
    case DType::I16: return f(std::int16_t{});
    case DType::F16: return f(half{});
    case DType::BF16: return f(bfloat16{});
  }
  return f(double{});
}

}  // namespace kiln::ir::sem
