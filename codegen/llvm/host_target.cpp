// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/host_target.hpp"

#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#include <link.h>
#include <unistd.h>
#endif

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/llvm/optimize.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cpu::detail {
namespace {

HostTarget describe_host() {
  HostTarget h;
  h.triple = llvm::sys::getProcessTriple();
  h.cpu = llvm::sys::getHostCPUName().str();
  // "+name" for each feature the host has, then "-name" for the others, each group by name: the order of the
  // "+"/"-" strings sorted, built without a string per feature (this description is part of every cache key,
  // so a fresh process's first kernel from the disk cache computes it: the strings and their sort were a
  // third of its instructions).
  const llvm::StringMap<bool> host_features = llvm::sys::getHostCPUFeatures();
  std::vector<std::pair<bool, llvm::StringRef>> features;
  features.reserve(host_features.size());
  std::size_t length = 0;
  for (const auto& f : host_features) {
    features.emplace_back(!f.second, f.first());
    length += f.first().size() + 2;
  }
  std::sort(features.begin(), features.end());
  h.features.reserve(length);
  for (const auto& [absent, name] : features) {
    if (!h.features.empty()) h.features.push_back(',');
    h.features.push_back(absent ? '-' : '+');
    h.features.append(name.data(), name.size());
  }
  // LLVM tunes Intel AVX-512 server CPUs to prefer 256-bit vectors, for Skylake-SP's clock drop under
  // 512-bit work. Later parts drop far less, and on a 16-core Xeon (Sapphire Rapids, 16 threads) 512-bit
  // vectors measured better on kiln's kernels: logistic_regression 1.17-1.42x the hand-written OpenMP with
  // 256-bit vs 0.75-1.02x with 512-bit, conv2d 0.71-0.78x vs 0.57-0.58x, streaming rows unchanged. With
  // 256-bit vectors a loop's 4-lane main loop also gets no vector remainder (see vectorize_remainders), so
  // short rows ran scalar. The Skylake-SP family keeps LLVM's choice; KILN_CPU_FEATURES=+prefer-256-bit
  // restores it anywhere.
  static const char* const kClockDropping[] = {"skylake-avx512", "cascadelake", "cooperlake"};
  const bool avx512 = h.features.find("+avx512f") != std::string::npos;
  if (avx512 && std::find(std::begin(kClockDropping), std::end(kClockDropping), h.cpu) == std::end(kClockDropping))
    h.features.append(",-prefer-256-bit");
  return h;
}

}  // namespace

const HostTarget& host_target() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const HostTarget& host = *new HostTarget(describe_host());
  return host;
}

