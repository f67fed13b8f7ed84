// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA driver API, opened with dlopen on first use: kiln links no CUDA library, so it builds and runs on
// machines without a driver, where the GPU target reports DeviceError("no CUDA driver/GPU: ...").
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace kiln::gpu {

// Every driver function kiln calls. cuda.h maps most names to versioned symbols (cuMemAlloc ->
// cuMemAlloc_v2); the table is resolved by the mapped names, so the prototypes and symbols agree.
#define KILN_CUDA_DRIVER_FUNCTIONS(X)                                                                    \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)                 \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxSetLimit) X(cuCtxSynchronize) X(cuStreamCreate)         \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)         \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuMemAlloc) X(cuMemFree) X(cuMemAllocAsync)             \
  X(cuMemFreeAsync) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async)   \
  X(cuMemcpy2DAsync) X(cuMemsetD8) X(cuStreamWaitEvent) X(cuEventQuery) X(cuStreamBeginCapture)        \
  X(cuStreamEndCapture) X(cuStreamIsCapturing) X(cuGraphInstantiate) X(cuGraphLaunch)                   \
  X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuGraphGetNodes) X(cuDeviceGetDefaultMemPool)                \
  X(cuMemPoolSetAttribute) X(cuMemPoolGetAttribute)                                                     \
  X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemGetInfo) X(cuModuleLoadData) X(cuModuleUnload)              \
  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuOccupancyMaxPotentialBlockSize)                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) X(cuFuncGetAttribute) X(cuFuncSetAttribute)            \
  X(cuGetErrorName) X(cuGetErrorString)

struct DriverApi {
#define KILN_CUDA_DECLARE(fn) decltype(&::fn) fn = nullptr;
  KILN_CUDA_DRIVER_FUNCTIONS(KILN_CUDA_DECLARE)
#undef KILN_CUDA_DECLARE
  int version = 0;  ///< cuDriverGetVersion: 1000 * major + 10 * minor
};

/// The driver, loaded and initialized (cuInit) once per process. Throws DeviceError("no CUDA driver/GPU:
/// ...") when libcuda cannot be opened, lacks a function, or cuInit fails (e.g. no device).
const DriverApi& driver();

/// Whether driver() succeeds; otherwise `why` (if given) receives the reason. Never throws.
bool driver_available(std::string* why = nullptr);

/// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for a driver result code.
std::string error_text(CUresult r);

/// Throws DeviceError("<what>: <error_text>").
[[noreturn]] void fail(CUresult r, std::string_view what);

/// Throws DeviceError("<what>: <error_text>") unless r is CUDA_SUCCESS. Inline and taking a view: a call that
/// succeeds (every call on the path of a kernel call) builds no string.
inline void check(CUresult r, std::string_view what) {
  if (r != CUDA_SUCCESS) [[unlikely]]
    fail(r, what);
}

}  // namespace kiln::gpu
