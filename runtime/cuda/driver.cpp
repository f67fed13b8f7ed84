// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime/cuda/driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "kiln/error.hpp"

namespace kiln::gpu {
namespace {

#define KILN_CUDA_STR2(x) #x
#define KILN_CUDA_STR(x) KILN_CUDA_STR2(x)

struct Loaded {
  DriverApi api;
  std::string error;  ///< empty when api is usable
};

Loaded load() {
  Loaded l;
  // KILN_CUDA_DRIVER names a libcuda explicitly (for tests and unusual installs); the soname is what the
  // driver package installs. (Read here, where the library is opened, not with the code-generation settings
  // in frontend/settings.cpp: it says where a library is, not what code to make.)
  const char* names[] = {std::getenv("KILN_CUDA_DRIVER"), "libcuda.so.1", "libcuda.so"};
  void* lib = nullptr;
  std::string tried;
  for (const char* n : names) {
    if (!n || !*n) continue;
    lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (lib) break;
    const char* e = dlerror();
    tried += std::string(tried.empty() ? "" : "; ") + (e ? e : n);
  }
  if (!lib) {
    l.error = fmt::format("no CUDA driver/GPU: cannot open libcuda ({})", tried);
    return l;
  }
  // The handle is never closed: function pointers from it live in static tables for the whole process.
#define KILN_CUDA_RESOLVE(fn)                                                                    \
  l.api.fn = reinterpret_cast<decltype(&::fn)>(dlsym(lib, KILN_CUDA_STR(fn)));                   \
  if (!l.api.fn) {                                                                               \
    l.error = "no CUDA driver/GPU: libcuda lacks " KILN_CUDA_STR(fn) " (the driver is too old)"; \
    return l;                                                                                    \
  }
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_RESOLVE)
#undef KILN_CUDA_RESOLVE
  if (const CUresult r = l.api.cuInit(0); r != CUDA_SUCCESS) {
    const char* name = nullptr;
    l.api.cuGetErrorName(r, &name);
    l.error = std::string("no CUDA driver/GPU: cuInit failed: ") + (name ? name : "unknown error");
    return l;
  }
  l.api.cuDriverGetVersion(&l.api.version);
  int count = 0;
  if (l.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) l.error = "no CUDA driver/GPU: the driver sees no device";
  return l;
}

const Loaded& loaded() {
  // Never destroyed: a kernel may run while the process exits (docs/architecture.md, "Exit").
  static const Loaded& l = *new Loaded(load());
  return l;
}

}  // namespace

const DriverApi& driver() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw DeviceError(l.error);
  return l.api;
}

bool driver_available(std::string* why) {
  const Loaded& l = loaded();
  if (why) *why = l.error;
  return l.error.empty();
}

std::string error_text(CUresult r) {
  const Loaded& l = loaded();
  const char* name = nullptr;
  const char* text = nullptr;
  if (l.api.cuGetErrorName) l.api.cuGetErrorName(r, &name);
  if (l.api.cuGetErrorString) l.api.cuGetErrorString(r, &text);
  const std::string head = name ? std::string(name) : fmt::format("CUDA error {}", static_cast<int>(r));
  return text ? fmt::format("{}: {}", head, text) : head;
}

void fail(CUresult r, std::string_view what) { throw DeviceError(fmt::format("{}: {}", what, error_text(r))); }

}  // namespace kiln::gpu
