// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Emitter plumbing: type mapping, variable bindings, entry-block allocas, loops and the exit paths that
// free a function's allocations.
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <cstddef>

#include "codegen/llvm/emitter.hpp"
#include "ir/printer.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cpu::detail {

// The generated code addresses ArrayDesc through this LLVM struct; it must match the C++ layout.
static_assert(offsetof(ArrayDesc, data) == 0 && offsetof(ArrayDesc, shape) == 8 &&
              offsetof(ArrayDesc, strides) == 8 + 8 * kMaxRank && sizeof(ArrayDesc) == 8 + 16 * kMaxRank);
static_assert(offsetof(KernelStatus, code) == 0 && sizeof(KernelStatus::code) == 4);

Emitter::Emitter(llvm::Module& module, const CodegenOptions& opts, const ir::Function& f, unsigned vector_bits,
                 unsigned half_lanes)
    : mod_(module),
      ctx_(module.getContext()),
      b_(ctx_),
      opts_(opts),
      fn_(f),
      lets_(f),
      vector_bits_(vector_bits),
      half_lanes_(half_lanes) {
  if (opts.fast_math) {
    // Everything that may change results, but not nnan/ninf: kiln defines NaN and infinity behaviour
    // (isnan, NaN-propagating min/max), and those flags would turn it into poison.
    base_fmf_.setAllowReassoc();
    base_fmf_.setAllowContract();
    base_fmf_.setAllowReciprocal();
    base_fmf_.setApproxFunc();
    base_fmf_.setNoSignedZeros();
  }
  b_.setFastMathFlags(base_fmf_);
  make_alias_scopes();
}

void Emitter::internal_error(const std::string& what) const {
  throw CompileError("kiln CPU backend: " + what + " (kernel '" + fn_.name + "')", ir::to_string(fn_));
}

llvm::Type* Emitter::value_type(DType t) {
  switch (t) {
    case DType::Bool: return b_.getInt1Ty();
    case DType::I32: return b_.getInt32Ty();
    case DType::I64: return b_.getInt64Ty();
    case DType::F32: return b_.getFloatTy();
    case DType::F64: return b_.getDoubleTy();
    case DType::U8: case DType::I8: return b_.getInt8Ty();
    case DType::U16: case DType::I16: return b_.getInt16Ty();
    case DType::U32: return b_.getInt32Ty();
    case DType::U64: return b_.getInt64Ty();
    case DType::F16: case DType::BF16: return b_.getInt16Ty();  // their bits: kiln only converts them (half_casts.cpp)
  }
  internal_error("unknown element type");
}

llvm::Type* Emitter::memory_type(DType t) { return t == DType::Bool ? b_.getInt8Ty() : value_type(t); }

llvm::Value* Emitter::to_memory(llvm::Value* v, DType t) {
  return t == DType::Bool ? b_.CreateZExt(v, shaped_like(b_.getInt8Ty(), v)) : v;
}

// Any nonzero byte reads as true, as C++ code that wrote the bool through a char would expect.
llvm::Value* Emitter::from_memory(llvm::Value* v, DType t) {
  return t == DType::Bool ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
}

llvm::Value* Emitter::i64(std::int64_t v) { return b_.getInt64(static_cast<std::uint64_t>(v)); }

llvm::StructType* Emitter::array_desc_type() {
  if (auto* t = llvm::StructType::getTypeByName(ctx_, "kiln.ArrayDesc")) return t;
  auto* dims = llvm::ArrayType::get(b_.getInt64Ty(), kMaxRank);
  return llvm::StructType::create(ctx_, {b_.getPtrTy(), dims, dims}, "kiln.ArrayDesc");
}

llvm::AllocaInst* Emitter::entry_alloca(llvm::Type* t, const llvm::Twine& name) {
  llvm::IRBuilder<> eb(fs_->entry);
  return eb.CreateAlloca(t, nullptr, name);
}

void Emitter::begin_function(llvm::Function* fn, FunctionState& state) {
  state.fn = fn;
  state.entry = llvm::BasicBlock::Create(ctx_, "entry", fn);
  state.body = llvm::BasicBlock::Create(ctx_, "body", fn);
  fs_ = &state;
  b_.SetInsertPoint(state.body);
}

