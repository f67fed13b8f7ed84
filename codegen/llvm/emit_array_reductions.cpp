// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Array reductions (`hist[k] += 1`, `y[i % 4] += x[i]`, `acc[:] += row`): iterations may update the same
// element, so the parfor makes the updates race-free in one of two ways, chosen when it starts:
//  - private copies: each piece of the parfor gets its own contiguous row-major copy of the array, set to
//    the identity, and its chunk runs the body as written with the array rebound to the copy (plain loads
//    and stores, which is what lets a histogram run at the speed of hand-written code). Afterwards the
//    copies are combined into the array in piece order: deterministic for a given thread count, and exact
//    for integers and float min/max at any thread count (float sums and products are regrouped). The
//    runtime fills each copy on its piece's thread and keeps the block for the next parfor
//    (kiln_rt_copies_done); the combine runs on all threads, a page of the array's rows each.
//  - atomics: when the copies would take more than kiln::runtime::private_copy_limit() bytes or memory is
//    short, a second variant of the chunk updates the array in place with atomic read-modify-writes (float
//    sums and products then depend on timing).
// A parfor that runs as a single piece (a small one, or one nested in a running parfor) needs neither: it
// updates the array directly, in iteration order.
#include <optional>

#include "codegen/llvm/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "runtime/parallel.hpp"

namespace kiln::codegen::cpu::detail {

llvm::Value* Emitter::plan_array_reductions(const std::vector<const ir::ArrayReduction*>& fresh, Outline& o,
                                            llvm::Value* pieces) {
  llvm::Value* granted = b_.getTrue();
  for (const ir::ArrayReduction* r : fresh) {
    const ir::Var& a = r->array;
    const DType t = a->type.elem;
    ArrayPlan plan;
    plan.reduction = r;
    plan.target = array(a.get());
    llvm::Value* elements = i64(1);
    for (int k = 0; k < a->type.rank; ++k) {
      if (!plan.target.shape[k]) internal_error("the extent of array reduction " + a->name + " is not available");
      elements = b_.CreateMul(elements, plan.target.shape[k]);
    }
    auto* identity = new llvm::GlobalVariable(mod_, value_type(t), /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                              llvm::cast<llvm::Constant>(reduction_identity(r->op, t)), a->name + ".identity");
    identity->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    plan.copies = b_.CreateCall(rt_private_copies(), {pieces, elements, i64(size_of(t)), identity}, a->name + ".copies");
    granted = b_.CreateAnd(granted, b_.CreateIsNotNull(plan.copies));
    // Copies start on 64-byte boundaries (kiln_rt_private_copies), so pieces never share a cache line.
    plan.piece_bytes = b_.CreateAnd(b_.CreateAdd(b_.CreateMul(elements, i64(size_of(t))), i64(63)), i64(~std::int64_t{63}));
    o.arrays.push_back(plan);
  }
  llvm::Value* atomic = b_.CreateAnd(b_.CreateICmpSGT(pieces, i64(1)), b_.CreateNot(granted), "atomic");

  llvm::Value* null = llvm::ConstantPointerNull::get(b_.getPtrTy());
  for (ArrayPlan& plan : o.arrays) {
    const ir::Var& a = plan.reduction->array;
    // Atomic mode is all or nothing (one chunk variant per mode): copies granted to some arrays go back.
    b_.CreateCall(rt_copies_done(), {b_.CreateSelect(atomic, plan.copies, null)});
    plan.copies = b_.CreateSelect(atomic, null, plan.copies);
    plan.slot = allocation_slot(a->name + ".copies.slot");
    b_.CreateStore(plan.copies, plan.slot);
    llvm::Value* use = b_.CreateIsNotNull(plan.copies, a->name + ".private");
    plan.view = plan.target;
    plan.view.data = b_.CreateSelect(use, plan.copies, plan.target.data);
    llvm::Value* stride = i64(1);
    for (int k = a->type.rank; k-- > 0;) {
      // A unit stride that both agree on stays a constant for the chunk's optimizer.
      if (stride != plan.target.stride[k]) plan.view.stride[k] = b_.CreateSelect(use, stride, plan.target.stride[k]);
      if (k > 0) stride = b_.CreateMul(stride, plan.target.shape[k]);
    }
    plan.piece_bytes = b_.CreateSelect(use, plan.piece_bytes, i64(0));
  }
  return atomic;
}

void Emitter::bind_array_pieces(Outline& o, llvm::Value* piece) {
  llvm::IRBuilder<> eb(o.chunk.entry);
  for (const ArrayPlan& plan : o.arrays) {
    auto it = o.chunk.arrays.find(plan.reduction->array.get());
    if (it == o.chunk.arrays.end()) continue;  // the body never touches it
    it->second.data = eb.CreateInBoundsGEP(eb.getInt8Ty(), it->second.data, eb.CreateMul(piece, plan.chunk_piece_bytes),
                                           plan.reduction->array->name + ".piece");
  }
}

void Emitter::combine_array_copies(const Outline& o, llvm::Value* pieces) {
  for (const ArrayPlan& plan : o.arrays) {
    auto* combine_bb = llvm::BasicBlock::Create(ctx_, "copies.combine", fs_->fn);
    auto* done = llvm::BasicBlock::Create(ctx_, "copies.done", fs_->fn);
    b_.CreateCondBr(b_.CreateIsNotNull(plan.copies), combine_bb, done);
    b_.SetInsertPoint(combine_bb);
    combine_copies(plan, pieces);
    b_.CreateCall(rt_copies_done(), {plan.copies});
    b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), plan.slot);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }
}

