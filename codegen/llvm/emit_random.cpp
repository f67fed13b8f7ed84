// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The random intrinsics (ir/random.hpp) in LLVM IR. Philox-4x32-10 runs on i32 words; each 32 x 32 -> 64-bit
// product is a zext and a mul (x86 vectorizes it as vpmuludq). The packed kinds select their word or pair of
// the block (and Box-Muller's sine or cosine) by the word argument; the angle evaluates one polynomial. The maps to floats are plain fmul, fadd, fdiv
// and sqrt without fast-math flags, one per step of ir/random.hpp in the same order, so the results are the
// interpreter's bit for bit. Everything is built from the operands' types: in lane mode the same code runs on
// vectors, and a scalar loop stays one the loop vectorizer can widen (nothing here is a call).
#include <llvm/IR/Intrinsics.h>

#include <array>

#include "codegen/llvm/emitter.hpp"
#include "ir/random.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

namespace rnd = ir::random;

/// IR for the steps of ir/random.hpp on values shaped like the key operand (a scalar or a lane vector).
class RandomBuilder {
 public:
  RandomBuilder(llvm::IRBuilderBase& b, llvm::Value* like)
      : b_(b), i32_(shaped(like, b.getInt32Ty())), i64_(like->getType()), f64_(shaped(like, b.getDoubleTy())) {}

  using Words = std::array<llvm::Value*, 4>;

  /// The block of (key, counter): counter words 2 and 3 are 0, or 1 and 0 for the packed stream.
  Words block(llvm::Value* key, llvm::Value* counter, bool packed) {
    llvm::Value* k0 = low(key);
    llvm::Value* k1 = high(key);
    Words c = {low(counter), high(counter), u32(packed ? 1 : 0), u32(0)};
    for (int r = 0; r < rnd::kRounds; ++r) {
      if (r > 0) {
        k0 = b_.CreateAdd(k0, u32(rnd::kWeyl0));
        k1 = b_.CreateAdd(k1, u32(rnd::kWeyl1));
      }
      llvm::Value* p0 = product(rnd::kMul0, c[0]);
      llvm::Value* p1 = product(rnd::kMul1, c[2]);
      c = {b_.CreateXor(b_.CreateXor(high(p1), c[1]), k0), low(p1), b_.CreateXor(b_.CreateXor(high(p0), c[3]), k1),
           low(p0)};
    }
    return c;
  }

  /// Words hi:lo as 64 bits.
  llvm::Value* join(llvm::Value* lo, llvm::Value* hi) {
    return b_.CreateOr(b_.CreateShl(b_.CreateZExt(hi, i64_), 32), b_.CreateZExt(lo, i64_));
  }

  /// Word `which` mod 4 of a block (`which` an i64 shaped like the key).
  llvm::Value* word(const Words& w, llvm::Value* which) {
    llvm::Value* k = b_.CreateTrunc(b_.CreateAnd(which, u64(3)), i32_);
    llvm::Value* v = w[3];
    for (int j = 2; j >= 0; --j) v = b_.CreateSelect(b_.CreateICmpEQ(k, u32(static_cast<std::uint32_t>(j))), w[j], v);
    return v;
  }

  /// True where `which` is odd: the high pair (words 3:2) of a block, or Box-Muller's sine.
  llvm::Value* odd(llvm::Value* which) { return b_.CreateICmpNE(b_.CreateAnd(which, u64(1)), u64(0)); }

  /// Words 3:2 where `which` is odd, else words 1:0.
  llvm::Value* pair(const Words& w, llvm::Value* which) {
    return b_.CreateSelect(odd(which), join(w[2], w[3]), join(w[0], w[1]));
  }

  llvm::Value* uniform_f32(llvm::Value* word0) {
    llvm::Type* f32 = shaped(word0, b_.getFloatTy());
    llvm::Value* m = b_.CreateUIToFP(b_.CreateLShr(word0, 8), f32);  // < 2^24: exact
    return b_.CreateFMul(m, llvm::ConstantFP::get(f32, 0x1p-24));
  }

