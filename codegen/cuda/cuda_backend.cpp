// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/cuda_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

#include "codegen/cuda/compile_parts.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/executable.hpp"
#include "codegen/target_options.hpp"
#include "ir/builder.hpp"
#include "ir/serialize.hpp"
#include "kiln/error.hpp"
#include "runtime/cache/entry.hpp"
#include "runtime/cuda/context.hpp"
#include "runtime/cuda/driver.hpp"

namespace kiln::codegen::cuda {

std::string target_arch(const CudaOptions& opts) {
  if (!opts.arch.empty()) return opts.arch;
  if (gpu::device_count() > 0) return gpu::device(gpu::current_device()).info().arch();
  return "sm_90";
}

std::string cache_description(const CudaOptions& opts) {
  return target_arch(opts) + ";" + emission_settings(opts.emit) + (opts.lineinfo ? ";lineinfo" : "") +
         (opts.fast_compile > 0 ? ";fast_compile=" + std::to_string(opts.fast_compile) : "");
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

Compiled compile(const ir::Function& f, const CodegenOptions& opts, const CudaOptions& cuda) {
  gpu::Device& dev = gpu::device(gpu::current_device());  // DeviceError("no CUDA driver/GPU: ...") without one
  const auto t0 = std::chrono::steady_clock::now();
  Compiled out;
  out.program = std::make_shared<const Program>(emit_program(f, cuda.emit));
  const std::string arch = cuda.arch.empty() ? dev.info().arch() : cuda.arch;
  if (cuda.dump_source)
    std::fprintf(stderr, "=== kiln: %s: CUDA C for %s ===\n%s", f.name.c_str(), arch.c_str(), out.program->source().c_str());
  out.binary = compile_program(*out.program, f.name, arch, opts, cuda.lineinfo, cuda.compile_threads, cuda.fast_compile);
  // KILN_CUDA_KEEP=dir keeps <kernel>.cu, .ptx and .cubin there, for cuobjdump and profilers (a program compiled
  // in parts: the other parts' as <kernel>.1.ptx, .1.cubin, ...).
  if (!cuda.keep_dir.empty()) {
    const std::string base = cuda.keep_dir + "/" + f.name;
    std::ofstream(base + ".cu") << out.program->source();
    std::ofstream(base + ".ptx") << out.binary.ptx;
    std::ofstream(base + ".cubin", std::ios::binary) << out.binary.cubin;
    for (std::size_t p = 0; p < out.binary.more.size(); ++p) {
      std::ofstream(base + "." + std::to_string(p + 1) + ".ptx") << out.binary.more[p].ptx;
      std::ofstream(base + "." + std::to_string(p + 1) + ".cubin", std::ios::binary) << out.binary.more[p].cubin;
    }
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  out.kernel = load(out.program, out.binary, opts, cuda);
  out.kernel.codegen_ms = ms;
  out.kernel.codegen_cpu_ms = out.binary.cpu_ms;
  out.kernel.codegen_cpu_longest_ms = out.binary.more.empty() ? 0 : out.binary.cpu_longest_ms;
  return out;
}

CompiledKernel load(std::shared_ptr<const Program> program, Binary binary, const CodegenOptions& opts,
                    const CudaOptions& cuda) {
  auto exe = std::make_shared<Executable>(std::move(program), std::move(binary), opts, cuda);
  CompiledKernel k;
  // Loading on the current device now keeps the module load out of the first call's run time.
  exe->module_for(gpu::device(gpu::current_device()), &k.load_us);
  k.call = [exe](void* const* args, void* result, KernelStatus* status) { return exe->call(args, result, status); };
  if (exe->plannable()) k.repeat = [e = exe.get()](void* const* args, void* result) { return e->repeat(args, result); };
  k.describe = [weak = std::weak_ptr<Executable>(exe)] {
    const auto e = weak.lock();
    return e ? e->describe() : std::string();
  };
  k.keepalive = exe;
  return k;
}

CompiledKernel load_binary(const ir::Function& lowered, Binary binary, const CodegenOptions& opts,
                           const CudaOptions& cuda) {
  const auto t0 = std::chrono::steady_clock::now();
  auto program = std::make_shared<const Program>(emit_program(lowered, cuda.emit));
  const double emit_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  const std::string arch = target_arch(cuda);
  if (binary.arch != arch)
    throw CacheError(fmt::format("the entry holds code for {}, this process compiles for {}", binary.arch, arch));
  // A program compiled in parts (compile_parts.hpp): every part for the same architecture, each function in one.
  std::vector<const std::string*> ptx{&binary.ptx}, cubin{&binary.cubin};
  for (const Binary::Part& p : binary.more) ptx.push_back(&p.ptx), cubin.push_back(&p.cubin);
  for (std::size_t p = 0; p < ptx.size(); ++p) {
    if (ptx[p]->find(".target " + binary.arch) == std::string::npos)
      throw CacheError(fmt::format("the entry's PTX is not for {}", binary.arch));
    if (cubin[p]->size() < 4 || cubin[p]->compare(0, 4, "\x7f" "ELF") != 0) throw CacheError("the entry's CUBIN is not an ELF image");
  }
  for (const std::string& entry : program->entries())
    if (std::none_of(ptx.begin(), ptx.end(), [&](const std::string* text) { return text->find(".entry " + entry + "(") != std::string::npos; }))
      throw CacheError(fmt::format("the entry's PTX lacks the __global__ function {} of the emitted program", entry));
  // The entry is checked first, so that a bad one is discarded on any machine; without a device the call
  // then fails as compile() would (load() asks for the device).
  CompiledKernel k = load(std::move(program), std::move(binary), opts, cuda);
  k.load_us += emit_us;
  return k;
}

namespace {

/// The CUDA target: the disk cache stores PTX and CUBIN ("arch", "ptx", "cubin") and the offloaded function
/// ("host", ir/serialize.hpp), from which a hit emits the program's launch parameters again without a pass.
class CudaBackend final : public Backend {
 public:
  std::optional<CacheIdentity> cache_identity(const TargetOptions& opts) const override {
    // The architecture, every emission setting and the NVRTC library (identified without loading it, so that
    // a hit never opens NVRTC). No NVRTC: nothing compiles here, and the call fails in compile().
    try {
      return CacheIdentity{cache_description(opts.cuda), "", nvrtc_identity(), true, true};
    } catch (const DeviceError&) {
      return std::nullopt;
    }
  }

  CompiledKernel compile(const ir::Function& f, const TargetOptions& opts,
                         std::vector<cache::Blob>& payloads) const override {
    Compiled c = cuda::compile(f, opts.common, opts.cuda);
    std::string host;
    try {
      host = ir::serialize(f);
    } catch (const ir::IRError&) {
      return std::move(c.kernel);  // nested deeper than an entry may hold: compiled, not cached
    }
    payloads.push_back(cache::Blob{"host", std::move(host)});
    payloads.push_back(cache::Blob{"arch", c.binary.arch});
    payloads.push_back(cache::Blob{"ptx", std::move(c.binary.ptx)});
    payloads.push_back(cache::Blob{"cubin", std::move(c.binary.cubin)});
    // A program compiled in parts stores the others as "ptx.1", "cubin.1", ...
    for (std::size_t p = 0; p < c.binary.more.size(); ++p) {
      payloads.push_back(cache::Blob{"ptx." + std::to_string(p + 1), std::move(c.binary.more[p].ptx)});
      payloads.push_back(cache::Blob{"cubin." + std::to_string(p + 1), std::move(c.binary.more[p].cubin)});
    }
    return std::move(c.kernel);
  }

  CompiledKernel load(const cache::Entry& e, std::string_view, const TargetOptions& opts) const override {
    // The launch parameters come from the emitted program, which is deterministic and takes microseconds to
    // emit from the stored offloaded function: no pass runs, NVRTC neither.
    const cache::Blob *host = e.payload("host"), *arch = e.payload("arch"), *ptx = e.payload("ptx"), *cubin = e.payload("cubin");
    if (!host || !arch || !ptx || !cubin)
      throw CacheError("the entry lacks one of the payloads \"host\", \"arch\", \"ptx\" and \"cubin\"");
    ir::Function lowered;
    try {
      lowered = ir::deserialize(host->data);
    } catch (const ir::IRError& err) {
      throw CacheError(fmt::format("the entry's host function: {}", err.what()));
    }
    Binary binary;
    binary.arch = arch->data;
    binary.ptx = ptx->data;
    binary.cubin = cubin->data;
    for (std::size_t p = 1; const cache::Blob* more_ptx = e.payload("ptx." + std::to_string(p)); ++p) {
      const cache::Blob* more_cubin = e.payload("cubin." + std::to_string(p));
      if (!more_cubin) throw CacheError(fmt::format("the entry has the payload \"ptx.{}\" without \"cubin.{}\"", p, p));
      binary.more.push_back({more_ptx->data, more_cubin->data});
    }
    binary.notes = binary.more.empty() ? std::string() : fmt::format("NVRTC: {} programs compiled at the same time, loaded from the disk cache\n", binary.more.size() + 1);
    return load_binary(lowered, std::move(binary), opts.common, opts.cuda);
  }
};

}  // namespace

}  // namespace kiln::codegen::cuda

namespace kiln::codegen::detail {

const Backend& cuda_backend() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const Backend& backend = *new cuda::CudaBackend();
  return backend;
}

}  // namespace kiln::codegen::detail
