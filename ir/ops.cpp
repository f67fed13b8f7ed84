// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/ops.hpp"

#include <array>
#include <utility>

namespace kiln::ir {
namespace {

constexpr std::pair<UnaryOp, std::string_view> kUnary[] = {
    {UnaryOp::Neg, "-"}, {UnaryOp::Not, "!"}, {UnaryOp::BitNot, "~"}};

constexpr std::pair<BinaryOp, std::string_view> kBinary[] = {
    {BinaryOp::Add, "+"},    {BinaryOp::Sub, "-"},     {BinaryOp::Mul, "*"},     {BinaryOp::Div, "/"},
    {BinaryOp::Mod, "%"},    {BinaryOp::Min, "min"},   {BinaryOp::Max, "max"},   {BinaryOp::BitAnd, "&"},
    {BinaryOp::BitOr, "|"},  {BinaryOp::BitXor, "^"},  {BinaryOp::Shl, "<<"},    {BinaryOp::Shr, ">>"},
    {BinaryOp::And, "&&"},   {BinaryOp::Or, "||"},     {BinaryOp::Eq, "=="},     {BinaryOp::Ne, "!="},
    {BinaryOp::Lt, "<"},     {BinaryOp::Le, "<="},     {BinaryOp::Gt, ">"},      {BinaryOp::Ge, ">="}};

struct IntrinsicInfo {
  Intrinsic fn;
  std::string_view name;
  int arity;
  bool float_only;
  bool returns_bool;
};
constexpr IntrinsicInfo kIntrinsics[] = {
    {Intrinsic::Sqrt, "sqrt", 1, true, false},         {Intrinsic::Exp, "exp", 1, true, false},
    {Intrinsic::Exp2, "exp2", 1, true, false},         {Intrinsic::Expm1, "expm1", 1, true, false},
    {Intrinsic::Log, "log", 1, true, false},           {Intrinsic::Log2, "log2", 1, true, false},
    {Intrinsic::Log10, "log10", 1, true, false},       {Intrinsic::Log1p, "log1p", 1, true, false},
    {Intrinsic::Pow, "pow", 2, true, false},           {Intrinsic::Cbrt, "cbrt", 1, true, false},
    {Intrinsic::Sin, "sin", 1, true, false},           {Intrinsic::Cos, "cos", 1, true, false},
    {Intrinsic::Tan, "tan", 1, true, false},           {Intrinsic::Asin, "asin", 1, true, false},
    {Intrinsic::Acos, "acos", 1, true, false},         {Intrinsic::Atan, "atan", 1, true, false},
    {Intrinsic::Atan2, "atan2", 2, true, false},       {Intrinsic::Sinh, "sinh", 1, true, false},
    {Intrinsic::Cosh, "cosh", 1, true, false},         {Intrinsic::Tanh, "tanh", 1, true, false},
    {Intrinsic::Erf, "erf", 1, true, false},           {Intrinsic::Abs, "abs", 1, false, false},
    {Intrinsic::Floor, "floor", 1, true, false},       {Intrinsic::Ceil, "ceil", 1, true, false},
    {Intrinsic::Round, "round", 1, true, false},       {Intrinsic::Trunc, "trunc", 1, true, false},
    {Intrinsic::Fma, "fma", 3, true, false},           {Intrinsic::Copysign, "copysign", 2, true, false},
    {Intrinsic::IsNan, "isnan", 1, true, true},        {Intrinsic::IsInf, "isinf", 1, true, true},
    {Intrinsic::IsFinite, "isfinite", 1, true, true},
    {Intrinsic::RandomBits, "random_bits", 2, false, false},
    {Intrinsic::RandomUniformF32, "random_uniform_f32", 2, false, false},
    {Intrinsic::RandomUniformF64, "random_uniform_f64", 2, false, false},
    {Intrinsic::RandomNormalF32, "random_normal_f32", 2, false, false},
    {Intrinsic::RandomNormalF64, "random_normal_f64", 2, false, false},
    {Intrinsic::RandomPackedBits, "random_packed_bits", 3, false, false},
    {Intrinsic::RandomPackedUniformF32, "random_packed_uniform_f32", 3, false, false},
    {Intrinsic::RandomPackedUniformF64, "random_packed_uniform_f64", 3, false, false},
    {Intrinsic::RandomPackedNormalF32, "random_packed_normal_f32", 3, false, false},
    {Intrinsic::RandomPackedNormalF64, "random_packed_normal_f64", 3, false, false},
};

constexpr std::pair<ReduceOp, std::string_view> kReduce[] = {
    {ReduceOp::Add, "add"}, {ReduceOp::Mul, "mul"}, {ReduceOp::Min, "min"},
    {ReduceOp::Max, "max"}, {ReduceOp::ArgMin, "argmin"}, {ReduceOp::ArgMax, "argmax"}};

template <class Table, class Op>
std::string_view lookup_name(const Table& table, Op op) {
  for (const auto& [o, n] : table)
    if (o == op) return n;
  return "?";
}
template <class Op, class Table>
std::optional<Op> lookup_op(const Table& table, std::string_view s) {
  for (const auto& [o, n] : table)
    if (n == s) return o;
  return std::nullopt;
}
const IntrinsicInfo& info(Intrinsic fn) { return kIntrinsics[static_cast<int>(fn)]; }

}  // namespace

std::string_view name_of(UnaryOp op) { return lookup_name(kUnary, op); }
std::string_view name_of(BinaryOp op) { return lookup_name(kBinary, op); }
std::string_view name_of(Intrinsic fn) { return info(fn).name; }
std::string_view name_of(ReduceOp op) { return lookup_name(kReduce, op); }

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq; }
bool is_commutative(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: case BinaryOp::Mul: case BinaryOp::Min: case BinaryOp::Max:
    case BinaryOp::BitAnd: case BinaryOp::BitOr: case BinaryOp::BitXor:
    case BinaryOp::Eq: case BinaryOp::Ne:
      return true;
    default:
      return false;
  }
}
int arity(Intrinsic fn) { return info(fn).arity; }
bool is_float_only(Intrinsic fn) { return info(fn).float_only; }
bool returns_bool(Intrinsic fn) { return info(fn).returns_bool; }

std::optional<UnaryOp> parse_unary(std::string_view s) { return lookup_op<UnaryOp>(kUnary, s); }
std::optional<BinaryOp> parse_binary(std::string_view s) { return lookup_op<BinaryOp>(kBinary, s); }
std::optional<Intrinsic> parse_intrinsic(std::string_view s) {
  for (const auto& i : kIntrinsics)
    if (i.name == s) return i.fn;
  return std::nullopt;
}
std::optional<ReduceOp> parse_reduce(std::string_view s) { return lookup_op<ReduceOp>(kReduce, s); }

std::string_view name_of(Border b) {
  switch (b) {
    case Border::constant: return "constant";
    case Border::nearest: return "nearest";
    case Border::wrap: return "wrap";
    case Border::reflect: return "reflect";
    case Border::mirror: return "mirror";
    case Border::skip: return "skip";
  }
  return "?";
}

BinaryOp combiner(ReduceOp op) {
  switch (op) {
    case ReduceOp::Add: return BinaryOp::Add;
    case ReduceOp::Mul: return BinaryOp::Mul;
    case ReduceOp::Min: case ReduceOp::ArgMin: return BinaryOp::Min;
    case ReduceOp::Max: case ReduceOp::ArgMax: return BinaryOp::Max;
  }
  return BinaryOp::Add;
}

bool is_arg_reduction(ReduceOp op) { return op == ReduceOp::ArgMin || op == ReduceOp::ArgMax; }

}  // namespace kiln::ir