namespace {

/// The kiln_rt_combine_sums type code of an array reduction's combine, or nullopt where it is not one of the
/// runtime's sums (and the kernel gets a combine function of its own).
std::optional<std::int32_t> runtime_sum_type(ReduceOp op, DType t) {
  if (op != ReduceOp::Add) return std::nullopt;
  switch (t) {
    case DType::F64: return kiln_sum_f64;
    case DType::F32: return kiln_sum_f32;
    case DType::I64:
    case DType::U64: return kiln_sum_i64;
    case DType::I32:
    case DType::U32: return kiln_sum_i32;
    default: return std::nullopt;
  }
}

}  // namespace

// target[e] = (((target[e] op copy_0[e]) op copy_1[e]) ...) for every element e, as a parallel loop over the
// first axis (the order per element is fixed, so how the elements are split does not matter). The piece
// loop sits just outside the innermost axis, whose loop then streams through one row of a copy.
void Emitter::combine_copies(const ArrayPlan& plan, llvm::Value* pieces) {
  const ir::ArrayReduction& r = *plan.reduction;
  const int rank = r.array->type.rank;
  const DType t = r.array->type.elem;
  // Sums of the common element types (every array reduction of kiln-suite and the examples: the products'
  // whole-space schedules, histograms) call the runtime's precompiled combine, the same loops in the same
  // order: generating and compiling a combine function per array reduction took ~15 % of a product
  // kernel's code generation (two per 2mm, callgrind of llc per function).
  if (const std::optional<std::int32_t> sum = runtime_sum_type(r.op, t)) {
    llvm::Type* dims = llvm::ArrayType::get(b_.getInt64Ty(), static_cast<std::uint64_t>(rank));
    llvm::AllocaInst* shape = entry_alloca(dims, r.array->name + ".combine.shape");
    llvm::AllocaInst* stride = entry_alloca(dims, r.array->name + ".combine.stride");
    for (int k = 0; k < rank; ++k) {
      b_.CreateStore(plan.target.shape[k], b_.CreateConstInBoundsGEP2_32(dims, shape, 0, static_cast<unsigned>(k)));
      b_.CreateStore(plan.target.stride[k], b_.CreateConstInBoundsGEP2_32(dims, stride, 0, static_cast<unsigned>(k)));
    }
    b_.CreateCall(rt_combine_sums(), {plan.target.data, plan.copies, plan.piece_bytes, pieces, shape, stride,
                                      b_.getInt32(rank), b_.getInt32(*sum)});
    return;
  }
  std::vector<llvm::Value*> inputs{plan.target.data, plan.copies, plan.piece_bytes, pieces};
  for (int k = 0; k < rank; ++k) inputs.push_back(plan.target.shape[k]);
  for (int k = 0; k < rank; ++k) inputs.push_back(plan.target.stride[k]);
  std::vector<llvm::Type*> field_types;
  std::vector<int> field_of(inputs.size(), -1);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!llvm::isa<llvm::Constant>(inputs[i])) {
      field_of[i] = static_cast<int>(field_types.size());
      field_types.push_back(inputs[i]->getType());
    }
  auto* ctx_type = llvm::StructType::get(ctx_, field_types);
  llvm::Type* ptr = b_.getPtrTy();
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, b_.getInt64Ty(), b_.getInt64Ty(), ptr}, false);
  auto* fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage,
                                    fn_.name + ".combine" + std::to_string(chunk_count_++), mod_);
  fn->setDoesNotThrow();
  fn->addParamAttr(0, llvm::Attribute::NoAlias);
  fn->addParamAttr(0, llvm::Attribute::NoCapture);

  // The caller. The copies sit in the caches of the threads that filled and updated them, so the combine is
  // bound by moving their lines between cores, which all threads do at once, more than by its additions:
  // each thread takes a page's worth of the array's rows (bicg's 16 copies of 5800 columns at 16 threads:
  // 0.030 ms on the 3 threads a work-per-thread grain gave, 0.019 ms on 16; bench/suite/experiments_16.cpp).
  const llvm::DataLayout& dl = mod_.getDataLayout();
  llvm::AllocaInst* ctx = entry_alloca(ctx_type, "combine.ctx");
  llvm::ConstantInt* ctx_size = b_.getInt64(dl.getTypeAllocSize(ctx_type));
  b_.CreateLifetimeStart(ctx, ctx_size);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (field_of[i] >= 0) b_.CreateStore(inputs[i], b_.CreateStructGEP(ctx_type, ctx, static_cast<unsigned>(field_of[i])));
  constexpr std::int64_t kPageBytes = 4096;
  llvm::Value* row_bytes = i64(size_of(t));
  for (int k = 1; k < rank; ++k) {
    llvm::Value* extent = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, plan.target.shape[k], i64(1));
    row_bytes = b_.CreateMul(row_bytes, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, extent, i64(kPageBytes)));
  }
  llvm::Value* grain = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSDiv(i64(kPageBytes), row_bytes), i64(1));
  b_.CreateCall(rt_parfor(), {fn, ctx, i64(0), plan.target.shape[0], grain});
  b_.CreateLifetimeEnd(ctx, ctx_size);

  // The combine function.
  llvm::IRBuilderBase::InsertPointGuard ip(b_);
  llvm::IRBuilderBase::FastMathFlagGuard fmf(b_);
  b_.setFastMathFlags(llvm::FastMathFlags());  // the exact combiner, as fold_partials uses
  FunctionState* outer = fs_;
  FunctionState fs;
  begin_function(fn, fs);
  llvm::IRBuilder<> eb(fs.entry);
  std::vector<llvm::Value*> in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    in[i] = field_of[i] < 0 ? inputs[i]
                            : eb.CreateLoad(inputs[i]->getType(), eb.CreateStructGEP(ctx_type, fn->getArg(0), static_cast<unsigned>(field_of[i])));
  llvm::Value *data = in[0], *copies = in[1], *copy_bytes = in[2], *count = in[3];
  auto shape = [&](int k) { return in[4 + static_cast<size_t>(k)]; };
  auto stride = [&](int k) { return in[4 + static_cast<size_t>(rank + k)]; };
  std::vector<llvm::Value*> dense(static_cast<size_t>(rank));
  llvm::Value* s = i64(1);
  for (int k = rank; k-- > 0;) {
    dense[static_cast<size_t>(k)] = s;
    if (k > 0) s = b_.CreateMul(s, shape(k));
  }
  llvm::Type* mt = memory_type(t);
  std::vector<llvm::Value*> idx(static_cast<size_t>(rank));
  // Every element is visited once per piece and the copies are separate memory: the innermost loop's
  // iterations are independent.
  llvm::MDNode* group = llvm::MDNode::getDistinct(ctx_, {});
  auto element = [&](llvm::Value* copy) {
    llvm::Value *a_off = nullptr, *c_off = nullptr;
    for (int k = 0; k < rank; ++k) {
      llvm::Value* i = idx[static_cast<size_t>(k)];
      llvm::Value* at = b_.CreateMul(i, stride(k), "", false, true);
      llvm::Value* ct = b_.CreateMul(i, dense[static_cast<size_t>(k)], "", false, true);
      a_off = a_off ? b_.CreateAdd(a_off, at, "", false, true) : at;
      c_off = c_off ? b_.CreateAdd(c_off, ct, "", false, true) : ct;
    }
    llvm::Value* a_addr = b_.CreateInBoundsGEP(mt, data, a_off);
    llvm::Value* c_addr = b_.CreateInBoundsGEP(mt, copy, c_off);
    const llvm::Align align(size_of(t));
    llvm::LoadInst* a = b_.CreateAlignedLoad(mt, a_addr, align);
    llvm::LoadInst* c = b_.CreateAlignedLoad(mt, c_addr, align);
    llvm::StoreInst* st = b_.CreateAlignedStore(combine(r.op, t, a, c), a_addr, align);
    for (llvm::Instruction* x : {static_cast<llvm::Instruction*>(a), static_cast<llvm::Instruction*>(c), static_cast<llvm::Instruction*>(st)})
      x->setMetadata(llvm::LLVMContext::MD_access_group, group);
  };
  llvm::Function* f = fs.fn;
  std::function<void(int)> nest = [&](int d) {
    llvm::Value* lo = d == 0 ? f->getArg(1) : i64(0);
    llvm::Value* hi = d == 0 ? f->getArg(2) : shape(d);
    if (d + 1 < rank) {
      loop(lo, hi, "e", nullptr, [&](llvm::Value* i) {
        idx[static_cast<size_t>(d)] = i;
        nest(d + 1);
      });
      return;
    }
    loop(i64(0), count, "piece", nullptr, [&](llvm::Value* piece) {
      llvm::Value* copy = b_.CreateInBoundsGEP(b_.getInt8Ty(), copies, b_.CreateMul(piece, copy_bytes));
      loop(lo, hi, "e", group, [&](llvm::Value* i) {
        idx[static_cast<size_t>(d)] = i;
        element(copy);
      });
    });
  };
  nest(0);
  finish_function({}, [&] { b_.CreateRetVoid(); }, [&] { b_.CreateRetVoid(); });
  fs_ = outer;
}