namespace {

// LLVM vectorizes a loop's remainder only when the main loop runs at least 16 lanes; with AVX-512 a double
// loop runs 8, so each row of a stencil's interior ends in up to 7 scalar iterations (heat3d on 256^3: 254
// elements a row, ~2.4 % of them scalar: median 1.137x the hand-written loop over 8 runs; with vectorized
// remainders median 1.10x over 12, on the 2-core znver4 machine). The threshold is a process-wide LLVM option: it is lowered to 8 only if nobody
// (the host program, LLVM's command line) has set it.
void vectorize_remainders() {
  auto& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("epilogue-vectorization-minimum-VF");
  if (it == options.end() || it->second->getNumOccurrences() > 0) return;
  if (auto* vf = static_cast<llvm::cl::opt<unsigned>*>(it->second); vf->getValue() > 8) vf->setValue(8);
}

// At O3 LLVM's loop unswitching also moves loop-invariant conditions that are not trivial out of loops by
// copying the loop nest once per condition. What a kiln chunk's loops still test that is invariant are
// guards such as "does the inner loop run at all" (the passes hoisted invariant work and cut loops at their
// index tests), so the copies cost code generation and buy no run time. On the 2-core znver4 machine, cold
// codegen of 2mm went from 139 to 105 ms, gemm 70 to 53, doitgen 72 to 55, jacobi2d 56 to 26; the median
// over kiln-suite and the examples 36 to 27 ms; kiln-bench and kiln-suite rows ran the same (medians of
// interleaved runs, within their A/A bands). Trivial unswitching (an invariant exit) stays, and
// KILN_LLVM_OPTIONS=-unswitch-threshold=50 restores LLVM's default. Like the threshold above it is a
// process-wide LLVM option, changed only if nobody has set it.
void no_nontrivial_unswitching() {
  auto& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("unswitch-threshold");
  if (it == options.end() || it->second->getNumOccurrences() > 0) return;
  // A candidate's cost is the size of the loop part it would duplicate, at least 1 for any real one; 1 also
  // keeps LLVM's cost multiplier within its range (1..threshold).
  static_cast<llvm::cl::opt<int>*>(it->second)->setValue(1);
}

// LLVM's "Generic Options" (-help, -help-list, -help-hidden, -help-list-hidden, -version, -print-options,
// -print-all-options and the -h alias) print and then end the process with status 0 from inside
// ParseCommandLineOptions: in a user's program that would exit before it computes anything. A word starting
// with '@' names a response file, whose contents LLVM reads as more options, so it could hide one of them.
bool ends_the_program(const std::string& word) {
  if (word.empty()) return false;
  if (word[0] == '@') return true;
  if (word[0] != '-') return false;
  const std::size_t start = word.find_first_not_of('-');
  if (start == std::string::npos) return false;
  const std::size_t end = word.find('=', start);  // "-help=true" asks for help too
  const std::string name = word.substr(start, end == std::string::npos ? std::string::npos : end - start);
  static const char* const kGeneric[] = {"help",    "help-list",     "help-hidden",       "help-list-hidden",
                                         "version", "print-options", "print-all-options", "h"};
  if (std::find(std::begin(kGeneric), std::end(kGeneric), name) != std::end(kGeneric)) return true;
  // Any other option LLVM files under the same category (aliases carry their target's categories).
  const auto& registered = llvm::cl::getRegisteredOptions();
  const auto it = registered.find(name);
  if (it == registered.end()) return false;
  for (const llvm::cl::OptionCategory* c : it->second->Categories)
    if (c && c->getName() == "Generic Options") return true;
  return false;
}

void apply_llvm_options(const std::string& options) {
  if (options.empty()) return;
  std::vector<std::string> words{"kiln"};
  std::string refused;
  std::istringstream in(options);
  for (std::string w; in >> w;) {
    if (!ends_the_program(w)) words.push_back(w);
    else refused += (refused.empty() ? "" : " ") + w;
  }
  if (!refused.empty())
    std::fprintf(stderr, "kiln: warning: ignoring %s in KILN_LLVM_OPTIONS: LLVM would print and end the program there\n",
                 refused.c_str());
  if (words.size() == 1) return;
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  std::string errors;
  llvm::raw_string_ostream err(errors);
  // Like every other bad environment value: reported and ignored (the options LLVM accepted stay set).
  if (!llvm::cl::ParseCommandLineOptions(static_cast<int>(argv.size()), argv.data(), "", &err)) {
    err.flush();
    std::fprintf(stderr, "kiln: warning: ignoring what LLVM rejected in KILN_LLVM_OPTIONS=\"%s\": %s\n", options.c_str(),
                 errors.c_str());
  }
}

}  // namespace

std::string target_features(const CpuOptions& opts) {
  const std::string& host = host_target().features;
  return opts.features.empty() ? host : host + "," + opts.features;
}

std::unique_ptr<llvm::TargetMachine> make_host_target_machine(int opt_level, const CpuOptions& opts) {
  // Registered only here: describing the host and linking cached objects need no target (a cache hit's
  // start-up stays small).
  static const bool registered = [&opts] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    vectorize_remainders();
    no_nontrivial_unswitching();
    take_over_strength_reduction();
    apply_llvm_options(opts.llvm_options);
    return true;
  }();
  (void)registered;
  const HostTarget& host = host_target();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(host.triple, error);
  if (!target) throw CompileError("kiln CPU backend: no LLVM target for " + host.triple + ": " + error, "");
  llvm::CodeGenOptLevel level = llvm::CodeGenOptLevel::Aggressive;
  if (opt_level <= 0) level = llvm::CodeGenOptLevel::None;
  else if (opt_level == 1) level = llvm::CodeGenOptLevel::Less;
  else if (opt_level == 2) level = llvm::CodeGenOptLevel::Default;
  // Position-independent small-model code: the JIT linker builds GOT/PLT stubs for calls into libm, libmvec
  // and the runtime, which may be mapped anywhere in the address space.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      host.triple, host.cpu, target_features(opts), llvm::TargetOptions(), llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
  if (!tm) throw CompileError("kiln CPU backend: cannot create a target machine for " + host.cpu, "");
  return tm;
}

