#include "codegen/llvm/jit.hpp"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <chrono>
#include <sstream>

#include "codegen/llvm/host_target.hpp"
#include "kiln/error.hpp"
#include "runtime/parallel.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

namespace orc = llvm::orc;

class Jit {
 public:
  /// Created on first use (thread-safe) and never destroyed: kernels' keepalives may be released during
  /// static destruction, after any destructor of ours would have run.
  static Jit& get() {
    static Jit* const jit = new Jit();
    return *jit;
  }

  CompiledKernel load(const std::string& object, std::string_view debug_name) {
    const auto start = std::chrono::steady_clock::now();
    // Names only need to be unique; the debug name makes them readable in JIT diagnostics.
    const std::string name = "kiln." + std::string(debug_name) + "." + std::to_string(next_id_++);
    orc::JITDylib& jd = check(lljit_->createJITDylib(name), name);
    jd.addToLinkOrder(lljit_->getMainJITDylib());
    try {
      check(lljit_->addObjectFile(jd, llvm::MemoryBuffer::getMemBufferCopy(object, name)), name);
      const orc::ExecutorAddr entry = check(lljit_->lookup(jd, "kiln_entry"), name);
      CompiledKernel k;
      k.entry = entry.toPtr<KernelEntry>();
      k.keepalive = std::shared_ptr<void>(&jd, [this](void* p) { remove(*static_cast<orc::JITDylib*>(p)); });
      k.load_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      return k;
    } catch (...) {
      remove(jd);
      throw;
    }
  }

 private:
  std::unique_ptr<orc::LLJIT> lljit_;
  std::atomic<std::uint64_t> next_id_{0};

  Jit() {
    const HostTarget& host = host_target();
    libmvec_available();  // before the process-symbol generator first searches
    orc::JITTargetMachineBuilder jtmb{llvm::Triple(host.triple)};
    jtmb.setCPU(host.cpu);
    std::istringstream features(host.features);
    for (std::string f; std::getline(features, f, ',');) jtmb.getFeatures().AddFeature(f);
    jtmb.setRelocationModel(llvm::Reloc::PIC_);
    jtmb.setCodeModel(llvm::CodeModel::Small);
    lljit_ = check(orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(), "startup");

    orc::JITDylib& main = lljit_->getMainJITDylib();
    // The runtime by address, so kernels find it even where libkiln's symbols are not exported.
    orc::SymbolMap runtime;
    auto define = [&](const char* symbol, auto* fn) {
      runtime[lljit_->mangleAndIntern(symbol)] = {orc::ExecutorAddr::fromPtr(fn),
                                                  llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    };
    define("kiln_rt_parfor", &kiln_rt_parfor);
    define("kiln_rt_reduce_blocks", &kiln_rt_reduce_blocks);
    define("kiln_rt_parfor_reduce", &kiln_rt_parfor_reduce);
    define("kiln_rt_alloc", &kiln_rt_alloc);
    define("kiln_rt_free", &kiln_rt_free);
    define("kiln_rt_parfor_width", &kiln_rt_parfor_width);
    define("kiln_rt_parfor_pieces", &kiln_rt_parfor_pieces);
    define("kiln_rt_parfor_reduce_pieces", &kiln_rt_parfor_reduce_pieces);
    define("kiln_rt_private_copies", &kiln_rt_private_copies);
    define("kiln_rt_fail", &kiln_rt_fail);
    check(main.define(orc::absoluteSymbols(std::move(runtime))), "startup");
    // libm, libmvec (loaded globally by libmvec_available) and the C library, from the process.
    main.addGenerator(check(orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                                lljit_->getDataLayout().getGlobalPrefix()),
                            "startup"));
  }

  void remove(orc::JITDylib& jd) {
    if (llvm::Error err = lljit_->getExecutionSession().removeJITDylib(jd))
      llvm::logAllUnhandledErrors(std::move(err), llvm::errs(), "kiln: releasing a JIT-compiled kernel: ");
  }

  static void check(llvm::Error err, const std::string& what) {
    if (err) throw CompileError("kiln CPU backend: JIT failure (" + what + "): " + llvm::toString(std::move(err)), "");
  }
  template <class T>
  static T& check(llvm::Expected<T&> v, const std::string& what) {
    if (!v) check(v.takeError(), what);
    return *v;
  }
  template <class T>
  static T check(llvm::Expected<T> v, const std::string& what) {
    if (!v) check(v.takeError(), what);
    return std::move(*v);
  }
};

}  // namespace

CompiledKernel jit_load(const std::string& object, std::string_view debug_name) {
  return Jit::get().load(object, debug_name);
}

}  // namespace kiln::codegen::cpu::detail
