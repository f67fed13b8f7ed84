// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Random well-typed expressions: every operator, intrinsic and cast on every type, with edge-case constants.
#include <cmath>
#include <limits>

#include "tools/kiln_fuzz/generator.hpp"

namespace kiln::fuzz::detail {
namespace {

constexpr BinaryOp kArithmetic[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div,
                                    BinaryOp::Mod, BinaryOp::Min, BinaryOp::Max};
constexpr BinaryOp kBitwise[] = {BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor};
constexpr BinaryOp kCompare[] = {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge};
// Correctly rounded (or exact) intrinsics: safe anywhere in an expression.
constexpr Intrinsic kExactUnary[] = {Intrinsic::Sqrt, Intrinsic::Abs,   Intrinsic::Floor,
                                     Intrinsic::Ceil, Intrinsic::Round, Intrinsic::Trunc};
// libm functions: a few ulps apart between libm, libmvec and constant folding.
constexpr Intrinsic kApproximate[] = {
    Intrinsic::Exp,  Intrinsic::Exp2, Intrinsic::Expm1, Intrinsic::Log,  Intrinsic::Log2,  Intrinsic::Log10, Intrinsic::Log1p,
    Intrinsic::Pow,  Intrinsic::Cbrt, Intrinsic::Sin,   Intrinsic::Cos,  Intrinsic::Tan,   Intrinsic::Asin,  Intrinsic::Acos,
    Intrinsic::Atan, Intrinsic::Atan2, Intrinsic::Sinh, Intrinsic::Cosh, Intrinsic::Tanh,  Intrinsic::Erf};

template <class T, std::size_t N>
const T& pick(std::mt19937_64& rng, const T (&items)[N]) {
  return items[std::uniform_int_distribution<std::size_t>(0, N - 1)(rng)];
}

Expr bin(BinaryOp op, Expr a, Expr b) { return ir::make_binary(op, std::move(a), std::move(b)); }

}  // namespace

Expr Generator::constant(DType t) {
  switch (t) {
    case DType::Bool: return ir::make_bool(chance(0.5));
    case DType::I32: {
      constexpr std::int64_t edges[] = {0, 1, -1, 2, 7, -7, 31, 32, 33, 1000,
                                        std::numeric_limits<std::int32_t>::max(), std::numeric_limits<std::int32_t>::min()};
      return ir::make_int(t, chance(0.5) ? pick(rng_, edges) : uniform(-100, 100));
    }
    case DType::I64: {
      constexpr std::int64_t edges[] = {0, 1, -1, 2, 63, 64, 65, -3, std::int64_t{1} << 32,
                                        std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
      return ir::make_int(t, chance(0.5) ? pick(rng_, edges) : uniform(-100, 100));
    }
    case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::I8: case DType::I16: {
      // Edges of every integer type (make_int wraps them to t): 0, ±1, the shift widths, the extremes.
      constexpr std::int64_t edges[] = {0, 1, -1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 63, 64, 127, 128, 255, 256,
                                        32767, 32768, 65535, 65536, std::numeric_limits<std::int64_t>::max(),
                                        std::numeric_limits<std::int64_t>::min()};
      return ir::make_int(t, chance(0.5) ? pick(rng_, edges) : uniform(-100, 100));
    }
    default: {
      constexpr double inf = std::numeric_limits<double>::infinity();
      const double edges[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1.5, -2.5, 3.0, std::nan(""), inf, -inf, 1e30, -1e-30,
                              t == DType::F32 ? double(std::numeric_limits<float>::max()) : std::numeric_limits<double>::max(),
                              t == DType::F32 ? double(std::numeric_limits<float>::denorm_min())
                                              : std::numeric_limits<double>::denorm_min()};
      return ir::make_float(t, chance(0.5) ? pick(rng_, edges) : std::uniform_real_distribution<double>(-10, 10)(rng_));
    }
  }
}

Expr Generator::wrap_index(Expr e, Expr extent) {
  Expr m = bin(BinaryOp::Mod, std::move(e), extent);
  return bin(BinaryOp::Mod, bin(BinaryOp::Add, std::move(m), extent), extent);
}

Expr Generator::index_expr(int depth) {
  if (!own_.empty() && chance(0.5))
    return bin(BinaryOp::Add, own_[uniform(0, static_cast<int>(own_.size()) - 1)], ir::make_i64(uniform(-2, 2)));
  return ir::make_cast(DType::I64, expr(chance(0.7) ? DType::I64 : numeric_type(), depth));
}

Expr Generator::load(DType t) {
  std::vector<const ArrayInfo*> candidates;
  for (const auto& a : arrays_) {
    if (a.var->type.elem != t || !a.defined || a.tainted || hidden_.count(a.var.get())) continue;
    if ((a.shaped || a.unit_axis >= 0) && !in_parfor_) continue;  // an empty S has no element outside the loops
    candidates.push_back(&a);
  }
  if (candidates.empty()) return nullptr;
  const ArrayInfo& a = *candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng_)];
  std::vector<Expr> idx;
  if (a.unit_axis >= 0) {
    idx = own_;
    idx[static_cast<std::size_t>(a.unit_axis)] = ir::make_i64(0);
  } else if (!a.shaped) {
    idx.push_back(wrap_index(index_expr(1), ir::make_dim(a.var, 0)));
  } else if (written_.count(a.var.get()) || chance(0.6)) {
    idx = own_;
  } else {  // a neighbour, wrapped around each axis (every extent is >= 1 inside the parfor)
    for (int d = 0; d < static_cast<int>(shape_.size()); ++d)
      idx.push_back(chance(0.5) ? own_[d] : wrap_index(index_expr(1), ir::make_dim(a.var, d)));
  }
  return ir::make_load(a.var, std::move(idx));
}

