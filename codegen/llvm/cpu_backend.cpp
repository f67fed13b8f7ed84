// The public CPU backend API: kiln IR -> LLVM IR -> optimized host object -> JIT-linked kernel.
#include "codegen/llvm/cpu_backend.hpp"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "codegen/llvm/emitter.hpp"
#include "codegen/llvm/host_target.hpp"
#include "codegen/llvm/jit.hpp"
#include "codegen/llvm/optimize.hpp"
#include "codegen/target_options.hpp"
#include "kiln/config.hpp"
#include "kiln/error.hpp"
#include "runtime/cache/entry.hpp"

namespace kiln::codegen::cpu {
namespace {

std::string module_text(const llvm::Module& m) {
  std::string text;
  llvm::raw_string_ostream out(text);
  m.print(out, nullptr);
  return text;
}

}  // namespace

std::string host_target_description(const CpuOptions& opts) {
  const detail::HostTarget& h = detail::host_target();
  // Objects built with libmvec call its functions, so its availability is part of the description too.
  return h.triple + ";" + h.cpu + ";" + detail::target_features(opts) + (detail::libmvec_available() ? ";libmvec" : "") +
         (detail::libmvec_235_available() ? ";libmvec-2.35" : "") +
         (opts.llvm_options.empty() ? "" : ";llvm-options=" + opts.llvm_options) + (opts.lanes ? "" : ";lanes=off");
}

ObjectCode compile_to_object(const ir::Function& f, const CodegenOptions& opts, const CpuOptions& cpu) {
  const detail::LlvmUse use(f.name);
  const auto start = std::chrono::steady_clock::now();
  const int opt_level = std::clamp(opts.opt_level, 0, 3);
  std::unique_ptr<llvm::TargetMachine> tm = detail::make_host_target_machine(opt_level, cpu);
  // A context per compilation: LLVM contexts are not thread-safe, and this keeps compilations independent.
  llvm::LLVMContext context;
  llvm::Module m(f.name.empty() ? "kiln_kernel" : f.name, context);
  m.setTargetTriple(tm->getTargetTriple().str());
  m.setDataLayout(tm->createDataLayout());
  // Lanes from O2, where LLVM vectorizes too.
  const unsigned lane_bits = cpu.lanes && opt_level >= 2 ? detail::vector_register_bits(*tm) : 0;
  detail::Emitter(m, opts, f, lane_bits).emit_entry();

  std::string problems;
  llvm::raw_string_ostream problem_out(problems);
  if (llvm::verifyModule(m, &problem_out))
    throw CompileError("kiln CPU backend: LLVM rejected the IR emitted for kernel '" + f.name + "': " + problems,
                       module_text(m), problems);

  detail::optimize(m, *tm, opt_level);
  ObjectCode out;
  if (cpu.keep_llvm_ir || cpu.dump_llvm) out.llvm_ir = module_text(m);
  out.object = detail::emit_object(m, *tm);
  out.codegen_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

CompiledKernel load_object(const std::string& object, std::string_view debug_name) {
  const detail::LlvmUse use(debug_name);
  return detail::jit_load(object, debug_name);
}

CompiledKernel compile(const ir::Function& f, const CodegenOptions& opts, const CpuOptions& cpu) {
  ObjectCode obj = compile_to_object(f, opts, cpu);
  CompiledKernel k = load_object(obj.object, f.name);
  k.llvm_ir = std::move(obj.llvm_ir);
  k.codegen_ms = obj.codegen_ms;
  return k;
}

namespace {

/// The CPU target: a relocatable object per kernel, which is what the disk cache stores ("object").
class CpuBackend final : public Backend {
 public:
  std::optional<CacheIdentity> cache_identity(const TargetOptions& opts) const override {
    return CacheIdentity{host_target_description(opts.cpu), KILN_LLVM_VERSION, "", false};
  }

  CompiledKernel compile(const ir::Function& f, const TargetOptions& opts,
                         std::vector<cache::Blob>& payloads) const override {
    // Object and load separately (what cpu::compile does), keeping the object for the disk cache.
    ObjectCode obj = compile_to_object(f, opts.common, opts.cpu);
    CompiledKernel code = load_object(obj.object, f.name);
    code.llvm_ir = std::move(obj.llvm_ir);
    code.codegen_ms = obj.codegen_ms;
    payloads.push_back(cache::Blob{"object", std::move(obj.object)});
    if (opts.cpu.dump_llvm)
      std::fprintf(stderr, "=== kiln: %s: optimized LLVM IR ===\n%s", f.name.c_str(), code.llvm_ir.c_str());
    return code;
  }

  CompiledKernel load(const cache::Entry& e, std::string_view kernel,
                      const TargetOptions&) const override {
    const cache::Blob* obj = e.payload("object");
    if (!obj) throw CacheError("the entry has no \"object\" payload");
    return load_object(obj->data, kernel);
  }
};

}  // namespace

}  // namespace kiln::codegen::cpu

namespace kiln::codegen::detail {

const Backend& cpu_backend() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const Backend& backend = *new cpu::CpuBackend();
  return backend;
}

}  // namespace kiln::codegen::detail