void Emitter::finish_function(const std::vector<const ir::VarNode*>& keep, const std::function<void()>& success_return,
                              const std::function<void()>& failure_return) {
  FunctionState& st = *fs_;
  std::vector<llvm::AllocaInst*> kept;
  for (const ir::VarNode* k : keep) {
    auto it = st.slot_of.find(k);
    if (it == st.slot_of.end()) internal_error("the result array " + k->name + " is not allocated by the kernel");
    kept.push_back(it->second);
  }
  auto free_all = [&](const std::vector<llvm::AllocaInst*>& except) {
    for (llvm::AllocaInst* slot : st.alloc_slots)
      if (std::find(except.begin(), except.end(), slot) == except.end())
        b_.CreateCall(rt_free(), {b_.CreateLoad(b_.getPtrTy(), slot)});
  };
  free_all(kept);
  success_return();
  if (st.fail) {
    b_.SetInsertPoint(st.fail);
    free_all({});
    failure_return();
  }
  // Slots start out null so that an exit before their Allocate ran frees nothing.
  llvm::IRBuilder<> eb(st.entry);
  for (llvm::AllocaInst* slot : st.alloc_slots) eb.CreateStore(llvm::Constant::getNullValue(b_.getPtrTy()), slot);
  eb.CreateBr(st.body);
}

llvm::BasicBlock* Emitter::fail_block() {
  if (!fs_->fail) fs_->fail = llvm::BasicBlock::Create(ctx_, "fail", fs_->fn);
  return fs_->fail;
}

void Emitter::fail_if(llvm::Value* failed) {
  auto* cont = llvm::BasicBlock::Create(ctx_, "ok", fs_->fn);
  b_.CreateCondBr(failed, fail_block(), cont, llvm::MDBuilder(ctx_).createUnlikelyBranchWeights());
  b_.SetInsertPoint(cont);
}

ScalarValue& Emitter::scalar(const ir::VarNode* v) {
  auto it = fs_->scalars.find(v);
  if (it == fs_->scalars.end()) internal_error("scalar " + v->name + " has no value here");
  return it->second;
}

ArrayValue& Emitter::array(const ir::VarNode* v) {
  // A binding is read from its slots where it is used: a rebinding may have happened since the last use.
  if (auto b = fs_->bindings.find(v); b != fs_->bindings.end()) {
    const BindingSlots& slots = b->second;
    ArrayValue a;
    a.data = b_.CreateLoad(b_.getPtrTy(), slots.data, v->name + ".data");
    for (int k = 0; k < v->type.rank; ++k) {
      a.shape[k] = b_.CreateLoad(b_.getInt64Ty(), slots.shape[k], v->name + ".shape");
      a.stride[k] = slots.stride[k] ? b_.CreateLoad(b_.getInt64Ty(), slots.stride[k], v->name + ".stride") : i64(1);
    }
    return fs_->arrays[v] = a;
  }
  auto it = fs_->arrays.find(v);
  if (it == fs_->arrays.end()) internal_error("array " + v->name + " has no value here");
  return it->second;
}

llvm::Value* Emitter::read(const ir::VarNode* v) {
  const ScalarValue& s = scalar(v);
  // A slot holds a vector in lane mode (emit_lanes.cpp) where the variable differs between lanes.
  return s.in_slot ? b_.CreateLoad(llvm::cast<llvm::AllocaInst>(s.value)->getAllocatedType(), s.value, v->name) : s.value;
}

ArrayValue Emitter::load_array_desc(llvm::Value* desc, const ir::Type& type) {
  llvm::IRBuilder<> eb(fs_->entry);
  llvm::StructType* t = array_desc_type();
  ArrayValue a;
  a.data = eb.CreateLoad(eb.getPtrTy(), eb.CreateStructGEP(t, desc, 0), "data");
  auto field = [&](unsigned which, int k, const char* name) {
    return eb.CreateLoad(eb.getInt64Ty(), eb.CreateInBoundsGEP(t, desc, {eb.getInt32(0), eb.getInt32(which), eb.getInt32(k)}),
                         name);
  };
  for (int k = 0; k < type.rank; ++k) {
    a.shape[k] = field(1, k, "shape");
    const bool unit = type.unit_stride && k + 1 == type.rank;
    a.stride[k] = unit ? i64(1) : field(2, k, "stride");
  }
  return a;
}