void Emitter::atomic_update(const ir::StoreStmt& s, ReduceOp op) {
  const auto& bin = s.value->as<ir::BinaryExpr>();
  // Which operand is the element itself: is_array_update allows `a[k] op e` and, for commutative op, `e op a[k]`.
  const auto* l = ir::dyn<ir::LoadExpr>(bin.a);
  bool element_left = l && l->array == s.array && !ir::uses(bin.b, s.array.get());
  for (size_t d = 0; element_left && d < s.indices.size(); ++d) element_left = ir::equal(l->indices[d], s.indices[d]);
  const DType t = s.array->type.elem;
  llvm::Value* e = expr(element_left ? bin.b : bin.a);  // the value before the address, as store() does
  llvm::Value* addr = element_address(s.array, s.indices);
  const llvm::Align align(size_of(t));
  using Rmw = llvm::AtomicRMWInst::BinOp;
  Rmw rmw = Rmw::BAD_BINOP;
  if (op == ReduceOp::Add) {
    if (bin.op == BinaryOp::Add) rmw = is_float(t) ? Rmw::FAdd : Rmw::Add;
    else if (bin.op == BinaryOp::Sub) rmw = is_float(t) ? Rmw::FSub : Rmw::Sub;
  } else if (!is_float(t) && (op == ReduceOp::Min || op == ReduceOp::Max)) {
    if (is_unsigned(t)) rmw = op == ReduceOp::Min ? Rmw::UMin : Rmw::UMax;
    else rmw = op == ReduceOp::Min ? Rmw::Min : Rmw::Max;
  }
  // The parfor's join orders these before anything after it, so no stronger ordering is needed.
  if (rmw != Rmw::BAD_BINOP) {
    b_.CreateAtomicRMW(rmw, addr, e, align, llvm::AtomicOrdering::Monotonic);
    return;
  }
  // Products, quotients and float min/max (NaN-propagating, which atomicrmw fmin/fmax are not).
  atomic_rmw_loop(addr, t, [&](llvm::Value* old) {
    return element_left ? binary(bin.op, t, old, e) : binary(bin.op, t, e, old);
  });
}

