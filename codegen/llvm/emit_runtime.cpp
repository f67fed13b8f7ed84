// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Declarations of the runtime functions generated code calls (runtime/parallel.hpp). The JIT binds these
// names to the functions' addresses in this process (jit.cpp).
#include "codegen/llvm/emitter.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

llvm::Function* declare(llvm::Module& m, const char* name, llvm::Type* ret, llvm::ArrayRef<llvm::Type*> params) {
  llvm::FunctionCallee c = m.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
  auto* f = llvm::cast<llvm::Function>(c.getCallee());
  f->setDoesNotThrow();  // the runtime never throws and generated code has no unwind tables
  return f;
}

}  // namespace

llvm::FunctionCallee Emitter::rt_parfor() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  return declare(mod_, "kiln_rt_parfor", b_.getVoidTy(), {ptr, ptr, i64t, i64t, i64t});
}

llvm::FunctionCallee Emitter::rt_parfor_split() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  llvm::Type* f64t = b_.getDoubleTy();
  return declare(mod_, "kiln_rt_parfor_split", b_.getVoidTy(), {ptr, ptr, i64t, i64t, i64t, i64t, f64t, f64t});
}

llvm::FunctionCallee Emitter::rt_reduce_blocks() {
  llvm::Function* f = declare(mod_, "kiln_rt_reduce_blocks", b_.getInt64Ty(), {b_.getInt64Ty()});
  f->setDoesNotAccessMemory();  // a pure function of the extent
  f->setWillReturn();
  return f;
}

llvm::FunctionCallee Emitter::rt_parfor_reduce() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  return declare(mod_, "kiln_rt_parfor_reduce", b_.getVoidTy(), {ptr, ptr, i64t, i64t, i64t, ptr, i64t, i64t});
}

llvm::FunctionCallee Emitter::rt_alloc() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Function* f = declare(mod_, "kiln_rt_alloc", ptr, {ptr, ptr, b_.getInt32Ty(), b_.getInt64Ty(), ptr});
  // A fresh 64-byte aligned block: it aliases no parameter, which keeps alias analysis precise.
  f->addRetAttr(llvm::Attribute::NoAlias);
  f->addRetAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
  return f;
}

llvm::FunctionCallee Emitter::rt_free() {
  return declare(mod_, "kiln_rt_free", b_.getVoidTy(), {b_.getPtrTy()});
}

llvm::FunctionCallee Emitter::rt_release() {
  return declare(mod_, "kiln_rt_release", b_.getVoidTy(), {b_.getPtrTy()});
}

llvm::FunctionCallee Emitter::rt_parfor_width() {
  llvm::Type* i64t = b_.getInt64Ty();
  llvm::Function* f = declare(mod_, "kiln_rt_parfor_width", i64t, {i64t, i64t, i64t});
  f->setWillReturn();
  return f;
}

llvm::FunctionCallee Emitter::rt_combine_sums() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  llvm::Type* i32t = b_.getInt32Ty();
  return declare(mod_, "kiln_rt_combine_sums", b_.getVoidTy(), {ptr, ptr, i64t, i64t, ptr, ptr, i32t, i32t});
}

llvm::FunctionCallee Emitter::rt_parfor_pieces() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  return declare(mod_, "kiln_rt_parfor_pieces", b_.getVoidTy(), {ptr, ptr, i64t, i64t, i64t});
}

llvm::FunctionCallee Emitter::rt_parfor_reduce_pieces() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64t = b_.getInt64Ty();
  return declare(mod_, "kiln_rt_parfor_reduce_pieces", b_.getVoidTy(), {ptr, ptr, i64t, i64t, i64t, ptr, i64t, i64t});
}

llvm::FunctionCallee Emitter::rt_private_copies() {
  llvm::Type* i64t = b_.getInt64Ty();
  llvm::Function* f = declare(mod_, "kiln_rt_private_copies", b_.getPtrTy(), {i64t, i64t, i64t, b_.getPtrTy()});
  f->addRetAttr(llvm::Attribute::NoAlias);  // fresh memory, like kiln_rt_alloc's
  f->addRetAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(64)));
  return f;
}

llvm::FunctionCallee Emitter::rt_copies_done() {
  return declare(mod_, "kiln_rt_copies_done", b_.getVoidTy(), {b_.getPtrTy()});
}

llvm::FunctionCallee Emitter::rt_fail() {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32t = b_.getInt32Ty();
  llvm::Function* f = declare(mod_, "kiln_rt_fail", b_.getVoidTy(), {ptr, i32t, ptr, ptr, i32t});
  f->addFnAttr(llvm::Attribute::Cold);  // keeps failure paths out of the hot code's layout
  return f;
}

}  // namespace kiln::codegen::cpu::detail
