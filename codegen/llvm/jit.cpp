// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/jit.hpp"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/EPCEHFrameRegistrar.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutorProcessControl.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <chrono>

#include "codegen/llvm/host_target.hpp"
#include "kiln/error.hpp"
#include "runtime/parallel.hpp"
#include "runtime/sort.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

namespace orc = llvm::orc;

/// Loads libmvec when a kernel's object first refers to one of its functions (the vectorizer's calls of
/// vector math are named _ZGV...), ahead of the process-symbol generator that then finds them: a process
/// whose kernels call none never loads it (0.12-0.16 ms of a fresh process's first call on the 2-core VM).
class LoadLibmvecOnDemand final : public orc::DefinitionGenerator {
 public:
  llvm::Error tryToGenerate(orc::LookupState&, orc::LookupKind, orc::JITDylib&, orc::JITDylibLookupFlags,
                            const orc::SymbolLookupSet& symbols) override {
    for (const auto& [name, flags] : symbols)
      if ((*name).starts_with("_ZGV")) {
        load_libmvec();  // if it fails, the symbol stays unresolved and the link reports it
        break;
      }
    return llvm::Error::success();
  }
};

class Jit {
 public:
  /// Created on first use (thread-safe) and never destroyed: kernels' keepalives may be released during
  /// static destruction, after any destructor of ours would have run.
  static Jit& get() {
    static Jit* const jit = new Jit();
    return *jit;
  }

  CompiledKernel load(const std::vector<const std::string*>& objects, std::string_view debug_name) {
    const auto start = std::chrono::steady_clock::now();
    // Names only need to be unique; the debug name makes them readable in JIT diagnostics.
    const std::string name = "kiln." + std::string(debug_name) + "." + std::to_string(next_id_++);
    orc::JITDylib& jd = check(es_->createJITDylib(name), name);
    jd.addToLinkOrder(*main_);
    try {
      for (const std::string* object : objects) check(linker_->add(jd, llvm::MemoryBuffer::getMemBufferCopy(*object, name)), name);
      const orc::ExecutorAddr entry = check(es_->lookup({&jd}, es_->intern("kiln_entry")), name).getAddress();
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
  std::unique_ptr<orc::ExecutionSession> es_;
  std::unique_ptr<orc::ObjectLinkingLayer> linker_;
  orc::JITDylib* main_ = nullptr;
  std::atomic<std::uint64_t> next_id_{0};

  // Only an execution session and a JITLink object layer: kernels arrive as objects, so LLJIT's IR layers
  // and the TargetMachine it creates at start-up (~0.5 ms, paid by a process whose kernels all come from
  // the disk cache) are never needed.
  Jit() {
    es_ = std::make_unique<orc::ExecutionSession>(check(orc::SelfExecutorProcessControl::Create(), "startup"));
    linker_ = std::make_unique<orc::ObjectLinkingLayer>(*es_);
    linker_->addPlugin(std::make_unique<orc::EHFrameRegistrationPlugin>(
        *es_, check(orc::EPCEHFrameRegistrar::Create(*es_), "startup")));
    main_ = &es_->createBareJITDylib("kiln.main");
    // The runtime by address, so kernels find it even where libkiln's symbols are not exported.
    orc::SymbolMap runtime;
    auto define = [&](const char* symbol, auto* fn) {
      runtime[es_->intern(symbol)] = {orc::ExecutorAddr::fromPtr(fn),
                                      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    };
    define("kiln_rt_parfor", &kiln_rt_parfor);
    define("kiln_rt_parfor_split", &kiln_rt_parfor_split);
    define("kiln_rt_reduce_blocks", &kiln_rt_reduce_blocks);
    define("kiln_rt_parfor_reduce", &kiln_rt_parfor_reduce);
    define("kiln_rt_alloc", &kiln_rt_alloc);
    define("kiln_rt_free", &kiln_rt_free);
    define("kiln_rt_release", &kiln_rt_release);
    define("kiln_rt_parfor_width", &kiln_rt_parfor_width);
    define("kiln_rt_parfor_pieces", &kiln_rt_parfor_pieces);
    define("kiln_rt_parfor_reduce_pieces", &kiln_rt_parfor_reduce_pieces);
    define("kiln_rt_private_copies", &kiln_rt_private_copies);
    define("kiln_rt_copies_done", &kiln_rt_copies_done);
    define("kiln_rt_combine_sums", &kiln_rt_combine_sums);
    define("kiln_rt_fail", &kiln_rt_fail);
    define("kiln_rt_sort", &kiln_rt_sort);
    check(main_->define(orc::absoluteSymbols(std::move(runtime))), "startup");
    // libm, libmvec (loaded globally by load_libmvec, on demand) and the C library, from the process. ELF
    // symbols have no global prefix.
    main_->addGenerator(std::make_unique<LoadLibmvecOnDemand>());
    main_->addGenerator(check(orc::DynamicLibrarySearchGenerator::GetForCurrentProcess('\0'), "startup"));
  }

  void remove(orc::JITDylib& jd) {
    if (llvm::Error err = es_->removeJITDylib(jd))
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

CompiledKernel jit_load(const std::vector<const std::string*>& objects, std::string_view debug_name) {
  return Jit::get().load(objects, debug_name);
}

}  // namespace kiln::codegen::cpu::detail
