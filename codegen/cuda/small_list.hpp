// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Containers whose first N elements live inside them: what one kernel call keeps (its arguments, its few
// allocations, its launches) needs no heap allocation, which a call of a small kernel would otherwise pay a
// few times over.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace kiln::codegen::cuda {

template <class T, std::size_t N>
class SmallList {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return i < N ? inline_[i] : spill_[i - N]; }
  const T& operator[](std::size_t i) const { return i < N ? inline_[i] : spill_[i - N]; }

  void push_back(const T& x) {
    if (size_ < N) inline_[size_] = x;
    else spill_.push_back(x);
    ++size_;
  }
  /// Grows to n elements (new ones are `fill`); never shrinks.
  void grow(std::size_t n, const T& fill) {
    while (size_ < n) push_back(fill);
  }
  /// Removes element i; the last element takes its place (the order is not kept). The vacated inline slot is
  /// reset, so an element that owns something is not kept alive by it.
  void remove(std::size_t i) {
    (*this)[i] = (*this)[size_ - 1];
    if (size_ > N) spill_.pop_back();
    else inline_[size_ - 1] = T{};
    --size_;
  }
  void clear() {
    spill_.clear();
    for (std::size_t i = 0; i < size_ && i < N; ++i) inline_[i] = T{};
    size_ = 0;
  }

 private:
  std::array<T, N> inline_{};
  std::vector<T> spill_;
  std::size_t size_ = 0;
};

/// n elements in one block: inside the object when n <= N (a kernel's usual parameters), else on the heap.
template <class T, std::size_t N>
class SmallArray {
 public:
  explicit SmallArray(std::size_t n) : n_(n) {
    if (n > N) heap_.resize(n);
  }
  T* data() { return n_ <= N ? inline_.data() : heap_.data(); }
  T& operator[](std::size_t i) { return data()[i]; }

 private:
  std::size_t n_;
  std::array<T, N> inline_{};
  std::vector<T> heap_;
};

}  // namespace kiln::codegen::cuda
