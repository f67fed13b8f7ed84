// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GPU memory for the CUDA target: kiln::DeviceArray<T>, pinned host buffers, streams for asynchronous
// copies, and device selection. No CUDA header is needed: kiln opens the driver at run time, and every
// function here throws kiln::DeviceError("no CUDA driver/GPU: ...") on a machine without one.
//
//   auto x = kiln::to_device(host_x);              // std::vector, std::span or kiln::NDArray
//   auto y = kiln::DeviceArray<float>({n});        // uninitialized device memory
//   saxpy.on(kiln::Target::cuda)(2.0f, x, y);      // no copies: the kernel works on device memory
//   std::vector<float> out = y.to_vector();        // or y.to_host() for an NDArray
//
// Kernels called with host arrays on the CUDA target copy them to the device and the written ones back
// (see docs/gpu.md); DeviceArray arguments avoid those copies. Passing a DeviceArray to a kernel compiled
// for another target, or one of the wrong element type, is a kiln::TypeError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kiln/abi.hpp"
#include "kiln/dtype.hpp"
#include "kiln/error.hpp"
#include "kiln/ndarray.hpp"

namespace kiln {
namespace cuda {

/// True when the CUDA driver loads and sees at least one device.
bool available();
/// Why available() is false ("" when it is true).
std::string unavailable_reason();
/// The number of devices (0 without a driver).
int device_count();
/// Selects the device for the calling thread: host-argument calls of CUDA kernels run there and new
/// DeviceArrays are allocated there. The default is KILN_CUDA_DEVICE, else 0.
void set_device(int ordinal);
int current_device();

struct DeviceProperties {
  std::string name;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
  std::size_t memory_bytes = 0;
};
DeviceProperties properties(int ordinal);

/// Waits for all of kiln's queued work on the device (kernel calls already return finished).
void synchronize(int ordinal);

/// A queue of asynchronous copies on one device. Copies on a stream return at once; the memory involved
/// must stay alive and unchanged until synchronize(). Host memory should be a PinnedBuffer for the copy to
/// overlap with other work (pageable memory is copied synchronously by the driver).
class Stream {
 public:
  explicit Stream(int device = current_device());
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void synchronize() const;
  int device() const { return device_; }
  void* handle() const { return handle_; }  ///< the CUstream

 private:
  void* handle_ = nullptr;
  int device_ = 0;
};

namespace detail {
// The untyped operations DeviceArray and PinnedBuffer are built on (exported by libkiln).
void* device_alloc(std::size_t bytes, int device);
void device_free(void* p, int device) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream);
void copy_to_host(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream);
void copy_on_device(void* dst, const void* src, std::size_t bytes, int device, const Stream* stream);
/// `runs` runs of `run_bytes` bytes, their starts `pitch` bytes apart, with the same layout at both ends: a
/// strided slab of an array (one cuMemcpy2D, where a copy per run would pay the driver's latency each time).
void copy_runs_to_device(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, int device,
                         const Stream* stream);
void copy_runs_to_host(void* dst, const void* src, std::size_t run_bytes, std::size_t runs, std::size_t pitch, int device,
                       const Stream* stream);
void* pinned_alloc(std::size_t bytes);
void pinned_free(void* p) noexcept;
}  // namespace detail

/// Page-locked host memory of n elements (uninitialized): the fast path for transfers and the only host
/// memory that asynchronous copies on a Stream truly overlap with.
template <Element T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t n)
      : data_(static_cast<T*>(detail::pinned_alloc(n * sizeof(T))), &detail::pinned_free), size_(n) {}
  T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  T& operator[](std::size_t i) const { return data_.get()[i]; }
  std::span<T> span() const { return {data_.get(), size_}; }

 private:
  std::shared_ptr<T> data_;
  std::size_t size_ = 0;
};

}  // namespace cuda

/// A row-major array in GPU memory. Copies share the buffer (like NDArray); clone() copies the data. The
/// element pointer data() is a device address: pass the array to kernels, do not dereference it on the host.
template <Element T>
class DeviceArray {
 public:
  DeviceArray() = default;

