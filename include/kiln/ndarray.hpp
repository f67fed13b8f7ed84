// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host arrays: NDArray (kiln-owned, shared like a NumPy array) and ArrayRef (a view of user memory).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "kiln/abi.hpp"
#include "kiln/complex_element.hpp"
#include "kiln/dtype.hpp"
#include "kiln/error.hpp"

namespace kiln {

namespace detail {
/// Row-major strides (in elements) for a shape.
inline void row_major_strides(int rank, const std::int64_t* shape, std::int64_t* strides) {
  std::int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
}
[[noreturn]] void throw_bad_shape(int rank, const std::int64_t* shape, const char* what);
/// The size in bytes of a new `what` ("NDArray") of this shape and element size, by kiln::array_size's rule:
/// a ShapeError for a negative extent or a size beyond kMaxArrayBytes.
std::size_t new_array_bytes(int rank, const std::int64_t* shape, std::size_t elem_size, const char* what);
/// A kiln::Error for a new `what` of this shape that memory cannot hold.
[[noreturn]] void throw_out_of_memory(int rank, const std::int64_t* shape, std::size_t bytes, const char* what);
/// `bytes` of 64-byte aligned memory for an array, to be freed with std::free; from 4 MiB up it asks for
/// transparent huge pages, as kernel results and NumPy arrays do. Null when out of memory.
void* allocate_array_memory(std::size_t bytes) noexcept;
}  // namespace detail

/// A non-owning view of user memory: pointer, shape and strides in elements (row-major if omitted). Of
/// std::complex elements too (rank 1..3), in complex elements.
template <class T>
  requires ArrayElement<T>
class ArrayRef {
 public:
  ArrayRef(T* data, std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> strides = {})
      : data_(data), rank_(static_cast<int>(shape.size())) {
    if (rank_ < 1 || rank_ > kMaxRank) detail::throw_bad_shape(rank_, shape.begin(), "ArrayRef rank must be 1..4");
    std::copy(shape.begin(), shape.end(), shape_);
    if (strides.size() == 0) {
      detail::row_major_strides(rank_, shape_, strides_);
    } else if (strides.size() == shape.size()) {
      std::copy(strides.begin(), strides.end(), strides_);
    } else {
      detail::throw_bad_shape(rank_, shape_, "ArrayRef needs one stride per dimension");
    }
    for (int d = 0; d < rank_; ++d)
      if (shape_[d] < 0) detail::throw_bad_shape(rank_, shape_, "ArrayRef extents must be non-negative");
  }
  ArrayRef(std::span<T> s) : ArrayRef(s.data(), {static_cast<std::int64_t>(s.size())}) {}
  ArrayRef(std::vector<std::remove_const_t<T>>& v) : ArrayRef(v.data(), {static_cast<std::int64_t>(v.size())}) {}

  T* data() const { return data_; }
  int rank() const { return rank_; }
  std::int64_t shape(int d) const { return shape_[d]; }
  std::int64_t stride(int d) const { return strides_[d]; }

 private:
  T* data_;
  int rank_;
  std::int64_t shape_[kMaxRank] = {};
  std::int64_t strides_[kMaxRank] = {};
};

/// A kiln-owned n-d array (64-byte aligned, row-major). Copies share the buffer, like NumPy arrays;
/// use clone() for a deep copy. Kernels that return arrays return NDArray.
template <Element T>
class NDArray {
 public:
  NDArray() = default;

  /// A zero-filled array of the given shape.
  explicit NDArray(std::initializer_list<std::int64_t> shape) : NDArray(std::vector<std::int64_t>(shape)) {}
  explicit NDArray(const std::vector<std::int64_t>& shape) {
    rank_ = static_cast<int>(shape.size());
    if (rank_ < 1 || rank_ > kMaxRank) detail::throw_bad_shape(rank_, shape.data(), "NDArray rank must be 1..4");
    std::copy(shape.begin(), shape.end(), shape_);
    const std::size_t bytes = detail::new_array_bytes(rank_, shape_, sizeof(T), "NDArray");
    detail::row_major_strides(rank_, shape_, strides_);
    void* p = detail::allocate_array_memory(bytes);
    if (!p) detail::throw_out_of_memory(rank_, shape_, bytes, "NDArray");
    std::memset(p, 0, bytes);
    data_.reset(static_cast<T*>(p), &std::free);
  }

  /// An array holding a copy of `values` (rank 1).
  static NDArray from(const std::vector<T>& values) {
    NDArray a({static_cast<std::int64_t>(values.size())});
    std::copy(values.begin(), values.end(), a.data());
    return a;
  }

  /// Takes ownership of a kernel result (allocated with std::aligned_alloc, row-major).
  static NDArray adopt(const ArrayDesc& d, int rank) {
    NDArray a;
    a.rank_ = rank;
    std::copy(d.shape, d.shape + rank, a.shape_);
    std::copy(d.strides, d.strides + rank, a.strides_);
    a.data_.reset(static_cast<T*>(d.data), &std::free);
    return a;
  }

  /// Row-major memory someone else owns, kept alive by `data` (kiln/dlpack.hpp imports through it).
  static NDArray share(std::shared_ptr<T> data, const std::vector<std::int64_t>& shape) {
    NDArray a;
    a.rank_ = static_cast<int>(shape.size());
    if (a.rank_ < 1 || a.rank_ > kMaxRank) detail::throw_bad_shape(a.rank_, shape.data(), "NDArray rank must be 1..4");
    std::copy(shape.begin(), shape.end(), a.shape_);
    detail::row_major_strides(a.rank_, a.shape_, a.strides_);
    a.data_ = std::move(data);
    return a;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  int rank() const { return rank_; }
  /// The memory's owner, shared (kiln/dlpack.hpp exports through it).
  const std::shared_ptr<T>& shared_data() const { return data_; }
  std::int64_t shape(int d) const { return shape_[d]; }
  std::vector<std::int64_t> shape() const { return {shape_, shape_ + rank_}; }
  std::int64_t stride(int d) const { return strides_[d]; }
  std::int64_t size() const {
    std::int64_t n = rank_ ? 1 : 0;
    for (int d = 0; d < rank_; ++d) n *= shape_[d];
    return n;
  }

  T& operator[](std::int64_t i) { return data_.get()[i]; }
  const T& operator[](std::int64_t i) const { return data_.get()[i]; }
  template <class... I>
  T& operator()(I... idx) {
    return data_.get()[offset(idx...)];
  }
  template <class... I>
  const T& operator()(I... idx) const {
    return data_.get()[offset(idx...)];
  }

  std::vector<T> to_vector() const { return std::vector<T>(data(), data() + size()); }
  NDArray clone() const {
    NDArray c(shape());
    std::copy(data(), data() + size(), c.data());
    return c;
  }
  ArrayDesc desc() const {
    ArrayDesc d;
    d.data = const_cast<T*>(data_.get());
    std::copy(shape_, shape_ + rank_, d.shape);
    std::copy(strides_, strides_ + rank_, d.strides);
    return d;
  }

 private:
  std::shared_ptr<T> data_;
  int rank_ = 0;
  std::int64_t shape_[kMaxRank] = {};
  std::int64_t strides_[kMaxRank] = {};

  template <class... I>
  std::int64_t offset(I... idx) const {
    const std::int64_t ix[] = {static_cast<std::int64_t>(idx)...};
    std::int64_t o = 0;
    for (std::size_t d = 0; d < sizeof...(I); ++d) o += ix[d] * strides_[d];
    return o;
  }
};

}  // namespace kiln