// LLVM's loop vectorizer leaves a loop alone when it knows the loop runs fewer than 16 iterations
// (-vectorizer-min-trip-count), unless it can fold the whole loop into masked vector operations, which x86
// does not choose. A bound only kiln IR shows (a stencil border's halo, passed to a chunk as a loaded
// value) gets the same decision by metadata; a loop whose bounds are constants LLVM sees itself.
bool Emitter::too_short_to_vectorize(const ir::Expr& begin, const ir::Expr& end) const {
  constexpr std::int64_t kTinyTripCount = 16;
  if (begin->kind == ir::ExprKind::Const && end->kind == ir::ExprKind::Const) return false;
  const std::optional<std::int64_t> trips = max_trip_count(begin, end, lets_);
  return trips && *trips < kTinyTripCount;
}

void Emitter::loop(llvm::Value* begin, llvm::Value* end, const llvm::Twine& name, llvm::MDNode* access_group,
                   const std::function<void(llvm::Value*)>& body, bool no_interleave, bool no_vectorize) {
  llvm::Function* fn = fs_->fn;
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, name + ".header", fn);
  auto* body_bb = llvm::BasicBlock::Create(ctx_, name + ".body", fn);
  auto* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn);
  b_.CreateBr(header);

  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name);
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body_bb, exit);

  b_.SetInsertPoint(body_bb);
  ++fs_->loop_depth;
  const int conversions = fs_->half_conversions, loops = fs_->loops;
  body(i);
  --fs_->loop_depth;
  ++fs_->loops;
  // The vectorizer's candidates only: innermost loops.
  const bool converts_halves = fs_->half_conversions > conversions && fs_->loops == loops + 1;
  // i < end <= INT64_MAX, so the increment cannot overflow.
  llvm::Value* next = b_.CreateAdd(i, i64(1), name + ".next", /*HasNUW=*/false, /*HasNSW=*/true);
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateBr(header);

  // The trip count is fixed before the loop starts, so it always terminates (mustprogress). A parfor's
  // iterations are independent by definition: parallel_accesses spares the vectorizer alias checks.
  llvm::SmallVector<llvm::Metadata*, 4> md{nullptr, llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.mustprogress"))};
  if (access_group)
    md.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.parallel_accesses"), access_group}));
  if (no_interleave)
    md.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                                          llvm::ConstantAsMetadata::get(b_.getInt32(1))}));
  if (no_vectorize) {
    // Nor unrolled or peeled: unrolled at run time it gets a remainder loop plus a copy of the body, for a few
    // iterations; and LLVM peels the first iterations of a loop where that decides a test of the index (a
    // stencil's left rim, `j in 0 .. 2` reading `select(j - 2 >= 0, ...)` per tap, became two peeled copies
    // of its 25-tap body in front of the loop: 223 of conv5x5's 1254 LLVM instructions), while the loop
    // stays for the iterations LLVM cannot bound, so every copy is code generated for a rim of two elements.
    md.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                                          llvm::ConstantAsMetadata::get(b_.getFalse())}));
    md.push_back(llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")));
  } else if (converts_halves) {
    // LLVM 19's x86 cost model prices vectors of `half` as split into scalars where AVX512-FP16 is absent, so
    // it vectorized f16 loops 4 lanes wide (f16_axpy 3x slower than F16C by hand); vcvtph2ps / vcvtps2ph
    // convert a whole register of f32 in one instruction, so such a loop asks for that many lanes.
    md.push_back(llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                                          llvm::ConstantAsMetadata::get(b_.getInt32(half_lanes_))}));
  }
  llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx_, md);
  loop_id->replaceOperandWith(0, loop_id);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loop_id);

  b_.SetInsertPoint(exit);
}

}  // namespace kiln::codegen::cpu::detail