unsigned vector_register_bits(const llvm::TargetMachine& tm) {
  if (!tm.getTargetTriple().isX86()) return 128;
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  if (sti->checkFeatures("+avx512f") && !sti->checkFeatures("+prefer-256-bit")) return 512;
  return sti->checkFeatures("+avx") ? 256 : 128;
}

bool hardware_half_conversions(const llvm::TargetMachine& tm) {
  return tm.getTargetTriple().isX86() && tm.getMCSubtargetInfo()->checkFeatures("+f16c");
}

namespace {
std::atomic<bool> g_llvm_state_destroyed{false};
}  // namespace

void after_llvm_use() {
  std::atexit([] { g_llvm_state_destroyed.store(true); });
}

void require_llvm_usable(std::string_view kernel) {
  if (!g_llvm_state_destroyed.load())
    return;
  throw CompileError("kernel '" + std::string(kernel) +
                         "': cannot compile or load CPU code while the process exits: this exit handler or static "
                         "destructor was registered before LLVM made state that exit has since destroyed. Call the "
                         "kernel once before registering the handler, or run it with kiln::Target::interpreter",
                     "");
}

bool libmvec_available() {
  static const bool available = [] {
#if defined(__GLIBC__) && defined(__x86_64__) && defined(__linux__)
    // x86-64 Linux: the process's own target (host_target().triple is the process's triple), known when kiln is
    // compiled, not parsed from the triple string at run time (every fresh process describes its host).
    // glibc installs libmvec beside libm (one package); where the libm of this process came from is known
    // without a search of the loader's paths (the loaded objects' list; an address such as &erf could be a
    // non-PIE executable's PLT entry).
    // (C strings, not std::filesystem paths: every fresh process's first kernel asks, over each loaded object.)
    std::string libmvec;
    dl_iterate_phdr(
        [](dl_phdr_info* object, std::size_t, void* out) {
          const char* path = object->dlpi_name ? object->dlpi_name : "";
          const char* slash = std::strrchr(path, '/');
          const char* file = slash ? slash + 1 : path;
          if (std::strncmp(file, "libm.so", 7) != 0) return 0;
          *static_cast<std::string*>(out) = std::string(path, static_cast<std::size_t>(file - path)) + "libmvec.so.1";
          return 1;
        },
        &libmvec);
    return !libmvec.empty() && ::access(libmvec.c_str(), R_OK) == 0;
#else
    return false;
#endif
  }();
  return available;
}

bool libmvec_235_available() {
  static const bool available = [] {
    if (!libmvec_available()) return false;
#if defined(__GLIBC__)
    // "2.35", "2.39.9000": parsed by hand (sscanf's first use in a process sets up its locale).
    const char* version = gnu_get_libc_version();
    const char* end = version + std::strlen(version);
    int major = 0, minor = 0;
    const auto [dot, major_error] = std::from_chars(version, end, major);
    if (major_error != std::errc() || dot == end || *dot != '.') return false;
    if (std::from_chars(dot + 1, end, minor).ec != std::errc()) return false;
    return major > 2 || (major == 2 && minor >= 35);
#else
    return false;
#endif
  }();
  return available;
}

bool load_libmvec() {
  // Globally and for good, so the JIT's process-symbol lookup finds the _ZGV* functions.
  static const bool loaded = libmvec_available() && !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
  return loaded;
}

bool libmvec_235_loaded() {
  static const bool loaded = [] {
    if (!load_libmvec()) return false;
    for (const char* name : {"_ZGVbN2v_erf", "_ZGVdN4v_erf", "_ZGVbN4v_erff", "_ZGVdN8v_erff"})
      if (!llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(name)) return false;
    return true;
  }();
  return loaded;
}

}  // namespace kiln::codegen::cpu::detail
