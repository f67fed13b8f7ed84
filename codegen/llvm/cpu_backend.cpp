// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The public CPU backend API: kiln IR -> LLVM IR -> optimized host object -> JIT-linked kernel.
#include "codegen/llvm/cpu_backend.hpp"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Pass.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBufferRef.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <system_error>
#include <thread>

#include "codegen/compile_threads.hpp"
#include "codegen/llvm/emitter.hpp"
#include "codegen/llvm/entry_level.hpp"
#include "codegen/llvm/host_target.hpp"
#include "codegen/llvm/jit.hpp"
#include "codegen/llvm/optimize.hpp"
#include "codegen/llvm/partition.hpp"
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

struct Part {
  std::string object;
  std::string llvm_ir;  ///< if kept
  double cpu_ms = 0;    ///< the CPU time of the thread that compiled it, spent on it
  bool on_worker = false;  ///< compiled by a thread of its own (not the calling thread)
};

/// Optimizes and compiles one part of a partitioned kernel in a context and target machine of its own (`tm`
/// if given, made here otherwise), so that parts can be compiled on different threads.
Part compile_part(const std::string& bitcode, int opt_level, const CpuOptions& cpu, bool keep_ir, const std::string& kernel,
                  llvm::TargetMachine* tm) {
  llvm::LLVMContext context;
  detail::drop_hinted_loop_reports(context);
  llvm::Expected<std::unique_ptr<llvm::Module>> m = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, kernel), context);
  if (!m)
    throw CompileError("kiln CPU backend: kernel '" + kernel + "': reading back a part of its module failed: " +
                           llvm::toString(m.takeError()), "");
  std::unique_ptr<llvm::TargetMachine> own;
  if (!tm) {
    own = detail::make_host_target_machine(opt_level, cpu);
    tm = own.get();
  }
  detail::optimize(**m, *tm, opt_level);
  Part out;
  if (keep_ir) out.llvm_ir = module_text(**m);
  out.object = detail::emit_object(**m, *tm);
  return out;
}

/// The threads one kernel's code generation may use: CpuOptions::compile_threads, or by default the host's
/// hardware threads that are idle now. Parts only shorten the compile when they run at the same time: on
/// the 2-core VM with other processes keeping both cores busy (load 7), two parts took 10 % longer than one
/// module (the work grows ~8 %, and the parts take turns). One while LLVM times its passes
/// (KILN_LLVM_OPTIONS=-time-passes): its timers are process-wide, and each kernel's tables are printed as it
/// finishes.
int codegen_threads(const CpuOptions& cpu) {
  if (llvm::TimePassesIsEnabled) return 1;
  if (cpu.compile_threads > 0) return cpu.compile_threads;
  return detail::idle_hardware_threads();
}

