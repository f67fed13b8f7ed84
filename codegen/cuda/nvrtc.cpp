// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/nvrtc.hpp"

#include <algorithm>
#include <dlfcn.h>
#include <link.h>
#include <nvrtc.h>
#include <sys/stat.h>

#include <atomic>
#include <climits>
#include <cstring>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "kiln/error.hpp"

namespace kiln::codegen::cuda {
namespace {

#define KILN_NVRTC_FUNCTIONS(X)                                                                                  \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize)      \
  X(nvrtcGetCUBIN)

struct Nvrtc {
#define KILN_NVRTC_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_DECLARE)
#undef KILN_NVRTC_DECLARE
  std::string version;
  std::string path;   ///< the file it was loaded from
  std::string error;  ///< empty when usable
};

const char* const kSonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

/// "path:size:mtime" of `file` after resolving symbolic links; empty if it does not exist.
std::string file_identity(const std::string& file) {
  char resolved[PATH_MAX];
  struct stat st {};
  if (!realpath(file.c_str(), resolved) || stat(resolved, &st) != 0) return {};
  return std::string(resolved) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
}

/// The identity of the NVRTC that load() would open, found as the dynamic loader would look (without its
/// cache file): LD_LIBRARY_PATH, then the usual directories. Empty when not found.
/// (KILN_NVRTC and LD_LIBRARY_PATH are read here and in load(), not with the code-generation settings in
/// frontend/settings.cpp: they say where a library is, not what code to make.)
std::string locate() {
  std::vector<std::string> dirs;
  if (const char* p = std::getenv("LD_LIBRARY_PATH")) {
    std::string all = p;
    for (std::size_t at = 0; at <= all.size();) {
      const std::size_t end = std::min(all.find(':', at), all.size());
      if (end > at) dirs.push_back(all.substr(at, end - at));
      at = end + 1;
    }
  }
  for (const char* d : {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/cuda/lib64"}) dirs.push_back(d);
  if (const char* k = std::getenv("KILN_NVRTC"); k && *k) {
    if (std::strchr(k, '/')) return file_identity(k);
    for (const std::string& d : dirs)
      if (std::string id = file_identity(d + "/" + k); !id.empty()) return id;
    return {};
  }
  for (const char* name : kSonames) {
    for (const std::string& d : dirs)
      if (std::string id = file_identity(d + "/" + name); !id.empty()) return id;
  }
  return file_identity(std::string("/usr/local/cuda/lib64/") + kSonames[0]);
}

std::atomic<bool> g_loaded{false};

Nvrtc load() {
  Nvrtc n;
  // KILN_NVRTC names the library explicitly; otherwise the toolkit's sonames, then its usual location.
  const char* names[] = {std::getenv("KILN_NVRTC"), kSonames[0], kSonames[1], kSonames[2],
                         "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so"};
  void* lib = nullptr;
  std::string tried;
  for (const char* name : names) {
    if (!name || !*name) continue;
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (e ? e : name);
  }
  if (!lib) {
    n.error = fmt::format("the CUDA runtime compiler (libnvrtc) cannot be opened ({}); set KILN_NVRTC to its path", tried);
    return n;
  }
#define KILN_NVRTC_RESOLVE(fn)                                                     \
  n.fn = reinterpret_cast<decltype(&::fn)>(dlsym(lib, #fn));                       \
  if (!n.fn) {                                                                     \
    n.error = "libnvrtc lacks " #fn;                                               \
    return n;                                                                      \
  }
  KILN_NVRTC_FUNCTIONS(KILN_NVRTC_RESOLVE)
#undef KILN_NVRTC_RESOLVE
  int major = 0, minor = 0;
  n.nvrtcVersion(&major, &minor);
  n.version = fmt::format("{}.{}", major, minor);
  if (link_map* map = nullptr; dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) n.path = map->l_name;
  return n;
}

const Nvrtc& nvrtc() {
  // Never destroyed: a kernel may be compiled while the process exits (docs/architecture.md, "Exit").
  static const Nvrtc& n = *[] {
    auto* loaded = new Nvrtc(load());
    g_loaded = true;
    return loaded;
  }();
  if (!n.error.empty()) throw DeviceError(n.error);
  return n;
}

/// Destroys the program on every path.
struct ProgramGuard {
  const Nvrtc& api;
  nvrtcProgram prog = nullptr;
  ~ProgramGuard() {
    if (prog) api.nvrtcDestroyProgram(&prog);
  }
};

}  // namespace

std::string numbered(const std::string& source) {
  std::string out;
  int line = 1;
  std::size_t start = 0;
  while (start < source.size()) {
    std::size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    char num[16];
    std::snprintf(num, sizeof num, "%5d | ", line++);
    out += num;
    out.append(source, start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

bool nvrtc_available(std::string* why) {
  try {
    nvrtc();
    if (why) why->clear();
    return true;
  } catch (const DeviceError& e) {
    if (why) *why = e.what();
    return false;
  }
}

std::string nvrtc_version() { return nvrtc().version; }

std::string nvrtc_identity() {
  if (!g_loaded) {
    if (std::string id = locate(); !id.empty()) return id;
  }
  const Nvrtc& n = nvrtc();  // not found where the loader looks first: load it to know
  const std::string id = file_identity(n.path);
  return id.empty() ? n.path + ":" + n.version : id;
}

Binary compile_source(const std::string& source, const std::string& kernel, const std::string& arch, const CodegenOptions& opts,
                      bool kiln_float_rules, bool lineinfo, const std::vector<std::string>& extra) {
  const Nvrtc& api = nvrtc();
  const auto t0 = std::chrono::steady_clock::now();
  ProgramGuard guard{api};
  const std::string file = kernel + ".cu";
  if (const nvrtcResult r = api.nvrtcCreateProgram(&guard.prog, source.c_str(), file.c_str(), 0, nullptr, nullptr); r != NVRTC_SUCCESS)
    throw CompileError(fmt::format("kiln CUDA backend: NVRTC could not create a program for kernel '{}': {}", kernel,
                                   api.nvrtcGetErrorString(r)),
                       numbered(source));
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17"};
  if (kiln_float_rules && opts.fast_math) {
    options.push_back("--use_fast_math");
  } else if (kiln_float_rules) {
    options.push_back("--fmad=false");  // a*b+c rounds twice, as written and as the interpreter does
  }
  if (opts.opt_level < 3) options.push_back("--ptxas-options=-O" + std::to_string(std::max(0, opts.opt_level)));
  if (lineinfo) options.push_back("-lineinfo");
  options.insert(options.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult r = api.nvrtcCompileProgram(guard.prog, static_cast<int>(argv.size()), argv.data());

  Binary out;
  out.arch = arch;
  std::size_t log_size = 0;
  if (api.nvrtcGetProgramLogSize(guard.prog, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    out.log.resize(log_size);
    api.nvrtcGetProgramLog(guard.prog, out.log.data());
    out.log.resize(log_size - 1);  // the terminating NUL
  }
  if (r != NVRTC_SUCCESS)
    throw CompileError(fmt::format("kiln CUDA backend: NVRTC failed to compile kernel '{}' for {}: {}\n{}", kernel, arch,
                                   api.nvrtcGetErrorString(r), out.log),
                       numbered(source), out.log);
  std::size_t size = 0;
  if (api.nvrtcGetPTXSize(guard.prog, &size) == NVRTC_SUCCESS && size > 0) {
    out.ptx.resize(size);
    api.nvrtcGetPTX(guard.prog, out.ptx.data());
    out.ptx.resize(size - 1);
  }
  if (api.nvrtcGetCUBINSize(guard.prog, &size) == NVRTC_SUCCESS && size > 0) {
    out.cubin.resize(size);
    api.nvrtcGetCUBIN(guard.prog, out.cubin.data());
  }
  if (out.ptx.empty() || out.cubin.empty())
    throw CompileError(fmt::format("kiln CUDA backend: NVRTC produced no {} for kernel '{}' ({})",
                                   out.ptx.empty() ? "PTX" : "CUBIN", kernel, arch),
                       numbered(source), out.log);
  out.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace kiln::codegen::cuda
