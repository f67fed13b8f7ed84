// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/jit.hpp"

#include <dlfcn.h>

#include <llvm/ExecutionEngine/JITLink/EHFrameSupport.h>
#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h>
#include <llvm/ExecutionEngine/Orc/Shared/ExecutorSymbolDef.h>
#include <llvm/ExecutionEngine/Orc/TargetProcess/RegisterEHFrames.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBufferRef.h>
#include <llvm/Support/raw_ostream.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <utility>

#include "codegen/llvm/host_target.hpp"
#include "kiln/error.hpp"
#include "runtime/parallel.hpp"
#include "runtime/sort.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

namespace jitlink = llvm::jitlink;
namespace orc = llvm::orc;

// Kernels are linked by JITLink (LLVM's JIT linker: object files to graphs, GOT/PLT stubs, relocations, memory
// with the right protections) with a context of kiln's own rather than through ORC's ExecutionSession. A
// kernel's objects come with everything they define and refer only to one another, to kiln's runtime and to
// the process's libraries (libm, libmvec, libc), so ORC's symbol tables, materialization units, dependency
// tracking and asynchronous lookups add nothing; they were most of a hit's link (callgrind, saxpy from the disk
// cache in a fresh process: the link took 222k instructions through ORC, 77k this way).

/// The runtime functions generated code calls, by address: kernels find them even where libkiln's symbols are
/// not exported.
struct RuntimeSymbol {
  llvm::StringRef name;
  void* address;
};

template <class Fn>
RuntimeSymbol runtime_symbol(llvm::StringRef name, Fn* fn) {
  return {name, reinterpret_cast<void*>(fn)};
}

const RuntimeSymbol* runtime_symbols(std::size_t& count) {
  static const RuntimeSymbol table[] = {
      runtime_symbol("kiln_rt_parfor", &kiln_rt_parfor),
      runtime_symbol("kiln_rt_parfor_split", &kiln_rt_parfor_split),
      runtime_symbol("kiln_rt_reduce_blocks", &kiln_rt_reduce_blocks),
      runtime_symbol("kiln_rt_parfor_reduce", &kiln_rt_parfor_reduce),
      runtime_symbol("kiln_rt_alloc", &kiln_rt_alloc),
      runtime_symbol("kiln_rt_free", &kiln_rt_free),
      runtime_symbol("kiln_rt_release", &kiln_rt_release),
      runtime_symbol("kiln_rt_parfor_width", &kiln_rt_parfor_width),
      runtime_symbol("kiln_rt_parfor_pieces", &kiln_rt_parfor_pieces),
      runtime_symbol("kiln_rt_parfor_reduce_pieces", &kiln_rt_parfor_reduce_pieces),
      runtime_symbol("kiln_rt_private_copies", &kiln_rt_private_copies),
      runtime_symbol("kiln_rt_copies_done", &kiln_rt_copies_done),
      runtime_symbol("kiln_rt_combine_sums", &kiln_rt_combine_sums),
      runtime_symbol("kiln_rt_fail", &kiln_rt_fail),
      runtime_symbol("kiln_rt_sort", &kiln_rt_sort),
  };
  count = std::size(table);
  return table;
}

/// The code of one kernel: its objects' memory, freed (and their EH frames deregistered) with the last kernel
/// using it.
struct LinkedCode {
  std::vector<jitlink::JITLinkMemoryManager::FinalizedAlloc> memory;
  std::vector<std::pair<orc::ExecutorAddr, std::size_t>> eh_frames;
};

/// The state of linking one kernel's objects together. JITLink gives each object's defined symbols their
/// addresses before it asks for the object's external ones (JITLinkContext::notifyResolved, then lookup), so
/// the lookups wait here until every object has its addresses: objects of one kernel may refer to one another
/// in any direction (partition.hpp).
struct Definition {
  orc::ExecutorAddr address;
  bool weak = false;
};

