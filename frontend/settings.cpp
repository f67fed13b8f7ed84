// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every KILN_* variable that steers compilation is read here (frontend/settings.hpp says which are not).
// Bad values are ignored as they always were: with a warning here (KILN_TARGET, KILN_BOUNDSCHECK,
// KILN_CHECK) or where LLVM parses them (KILN_LLVM_OPTIONS, codegen/llvm/host_target.cpp), and the CUDA
// tuning switches by falling back to their defaults (docs/gpu.md).
#include "frontend/settings.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kiln/config.hpp"

namespace kiln {

Target default_target() {
  static const Target target = [] {
    const Target fallback = KILN_HAVE_LLVM ? Target::cpu : Target::interpreter;
    const char* v = std::getenv("KILN_TARGET");
    if (!v || !*v) return fallback;
    const std::string s = v;
    if (s == "cpu") return Target::cpu;
    if (s == "cuda") return Target::cuda;
    if (s == "interpreter") return Target::interpreter;
    std::fprintf(stderr, "kiln: warning: ignoring KILN_TARGET=%s (expected cpu, cuda or interpreter)\n", v);
    return fallback;
  }();
  return target;
}

namespace {
bool env_flag_once(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  const std::string s = v;
  if (s == "0") return false;
  if (s == "1") return true;
  std::fprintf(stderr, "kiln: warning: ignoring %s=%s (expected 0 or 1)\n", name, v);
  return false;
}
}  // namespace

bool default_boundscheck() {
  static const bool on = env_flag_once("KILN_BOUNDSCHECK");
  return on;
}

bool default_check() {
  static const bool on = env_flag_once("KILN_CHECK");
  return on;
}

}  // namespace kiln

