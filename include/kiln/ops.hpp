// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Operator codes shared by the tracing frontend and the IR (their meaning is defined in ir/semantics.hpp).
#pragma once

#include <cstdint>

namespace kiln {

enum class UnaryOp : std::uint8_t {
  Neg,     ///< arithmetic negation (integers wrap)
  Not,     ///< logical not (bool)
  BitNot,  ///< bitwise complement (integers)
};

enum class BinaryOp : std::uint8_t {
  Add, Sub, Mul,
  Div,  ///< floats: IEEE; integers: truncating, x / 0 == 0, MIN / -1 == MIN
  Mod,  ///< floats: fmod; integers: sign of the dividend, x % 0 == x, MIN % -1 == 0
  Min, Max,  ///< floats: NaN-propagating, -0 < +0 (IEEE 754-2019 minimum/maximum)
  BitAnd, BitOr, BitXor,  ///< integers and bool
  Shl, Shr,  ///< integers; the count is taken modulo the bit width; Shr is arithmetic
  And, Or,   ///< bool, short-circuit: the right operand is evaluated only when needed
  Eq, Ne, Lt, Le, Gt, Ge,  ///< result bool; any comparison with NaN is false except Ne
};

enum class Intrinsic : std::uint8_t {
  Sqrt, Exp, Exp2, Expm1, Log, Log2, Log10, Log1p, Pow, Cbrt,
  Sin, Cos, Tan, Asin, Acos, Atan, Atan2, Sinh, Cosh, Tanh, Erf,
  Abs, Floor, Ceil, Round, Trunc, Fma, Copysign,
  IsNan, IsInf, IsFinite,
  /// Counter-based random numbers (kiln/random.hpp; defined in ir/random.hpp): two i64 arguments, key and
  /// counter; the result is i64 bits, or a uniform or normal f32 or f64.
  RandomBits, RandomUniformF32, RandomUniformF64, RandomNormalF32, RandomNormalF64,
  /// The packed stream's values (kiln::random::packed): three i64 arguments, key, block and word; the result
  /// is the value in position `word` of the block's 4 (uniform f32) or 2 (the other kinds) values.
  RandomPackedBits, RandomPackedUniformF32, RandomPackedUniformF64, RandomPackedNormalF32, RandomPackedNormalF64,
};

/// Reductions. Each starts from its identity and partial results are combined in a fixed order.
/// ArgMin/ArgMax reduce (value, index) pairs: the first index of the minimum (maximum); a NaN value wins
/// over numbers (NumPy's rule), the first NaN among NaNs.
enum class ReduceOp : std::uint8_t { Add, Mul, Min, Max, ArgMin, ArgMax };

/// What a stencil reads outside its input arrays (scipy.ndimage's names; pictures show the array `a b c d`
/// extended by two elements on each side):
///   constant(cval)  v v | a b c d | v v      the value given
///   nearest         a a | a b c d | d d      the edge element
///   wrap            c d | a b c d | a b      periodic
///   reflect         b a | a b c d | d c      mirrored about the edge (edge repeated): d c b a | a b c d | d c b a
///   mirror          c b | a b c d | c b      mirrored about the edge element (not repeated): d c b | a b c d | c b a
///   skip            output elements whose neighbourhood leaves the array are not computed: they keep the
///                   output's value (a new output takes the first input's value there)
enum class Border : std::uint8_t { constant, nearest, wrap, reflect, mirror, skip };

/// Atomic read-modify-write operations on one array element (kiln/atomic.hpp; rules in ir/atomics.hpp).
enum class AtomicOp : std::uint8_t { Add, Sub, Min, Max, Exchange, CompareExchange };

}  // namespace kiln
