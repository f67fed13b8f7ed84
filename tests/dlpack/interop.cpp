// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A C interface over kiln/dlpack.hpp for tests/dlpack/check_interop.py, which hands kiln's arrays to NumPy,
// PyTorch, CuPy and JAX and theirs to kiln through DLPack capsules, checking that no copy is made.
#include <cstdint>
#include <exception>
#include <string>

#include "kiln/dlpack.hpp"
#include "kiln/kiln.hpp"

namespace {

thread_local std::string g_error;
thread_local const void* g_last = nullptr;

kiln::Options on(bool device) {
  kiln::Options o;
  if (device) o.target = kiln::Target::cuda;
  return o;
}

auto& ramp(bool device) {
  static auto host = kiln::jit("interop_ramp", [](kiln::Array<float> x, kiln::Float scale) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = kiln::Float(i) * scale; });
  }, on(false));
  static auto gpu = host.on(kiln::Target::cuda);
  return device ? gpu : host;
}

auto& increment(bool device) {
  static auto host = kiln::jit("interop_increment", [](kiln::Array<float> x) {
    kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = x[i] + 1.0f; });
  }, on(false));
  static auto gpu = host.on(kiln::Target::cuda);
  return device ? gpu : host;
}

auto& total(bool device) {
  static auto host = kiln::jit("interop_sum", [](kiln::Array<float> x) { return kiln::sum(x); }, on(false));
  static auto gpu = host.on(kiln::Target::cuda);
  return device ? gpu : host;
}

template <class F>
auto guarded(F&& f, decltype(f()) failed) {
  try {
    g_error.clear();
    return f();
  } catch (const std::exception& e) {
    g_error = e.what();
    return failed;
  }
}

bool on_device(const DLManagedTensor* t) { return t && t->dl_tensor.device.device_type == kDLCUDA; }

}  // namespace

extern "C" {

/// n floats i * scale made by a kiln kernel, exported (device >= 0: on that GPU, else host memory).
DLManagedTensor* kiln_interop_make(long long n, float scale, int device) {
  return guarded([&]() -> DLManagedTensor* {
    if (device >= 0) {
      kiln::DeviceArray<float> a({n}, device);
      ramp(true)(a, scale);
      return kiln::dlpack::to_dlpack(a);
    }
    kiln::NDArray<float> a({n});
    ramp(false)(a, scale);
    return kiln::dlpack::to_dlpack(a);
  }, nullptr);
}

/// Imports a float tensor (host or CUDA) and adds 1 to every element in place with a kiln kernel. 0 or -1.
int kiln_interop_increment(DLManagedTensor* t) {
  return guarded([&] {
    if (on_device(t)) {
      kiln::DeviceArray<float> a = kiln::dlpack::from_dlpack_device<float>(t);
      g_last = a.data();
      increment(true)(a);
    } else {
      kiln::NDArray<float> a = kiln::dlpack::from_dlpack<float>(t);
      g_last = a.data();
      increment(false)(a);
    }
    return 0;
  }, -1);
}

/// Imports a float tensor (host or CUDA) and sums it with a kiln kernel (reads only: JAX's arrays are immutable).
double kiln_interop_sum(DLManagedTensor* t) {
  return guarded([&] {
    if (on_device(t)) {
      const kiln::DeviceArray<float> a = kiln::dlpack::from_dlpack_device<float>(t);
      g_last = a.data();
      return static_cast<double>(total(true)(a));
    }
    const kiln::NDArray<float> a = kiln::dlpack::from_dlpack<float>(t);
    g_last = a.data();
    return static_cast<double>(total(false)(a));
  }, -1.0);
}

/// The data pointer of the last imported tensor (to check that no copy was made).
const void* kiln_interop_last_pointer() { return g_last; }
const char* kiln_interop_error() { return g_error.c_str(); }

}  // extern "C"
