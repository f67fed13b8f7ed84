// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// f16 and bf16 <-> f32 on their i16 bits: the steps of kiln/half.hpp, emitted as integer and f32
// operations without branches, so that they vectorize and need neither F16C nor a runtime library call
// (LLVM's own half conversions become library calls on x86 without F16C, which the JIT would have to
// resolve). Values and lanes alike: every constant is splatted to the operand's shape.
#include "codegen/llvm/emitter.hpp"

namespace kiln::codegen::cpu::detail {

namespace {

/// The two f32 operations of the conversions must round as IEEE says, whatever Options::fast_math allows.
struct ExactFloat {
  llvm::IRBuilderBase::FastMathFlagGuard guard;
  explicit ExactFloat(llvm::IRBuilderBase& b) : guard(b) { b.clearFastMathFlags(); }
};

}  // namespace

llvm::Value* Emitter::half_to_f32(DType from, llvm::Value* bits) {
  llvm::Type* i32 = shaped_like(b_.getInt32Ty(), bits);
  llvm::Type* f32 = shaped_like(b_.getFloatTy(), bits);
  auto k = [&](std::uint32_t v) { return llvm::ConstantInt::get(i32, v); };
  llvm::Value* h = b_.CreateZExt(bits, i32);
  if (from == DType::BF16) return b_.CreateBitCast(b_.CreateShl(h, k(16)), f32);  // exact: the top half of an f32
  constexpr std::uint32_t exp_mask = 0x7c00u << 13;
  llvm::Value* o = b_.CreateShl(b_.CreateAnd(h, k(0x7fffu)), k(13));
  llvm::Value* exp = b_.CreateAnd(o, k(exp_mask));
  o = b_.CreateAdd(o, k((127u - 15u) << 23));
  llvm::Value* special = b_.CreateAdd(o, k((128u - 16u) << 23));  // inf or NaN
  llvm::Value* small;  // zero or subnormal: renormalized by one exact subtraction
  {
    const ExactFloat exact(b_);
    llvm::Value* biased = b_.CreateBitCast(b_.CreateAdd(o, k(1u << 23)), f32);
    small = b_.CreateBitCast(b_.CreateFSub(biased, llvm::ConstantFP::get(f32, 6.103515625e-05)), i32);  // 2^-14
  }
  llvm::Value* r = b_.CreateSelect(b_.CreateICmpEQ(exp, k(exp_mask)), special,
                                   b_.CreateSelect(b_.CreateICmpEQ(exp, k(0)), small, o));
  r = b_.CreateOr(r, b_.CreateShl(b_.CreateAnd(h, k(0x8000u)), k(16)));
  return b_.CreateBitCast(r, f32);
}

llvm::Value* Emitter::f32_to_half(DType to, llvm::Value* v) {
  llvm::Type* i32 = shaped_like(b_.getInt32Ty(), v);
  llvm::Type* f32 = shaped_like(b_.getFloatTy(), v);
  llvm::Type* i16 = shaped_like(b_.getInt16Ty(), v);
  auto k = [&](std::uint32_t x) { return llvm::ConstantInt::get(i32, x); };
  llvm::Value* f = b_.CreateBitCast(v, i32);
  if (to == DType::BF16) {
    llvm::Value* high = b_.CreateLShr(f, k(16));
    llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(f, k(0x7fffffffu)), k(0x7f800000u));
    llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(f, k(0x7fffu)), b_.CreateAnd(high, k(1))), k(16));
    return b_.CreateTrunc(b_.CreateSelect(is_nan, b_.CreateOr(high, k(0x40u)), rounded), i16);
  }
  llvm::Value* sign = b_.CreateAnd(f, k(0x80000000u));
  llvm::Value* a = b_.CreateXor(f, sign);
  llvm::Value* special = b_.CreateSelect(b_.CreateICmpUGT(a, k(0x7f800000u)), k(0x7e00u), k(0x7c00u));
  llvm::Value* small;  // subnormal or zero: rounded by one f32 addition of 0.5
  {
    const ExactFloat exact(b_);
    llvm::Value* sum = b_.CreateFAdd(b_.CreateBitCast(a, f32), llvm::ConstantFP::get(f32, 0.5));
    small = b_.CreateSub(b_.CreateBitCast(sum, i32), k(126u << 23));
  }
  llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(a, k(13)), k(1));
  llvm::Value* normal = b_.CreateLShr(b_.CreateAdd(b_.CreateAdd(a, k(0xc8000fffu)), odd), k(13));
  llvm::Value* o = b_.CreateSelect(b_.CreateICmpUGE(a, k(143u << 23)), special,
                                   b_.CreateSelect(b_.CreateICmpULT(a, k(113u << 23)), small, normal));
  return b_.CreateTrunc(b_.CreateOr(o, b_.CreateLShr(sign, k(16))), i16);
}

}  // namespace kiln::codegen::cpu::detail
