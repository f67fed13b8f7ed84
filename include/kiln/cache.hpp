// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The on-disk kernel cache and the compile log.
//
// A kernel is compiled once per signature per process; the disk cache makes that "once per machine": the
// first process compiles and stores the object code, later processes load it without running LLVM. The
// compile log says, for every kernel compilation or load, where the code came from and what it cost.
// docs/cache.md describes the key, the entry format and the environment variables.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

enum class CacheMode : std::uint8_t {
  off,        ///< neither read nor write the disk cache
  read_only,  ///< use entries that exist, never write, touch or delete anything
  on,         ///< read, write, and evict least-recently-used entries above the size cap
};

std::string_view name_of(CacheMode m);

struct CacheSettings {
  CacheMode mode = CacheMode::on;
  std::string directory;                ///< where entries live; created (mode 0700) on the first store
  std::uint64_t max_bytes = 1ull << 30; ///< size cap of the directory's entries
};

/// The settings in effect. On first use they come from KILN_CACHE=off|read-only|on, KILN_CACHE_DIR (else
/// $XDG_CACHE_HOME/kiln, else ~/.cache/kiln) and KILN_CACHE_MAX_BYTES (bytes, or with a K/M/G suffix).
CacheSettings cache_settings();

/// Replaces the settings for every later compilation in this process. Code already loaded is unaffected.
void set_cache_settings(const CacheSettings& settings);

/// Process-wide counters since start-up. Monotonic, so a test compares two snapshots.
struct CacheStats {
  std::uint64_t memory_hits = 0;       ///< code already loaded in this process under the same key was reused
  std::uint64_t disk_hits = 0;         ///< an entry was loaded from disk (no optimization or code generation)
  std::uint64_t disk_misses = 0;       ///< the disk was consulted and had no usable entry
  std::uint64_t compiles = 0;          ///< backend code generation runs (LLVM for the CPU)
  std::uint64_t stores = 0;            ///< entries written
  std::uint64_t store_failures = 0;    ///< entries that could not be written (the kernel still ran)
  std::uint64_t rejected_entries = 0;  ///< truncated, corrupted, foreign-version or mismatching entries discarded
  std::uint64_t evictions = 0;         ///< entries removed to keep the directory under max_bytes
};

CacheStats cache_stats();

/// Where a kernel's code came from.
enum class CacheSource : std::uint8_t {
  memory,  ///< already loaded in this process (another kernel object or signature with the same key)
  disk,    ///< loaded from the disk cache
  miss,    ///< compiled: the cache had no usable entry (or compiler output such as LLVM IR was requested)
  off,     ///< compiled without consulting the cache (KILN_CACHE=off, or a target that is not cached)
};

std::string_view name_of(CacheSource s);

/// One kernel compilation or load. KILN_LOG=compile prints each as it happens.
struct CompileRecord {
  std::string kernel;     ///< the name given to kiln::jit
  std::string target;     ///< "cpu", "cuda", "interpreter"
  std::string signature;  ///< parameters as compiled, e.g. "saxpy(a: f32, x: f32[::1], y: f32[::1])"
  CacheSource cache = CacheSource::off;
  std::string key;        ///< 32 hex digits of the cache key ("" when the cache was not consulted)
  double trace_us = 0;    ///< running the lambda to record IR
  double passes_us = 0;   ///< the pass pipeline (0 on a cache hit)
  double codegen_ms = 0;  ///< optimization and machine-code generation (0 on a cache hit)
  /// The CPU time of code generation, summed over its threads (0 on a cache hit, and for targets that do not
  /// measure it): what the compile costs independently of how busy the machine was.
  double codegen_cpu_ms = 0;
  /// Compiled in parts at the same time (CPU target: LLVM's; CUDA: NVRTC's programs, whose threads alone
  /// codegen_cpu_ms counts there): the CPU time of the longest part's thread, which is
  /// the wall time of code generation when each part has a core; 0 when compiled whole.
  double codegen_cpu_longest_ms = 0;
  double load_us = 0;     ///< reading the entry and linking or loading the code
};

/// The records of this process, oldest first: all of them up to the last 4096 (older ones are dropped, so
/// that kernels created in a loop do not grow memory without bound). Thread-safe.
std::vector<CompileRecord> compile_history();

/// Entries are written to disk by a background thread, so that a kernel's first call does not wait for the
/// disk (fsync); pending ones are written before the process exits. This waits until all of them are written
/// (or have failed), e.g. before inspecting the cache directory or the store counters.
void cache_flush();

}  // namespace kiln
