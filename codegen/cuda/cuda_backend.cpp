#include "codegen/cuda/cuda_backend.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/executable.hpp"
#include "kiln/error.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {

std::string target_arch() {
  if (const char* a = std::getenv("KILN_CUDA_ARCH"); a && std::string(a).rfind("sm_", 0) == 0) return a;
  if (gpu::device_count() > 0) return gpu::device(gpu::current_device()).info().arch();
  return "sm_90";
}

std::string cache_description() {
  const char* l = std::getenv("KILN_CUDA_LINEINFO");
  const bool lineinfo = l && *l && *l != '0';  // as compile_source reads it
  return target_arch() + ";" + emission_settings() + (lineinfo ? ";lineinfo" : "");
}

bool available(std::string* why) {
  std::string reason;
  if (!gpu::driver_available(&reason) || !nvrtc_available(&reason)) {
    if (why) *why = reason;
    return false;
  }
  if (why) why->clear();
  return true;
}

Compiled compile(const ir::Function& f, const CodegenOptions& opts) {
  gpu::Device& dev = gpu::device(gpu::current_device());  // DeviceError("no CUDA driver/GPU: ...") without one
  const auto t0 = std::chrono::steady_clock::now();
  Compiled out;
  out.program = std::make_shared<const Program>(emit_program(f));
  const std::string arch = std::getenv("KILN_CUDA_ARCH") ? target_arch() : dev.info().arch();
  if (const char* dump = std::getenv("KILN_DUMP_CUDA"); dump && *dump && std::strcmp(dump, "0") != 0)
    std::fprintf(stderr, "=== kiln: %s: CUDA C for %s ===\n%s", f.name.c_str(), arch.c_str(), out.program->source().c_str());
  out.binary = compile_source(out.program->source(), f.name, arch, opts);
  // KILN_CUDA_KEEP=dir keeps <kernel>.cu, .ptx and .cubin there, for cuobjdump and profilers.
  if (const char* keep = std::getenv("KILN_CUDA_KEEP"); keep && *keep) {
    const std::string base = std::string(keep) + "/" + f.name;
    std::ofstream(base + ".cu") << out.program->source();
    std::ofstream(base + ".ptx") << out.binary.ptx;
    std::ofstream(base + ".cubin", std::ios::binary) << out.binary.cubin;
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.kernel = load(out.program, out.binary, opts);
  out.kernel.codegen_ms = ms;
  return out;
}

CompiledKernel load(std::shared_ptr<const Program> program, Binary binary, const CodegenOptions& opts) {
  auto exe = std::make_shared<Executable>(std::move(program), std::move(binary), opts);
  CompiledKernel k;
  // Loading on the current device now keeps the module load out of the first call's run time.
  exe->module_for(gpu::device(gpu::current_device()), &k.load_us);
  k.call = [exe](void* const* args, void* result, KernelStatus* status) { return exe->call(args, result, status); };
  k.keepalive = exe;
  return k;
}

CompiledKernel load_binary(const ir::Function& lowered, Binary binary, const CodegenOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  auto program = std::make_shared<const Program>(emit_program(lowered));
  const double emit_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  if (binary.arch != target_arch())
    throw CacheError("the entry holds code for " + binary.arch + ", this process compiles for " + target_arch());
  if (binary.ptx.find(".target " + binary.arch) == std::string::npos)
    throw CacheError("the entry's PTX is not for " + binary.arch);
  if (binary.cubin.size() < 4 || binary.cubin.compare(0, 4, "\x7f" "ELF") != 0) throw CacheError("the entry's CUBIN is not an ELF image");
  for (const std::string& entry : program->entries())
    if (binary.ptx.find(".entry " + entry + "(") == std::string::npos)
      throw CacheError("the entry's PTX lacks the __global__ function " + entry + " of the emitted program");
  // The entry is checked first, so that a bad one is discarded on any machine; without a device the call
  // then fails as compile() would (load() asks for the device).
  CompiledKernel k = load(std::move(program), std::move(binary), opts);
  k.load_us += emit_us;
  return k;
}

}  // namespace kiln::codegen::cuda
