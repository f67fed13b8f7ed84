// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Intrinsics: LLVM intrinsics where LLVM has them (they constant-fold, and the vectorizer maps them to
// libmvec), libm calls for the rest.
#include <llvm/IR/Intrinsics.h>

#include <algorithm>
#include <string>
#include <vector>

#include "codegen/llvm/emitter.hpp"
#include "ir/random.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

struct Lowering {
  Intrinsic fn;
  llvm::Intrinsic::ID llvm_id;  ///< not_intrinsic: call libm function `libm`
  const char* libm;
};

/// The libm function behind an intrinsic whose vector form the code generator may turn into another function
/// (libmvec's, whose results can differ in the last bits); null for the exact ones (sqrt, fabs, floor, fma,
/// ...), whose vector and scalar forms agree bit for bit.
const char* inexact_libm_name(llvm::Intrinsic::ID id) {
  switch (id) {
    case llvm::Intrinsic::exp: return "exp";
    case llvm::Intrinsic::exp2: return "exp2";
    case llvm::Intrinsic::log: return "log";
    case llvm::Intrinsic::log2: return "log2";
    case llvm::Intrinsic::log10: return "log10";
    case llvm::Intrinsic::pow: return "pow";
    case llvm::Intrinsic::sin: return "sin";
    case llvm::Intrinsic::cos: return "cos";
    default: return nullptr;
  }
}

constexpr Lowering kLowerings[] = {
    {Intrinsic::Sqrt, llvm::Intrinsic::sqrt, nullptr},       {Intrinsic::Exp, llvm::Intrinsic::exp, nullptr},
    {Intrinsic::Exp2, llvm::Intrinsic::exp2, nullptr},       {Intrinsic::Log, llvm::Intrinsic::log, nullptr},
    {Intrinsic::Log2, llvm::Intrinsic::log2, nullptr},       {Intrinsic::Log10, llvm::Intrinsic::log10, nullptr},
    {Intrinsic::Pow, llvm::Intrinsic::pow, nullptr},         {Intrinsic::Sin, llvm::Intrinsic::sin, nullptr},
    {Intrinsic::Cos, llvm::Intrinsic::cos, nullptr},         {Intrinsic::Abs, llvm::Intrinsic::fabs, nullptr},
    {Intrinsic::Floor, llvm::Intrinsic::floor, nullptr},     {Intrinsic::Ceil, llvm::Intrinsic::ceil, nullptr},
    {Intrinsic::Round, llvm::Intrinsic::round, nullptr},     {Intrinsic::Trunc, llvm::Intrinsic::trunc, nullptr},
    {Intrinsic::Fma, llvm::Intrinsic::fma, nullptr},         {Intrinsic::Copysign, llvm::Intrinsic::copysign, nullptr},
    {Intrinsic::Expm1, llvm::Intrinsic::not_intrinsic, "expm1"}, {Intrinsic::Log1p, llvm::Intrinsic::not_intrinsic, "log1p"},
    {Intrinsic::Cbrt, llvm::Intrinsic::not_intrinsic, "cbrt"},   {Intrinsic::Tan, llvm::Intrinsic::not_intrinsic, "tan"},
    {Intrinsic::Asin, llvm::Intrinsic::not_intrinsic, "asin"},   {Intrinsic::Acos, llvm::Intrinsic::not_intrinsic, "acos"},
    {Intrinsic::Atan, llvm::Intrinsic::not_intrinsic, "atan"},   {Intrinsic::Atan2, llvm::Intrinsic::not_intrinsic, "atan2"},
    {Intrinsic::Sinh, llvm::Intrinsic::not_intrinsic, "sinh"},   {Intrinsic::Cosh, llvm::Intrinsic::not_intrinsic, "cosh"},
    {Intrinsic::Tanh, llvm::Intrinsic::not_intrinsic, "tanh"},   {Intrinsic::Erf, llvm::Intrinsic::not_intrinsic, "erf"},
};

const Lowering* lowering_of(Intrinsic fn) {
  for (const auto& l : kLowerings)
    if (l.fn == fn) return &l;
  return nullptr;
}

}  // namespace

llvm::Value* Emitter::call(const ir::CallExpr& c) {
  std::vector<llvm::Value*> args;
  for (const auto& a : c.args) args.push_back(expr(a));
  if (std::any_of(args.begin(), args.end(), [](llvm::Value* a) { return a->getType()->isVectorTy(); }))
    for (auto& a : args) a = splat(a);  // lane mode: operands combine as vectors
  if (ir::random::is_random(c.fn)) return random(c.fn, args[0], args[1], args.size() > 2 ? args[2] : nullptr);
  const DType t = c.args[0]->type;
  llvm::Value* x = args[0];

  if (ir::returns_bool(c.fn)) {
    llvm::Value* inf = llvm::ConstantFP::getInfinity(x->getType());
    switch (c.fn) {
      case Intrinsic::IsNan: return b_.CreateFCmpUNO(x, x);
      case Intrinsic::IsInf: return b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), inf);
      case Intrinsic::IsFinite: return b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), inf);
      default: break;
    }
  }
  // Integer abs wraps: abs(MIN) == MIN, hence is_int_min_poison = false.
  if (c.fn == Intrinsic::Abs && is_unsigned(t)) return x;
  if (c.fn == Intrinsic::Abs && !is_float(t)) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());

  const Lowering* l = lowering_of(c.fn);
  if (!l || !is_float(t)) internal_error("intrinsic " + std::string(ir::name_of(c.fn)) + " on " + std::string(name_of(t)));
  // In lane mode, library functions run lane by lane, each lane calling the scalar libm function that a
  // scalar iteration calls. The calls are `nobuiltin`: otherwise the SLP vectorizer would put the lanes'
  // calls back together as one call of libmvec's vector variant, whose last bits differ.
  const bool vector = x->getType()->isVectorTy();
  const char* by_lane = l->llvm_id == llvm::Intrinsic::not_intrinsic ? l->libm : inexact_libm_name(l->llvm_id);
  if (vector && by_lane)
    return per_lane(args, [&](llvm::ArrayRef<llvm::Value*> lane) {
      auto* call = llvm::cast<llvm::CallInst>(libm_call(by_lane, t, lane));
      call->addFnAttr(llvm::Attribute::NoBuiltin);
      return call;
    });
  if (l->llvm_id == llvm::Intrinsic::not_intrinsic) return libm_call(l->libm, t, args);
  return b_.CreateIntrinsic(l->llvm_id, {x->getType()}, args);
}

llvm::Value* Emitter::libm_call(const char* name, DType t, llvm::ArrayRef<llvm::Value*> args) {
  const std::string symbol = std::string(name) + (t == DType::F32 ? "f" : "");
  llvm::Type* ty = value_type(t);
  std::vector<llvm::Type*> params(args.size(), ty);
  llvm::FunctionCallee callee = mod_.getOrInsertFunction(symbol, llvm::FunctionType::get(ty, params, false));
  // Like clang's -fno-math-errno: kiln never reads errno, so these are pure functions, which lets LLVM
  // hoist, fold and vectorize them.
  auto* f = llvm::cast<llvm::Function>(callee.getCallee());
  f->setDoesNotThrow();
  f->setDoesNotAccessMemory();
  f->setWillReturn();
  f->setNoSync();
  f->setDoesNotFreeMemory();
  llvm::CallInst* call = b_.CreateCall(callee, args);
  call->setDoesNotAccessMemory();
  return call;
}

}  // namespace kiln::codegen::cpu::detail
