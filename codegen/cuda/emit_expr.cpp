// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Expressions as CUDA C. Every operator is fully parenthesized; the arithmetic follows ir/semantics.hpp
// through the prelude's helpers (wrapping integers, total division, masked shifts, saturating casts,
// NaN-propagating min/max), and float code is compiled without contraction (--fmad=false) so it rounds as
// written, like the interpreter.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/ops.hpp"
#include "ir/random.hpp"
#include "kiln/error.hpp"
#include "kiln/half.hpp"

namespace kiln::codegen::cuda {
namespace {

// Identifiers a user variable must not take: C++ and CUDA keywords and built-ins, and the functions the
// generated code calls (a local named `exp` would hide expf's double twin `exp`).
const std::unordered_set<std::string>& reserved() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const auto& words = *new std::unordered_set<std::string>{
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
      "continue", "decltype", "default", "delete", "do", "double", "else", "enum", "explicit", "extern", "false", "float",
      "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
      "operator", "or", "private", "protected", "public", "register", "return", "short", "signed", "sizeof", "static",
      "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typename", "union", "unsigned", "using",
      "virtual", "void", "volatile", "while", "xor", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "min",
      "max", "abs", "malloc", "free", "memcpy", "isnan", "isinf", "isfinite", "signbit", "atomicAdd", "atomicCAS",
      "sqrt", "sqrtf", "exp", "expf", "exp2", "exp2f", "expm1", "expm1f", "log", "logf", "log2", "log2f", "log10", "log10f",
      "log1p", "log1pf", "pow", "powf", "cbrt", "cbrtf", "sin", "sinf", "cos", "cosf", "tan", "tanf", "asin", "asinf",
      "acos", "acosf", "atan", "atanf", "atan2", "atan2f", "sinh", "sinhf", "cosh", "coshf", "tanh", "tanhf", "erf", "erff",
      "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf", "round", "roundf", "trunc", "truncf", "fma", "fmaf", "copysign",
      "copysignf", "fmod", "fmodf"};
  return words;
}

struct MathName {
  Intrinsic fn;
  const char* f64;
  const char* f32;
};

constexpr MathName kMath[] = {
    {Intrinsic::Sqrt, "sqrt", "sqrtf"},   {Intrinsic::Exp, "exp", "expf"},       {Intrinsic::Exp2, "exp2", "exp2f"},
    {Intrinsic::Expm1, "expm1", "expm1f"}, {Intrinsic::Log, "log", "logf"},       {Intrinsic::Log2, "log2", "log2f"},
    {Intrinsic::Log10, "log10", "log10f"}, {Intrinsic::Log1p, "log1p", "log1pf"}, {Intrinsic::Pow, "pow", "powf"},
    {Intrinsic::Cbrt, "cbrt", "cbrtf"},   {Intrinsic::Sin, "sin", "sinf"},       {Intrinsic::Cos, "cos", "cosf"},
    {Intrinsic::Tan, "tan", "tanf"},      {Intrinsic::Asin, "asin", "asinf"},    {Intrinsic::Acos, "acos", "acosf"},
    {Intrinsic::Atan, "atan", "atanf"},   {Intrinsic::Atan2, "atan2", "atan2f"}, {Intrinsic::Sinh, "sinh", "sinhf"},
    {Intrinsic::Cosh, "cosh", "coshf"},   {Intrinsic::Tanh, "tanh", "tanhf"},    {Intrinsic::Erf, "erf", "erff"},
    {Intrinsic::Abs, "fabs", "fabsf"},    {Intrinsic::Floor, "floor", "floorf"}, {Intrinsic::Ceil, "ceil", "ceilf"},
    {Intrinsic::Round, "round", "roundf"}, {Intrinsic::Trunc, "trunc", "truncf"}, {Intrinsic::Fma, "fma", "fmaf"},
    {Intrinsic::Copysign, "copysign", "copysignf"}, {Intrinsic::IsNan, "isnan", "isnan"},
    {Intrinsic::IsInf, "isinf", "isinf"}, {Intrinsic::IsFinite, "isfinite", "isfinite"},
};

/// The shortest decimal spelling that reads back as exactly `v` (at most `max_digits` significant digits).
template <class T>
std::string shortest(T v, int max_digits) {
  char buf[64];
  for (int digits = 1; digits <= max_digits; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    const T back = static_cast<T>(std::is_same_v<T, float> ? std::strtof(buf, nullptr) : std::strtod(buf, nullptr));
    if (back == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

[[noreturn]] void unsupported(const std::string& what) {
  throw CompileError(fmt::format("kiln CUDA backend: {}", what), {});
}

}  // namespace

const char* type_name(DType t) {
  switch (t) {
    case DType::Bool: return "bool";
    case DType::I32: return "int";
    case DType::I64: return "long long";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::U8: return "unsigned char";
    case DType::U16: return "unsigned short";
    case DType::U32: return "unsigned int";
    case DType::U64: return "unsigned long long";
    case DType::I8: return "signed char";
    case DType::I16: return "short";
    case DType::F16: case DType::BF16: return "unsigned short";  // their bits: only converted (prelude)
  }
  return "void";
}

std::string Emitter::fresh(const std::string& base) {
  std::string s;
  for (char c : base) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '_' || s.rfind("kiln", 0) == 0 ||
      reserved().count(s))
    s = "v_" + s;
  std::string candidate = s;
  for (int n = 2; taken_.count(candidate); ++n) candidate = s + "_" + std::to_string(n);
  taken_.insert(candidate);
  return candidate;
}

std::string Emitter::bind(const ir::VarNode* v) {
  std::string n = fresh(v->name);
  names_[v] = n;
  return n;
}

const std::string& Emitter::name(const ir::VarNode* v) const {
  auto it = names_.find(v);
  if (it == names_.end())
    backend_error(fn_.name, fmt::format("variable {} is not available inside the parfor", v->name));
  return it->second;
}

const Emitter::ArrayNames& Emitter::array(const ir::VarNode* v) const {
  auto it = arrays_.find(v);
  if (it == arrays_.end()) backend_error(fn_.name, fmt::format("array {} is not available inside the parfor", v->name));
  return it->second;
}

std::string Emitter::constant(const ir::ConstExpr& c) const {
  switch (c.type) {
    case DType::Bool: return c.i ? "true" : "false";
    case DType::I32: {
      const auto v = static_cast<std::int32_t>(c.i);
      if (v == std::numeric_limits<std::int32_t>::min()) return "(-2147483647 - 1)";
      return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    }
    case DType::I64: {
      if (c.i == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807LL - 1)";
      return c.i < 0 ? "(" + std::to_string(c.i) + "LL)" : std::to_string(c.i) + "LL";
    }
    case DType::F32: {
      const auto v = static_cast<float>(c.f);
      if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
      if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
      const std::string s = shortest(v, 9) + "f";
      return std::signbit(v) ? "(" + s + ")" : s;
    }
    case DType::F64: {
      if (std::isnan(c.f)) return "__longlong_as_double(0x7ff8000000000000LL)";
      if (std::isinf(c.f)) return c.f > 0 ? "__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0xfff0000000000000LL)";
      const std::string s = shortest(c.f, 17);
      return std::signbit(c.f) ? "(" + s + ")" : s;
    }
    case DType::U32: return std::to_string(static_cast<std::uint32_t>(c.i)) + "u";
    case DType::U64: return std::to_string(static_cast<std::uint64_t>(c.i)) + "ull";
    // Narrow types keep their own type, so that overloaded helpers and atomics see it.
    case DType::U8: case DType::U16: case DType::I8: case DType::I16:
      return "((" + std::string(type_name(c.type)) + ")" + std::to_string(c.i) + ")";
    case DType::F16:
      return fmt::format("((unsigned short){:#06x})", kiln::detail::f32_to_f16_bits(static_cast<float>(c.f)));
    case DType::BF16:
      return fmt::format("((unsigned short){:#06x})", kiln::detail::f32_to_bf16_bits(static_cast<float>(c.f)));
  }
  return "0";
}

std::string Emitter::expr(const ir::Expr& e) {
  // A running-sums fold (emit_march.cpp): the part of it already summed is a register.
  if (!march_sum_names_.empty())
    if (const auto it = march_sum_names_.find(e.get()); it != march_sum_names_.end()) return it->second;
  // Between a let and the next statement that is not a let nothing is stored or assigned, so an equal
  // expression has the let's value (loads included).
  if (!lets_.empty())
    for (const auto& [init, let] : lets_.back())
      if (ir::equal(init, e)) return let;
  switch (e->kind) {
    case ir::ExprKind::Const: return constant(e->as<ir::ConstExpr>());
    case ir::ExprKind::VarRef: return name(e->as<ir::VarRefExpr>().var.get());
    case ir::ExprKind::Load: {
      const auto& l = e->as<ir::LoadExpr>();
      if (stencil_on_)
        if (auto it = stencil_->loads.find(e.get()); it != stencil_->loads.end()) return stencil_value(it->second);
      if (staged_on_)
        if (auto it = staged_->loads.find(&l); it != staged_->loads.end()) return staged_cell(it->second);
      if (tiled_on_)
        if (auto it = tiled_->loads.find(&l); it != tiled_->loads.end()) return tiled_cell(it->second);
      if (contraction_on_)
        if (auto it = contraction_->loads.find(&l); it != contraction_->loads.end()) return contraction_cell(it->second);
      return element(l.array.get(), l.indices);
    }
    case ir::ExprKind::Dim: {
      const auto& d = e->as<ir::DimExpr>();
      const std::string& n = array(d.array.get()).extent[d.axis];
      if (n.empty()) backend_error(fn_.name, fmt::format("the extent of {} was not captured", d.array->name));
      return n;
    }
    case ir::ExprKind::Unary: return unary(e->as<ir::UnaryExpr>());
    case ir::ExprKind::Binary: return binary(e->as<ir::BinaryExpr>());
    case ir::ExprKind::Select: {
      const auto& s = e->as<ir::SelectExpr>();
      return "(" + expr(s.cond) + " ? " + expr(s.a) + " : " + expr(s.b) + ")";  // evaluates only the chosen side
    }
    case ir::ExprKind::Cast: {
      const auto& c = e->as<ir::CastExpr>();
      return cast(c.type, c.a->type, expr(c.a));
    }
    case ir::ExprKind::Call: return call(e->as<ir::CallExpr>());
  }
  backend_error(fn_.name, "unknown expression kind");
}

std::string Emitter::unary(const ir::UnaryExpr& u) {
  const std::string a = expr(u.a);
  switch (u.op) {
    case UnaryOp::Neg: return is_float(u.type) ? "(-" + a + ")" : "kiln_neg(" + a + ")";
    case UnaryOp::Not: return "(!" + a + ")";
    case UnaryOp::BitNot: return "((" + std::string(type_name(u.type)) + ")~" + a + ")";  // ~ promotes narrow types
  }
  unsupported("unknown unary operator");
}

std::string Emitter::binary(const ir::BinaryExpr& b) {
  const std::string x = expr(b.a), y = expr(b.b);
  const DType t = b.a->type;
  auto infix = [&](const char* op) { return "(" + x + " " + op + " " + y + ")"; };
  // Bitwise operators promote 8- and 16-bit operands to int: converted back, the result keeps its type.
  auto bitwise = [&](const char* op) {
    return size_of(t) < 4 && t != DType::Bool ? "((" + std::string(type_name(t)) + ")" + infix(op) + ")" : infix(op);
  };
  auto helper = [&](const char* fn) { return std::string(fn) + "(" + x + ", " + y + ")"; };
  switch (b.op) {
    case BinaryOp::Add: return is_float(t) ? infix("+") : helper("kiln_add");
    case BinaryOp::Sub: return is_float(t) ? infix("-") : helper("kiln_sub");
    case BinaryOp::Mul: return is_float(t) ? infix("*") : helper("kiln_mul");
    case BinaryOp::Div: return is_float(t) ? infix("/") : helper("kiln_div");
    case BinaryOp::Mod: return is_float(t) ? helper(t == DType::F32 ? "fmodf" : "fmod") : helper("kiln_mod");
    case BinaryOp::Min: return helper("kiln_min");
    case BinaryOp::Max: return helper("kiln_max");
    case BinaryOp::BitAnd: return bitwise("&");
    case BinaryOp::BitOr: return bitwise("|");
    case BinaryOp::BitXor: return t == DType::Bool ? infix("!=") : bitwise("^");
    case BinaryOp::Shl: return helper("kiln_shl");
    case BinaryOp::Shr: return helper("kiln_shr");
    case BinaryOp::And: return infix("&&");  // C's && and || evaluate the right side only when needed
    case BinaryOp::Or: return infix("||");
    case BinaryOp::Eq: return infix("==");  // C comparisons are IEEE: false with NaN, except !=
    case BinaryOp::Ne: return infix("!=");
    case BinaryOp::Lt: return infix("<");
    case BinaryOp::Le: return infix("<=");
    case BinaryOp::Gt: return infix(">");
    case BinaryOp::Ge: return infix(">=");
  }
  unsupported("unknown binary operator");
}

std::string Emitter::cast(DType to, DType from, const std::string& x) const {
  if (to == from) return x;
  // f16 and bf16 convert through f32 (exact from them; rounded once to nearest-even to them).
  if (from == DType::F16) return cast(to, DType::F32, "kiln_f16_to_f32(" + x + ")");
  if (from == DType::BF16) return cast(to, DType::F32, "kiln_bf16_to_f32(" + x + ")");
  if (to == DType::F16) return "kiln_f32_to_f16(" + cast(DType::F32, from, x) + ")";
  if (to == DType::BF16) return "kiln_f32_to_bf16(" + cast(DType::F32, from, x) + ")";
  if (to == DType::Bool) return "(" + x + (from == DType::F32 ? " != 0.0f)" : from == DType::F64 ? " != 0.0)" : " != 0)");
  if (is_int(to) && is_float(from)) {
    switch (to) {
      case DType::I32: return "kiln_to_i32(" + x + ")";
      case DType::I64: return "kiln_to_i64(" + x + ")";
      case DType::U32: return "kiln_to_u32(" + x + ")";
      case DType::U64: return "kiln_to_u64(" + x + ")";
      case DType::U8: return "kiln_to_small<unsigned char, 0, 255>(" + x + ")";
      case DType::U16: return "kiln_to_small<unsigned short, 0, 65535>(" + x + ")";
      case DType::I8: return "kiln_to_small<signed char, -128, 127>(" + x + ")";
      case DType::I16: return "kiln_to_small<short, -32768, 32767>(" + x + ")";
      default: break;
    }
  }
  if (to == DType::I32 && from == DType::I64) return "kiln_wrap_i32(" + x + ")";
  // Widening (by the source's signedness), narrowing (wraps), int->float (nearest), float<->double.
  return "((" + std::string(type_name(to)) + ")" + x + ")";
}

std::string Emitter::call(const ir::CallExpr& c) {
  std::vector<std::string> args;
  for (const auto& a : c.args) args.push_back(expr(a));
  const DType t = c.args[0]->type;
  std::string fn;
  if (ir::random::is_random(c.fn)) {
    fn = "kiln_" + std::string(ir::name_of(c.fn));  // prelude_random.cpp
  } else if (c.fn == Intrinsic::Abs && is_int(t)) {
    fn = "kiln_abs";  // wraps: abs(MIN) == MIN
  } else {
    for (const auto& m : kMath)
      if (m.fn == c.fn) fn = t == DType::F32 ? m.f32 : m.f64;
    if (fn.empty() || !is_float(t))
      backend_error(fn_.name, fmt::format("intrinsic {} on {}", ir::name_of(c.fn), name_of(t)));
  }
  std::string s = fn + "(";
  for (std::size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

std::string Emitter::element_offset(const ir::VarNode* a, const std::vector<ir::Expr>& indices) {
  const ArrayNames& n = array(a);
  std::string offset;
  for (std::size_t d = 0; d < indices.size(); ++d) {
    // Every emitted expression is a primary or postfix expression, so it needs no parentheses here.
    std::string term = expr(indices[d]);
    if (!n.stride[d].empty()) term += " * " + n.stride[d];
    offset += (d ? " + " : "") + term;
  }
  return offset;
}

std::string Emitter::element(const ir::VarNode* a, const std::vector<ir::Expr>& indices) {
  return array(a).data + "[" + element_offset(a, indices) + "]";
}

}  // namespace kiln::codegen::cuda
