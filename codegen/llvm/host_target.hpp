// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The machine kernels are compiled for: the host's triple, CPU and features, shared by code generation and
// the JIT so that objects are always built for the CPU they run on.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "codegen/compile_threads.hpp"
#include "codegen/llvm/cpu_options.hpp"

namespace llvm {
class TargetMachine;
}

namespace kiln::codegen::cpu::detail {

struct HostTarget {
  std::string triple;
  std::string cpu;
  std::string features;  ///< "+avx2,+fma,-avx512f,...", sorted so it is stable across runs
};

/// Registers the native target with LLVM (once, thread-safe) and describes the host.
const HostTarget& host_target();

/// The host's feature string with CpuOptions::features appended (later entries win in LLVM's feature strings,
/// so these override what the host reported).
std::string target_features(const CpuOptions& opts);

/// A fresh TargetMachine for the host with `opts`' features. TargetMachines are not shared between threads,
/// so every compilation makes its own. The first call applies opts.llvm_options, which LLVM keeps for the
/// whole process.
std::unique_ptr<llvm::TargetMachine> make_host_target_machine(int opt_level, const CpuOptions& opts);

/// Hardware threads with nothing to run right now (codegen/compile_threads.hpp, shared with the CUDA backend).
using codegen::idle_hardware_threads;

/// The vector register width, in bits, that code for `tm` should use: 512 where AVX-512 is on and not
/// tuned down to 256-bit vectors, 256 with AVX, else 128 (SSE2, and the baseline of other targets).
unsigned vector_register_bits(const llvm::TargetMachine& tm);

/// True if `tm` converts binary16 <-> binary32 in an instruction (x86: F16C's vcvtph2ps / vcvtps2ph, scalar
/// and vector), so that LLVM's `fpext half` / `fptrunc ... to half` need no library call.
bool hardware_half_conversions(const llvm::TargetMachine& tm);

/// Exit-time compilation. LLVM makes some of its process-wide state lazily, in function-local statics of its
/// code generator and JIT linker, and exit() destroys such state in reverse order of its making, interleaved
/// with atexit handlers and static destructors. So an exit handler (or a static destructor) registered before
/// LLVM first made that state runs after it is gone, and compiling there crashes or reports garbage. kiln's own
/// process-wide objects are never destroyed; LLVM's can only be avoided.
///
/// after_llvm_use() is called after each compilation and each link: it registers an atexit marker, which exit
/// runs before the destructors of anything that use made (they were registered earlier) and before every
/// handler registered earlier. require_llvm_usable() throws a CompileError naming the kernel when a marker has
/// run, i.e. when exit has begun and LLVM was used after the running handler was registered. Handlers
/// registered after the last use of LLVM compile as usual. One marker costs one atexit entry (~32 bytes).
void after_llvm_use();
void require_llvm_usable(std::string_view kernel);
/// Both around one use of LLVM for `kernel`, the marker also when the use throws.
class LlvmUse {
 public:
  explicit LlvmUse(std::string_view kernel) { require_llvm_usable(kernel); }
  ~LlvmUse() { after_llvm_use(); }
  LlvmUse(const LlvmUse&) = delete;
  LlvmUse& operator=(const LlvmUse&) = delete;
};

/// True if glibc's vector math library (libmvec) can be loaded: x86-64 Linux with libmvec.so.1 beside the
/// libm this process uses. Does not load it (part of the host's description, which a process whose kernels
/// all come from the disk cache computes too: loading libmvec takes 0.12-0.16 ms of its first call).
bool libmvec_available();
/// True if libmvec also has the variants glibc 2.35 added (erf, tanh, asin, acos, atan, atan2, sinh, cosh),
/// which LLVM 19's libmvec table does not list (optimize.cpp adds them): glibc 2.35 or later. Does not load it.
bool libmvec_235_available();
/// Loads libmvec into the process, globally and for good, once: before the vectorizer may call its
/// functions (optimize.cpp), and when a kernel's object refers to one (the JIT). True if it is loaded.
bool load_libmvec();
/// True if libmvec is loaded (load_libmvec) and has the glibc 2.35 variants (looked up by name).
bool libmvec_235_loaded();

}  // namespace kiln::codegen::cpu::detail