Expr Generator::leaf(DType t) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    switch (uniform(0, 4)) {
      case 0: return constant(t);
      case 1: {
        std::vector<Var> vs;
        for (const auto& s : scalars_)
          if (s.var->type.elem == t && !hidden_.count(s.var.get())) vs.push_back(s.var);
        if (!vs.empty()) return ir::make_ref(vs[std::uniform_int_distribution<std::size_t>(0, vs.size() - 1)(rng_)]);
        break;
      }
      case 2:
      case 3:
        if (Expr e = load(t)) return e;
        break;
      default:
        if (t == DType::I64 && in_parfor_) return chance(0.5) ? own_[uniform(0, static_cast<int>(own_.size()) - 1)]
                                                              : ir::make_dim(arrays_[0].var, uniform(0, static_cast<int>(shape_.size()) - 1));
        break;
    }
  }
  return constant(t);
}

Expr Generator::expr(DType t, int depth) {
  if (depth <= 0 || chance(0.25)) return leaf(t);
  const int d = depth - 1;
  if (t == DType::Bool) {
    switch (uniform(0, 6)) {
      case 0: return ir::make_unary(UnaryOp::Not, expr(t, d));
      case 1: {
        const DType u = any_type();
        if (u == DType::Bool && chance(0.5)) return bin(chance(0.5) ? BinaryOp::Eq : BinaryOp::Ne, expr(u, d), expr(u, d));
        return bin(pick(rng_, kCompare), expr(u, d), expr(u, d));
      }
      case 2: return bin(chance(0.5) ? BinaryOp::And : BinaryOp::Or, expr(t, d), expr(t, d));
      case 3: return bin(pick(rng_, kBitwise), expr(t, d), expr(t, d));
      case 4: {
        constexpr Intrinsic preds[] = {Intrinsic::IsNan, Intrinsic::IsInf, Intrinsic::IsFinite};
        return ir::make_call(pick(rng_, preds), {expr(chance(0.5) ? DType::F32 : DType::F64, d)});
      }
      case 5: return ir::make_select(expr(DType::Bool, d), expr(t, d), expr(t, d));
      default: return ir::make_cast(t, expr(numeric_type(), d));
    }
  }
  switch (uniform(0, 6)) {
    case 0: return is_int(t) && chance(0.4) ? ir::make_unary(UnaryOp::BitNot, expr(t, d)) : ir::make_unary(UnaryOp::Neg, expr(t, d));
    case 1:
    case 2: return bin(pick(rng_, kArithmetic), expr(t, d), expr(t, d));
    case 3: {
      if (std::uniform_real_distribution<double>(0, 1)(draw_rng_) < 0.1)
        if (Expr r = random_draw(t, d)) return r;
      if (!is_int(t)) {
        const Intrinsic fn = chance(0.7) ? pick(rng_, kExactUnary) : (chance(0.5) ? Intrinsic::Fma : Intrinsic::Copysign);
        if (fn == Intrinsic::Fma) return ir::make_call(fn, {expr(t, d), expr(t, d), expr(t, d)});
        if (fn == Intrinsic::Copysign) {
          // The sign of a NaN is unspecified (LLVM may rewrite -(a / b) as (-a) / b, and x86 makes 0/0 a
          // negative NaN), so copysign may not take its sign from one: that is not a difference between backends.
          Expr y = expr(t, d);
          y = ir::make_select(ir::make_call(Intrinsic::IsNan, {y}), ir::make_float(t, chance(0.5) ? 1.0 : -1.0), y);
          return ir::make_call(fn, {expr(t, d), std::move(y)});
        }
        return ir::make_call(fn, {expr(t, d)});
      }
      if (chance(0.3)) return ir::make_call(Intrinsic::Abs, {expr(t, d)});
      if (chance(0.5)) {  // shift counts at and past the width: kiln takes them modulo the width
        return bin(chance(0.5) ? BinaryOp::Shl : BinaryOp::Shr, expr(t, d), chance(0.5) ? constant(t) : expr(t, d));
      }
      return bin(pick(rng_, kBitwise), expr(t, d), expr(t, d));
    }
    case 4: return ir::make_select(expr(DType::Bool, d), expr(t, d), expr(t, d));
    default: return ir::make_cast(t, expr(any_type(), d));
  }
}

