// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
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

/// A kiln::DeviceArray as it holds itself, and as an asynchronous call's typed path passes it
/// (kiln/device.hpp): the descriptor first, so that a pointer to it is also one to the ArrayDesc that every
/// backend reads, then the rank and the CUDA device the memory is on.
struct DeviceArgHead {
  ArrayDesc desc;
  int rank = 0;
  int device = 0;
};

/// Storage for one scalar of any DType (the active member is given by the kernel's signature).
union ScalarSlot {
  bool b;
  std::int32_t i32;
  std::int64_t i64;
  float f32;
  double f64;
  std::uint8_t u8;
  std::uint16_t u16;  ///< also the bits of f16 and bf16
  std::uint32_t u32;
  std::uint64_t u64;
  std::int8_t i8;
  std::int16_t i16;
};

/// Where a kernel reports a failure it cannot return normally from (allocation failure, a failed
/// run-time shape check, an out-of-bounds index in checked code). Written at most once per call.
struct KernelStatus {
  std::int32_t code = 0;  ///< 0: success; otherwise one of StatusCode
  char message[512] = {};
};

enum StatusCode : std::int32_t { kOk = 0, kOutOfMemory = 1, kShapeMismatch = 2, kIndexOutOfRange = 3, kValueError = 4 };

/// The most bytes one array may take: what ptrdiff_t holds, less the 64 bytes its allocation may be rounded
/// up by. Then every element offset, in elements or in bytes, fits in an int64.
inline constexpr std::int64_t kMaxArrayBytes = INT64_MAX - 64;

/// Whether a row-major array of `rank` extents and `elem_size`-byte elements may exist, and its size.
struct ArraySize {
  std::int64_t bytes = 0;  ///< its size in bytes (0 if it has no elements), when ok()
  int negative_axis = -1;  ///< the first axis whose extent is negative, or -1
  bool too_large = false;  ///< the size in bytes would exceed kMaxArrayBytes
  bool ok() const { return negative_axis < 0 && !too_large; }
};

/// The one rule for every array kiln makes (NDArray, DeviceArray, kernel results, arrays made inside kernels,
/// on every target): no extent is negative, and the product of the non-zero extents times the element size is
/// at most kMaxArrayBytes. As in NumPy, a zero extent does not excuse the others: (0, 2^62, 4) doubles are too
/// large too, so the answer does not depend on the order of the axes.
inline ArraySize array_size(const std::int64_t* shape, int rank, std::int64_t elem_size) {
  ArraySize s;
  std::int64_t nonzero = elem_size;  // the product of the non-zero extents and the element size
  bool empty = false;
  for (int k = 0; k < rank; ++k) {
    if (shape[k] < 0) {
      if (s.negative_axis < 0) s.negative_axis = k;
    } else if (shape[k] == 0) {
      empty = true;
    } else if (!s.too_large) {
      s.too_large = __builtin_mul_overflow(nonzero, shape[k], &nonzero) || nonzero > kMaxArrayBytes;
    }
  }
  s.too_large = s.too_large || nonzero > kMaxArrayBytes;
  if (s.ok() && !empty) s.bytes = nonzero;
  return s;
}

/// A compiled kernel's entry: `args[i]` points to the i-th argument (a scalar of the parameter's type, or
/// an ArrayDesc); `result` points to storage for the scalar result, or to an ArrayDesc that receives a new
/// array allocated with std::aligned_alloc (the caller frees `data` with std::free). Returns status->code.
using KernelEntry = std::int32_t (*)(void* const* args, void* result, KernelStatus* status);

}  // namespace kiln
