#include "frontend/compiler.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "ir/interpreter.hpp"
#include "kiln/config.hpp"
#include "kiln/error.hpp"
#if KILN_HAVE_LLVM
#include "codegen/llvm/cpu_backend.hpp"
#endif

namespace kiln::detail {
namespace {

bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

codegen::CompiledKernel compile_cpu(const ir::Function& f, const Options& opts) {
#if KILN_HAVE_LLVM
  codegen::CodegenOptions cg;
  cg.opt_level = opts.opt_level;
  cg.fast_math = opts.fast_math;
  cg.keep_llvm_ir = opts.keep_llvm_ir || env_flag("KILN_DUMP_LLVM");
  codegen::CompiledKernel code = codegen::cpu::compile(f, cg);
  if (env_flag("KILN_DUMP_LLVM"))
    std::fprintf(stderr, "=== kiln: %s: optimized LLVM IR ===\n%s", f.name.c_str(), code.llvm_ir.c_str());
  return code;
#else
  (void)opts;
  throw Error("kernel '" + f.name + "': the CPU target is unavailable: this kiln was built without LLVM "
              "(KILN_ENABLE_LLVM=OFF); use kiln::Target::interpreter");
#endif
}

codegen::CompiledKernel compile_interpreter(const ir::Function& f) {
  codegen::CompiledKernel code;
  auto fn = std::make_shared<const ir::Function>(f);
  code.call = [fn](void* const* argv, void* result, KernelStatus*) {
    ir::interpret(*fn, argv, result);
    return 0;
  };
  return code;
}

}  // namespace

CompiledVariant compile_traced(const ir::Function& traced, const Options& opts) {
  CompiledVariant out;
  const auto t0 = std::chrono::steady_clock::now();
  out.lowered = passes::run_pipeline(traced, &out.report);
  out.passes_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  switch (opts.target) {
    case Target::cpu: out.code = compile_cpu(out.lowered, opts); break;
    case Target::interpreter: out.code = compile_interpreter(out.lowered); break;
    case Target::cuda:
      throw DeviceError("kernel '" + traced.name + "': the CUDA target is not available in this build of kiln");
  }
  return out;
}

}  // namespace kiln::detail