Expr Generator::exact_sum_term(DType t) {
  // Small integers, and sometimes ±0, ±inf or NaN. Every partial sum must stay below 2^24 (f32) or 2^53: with at
  // most ~45 000 iterations (extent()) of up to 36 updates each, |x| < 8 keeps f32 sums exact.
  const std::int64_t bound = t == DType::F32 ? 8 : 128;
  Expr v = ir::make_cast(t, bin(BinaryOp::Mod, ir::make_cast(DType::I64, expr(numeric_type(), 2)), ir::make_i64(bound)));
  if (chance(0.3)) {
    constexpr double inf = std::numeric_limits<double>::infinity();
    const double specials[] = {-0.0, 0.0, inf, -inf, std::nan("")};
    v = ir::make_select(expr(DType::Bool, 1), ir::make_float(t, pick(rng_, specials)), std::move(v));
  }
  return v;
}

Expr Generator::exact_product_term(DType t) {
  // ±1, ±0, ±inf and NaN: every product of these is exact and the same in any order (0 * inf is NaN wherever it
  // happens). Factors of other magnitudes are not: a run of 2s overflows to inf in one order, and inf * 0 is NaN
  // where the other order kept 0 * 2^k = 0 (kiln-fuzz seed 40326 of the third campaign, under atomics).
  constexpr double inf = std::numeric_limits<double>::infinity();
  const double factors[] = {1.0, -1.0, 1.0, -1.0, 0.0, -0.0, inf, -inf, std::nan("")};
  auto factor = [&] { return ir::make_float(t, pick(rng_, factors)); };
  return ir::make_select(expr(DType::Bool, 2), factor(), ir::make_select(expr(DType::Bool, 1), factor(), ir::make_float(t, 1.0)));
}

Expr Generator::random_draw(DType t, int depth) {
  // Exact on every target (ir/random.hpp): compared bit for bit like the other exact operations.
  Intrinsic fn;
  switch (t) {
    case DType::I64: fn = Intrinsic::RandomBits; break;
    case DType::F32: fn = chance(0.5) ? Intrinsic::RandomUniformF32 : Intrinsic::RandomNormalF32; break;
    case DType::F64: fn = chance(0.5) ? Intrinsic::RandomUniformF64 : Intrinsic::RandomNormalF64; break;
    default: return nullptr;
  }
  return ir::make_call(fn, {expr(DType::I64, depth), expr(DType::I64, depth)});
}

Expr Generator::approximate(DType t) {
  const Intrinsic fn = pick(rng_, kApproximate);
  std::vector<Expr> args;
  for (int k = 0; k < ir::arity(fn); ++k) args.push_back(expr(t, 2));
  return ir::make_call(fn, std::move(args));
}

DType Generator::any_type() {
  // The original five twice as often as the newer types, so that older kinds of programs stay as common.
  constexpr DType types[] = {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64, DType::Bool, DType::I32,
                             DType::I64,  DType::F32, DType::F64, DType::U8,  DType::U16, DType::U32, DType::U64,
                             DType::I8,   DType::I16, DType::F16, DType::BF16};
  return pick(rng_, types);
}

DType Generator::numeric_type() {
  // Types that reductions accumulate in: f16 and bf16 are reduced in f32 (ir/builder.cpp refuses them).
  constexpr DType types[] = {DType::I32, DType::I64, DType::F32, DType::F64, DType::I32, DType::I64, DType::F32,
                             DType::F64, DType::U8,  DType::U16, DType::U32, DType::U64, DType::I8,  DType::I16};
  return pick(rng_, types);
}

}  // namespace kiln::fuzz::detail