struct KernelLink {
  llvm::StringMap<Definition> defined;  ///< the objects' symbols other than local ones
  std::vector<std::pair<jitlink::JITLinkContext::LookupMap, std::unique_ptr<jitlink::JITLinkAsyncLookupContinuation>>>
      waiting;
  LinkedCode code;
  std::string errors;

  void fail(llvm::Error err) {
    if (!errors.empty()) errors += "; ";
    errors += llvm::toString(std::move(err));
  }
};

/// Where a kernel's external symbol is: another of its objects, kiln's runtime, or the process (libm, libc and
/// libmvec, loaded when an object first refers to one of its functions: the vectorizer's calls of vector math
/// are named _ZGV...; a process whose kernels call none never loads it, 0.12-0.16 ms). Null if nowhere.
orc::ExecutorAddr find_symbol(const KernelLink& link, llvm::StringRef name) {
  if (const auto it = link.defined.find(name); it != link.defined.end()) return it->second.address;
  std::size_t count = 0;
  const RuntimeSymbol* runtime = runtime_symbols(count);
  for (std::size_t i = 0; i < count; ++i)
    if (runtime[i].name == name) return orc::ExecutorAddr::fromPtr(runtime[i].address);
  if (name.starts_with("_ZGV")) load_libmvec();  // if it fails, the symbol stays unresolved and the link says so
  // The process's global scope (what a shared library's undefined symbol would bind to). ELF symbols have
  // no global prefix.
  return orc::ExecutorAddr::fromPtr(dlsym(RTLD_DEFAULT, name.str().c_str()));
}

llvm::Expected<jitlink::AsyncLookupResult> resolve(const KernelLink& link, const jitlink::JITLinkContext::LookupMap& symbols) {
  jitlink::AsyncLookupResult found;
  std::string missing;
  for (const auto& [name, flags] : symbols) {
    const orc::ExecutorAddr address = find_symbol(link, name);
    if (address) found[name] = orc::ExecutorSymbolDef(address, llvm::JITSymbolFlags::Exported);
    else if (flags == jitlink::SymbolLookupFlags::RequiredSymbol) missing += (missing.empty() ? "" : ", ") + name.str();
    // A weak reference that is found nowhere stays null (JITLink's rule: absent from the result).
  }
  if (!missing.empty()) return llvm::createStringError(llvm::inconvertibleErrorCode(), "symbols not found: " + missing);
  return found;
}

class KernelLinkContext final : public jitlink::JITLinkContext {
 public:
  KernelLinkContext(KernelLink& link, jitlink::JITLinkMemoryManager& memory)
      : JITLinkContext(nullptr), link_(link), memory_(memory) {}

  jitlink::JITLinkMemoryManager& getMemoryManager() override { return memory_; }
  void notifyFailed(llvm::Error err) override { link_.fail(std::move(err)); }