  llvm::Value* uniform_f64(llvm::Value* bits64) {
    llvm::Value* m = b_.CreateUIToFP(b_.CreateLShr(bits64, 11), f64_);  // < 2^53: exact
    return b_.CreateFMul(m, f64(0x1p-53));
  }

  /// Box-Muller's cosine output, or its sine where `sine` (null: never).
  llvm::Value* normal_f64(const Words& w, llvm::Value* sine) {
    llvm::Value* a = b_.CreateAdd(b_.CreateLShr(join(w[0], w[1]), 11), u64(1));
    llvm::Value* u1 = b_.CreateFMul(b_.CreateUIToFP(a, f64_), f64(0x1p-53));
    llvm::Value* r = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, b_.CreateFMul(f64(-2.0), log_unit(u1)));
    return b_.CreateFMul(r, turn(b_.CreateLShr(join(w[2], w[3]), 11), sine));
  }

 private:
  llvm::IRBuilderBase& b_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::Type* f64_;

  static llvm::Type* shaped(llvm::Value* like, llvm::Type* elem) {
    if (auto* v = llvm::dyn_cast<llvm::VectorType>(like->getType())) return llvm::VectorType::get(elem, v->getElementCount());
    return elem;
  }
  llvm::Value* u32(std::uint32_t v) { return llvm::ConstantInt::get(i32_, v); }
  llvm::Value* u64(std::uint64_t v) { return llvm::ConstantInt::get(i64_, v); }
  llvm::Value* f64(double v) { return llvm::ConstantFP::get(f64_, v); }
  llvm::Value* low(llvm::Value* x) { return b_.CreateTrunc(x, i32_); }
  llvm::Value* high(llvm::Value* x) { return b_.CreateTrunc(b_.CreateLShr(x, 32), i32_); }
  /// m * x as the exact 64-bit product of two 32-bit words.
  llvm::Value* product(std::uint32_t m, llvm::Value* x) {
    return b_.CreateMul(b_.CreateZExt(x, i64_), u64(m), "", /*HasNUW=*/true);
  }

  template <int N>
  llvm::Value* horner(const double (&c)[N], llvm::Value* w) {
    llvm::Value* p = f64(c[N - 1]);
    for (int k = N - 2; k >= 0; --k) p = b_.CreateFAdd(b_.CreateFMul(p, w), f64(c[k]));
    return p;
  }

  llvm::Value* log_unit(llvm::Value* u) {
    llvm::Value* bits = b_.CreateBitCast(u, i64_);
    llvm::Value* e = b_.CreateSub(b_.CreateLShr(bits, 52), u64(1023));
    llvm::Value* f = b_.CreateBitCast(b_.CreateOr(b_.CreateAnd(bits, u64(0x000FFFFFFFFFFFFFull)), u64(0x3FF0000000000000ull)), f64_);
    llvm::Value* above = b_.CreateFCmpOGT(f, f64(rnd::kSqrt2));
    f = b_.CreateSelect(above, b_.CreateFMul(f, f64(0.5)), f);
    e = b_.CreateSelect(above, b_.CreateAdd(e, u64(1)), e);
    llvm::Value* s = b_.CreateFDiv(b_.CreateFSub(f, f64(1.0)), b_.CreateFAdd(f, f64(1.0)));
    llvm::Value* z = b_.CreateFMul(s, s);
    llvm::Value* szp = b_.CreateFMul(s, b_.CreateFMul(z, horner(rnd::kLog, z)));
    llvm::Value* ln_f = b_.CreateFAdd(b_.CreateFMul(s, f64(2.0)), szp);
    llvm::Value* de = b_.CreateSIToFP(e, f64_);
    llvm::Value* rest = b_.CreateFAdd(b_.CreateFMul(de, f64(rnd::kLn2Lo)), ln_f);
    return b_.CreateFAdd(b_.CreateFMul(de, f64(rnd::kLn2Hi)), rest);
  }

  llvm::Value* turn(llvm::Value* c, llvm::Value* sine) {
    llvm::Value* n = b_.CreateLShr(b_.CreateAdd(c, u64(std::uint64_t{1} << 50)), 51);
    llvm::Value* t = b_.CreateFMul(b_.CreateSIToFP(b_.CreateSub(c, b_.CreateShl(n, 51)), f64_), f64(0x1p-53));
    llvm::Value* w = b_.CreateFMul(t, t);
    // sin(n pi / 2 + x) = cos((n - 1) pi / 2 + x)
    llvm::Value* q = b_.CreateAnd(sine ? b_.CreateSelect(sine, b_.CreateAdd(n, u64(3)), n) : n, u64(3));
    llvm::Value* zero = u64(0);
    // ir::random::turn evaluates both polynomials and keeps one; only the kept one is evaluated here, Horner's
    // steps on coefficients selected by the quadrant (the cosine times 1.0, exact, where the sine is times t):
    // the same operations on the same values, half the work.
    llvm::Value* odd = b_.CreateICmpNE(b_.CreateAnd(q, u64(1)), zero);
    llvm::Value* p = b_.CreateSelect(odd, f64(rnd::kSin[rnd::kTrigTerms - 1]), f64(rnd::kCos[rnd::kTrigTerms - 1]));
    for (int k = rnd::kTrigTerms - 2; k >= 0; --k)
      p = b_.CreateFAdd(b_.CreateFMul(p, w), b_.CreateSelect(odd, f64(rnd::kSin[k]), f64(rnd::kCos[k])));
    llvm::Value* v = b_.CreateFMul(b_.CreateSelect(odd, t, f64(1.0)), p);
    llvm::Value* negative = b_.CreateICmpNE(b_.CreateAnd(b_.CreateAdd(q, u64(1)), u64(2)), zero);
    return b_.CreateSelect(negative, b_.CreateFNeg(v), v);
  }
};

}  // namespace