  /// Uninitialized device memory of this shape on `device`.
  explicit DeviceArray(const std::vector<std::int64_t>& shape, int device = cuda::current_device()) : device_(device) {
    rank_ = static_cast<int>(shape.size());
    if (rank_ < 1 || rank_ > kMaxRank) kiln::detail::throw_bad_shape(rank_, shape.data(), "DeviceArray rank must be 1..4");
    for (int d = 0; d < rank_; ++d) shape_[d] = shape[static_cast<std::size_t>(d)];
    kiln::detail::new_array_bytes(rank_, shape_, sizeof(T), "DeviceArray");
    kiln::detail::row_major_strides(rank_, shape_, strides_);
    const int dev = device_;
    data_ = std::shared_ptr<T>(static_cast<T*>(cuda::detail::device_alloc(bytes(), dev)),
                               [dev](T* p) { cuda::detail::device_free(p, dev); });
  }
  explicit DeviceArray(std::initializer_list<std::int64_t> shape, int device = cuda::current_device())
      : DeviceArray(std::vector<std::int64_t>(shape), device) {}

  int rank() const { return rank_; }
  int device() const { return device_; }
  std::int64_t shape(int d) const { return shape_[d]; }
  std::vector<std::int64_t> shape() const { return {shape_, shape_ + rank_}; }
  std::int64_t stride(int d) const { return strides_[d]; }
  std::int64_t size() const {
    std::int64_t n = rank_ ? 1 : 0;
    for (int d = 0; d < rank_; ++d) n *= shape_[d];
    return n;
  }
  std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(T); }
  T* data() const { return data_.get(); }
  ArrayDesc desc() const {
    ArrayDesc d;
    d.data = data_.get();
    for (int k = 0; k < rank_; ++k) d.shape[k] = shape_[k], d.strides[k] = strides_[k];
    return d;
  }

  /// Copies size() elements from host memory. With a stream the copy is asynchronous (see cuda::Stream).
  void copy_from(std::span<const T> host, const cuda::Stream* stream = nullptr) {
    check_count(host.size());
    cuda::detail::copy_to_device(data(), host.data(), bytes(), device_, stream);
  }
  /// Copies size() elements to host memory. With a stream the copy is asynchronous (see cuda::Stream).
  void copy_to(std::span<T> host, const cuda::Stream* stream = nullptr) const {
    check_count(host.size());
    cuda::detail::copy_to_host(host.data(), data(), bytes(), device_, stream);
  }
  /// Copies another device array of the same shape into this one.
  void copy_from(const DeviceArray& other, const cuda::Stream* stream = nullptr) {
    check_count(static_cast<std::size_t>(other.size()));
    cuda::detail::copy_on_device(data(), other.data(), bytes(), device_, stream);
  }

  NDArray<T> to_host() const {
    NDArray<T> h(shape());
    if (size() > 0) cuda::detail::copy_to_host(h.data(), data(), bytes(), device_, nullptr);
    return h;
  }
  std::vector<T> to_vector() const {
    std::vector<T> v(static_cast<std::size_t>(size()));
    if (!v.empty()) cuda::detail::copy_to_host(v.data(), data(), bytes(), device_, nullptr);
    return v;
  }
  DeviceArray clone() const {
    DeviceArray c(shape(), device_);
    if (size() > 0) cuda::detail::copy_on_device(c.data(), data(), bytes(), device_, nullptr);
    return c;
  }

 private:
  void check_count(std::size_t n) const {
    if (n != static_cast<std::size_t>(size()))
      throw ShapeError("DeviceArray copy of " + std::to_string(n) + " elements into an array of " + std::to_string(size()));
  }
  std::shared_ptr<T> data_;
  int device_ = 0;
  int rank_ = 0;
  std::int64_t shape_[kMaxRank] = {};
  std::int64_t strides_[kMaxRank] = {};
};

/// A device copy of host data (rank 1 for vectors and spans, the array's shape for NDArray).
template <Element T>
DeviceArray<T> to_device(std::span<const T> host, int device = cuda::current_device()) {
  DeviceArray<T> d({static_cast<std::int64_t>(host.size())}, device);
  if (!host.empty()) d.copy_from(host);
  return d;
}
template <Element T>
DeviceArray<T> to_device(const std::vector<T>& host, int device = cuda::current_device()) {
  return to_device(std::span<const T>(host), device);
}
template <Element T>
DeviceArray<T> to_device(const NDArray<T>& host, int device = cuda::current_device()) {
  DeviceArray<T> d(host.shape(), device);
  if (host.size() > 0) d.copy_from(std::span<const T>(host.data(), static_cast<std::size_t>(host.size())));
  return d;
}
template <Element T>
NDArray<T> to_host(const DeviceArray<T>& d) {
  return d.to_host();
}

}  // namespace kiln
