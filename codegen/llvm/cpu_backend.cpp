// The public CPU backend API: kiln IR -> LLVM IR -> optimized host object -> JIT-linked kernel.
#include "codegen/llvm/cpu_backend.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>

#include "codegen/llvm/emitter.hpp"
#include "codegen/llvm/host_target.hpp"
#include "codegen/llvm/jit.hpp"
#include "codegen/llvm/optimize.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cpu {
namespace {

std::string module_text(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream out(text);
  m.print(out, nullptr);
  return text;
}

}  // namespace

std::string host_target_description() {
  const detail::HostTarget& h = detail::host_target();
  // Objects built with libmvec call its functions, so its availability is part of the description too.
  return h.triple + ";" + h.cpu + ";" + h.features + (detail::libmvec_available() ? ";libmvec" : "") +
         (detail::libmvec_235_available() ? ";libmvec-2.35" : "") +
         (h.llvm_options.empty() ? "" : ";llvm-options=" + h.llvm_options);
}

ObjectCode compile_to_object(const ir::Function& f, const CodegenOptions& opts) {
  const detail::LlvmUse use(f.name);
  const auto start = std::chrono::steady_clock::now();
  const int opt_level = std::clamp(opts.opt_level, 0, 3);
  std::unique_ptr<llvm::TargetMachine> tm = detail::make_host_target_machine(opt_level);
  // A context per compilation: LLVM contexts are not thread-safe, and this keeps compilations independent.
  llvm::LLVMContext context;
  llvm::Module m(f.name.empty() ? "kiln_kernel" : f.name, context);
  m.setTargetTriple(tm->getTargetTriple().str());
  m.setDataLayout(tm->createDataLayout());
  detail::Emitter(m, opts, f).emit_entry();

  std::string problems;
  llvm::raw_string_ostream problem_out(problems);
  if (llvm::verifyModule(m, &problem_out))
    throw CompileError("kiln CPU backend: LLVM rejected the IR emitted for kernel '" + f.name + "': " + problems,
                       module_text(m), problems);

  detail::optimize(m, *tm, opt_level);
  ObjectCode out;
  if (opts.keep_llvm_ir) out.llvm_ir = module_text(m);
  out.object = detail::emit_object(m, *tm);
  out.codegen_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

CompiledKernel load_object(const std::string& object, std::string_view debug_name) {
  const detail::LlvmUse use(debug_name);
  return detail::jit_load(object, debug_name);
}

CompiledKernel compile(const ir::Function& f, const CodegenOptions& opts) {
  ObjectCode obj = compile_to_object(f, opts);
  CompiledKernel k = load_object(obj.object, f.name);
  k.llvm_ir = std::move(obj.llvm_ir);
  k.codegen_ms = obj.codegen_ms;
  return k;
}

}  // namespace kiln::codegen::cpu
