// The calling convention shared by compiled kernels, the interpreter and the runtime.
#pragma once

#include <cstdint>

#include "kiln/dtype.hpp"

namespace kiln {

/// How an array crosses into a kernel: a base pointer and, per dimension, the extent and the stride in
/// elements (not bytes). Dimensions past the rank are ignored.
struct ArrayDesc {
  void* data = nullptr;
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
};

/// Storage for one scalar of any DType (the active member is given by the kernel's signature).
union ScalarSlot {
  bool b;
  std::int32_t i32;
  std::int64_t i64;
  float f32;
  double f64;
};

/// Where a kernel reports a failure it cannot return normally from (allocation failure, a failed
/// run-time shape check, an out-of-bounds index in checked code). Written at most once per call.
struct KernelStatus {
  std::int32_t code = 0;  ///< 0: success; otherwise one of StatusCode
  char message[512] = {};
};

enum StatusCode : std::int32_t { kOk = 0, kOutOfMemory = 1, kShapeMismatch = 2, kIndexOutOfRange = 3, kValueError = 4 };

/// A compiled kernel's entry: `args[i]` points to the i-th argument (a scalar of the parameter's type, or
/// an ArrayDesc); `result` points to storage for the scalar result, or to an ArrayDesc that receives a new
/// array allocated with std::aligned_alloc (the caller frees `data` with std::free). Returns status->code.
using KernelEntry = std::int32_t (*)(void* const* args, void* result, KernelStatus* status);

}  // namespace kiln