namespace kiln::detail {
namespace {

/// Set and neither empty nor "0" (the dump switches, read at each compilation so that a program may turn
/// them on for one kernel).
bool env_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

/// The environment's part of the CPU options that hold for the whole process.
const codegen::cpu::CpuOptions& process_cpu_options() {
  // Never destroyed (nor the CUDA options below): a kernel may be compiled while the process exits
  // (docs/architecture.md, "Exit").
  static const codegen::cpu::CpuOptions& options = *new codegen::cpu::CpuOptions([] {
    codegen::cpu::CpuOptions o;
    o.features = env_text("KILN_CPU_FEATURES");
    o.llvm_options = env_text("KILN_LLVM_OPTIONS");
    const char* lanes = std::getenv("KILN_CPU_LANES");
    o.lanes = !(lanes && std::strcmp(lanes, "0") == 0);
    // A count of threads, 1 or more; anything else leaves the default (the host's hardware threads).
    if (const char* threads = std::getenv("KILN_COMPILE_THREADS"); threads && std::atoi(threads) > 0)
      o.compile_threads = std::atoi(threads);
    return o;
  }());
  return options;
}

/// Flags that compare the first character with '0', as the CUDA backend always read them ("0..." is off).
bool env_flag_first_char(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && *v != '0';
}

/// The environment's part of the CUDA options that hold for the whole process: emission and launch tuning
/// (docs/gpu.md). A value out of range falls back to the default.
const codegen::cuda::CudaOptions& process_cuda_options() {
  static const codegen::cuda::CudaOptions& options = *new codegen::cuda::CudaOptions([] {
    codegen::cuda::CudaOptions o;
    codegen::cuda::EmitOptions& e = o.emit;
    if (const char* s = std::getenv("KILN_CUDA_UNROLL"); s && *s) {
      const int v = std::atoi(s);
      e.unroll = v == 1 || v == 2 || v == 4 || v == 8 ? v : 4;
    }
    codegen::cuda::StencilSettings& st = e.stencil;
    st.rounds = e.unroll;
    if (const char* m = std::getenv("KILN_CUDA_STENCIL"); m && *m) {
      const std::string v = m;
      if (v == "off" || v == "0") st.mode = codegen::cuda::StencilMode::Off;
      else if (v == "shuffle") st.mode = codegen::cuda::StencilMode::Shuffle;
      else if (v == "shared") st.mode = codegen::cuda::StencilMode::Shared;  // anything else: the default
    }
    // A number in [lo, hi]; unset, empty or out of range: `fallback`.
    auto number = [](const char* name, int fallback, int lo, int hi) {
      const char* s = std::getenv(name);
      const int v = s && *s ? std::atoi(s) : fallback;
      return v >= lo && v <= hi ? v : fallback;
    };
    st.rows = number("KILN_CUDA_STENCIL_ROWS", st.rows, 1, 16);
    st.rounds = number("KILN_CUDA_STENCIL_ROUNDS", st.rounds, 1, 16);
    st.march_rows = number("KILN_CUDA_MARCH_ROWS", st.march_rows, 1, 16);
    st.march_registers = number("KILN_CUDA_MARCH_REGISTERS", st.march_registers, 0, 255);
    if (st.march_registers > 0 && st.march_registers < 8) st.march_registers = 0;
    st.march_prefetch = number("KILN_CUDA_MARCH_PREFETCH", st.march_prefetch, 0, 2);
    st.march_min_blocks = number("KILN_CUDA_MARCH_MIN_BLOCKS", st.march_min_blocks, 1, 8);
    st.strip_registers = number("KILN_CUDA_STRIP_REGISTERS", st.strip_registers, 8, 255);
    if (const char* s = std::getenv("KILN_CUDA_WAVES"); s && *s) o.waves = std::max(0, std::atoi(s));
    if (const char* s = std::getenv("KILN_CUDA_COARSEN_WAVES"); s && *s) o.coarsen_waves = std::clamp(std::atoi(s), 0, 1024);
    if (const char* s = std::getenv("KILN_CUDA_PRIVATE"); s && *s) o.private_copies = std::atoi(s) != 0;
    o.march_chunks = number("KILN_CUDA_MARCH_CHUNKS", 0, 0, 65535);
    if (const char* s = std::getenv("KILN_CUDA_BLOCK_SIZE"); s && *s) {
      const int n = std::atoi(s);
      o.block_size = n >= 32 && n <= 1024 && n % 32 == 0 ? n : 0;
    }
    if (const char* s = std::getenv("KILN_CUDA_COOPERATIVE"); s && *s) e.cooperative = s[0] != '0';
    if (const char* s = std::getenv("KILN_CUDA_STAGED_STEPS"); s && *s) {
      const int n = std::atoi(s);
      e.staged_steps = n == 4 || n == 8 || n == 16 || n == 32 ? n : e.staged_steps;
    }
    if (const char* s = std::getenv("KILN_CUDA_TILED_MIN_BLOCKS"); s && *s) e.tiled_min_blocks = std::clamp(std::atoi(s), 0, 32);
    if (const char* s = std::getenv("KILN_CUDA_CONTRACTION"); s && *s) o.contraction = s[0] == '0' ? 0 : 1;
    if (const char* s = std::getenv("KILN_CUDA_CONTRACTION_ASYNC"); s && *s) e.contraction_async = s[0] != '0';
    e.contraction_min_blocks = number("KILN_CUDA_CONTRACTION_MIN_BLOCKS", e.contraction_min_blocks, 2, 4);
    if (const char* threads = std::getenv("KILN_COMPILE_THREADS"); threads && std::atoi(threads) > 0) o.compile_threads = std::atoi(threads);
    if (const char* s = std::getenv("KILN_CUDA_ROW_THREADS"); s && *s) {
      const int n = std::atoi(s);
      o.row_threads = n >= 32 && n <= 1024 && n % 32 == 0 ? n : 0;
    }
    o.sort_items = number("KILN_CUDA_SORT_ITEMS", o.sort_items, 4, 32);
    o.sort_match = number("KILN_CUDA_SORT_MATCH", o.sort_match, 0, 2);
    o.scan_tile_kib = number("KILN_CUDA_SCAN_TILE_KIB", o.scan_tile_kib, 8, 96);
    return o;
  }());
  return options;
}

}  // namespace

codegen::cuda::CudaOptions cuda_options() {
  codegen::cuda::CudaOptions o = process_cuda_options();
  if (const char* a = std::getenv("KILN_CUDA_ARCH"); a && std::string(a).rfind("sm_", 0) == 0) o.arch = a;
  o.lineinfo = env_flag_first_char("KILN_CUDA_LINEINFO");
  o.dump_source = env_flag("KILN_DUMP_CUDA");
  o.keep_dir = env_text("KILN_CUDA_KEEP");
  o.sync_each_launch = env_flag("KILN_CUDA_SYNC");
  o.launch_plans = env_text("KILN_CUDA_PLANS") != "0";
  return o;
}

codegen::TargetOptions target_options(const Options& opts) {
  codegen::TargetOptions t;
  t.common.opt_level = opts.opt_level;
  t.common.fast_math = opts.fast_math;
  t.cpu = process_cpu_options();
  t.cpu.keep_llvm_ir = opts.keep_llvm_ir;
  t.cpu.dump_llvm = env_flag("KILN_DUMP_LLVM");
  // Read only for CUDA kernels: two dozen environment variables that a CPU kernel's first call (a fresh
  // process's, from the disk cache) would otherwise read for nothing.
  if (opts.target == Target::cuda) t.cuda = cuda_options();
  t.cuda.emit.halo_reads = opts.halo_reads;
  return t;
}

std::int64_t device_threads() {
  static const std::int64_t threads = [] {
    const char* s = std::getenv("KILN_CUDA_DEVICE_THREADS");
    const long long v = s && *s ? std::atoll(s) : 0;
    return v >= 1024 && v <= (1LL << 30) ? static_cast<std::int64_t>(v) : passes::kDefaultDeviceThreads;
  }();
  return threads;
}

passes::PipelineOptions with_pipeline_dumps(passes::PipelineOptions popts) {
  popts.dump_ir = env_flag("KILN_DUMP_IR");
  popts.dot_dir = env_flag("KILN_DUMP_DOT") ? env_text("KILN_DUMP_DOT") : "";
  return popts;
}

bool wants_compiler_output(const Options& opts) {
  return opts.keep_llvm_ir || env_flag("KILN_DUMP_LLVM") || env_flag("KILN_DUMP_IR");
}

bool print_diagnostics() { return env_flag("KILN_DIAGNOSTICS"); }

}  // namespace kiln::detail
