// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The kernel entry: unpack the arguments, run the body, write the result, free what is not returned.
#include "codegen/llvm/emitter.hpp"

namespace kiln::codegen::cpu::detail {

void Emitter::emit_entry() {
  llvm::Type* ptr = b_.getPtrTy();
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr}, false);
  auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "kiln_entry", mod_);
  fn->setDoesNotThrow();
  FunctionState st;
  begin_function(fn, st);
  llvm::Argument* args = fn->getArg(0);
  llvm::Argument* result = fn->getArg(1);
  st.status = fn->getArg(2);

  llvm::IRBuilder<> eb(st.entry);
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    const ir::Var& p = fn_.params[i];
    llvm::Value* arg = eb.CreateLoad(ptr, eb.CreateConstInBoundsGEP1_64(ptr, args, i), p->name + ".ptr");
    if (p->type.is_array()) {
      st.arrays[p.get()] = load_array_desc(arg, p->type);
      continue;
    }
    const DType t = p->type.elem;
    llvm::Value* v = eb.CreateAlignedLoad(memory_type(t), arg, llvm::Align(size_of(t)), p->name);
    if (t == DType::Bool) v = eb.CreateICmpNE(v, eb.getInt8(0));
    st.scalars[p.get()] = ScalarValue{v, false};
  }

  stmt(fn_.body);

  auto store_array = [&](const ir::Var& v, llvm::Value* to) {
    // A row-major ArrayDesc; the axes past the rank are zeroed so the caller never sees garbage.
    const ArrayValue& a = array(v.get());
    const int rank = v->type.rank;
    llvm::StructType* desc = array_desc_type();
    b_.CreateStore(a.data, b_.CreateStructGEP(desc, to, 0));
    for (int k = 0; k < kMaxRank; ++k) {
      b_.CreateStore(k < rank ? a.shape[k] : i64(0),
                     b_.CreateInBoundsGEP(desc, to, {b_.getInt32(0), b_.getInt32(1), b_.getInt32(k)}));
      b_.CreateStore(k < rank ? a.stride[k] : i64(0),
                     b_.CreateInBoundsGEP(desc, to, {b_.getInt32(0), b_.getInt32(2), b_.getInt32(k)}));
    }
    // The caller frees it from now on: it leaves the runtime's allocation statistics here.
    b_.CreateCall(rt_release(), {a.data});
  };
  std::vector<const ir::VarNode*> returned;
  if (fn_.result) {
    const DType t = fn_.result->type;
    b_.CreateAlignedStore(to_memory(expr(fn_.result), t), result, llvm::Align(size_of(t)));
  } else if (fn_.result_array) {
    store_array(fn_.result_array, result);
    returned.push_back(fn_.result_array.get());
  }
  // A tuple: `result` is `void* outs[n]`. Every scalar member is computed before anything is stored, so a
  // member that fails (a checked operation) leaves the caller's outputs and the arrays untouched.
  std::vector<llvm::Value*> values(fn_.tuple.size(), nullptr);
  for (size_t i = 0; i < fn_.tuple.size(); ++i)
    if (fn_.tuple[i].scalar) values[i] = to_memory(expr(fn_.tuple[i].scalar), fn_.tuple[i].scalar->type);
  for (size_t i = 0; i < fn_.tuple.size(); ++i) {
    llvm::Value* out = b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, result, i), "result." + std::to_string(i));
    if (values[i]) {
      b_.CreateAlignedStore(values[i], out, llvm::Align(size_of(fn_.tuple[i].scalar->type)));
    } else {
      store_array(fn_.tuple[i].array, out);
      returned.push_back(fn_.tuple[i].array.get());
    }
  }

  finish_function(
      returned, [&] { b_.CreateRet(b_.getInt32(0)); },
      [&] { b_.CreateRet(b_.CreateLoad(b_.getInt32Ty(), st.status)); });
  fs_ = nullptr;
}

}  // namespace kiln::codegen::cpu::detail