/// The parts `m` compiles in: idle threads are counted (codegen_threads) only for a module large enough to
/// be split on this machine's hardware threads.
int codegen_parts(const llvm::Module& m, const CpuOptions& cpu) {
  const int most = cpu.compile_threads > 0 ? cpu.compile_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return detail::partition_count(m, most) == 1 ? 1 : detail::partition_count(m, codegen_threads(cpu));
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
  const double cpu_start = thread_cpu_ms();
  const int opt_level = std::clamp(opts.opt_level, 0, 3);
  std::unique_ptr<llvm::TargetMachine> tm = detail::make_host_target_machine(opt_level, cpu);
  // A context per compilation: LLVM contexts are not thread-safe, and this keeps compilations independent.
  llvm::LLVMContext context;
  detail::drop_hinted_loop_reports(context);
  llvm::Module m(f.name.empty() ? "kiln_kernel" : f.name, context);
  m.setTargetTriple(tm->getTargetTriple().str());
  m.setDataLayout(tm->createDataLayout());
  // Lanes from O2, where LLVM vectorizes too.
  const unsigned lane_bits = cpu.lanes && opt_level >= 2 ? detail::vector_register_bits(*tm) : 0;
  const unsigned half_lanes = detail::hardware_half_conversions(*tm) ? detail::vector_register_bits(*tm) / 32 : 0;
  detail::Emitter(m, opts, f, lane_bits, half_lanes).emit_entry();
  ObjectCode out;
  if (opt_level >= 1) {
    const detail::EntryLevel entry = detail::entry_level(f.body);
    if (entry.unoptimized) {
      llvm::Function* fn = m.getFunction("kiln_entry");
      fn->addFnAttr(llvm::Attribute::OptimizeNone);
      fn->addFnAttr(llvm::Attribute::NoInline);  // optnone requires it
    }
    out.notes = "cpu code generation: " + entry.reason;
  }

  std::string problems;
  llvm::raw_string_ostream problem_out(problems);
  if (llvm::verifyModule(m, &problem_out))
    throw CompileError("kiln CPU backend: LLVM rejected the IR emitted for kernel '" + f.name + "': " + problems,
                       module_text(m), problems);

  const bool keep_ir = cpu.keep_llvm_ir || cpu.dump_llvm;
  const int parts = opt_level >= 1 ? codegen_parts(m, cpu) : 1;
  if (parts == 1) {
    detail::optimize(m, *tm, opt_level);
    if (keep_ir) out.llvm_ir = module_text(m);
    out.object = detail::emit_object(m, *tm);
  } else {
    // The outlined parfor bodies are independent functions (the entry passes their addresses to the
    // runtime), so parts of the module compile at the same time (partition.hpp): part 0 here with this
    // target machine, the others on threads of their own.
    const std::vector<std::string> bitcode = detail::partition_module(m, parts);
    std::vector<Part> done(bitcode.size());
    const std::thread::id caller = std::this_thread::get_id();
    const std::vector<std::exception_ptr> failed = run_parts(bitcode.size(), [&](std::size_t p) {
      const double part_start = thread_cpu_ms();
      done[p] = compile_part(bitcode[p], opt_level, cpu, keep_ir, f.name, p == 0 ? tm.get() : nullptr);
      done[p].cpu_ms = thread_cpu_ms() - part_start;
      done[p].on_worker = std::this_thread::get_id() != caller;
    });
    for (const std::exception_ptr& e : failed)
      if (e) std::rethrow_exception(e);
    out.object = std::move(done[0].object);
    for (std::size_t p = 1; p < done.size(); ++p) out.more_objects.push_back(std::move(done[p].object));
    // The calling thread's own time (below) covers the parts it compiled itself.
    for (const Part& part : done) {
      if (part.on_worker) out.codegen_cpu_ms += part.cpu_ms;
      out.codegen_cpu_longest_ms = std::max(out.codegen_cpu_longest_ms, part.cpu_ms);
    }
    for (std::size_t p = 0; p < done.size(); ++p)
      if (keep_ir) out.llvm_ir += "; kiln: part " + std::to_string(p) + " of " + std::to_string(parts) + "\n" + done[p].llvm_ir;
  }
  out.codegen_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  out.codegen_cpu_ms += thread_cpu_ms() - cpu_start;
  return out;
}

CompiledKernel load_object(const std::string& object, std::string_view debug_name,
                           const std::vector<std::string>& more_objects) {
  const detail::LlvmUse use(debug_name);
  std::vector<const std::string*> objects{&object};
  for (const std::string& o : more_objects) objects.push_back(&o);
  return detail::jit_load(objects, debug_name);
}

CompiledKernel compile(const ir::Function& f, const CodegenOptions& opts, const CpuOptions& cpu) {
  ObjectCode obj = compile_to_object(f, opts, cpu);
  CompiledKernel k = load_object(obj.object, f.name, obj.more_objects);
  k.llvm_ir = std::move(obj.llvm_ir);
  k.codegen_ms = obj.codegen_ms;
  k.codegen_cpu_ms = obj.codegen_cpu_ms;
  k.codegen_cpu_longest_ms = obj.codegen_cpu_longest_ms;
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
    CompiledKernel code = load_object(obj.object, f.name, obj.more_objects);
    code.llvm_ir = std::move(obj.llvm_ir);
    code.codegen_ms = obj.codegen_ms;
    code.codegen_cpu_ms = obj.codegen_cpu_ms;
    code.codegen_cpu_longest_ms = obj.codegen_cpu_longest_ms;
    if (!obj.notes.empty()) code.describe = [notes = obj.notes] { return notes; };
    payloads.push_back(cache::Blob{"object", std::move(obj.object)});
    for (std::size_t p = 0; p < obj.more_objects.size(); ++p)
      payloads.push_back(cache::Blob{"object." + std::to_string(p + 1), std::move(obj.more_objects[p])});
    if (!obj.notes.empty()) payloads.push_back(cache::Blob{"notes", std::move(obj.notes)});
    if (opts.cpu.dump_llvm)
      std::fprintf(stderr, "=== kiln: %s: optimized LLVM IR ===\n%s", f.name.c_str(), code.llvm_ir.c_str());
    return code;
  }

  CompiledKernel load(const cache::Entry& e, std::string_view kernel,
                      const TargetOptions&) const override {
    const cache::Blob* obj = e.payload("object");
    if (!obj) throw CacheError("the entry has no \"object\" payload");
    // A kernel compiled in parts stored the others as "object.1", "object.2", ...
    std::vector<std::string> more;
    for (std::size_t p = 1; const cache::Blob* part = e.payload("object." + std::to_string(p)); ++p) more.push_back(part->data);
    CompiledKernel code = load_object(obj->data, kernel, more);
    if (const cache::Blob* notes = e.payload("notes")) code.describe = [text = notes->data] { return text; };
    return code;
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