llvm::Value* Emitter::atomic_rmw_loop(llvm::Value* addr, DType t, const std::function<llvm::Value*(llvm::Value*)>& update) {
  llvm::Type* bits = b_.getIntNTy(static_cast<unsigned>(size_of(t)) * 8);
  const llvm::Align align(size_of(t));
  llvm::LoadInst* first = b_.CreateAlignedLoad(bits, addr, align, "atomic.first");
  first->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* retry = llvm::BasicBlock::Create(ctx_, "atomic.retry", fs_->fn);
  auto* swap = llvm::BasicBlock::Create(ctx_, "atomic.swap", fs_->fn);
  auto* done = llvm::BasicBlock::Create(ctx_, "atomic.done", fs_->fn);
  b_.CreateBr(retry);
  b_.SetInsertPoint(retry);
  llvm::PHINode* seen = b_.CreatePHI(bits, 2, "atomic.seen");
  seen->addIncoming(first, pre);
  llvm::Value* old = is_float(t) ? b_.CreateBitCast(seen, value_type(t)) : seen;
  llvm::Value* updated = update(old);
  llvm::Value* updated_bits = is_float(t) ? b_.CreateBitCast(updated, bits) : updated;
  // An update that leaves the bits as they are (a min that does not win, a product by 1) needs no write:
  // it takes effect at the load. This keeps contended min/max cheap.
  b_.CreateCondBr(b_.CreateICmpEQ(updated_bits, seen), done, swap);
  b_.SetInsertPoint(swap);
  llvm::AtomicCmpXchgInst* x = b_.CreateAtomicCmpXchg(addr, seen, updated_bits, align, llvm::AtomicOrdering::Monotonic,
                                                      llvm::AtomicOrdering::Monotonic);
  seen->addIncoming(b_.CreateExtractValue(x, 0), swap);
  b_.CreateCondBr(b_.CreateExtractValue(x, 1), done, retry);
  b_.SetInsertPoint(done);
  return old;  // what the element held when the update took effect (at the load, or at the exchange)
}

}  // namespace kiln::codegen::cpu::detail
