// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DLPack (https://dmlc.github.io/dlpack/): kiln's host and device arrays to and from other frameworks (PyTorch,
// CuPy, JAX, NumPy ≥ 1.22) without copies. Needs <dlpack/dlpack.h> (Debian: libdlpack-dev); kiln/kiln.hpp does
// not include this header, so kiln itself does not depend on it.
//
//   DLManagedTensor* t = kiln::dlpack::to_dlpack(device_array);   // the consumer calls t->deleter(t) when done
//   auto d = kiln::dlpack::from_dlpack_device<float>(torch_tensor); // zero copy; calls its deleter when released
//
// Export shares the array's memory: the tensor holds a reference, so the memory stays alive until the consumer
// calls the deleter, whatever happens to the kiln array meanwhile. Import takes ownership of the tensor on
// success (its deleter runs when the last kiln array sharing the memory is gone); when the import throws, the
// tensor stays the caller's. Imports accept row-major contiguous tensors of rank 1..4 (the extents-1 dimensions'
// strides do not matter, as in DLPack's own rule): a strided view (a transpose, a slice with a step) is a
// kiln::TypeError saying so — make it contiguous on the other side first.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/device.hpp"
#include "kiln/dtype.hpp"
#include "kiln/error.hpp"
#include "kiln/ndarray.hpp"

namespace kiln::dlpack {

/// DLPack's code for bool (kDLBool, added to DLPack after 0.6: PyTorch, CuPy and NumPy use it for bool arrays).
constexpr std::uint8_t kBoolCode = 6;

/// The DLPack element type of a kiln element type.
template <Element T>
constexpr DLDataType dtype_of() {
  constexpr DType t = kiln::dtype_of<T>();
  const auto bits = static_cast<std::uint8_t>(8 * size_of(t));
  if constexpr (t == DType::Bool) return DLDataType{kBoolCode, 8, 1};
  else if constexpr (is_float(t)) return DLDataType{kDLFloat, bits, 1};
  else return DLDataType{kDLInt, bits, 1};
}

namespace detail {

/// The exported tensor with the shape, strides and memory reference it points into: one allocation, freed by
/// the deleter.
template <class T>
struct Exported {
  DLManagedTensor managed{};
  std::int64_t shape[kMaxRank] = {};
  std::int64_t strides[kMaxRank] = {};
  std::shared_ptr<T> keep;
};

template <class T, class A>
DLManagedTensor* export_array(const A& a, DLDevice device) {
  auto* e = new Exported<T>;
  e->keep = a.shared_data();
  for (int d = 0; d < a.rank(); ++d) e->shape[d] = a.shape(d), e->strides[d] = a.stride(d);
  DLTensor& t = e->managed.dl_tensor;
  t.data = const_cast<std::remove_const_t<T>*>(a.data());
  t.device = device;
  t.ndim = a.rank();
  t.dtype = dtype_of<T>();
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = [](DLManagedTensor* self) { delete static_cast<Exported<T>*>(self->manager_ctx); };
  return &e->managed;
}

inline std::string dtype_text(DLDataType t) {
  const char* code = t.code == kDLInt ? "int" : t.code == kDLUInt ? "uint" : t.code == kDLFloat ? "float"
                     : t.code == kDLBfloat ? "bfloat" : t.code == kDLComplex ? "complex" : t.code == kBoolCode ? "bool" : "code ";
  std::string s = code;
  if (*code == 'c' && t.code != kDLComplex) s += std::to_string(t.code);
  s += std::to_string(t.bits);
  if (t.lanes != 1) s += "x" + std::to_string(t.lanes);
  return s;
}

/// Checks a tensor for import as T and returns its shape; throws TypeError naming what does not fit.
template <class T>
std::vector<std::int64_t> checked_shape(const DLManagedTensor* m, bool device, const char* into) {
  if (!m) throw TypeError(std::string("kiln::dlpack: a null DLManagedTensor was passed to ") + into);
  const DLTensor& t = m->dl_tensor;
  const DLDataType want = dtype_of<T>();
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != 1)
    throw TypeError("kiln::dlpack: the tensor's elements are " + dtype_text(t.dtype) + ", but " + into + " wants " +
                    dtype_text(want) + ": convert the tensor, or import with the matching element type");
  const bool on_cuda = t.device.device_type == kDLCUDA;
  const bool on_host = t.device.device_type == kDLCPU || t.device.device_type == kDLCUDAHost;
  if (device ? !on_cuda : !on_host)
    throw TypeError(std::string("kiln::dlpack: the tensor lives on device type ") + std::to_string(t.device.device_type) +
                    ", but " + into + (device ? " takes CUDA device memory (kDLCUDA): import host tensors with from_dlpack"
                                              : " takes host memory (kDLCPU): import CUDA tensors with from_dlpack_device"));
  if (t.ndim < 1 || t.ndim > kMaxRank)
    throw TypeError("kiln::dlpack: a tensor of rank " + std::to_string(t.ndim) + " cannot be imported: kiln arrays have rank 1.." +
                    std::to_string(kMaxRank));
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim);
  if (t.strides) {
    std::int64_t expect = 1;
    for (int d = t.ndim; d-- > 0;) {
      if (shape[static_cast<std::size_t>(d)] != 1 && t.strides[d] != expect)
        throw TypeError("kiln::dlpack: the tensor is not row-major contiguous (dimension " + std::to_string(d) + " has stride " +
                        std::to_string(t.strides[d]) + ", contiguous would be " + std::to_string(expect) +
                        "): make it contiguous before exporting it (.contiguous() in PyTorch, ascontiguousarray in NumPy/CuPy)");
      expect *= shape[static_cast<std::size_t>(d)];
    }
  }
  return shape;
}

/// The tensor's memory as a shared pointer that calls the tensor's deleter when released.
template <class T>
std::shared_ptr<T> owned_data(DLManagedTensor* m) {
  auto* p = reinterpret_cast<T*>(static_cast<char*>(m->dl_tensor.data) + m->dl_tensor.byte_offset);
  return std::shared_ptr<T>(p, [m](T*) {
    if (m->deleter) m->deleter(m);
  });
}

}  // namespace detail

/// Exports host memory (device type kDLCPU) without a copy.
template <Element T>
DLManagedTensor* to_dlpack(const NDArray<T>& a) {
  return detail::export_array<T>(a, DLDevice{kDLCPU, 0});
}

/// Exports device memory (kDLCUDA on the array's device) without a copy. Work queued on kiln's streams that
/// writes the array must be finished (or ordered before the consumer's work) before the consumer reads it.
template <Element T>
DLManagedTensor* to_dlpack(const DeviceArray<T>& a) {
  return detail::export_array<T>(a, DLDevice{kDLCUDA, a.device()});
}

/// Imports a host tensor (kDLCPU or kDLCUDAHost) as an NDArray sharing its memory.
template <Element T>
NDArray<T> from_dlpack(DLManagedTensor* t) {
  const std::vector<std::int64_t> shape = detail::checked_shape<T>(t, false, "kiln::dlpack::from_dlpack");
  return NDArray<T>::share(detail::owned_data<T>(t), shape);
}

/// Imports a CUDA tensor (kDLCUDA) as a DeviceArray sharing its memory.
template <Element T>
DeviceArray<T> from_dlpack_device(DLManagedTensor* t) {
  const std::vector<std::int64_t> shape = detail::checked_shape<T>(t, true, "kiln::dlpack::from_dlpack_device");
  return DeviceArray<T>::share(detail::owned_data<T>(t), shape, t->dl_tensor.device.device_id);
}

}  // namespace kiln::dlpack