  llvm::Error notifyResolved(jitlink::LinkGraph& g) override {
    for (jitlink::Symbol* s : g.defined_symbols()) {
      if (!s->hasName() || s->getScope() == jitlink::Scope::Local) continue;
      const bool weak = s->getLinkage() == jitlink::Linkage::Weak;
      const auto [it, added] = link_.defined.try_emplace(s->getName(), Definition{s->getAddress(), weak});
      if (added || (weak && it->second.weak)) continue;  // of weak definitions, the first object's is used
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "two objects define " + s->getName().str());
    }
    return llvm::Error::success();
  }

  void lookup(const LookupMap& symbols, std::unique_ptr<jitlink::JITLinkAsyncLookupContinuation> done) override {
    link_.waiting.emplace_back(symbols, std::move(done));  // answered in Jit::load, once every object is resolved
  }

  void notifyFinalized(jitlink::JITLinkMemoryManager::FinalizedAlloc memory) override {
    link_.code.memory.push_back(std::move(memory));
  }

  llvm::Error modifyPassConfig(jitlink::LinkGraph& g, jitlink::PassConfiguration& config) override {
    // kiln's code has no unwind tables (emit_runtime.cpp), but an object that had some gets them registered,
    // as ORC's EHFrameRegistrationPlugin did, so that unwinding through it works.
    config.PostFixupPasses.push_back(jitlink::createEHFrameRecorderPass(
        g.getTargetTriple(), [&link = link_](orc::ExecutorAddr at, std::size_t size) {
          if (at && size) link.code.eh_frames.emplace_back(at, size);
        }));
    return llvm::Error::success();
  }

 private:
  KernelLink& link_;
  jitlink::JITLinkMemoryManager& memory_;
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
    KernelLink link;
    // Each link runs on this thread (in-process memory is allocated and finalized synchronously) up to its
    // lookup, which waits in `link`, or to its failure.
    for (const std::string* object : objects) {
      llvm::Expected<std::unique_ptr<jitlink::LinkGraph>> graph =
          jitlink::createLinkGraphFromObject(llvm::MemoryBufferRef(*object, name));
      if (!graph) {
        link.fail(graph.takeError());
        break;
      }
      jitlink::link(std::move(*graph), std::make_unique<KernelLinkContext>(link, *memory_));
    }
    // Every object has its addresses: the links go on to their fixups and finalization (or, after a failure,
    // give their memory back).
    for (auto& [symbols, done] : link.waiting)
      done->run(link.errors.empty() ? resolve(link, symbols)
                                    : llvm::Expected<jitlink::AsyncLookupResult>(llvm::createStringError(
                                          llvm::inconvertibleErrorCode(), "another object of the kernel failed")));
    link.waiting.clear();
    LinkedCode code = std::move(link.code);
    const auto entry = link.defined.find("kiln_entry");
    if (link.errors.empty() && entry == link.defined.end()) link.errors = "the objects define no kiln_entry";
    for (std::size_t i = 0; link.errors.empty() && i < code.eh_frames.size(); ++i)
      if (llvm::Error err = orc::registerEHFrameSection(code.eh_frames[i].first.toPtr<const void*>(), code.eh_frames[i].second)) {
        code.eh_frames.resize(i);  // the ones registered so far are deregistered with the rest
        link.fail(std::move(err));
      }
    if (!link.errors.empty() || code.memory.size() != objects.size()) {
      release(code);
      throw CompileError("kiln CPU backend: JIT failure (" + name + "): " +
                             (link.errors.empty() ? std::string("an object was not finalized") : link.errors),
                         "");
    }
    CompiledKernel k;
    k.entry = entry->second.address.toPtr<KernelEntry>();
    // (If the shared_ptr cannot be made, it calls the deleter.)
    k.keepalive = std::shared_ptr<void>(new LinkedCode(std::move(code)), [this](void* p) {
      auto* linked = static_cast<LinkedCode*>(p);
      release(*linked);
      delete linked;
    });
    k.load_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return k;
  }

 private:
  std::unique_ptr<jitlink::JITLinkMemoryManager> memory_;
  std::atomic<std::uint64_t> next_id_{0};

  Jit() {
    llvm::Expected<std::unique_ptr<jitlink::InProcessMemoryManager>> memory = jitlink::InProcessMemoryManager::Create();
    if (!memory)
      throw CompileError("kiln CPU backend: JIT failure (startup): " + llvm::toString(memory.takeError()), "");
    memory_ = std::move(*memory);
  }

  void release(LinkedCode& code) {
    for (const auto& [at, size] : code.eh_frames)
      if (llvm::Error err = orc::deregisterEHFrameSection(at.toPtr<const void*>(), size))
        llvm::logAllUnhandledErrors(std::move(err), llvm::errs(), "kiln: releasing a JIT-compiled kernel: ");
    code.eh_frames.clear();
    if (code.memory.empty()) return;
    if (llvm::Error err = memory_->deallocate(std::move(code.memory)))
      llvm::logAllUnhandledErrors(std::move(err), llvm::errs(), "kiln: releasing a JIT-compiled kernel: ");
    code.memory.clear();
  }
};

}  // namespace

CompiledKernel jit_load(const std::vector<const std::string*>& objects, std::string_view debug_name) {
  return Jit::get().load(objects, debug_name);
}

}  // namespace kiln::codegen::cpu::detail
