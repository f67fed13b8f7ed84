// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// f16 and bf16 <-> f32 on their i16 bits, giving the bits kiln/half.hpp defines on every target.
//
// f16 where the target converts in hardware (x86 F16C): LLVM's `fpext half` / `fptrunc ... to half`, which
// become vcvtph2ps / vcvtps2ph, eight or sixteen lanes at a time. They round to nearest-even as kiln does and
// agree on every number; a NaN is where they differ (F16C keeps a truncated payload and quiets a signalling
// NaN, and LLVM leaves a NaN's bits unspecified), so a select puts kiln's NaN there: the canonical quiet NaN
// with the sign going to f16, the payload unchanged (not quieted) going to f32.
//
// Elsewhere, and for bf16 always: the steps of kiln/half.hpp as integer and f32 operations without branches,
// which vectorize and need no runtime library call (LLVM's half conversions are library calls on x86 without
// F16C, which the JIT would have to resolve). bf16 -> f32 is a shift; f32 -> bf16 is a few integer operations,
// and AVX512-BF16's vcvtneps2bf16 is not the same conversion (it flushes subnormal inputs and results to
// zero). Values and lanes alike: every constant is splatted to the operand's shape.
#include "codegen/llvm/emitter.hpp"

namespace kiln::codegen::cpu::detail {

namespace {

/// The two f32 operations of the conversions must round as IEEE says, whatever Options::fast_math allows.
struct ExactFloat {
  llvm::IRBuilderBase::FastMathFlagGuard guard;
  explicit ExactFloat(llvm::IRBuilderBase& b) : guard(b) { b.clearFastMathFlags(); }
};

}  // namespace

llvm::Value* Emitter::f16_to_f32_hardware(llvm::Value* bits) {
  llvm::Type* i32 = shaped_like(b_.getInt32Ty(), bits);
  llvm::Type* f32 = shaped_like(b_.getFloatTy(), bits);
  auto k = [&](std::uint32_t v) { return llvm::ConstantInt::get(i32, v); };
  if (fs_ && !lanes_.width) ++fs_->half_conversions;  // lanes are vectors already
  const ExactFloat exact(b_);
  llvm::Value* wide = b_.CreateFPExt(b_.CreateBitCast(bits, shaped_like(b_.getHalfTy(), bits)), f32);
  // A NaN keeps its payload, shifted into place, and its sign: (h & 0x7fff) << 13 rebiased to f32's
  // all-ones exponent, as kiln/half.hpp's steps give.
  llvm::Value* h = b_.CreateZExt(bits, i32);
  llvm::Value* magnitude = b_.CreateAnd(h, k(0x7fffu));
  llvm::Value* nan = b_.CreateOr(b_.CreateAdd(b_.CreateShl(magnitude, k(13)), k((255u - 31u) << 23)),
                                 b_.CreateShl(b_.CreateAnd(h, k(0x8000u)), k(16)));
  return b_.CreateSelect(b_.CreateICmpUGT(magnitude, k(0x7c00u)), b_.CreateBitCast(nan, f32), wide);
}

llvm::Value* Emitter::f32_to_f16_hardware(llvm::Value* v) {
  llvm::Type* i32 = shaped_like(b_.getInt32Ty(), v);
  llvm::Type* i16 = shaped_like(b_.getInt16Ty(), v);
  if (fs_ && !lanes_.width) ++fs_->half_conversions;  // lanes are vectors already
  const ExactFloat exact(b_);
  llvm::Value* narrow = b_.CreateBitCast(b_.CreateFPTrunc(v, shaped_like(b_.getHalfTy(), v)), i16);
  // Every NaN becomes the quiet NaN 0x7e00 with the input's sign.
  llvm::Value* sign = b_.CreateAnd(b_.CreateLShr(b_.CreateBitCast(v, i32), llvm::ConstantInt::get(i32, 16)),
                                   llvm::ConstantInt::get(i32, 0x8000u));
  llvm::Value* nan = b_.CreateTrunc(b_.CreateOr(sign, llvm::ConstantInt::get(i32, 0x7e00u)), i16);
  return b_.CreateSelect(b_.CreateFCmpUNO(v, v), nan, narrow);
}

llvm::Value* Emitter::half_to_f32(DType from, llvm::Value* bits) {
  if (from == DType::F16 && half_lanes_) return f16_to_f32_hardware(bits);
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
  if (to == DType::F16 && half_lanes_) return f32_to_f16_hardware(v);
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
