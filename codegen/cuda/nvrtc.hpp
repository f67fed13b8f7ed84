// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NVRTC, the CUDA runtime compiler, opened with dlopen on first use: CUDA C to PTX and CUBIN in memory.
#pragma once

#include <string>
#include <vector>

#include "codegen/backend.hpp"

namespace kiln::codegen::cuda {

/// What NVRTC made of a program: one compilation for a real architecture yields both.
struct Binary {
  std::string arch;   ///< "sm_90"
  std::string ptx;    ///< for the matching virtual architecture (compute_90): what newer devices JIT-compile
  std::string cubin;  ///< machine code for `arch`
  std::string log;    ///< NVRTC's warnings, if any
  double compile_ms = 0;
  /// A program compiled in parts (compile_parts.hpp): the other parts' PTX and CUBIN for the same `arch`, each
  /// loaded as a module of its own; the functions are looked up in all of them.
  struct Part {
    std::string ptx, cubin;
  };
  std::vector<Part> more;
  /// How it was compiled, for the diagnostics (compile_parts.hpp); CPU time of the compiling threads, summed and
  /// the longest part's (the wall time when each part has a core of its own).
  std::string notes;
  double cpu_ms = 0, cpu_longest_ms = 0;
};

/// Compiles `source` for `arch` ("sm_90"). With kiln_float_rules, fast_math selects --use_fast_math and
/// otherwise floats are not contracted (--fmad=false), so results round as the interpreter's do; without,
/// NVRTC's defaults apply (for hand-written code). `lineinfo` adds -lineinfo (CudaOptions::lineinfo).
/// `extra` are further NVRTC options (compile_parts.hpp's for kiln's programs: ptxas threads, `--minimal`,
/// `-Ofast-compile`). Throws CompileError carrying the numbered source and NVRTC's log on failure, DeviceError
/// when NVRTC cannot be loaded.
Binary compile_source(const std::string& source, const std::string& kernel, const std::string& arch, const CodegenOptions& opts,
                      bool kiln_float_rules = true, bool lineinfo = false, const std::vector<std::string>& extra = {});

/// "13.0"; throws DeviceError when NVRTC cannot be loaded.
std::string nvrtc_version();
/// Names the NVRTC library this process uses (or would use) without loading it: the resolved path of the
/// file with its size and modification time ("/usr/local/cuda-13.0/lib64/libnvrtc.so.13.0.88:109338064:
/// 1760564160"), which changes with every NVRTC update. For the disk cache's key, so that a cache hit never
/// opens the 100 MB library. Once NVRTC is loaded, the file it was loaded from; before, the first of
/// KILN_NVRTC and the sonames kiln tries found in LD_LIBRARY_PATH or the usual directories; if none is
/// found, NVRTC is loaded to find out. Throws DeviceError when there is no NVRTC.
std::string nvrtc_identity();

/// Whether NVRTC loads; otherwise `why` receives the reason. Never throws.
bool nvrtc_available(std::string* why = nullptr);

/// `source` with right-aligned line numbers ("  12 | ..."), as CompileError carries it.
std::string numbered(const std::string& source);

}  // namespace kiln::codegen::cuda