llvm::Value* Emitter::random(Intrinsic fn, llvm::Value* key, llvm::Value* counter, llvm::Value* which) {
  // Every step is one IEEE operation: no reassociation, contraction or approximation, even under fast_math.
  llvm::IRBuilderBase::FastMathFlagGuard guard(b_);
  b_.setFastMathFlags(llvm::FastMathFlags());
  RandomBuilder r(b_, key);
  const bool packed = ir::random::is_packed(fn);
  if (packed && which == nullptr) internal_error(std::string(ir::name_of(fn)) + " without its word argument");
  // The packed kinds' calls on one block (a block draw's values) build the same Philox instructions from the same
  // operands, which LLVM's CSE merges: one block for all of them.
  const RandomBuilder::Words w = r.block(key, counter, packed);
  auto to_f32 = [&](llvm::Value* z) {
    return b_.CreateFPTrunc(z, llvm::isa<llvm::VectorType>(z->getType())
                                   ? llvm::VectorType::get(b_.getFloatTy(), llvm::cast<llvm::VectorType>(z->getType())->getElementCount())
                                   : b_.getFloatTy());
  };
  switch (fn) {
    case Intrinsic::RandomBits: return r.join(w[0], w[1]);
    case Intrinsic::RandomUniformF32: return r.uniform_f32(w[0]);
    case Intrinsic::RandomUniformF64: return r.uniform_f64(r.join(w[0], w[1]));
    case Intrinsic::RandomNormalF64: return r.normal_f64(w, nullptr);
    case Intrinsic::RandomNormalF32: return to_f32(r.normal_f64(w, nullptr));
    case Intrinsic::RandomPackedBits: return r.pair(w, which);
    case Intrinsic::RandomPackedUniformF32: return r.uniform_f32(r.word(w, which));
    case Intrinsic::RandomPackedUniformF64: return r.uniform_f64(r.pair(w, which));
    case Intrinsic::RandomPackedNormalF64: return r.normal_f64(w, r.odd(which));
    case Intrinsic::RandomPackedNormalF32: return to_f32(r.normal_f64(w, r.odd(which)));
    default: internal_error("intrinsic " + std::string(ir::name_of(fn)) + " is not a random intrinsic");
  }
}

}  // namespace kiln::codegen::cpu::detail
