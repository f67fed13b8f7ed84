// Traced arrays: kernel parameters and arrays allocated inside a kernel, with element access.
#pragma once

#include <array>
#include <initializer_list>
#include <vector>

#include "kiln/traced.hpp"

namespace kiln {

namespace detail {

/// The traced identity of an array: its IR variable and rank (known once traced).
struct ArrayHandle {
  VarPtr var;
  int rank = 0;
  std::uint64_t scope = 0;  ///< the scope it was declared in
};

DType elem_of(const ArrayHandle& a);
Node load(const ArrayHandle& a, const Int* const* indices, int n);
void store(const ArrayHandle& a, const Int* const* indices, int n, const TracedValue& value, bool consume);
Node dim(const ArrayHandle& a, int axis);
Node size(const ArrayHandle& a);
/// Emits an allocation of the given extents, filled with `fill` when given (zeros, full).
ArrayHandle allocate(DType t, const Int* const* extents, int n, const TracedValue* fill, Where w);
/// A new array with the shape of `like`.
ArrayHandle allocate_like(DType t, const ArrayHandle& like, const TracedValue* fill, Where w);

template <class I>
constexpr bool is_index_v = std::is_integral_v<operand_t<I>> && !std::is_same_v<operand_t<I>, bool>;

}  // namespace detail

/// One element of a traced array, `a[i]`. As a value it behaves like a Scalar holding the element as it was
/// when `a[i]` was evaluated (so `auto v = a[i]; a[i] = 5;` leaves v unchanged, as in C++). Assigning to it
/// stores into the array; that is only possible on the expression itself (`a[i] = x`, `a[i] += x`), not on
/// a named copy, which is a value.
template <Element T>
class ElementRef {
 public:
  ElementRef(detail::ArrayHandle a, std::vector<Int> idx) : array_(std::move(a)), idx_(std::move(idx)), value_(load()) {}

  /// The element's value.
  Scalar<T> get() const { return value_; }
  /// Stops watching the value for snapshots (used by the operators on expiring temporaries).
  void release() const { value_.release(); }

  const ElementRef& operator=(const ElementRef& v) && { return std::move(*this).set(v.get()); }
  template <class U>
    requires detail::Operand<U>
  const ElementRef& operator=(U&& v) && {
    return std::move(*this).set(std::forward<U>(v));
  }
  template <class U> requires detail::Operand<U> const ElementRef& operator+=(U&& v) && { return std::move(*this).set(get() + std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> const ElementRef& operator-=(U&& v) && { return std::move(*this).set(get() - std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> const ElementRef& operator*=(U&& v) && { return std::move(*this).set(get() * std::forward<U>(v)); }
  template <class U> requires detail::Operand<U> const ElementRef& operator/=(U&& v) && { return std::move(*this).set(get() / std::forward<U>(v)); }

 private:
  detail::Node load() const {
    std::array<const Int*, kMaxRank> p{};
    for (size_t k = 0; k < idx_.size(); ++k) p[k] = &idx_[k];
    return detail::load(array_, p.data(), static_cast<int>(idx_.size()));
  }

  /// Stores `v`; an rvalue is an expiring temporary that need not be snapshotted.
  template <class X>
  const ElementRef& set(X&& v) && {
    release();  // this element expression is the target, not a value anybody reads
    std::array<const Int*, kMaxRank> p{};
    for (size_t k = 0; k < idx_.size(); ++k) p[k] = &idx_[k];
    const int n = static_cast<int>(idx_.size());
    if constexpr (std::is_same_v<std::remove_cvref_t<X>, Scalar<T>>) {
      detail::store(array_, p.data(), n, v, !std::is_lvalue_reference_v<X>);
    } else {
      const Scalar<T> c = detail::to_scalar<T>(v);
      detail::expire(std::forward<X>(v));
      detail::store(array_, p.data(), n, c, true);
    }
    return *this;
  }

  detail::ArrayHandle array_;
  std::vector<Int> idx_;
  Scalar<T> value_;
};

template <Element T>
Scalar<T>::Scalar(const ElementRef<T>& element, std::source_location l)
    : TracedValue(element.get(), detail::Where::here(l)) {}

/// A traced array of T. `Rank` 0 means "any rank": the rank is fixed per call signature.
template <Element T, int Rank = 0>
class Array {
  static_assert(Rank >= 0 && Rank <= kMaxRank, "kiln arrays have rank 1..4 (0 = any)");

 public:
  using value_type = T;
  static constexpr int static_rank = Rank;

  explicit Array(detail::ArrayHandle h) : h_(std::move(h)) {}
  template <int R>
    requires(Rank == 0 && R != 0)
  Array(const Array<T, R>& other) : h_(other.handle()) {}

  int rank() const { return h_.rank; }
  Int shape(int axis) const { return Int(detail::dim(h_, axis)); }
  /// The number of elements.
  Int size() const { return Int(detail::size(h_)); }

  template <class I>
    requires detail::is_index_v<I>
  ElementRef<T> operator[](const I& i) const {
    static_assert(Rank == 0 || Rank == 1, "a[i] indexes a 1-d array; use a(i, j, ...) for more dimensions");
    return ElementRef<T>(h_, {detail::to_scalar<std::int64_t>(i)});
  }
  template <class... I>
    requires(sizeof...(I) >= 1 && (detail::is_index_v<I> && ...))
  ElementRef<T> operator()(const I&... i) const {
    static_assert(Rank == 0 || static_cast<int>(sizeof...(I)) == Rank, "number of indices differs from the array's rank");
    return ElementRef<T>(h_, {detail::to_scalar<std::int64_t>(i)...});
  }

  const detail::ArrayHandle& handle() const { return h_; }

 private:
  detail::ArrayHandle h_;
};

/// Allocates an array inside a kernel (contents undefined until written).
template <Element T, class... S>
  requires(sizeof...(S) >= 1 && sizeof...(S) <= kMaxRank && (detail::is_index_v<S> && ...))
Array<T, sizeof...(S)> empty(const S&... extents) {
  const Int ext[] = {detail::to_scalar<std::int64_t>(extents)...};
  std::array<const Int*, sizeof...(S)> p{};
  for (size_t k = 0; k < sizeof...(S); ++k) p[k] = &ext[k];
  return Array<T, sizeof...(S)>(detail::allocate(dtype_of<T>(), p.data(), sizeof...(S), nullptr, {}));
}

/// Allocates an array filled with `value`.
template <Element T, class V, class... S>
  requires(sizeof...(S) >= 1 && sizeof...(S) <= kMaxRank && (detail::is_index_v<S> && ...) && detail::Operand<V>)
Array<T, sizeof...(S)> full_of(const V& value, const S&... extents) {
  const Int ext[] = {detail::to_scalar<std::int64_t>(extents)...};
  std::array<const Int*, sizeof...(S)> p{};
  for (size_t k = 0; k < sizeof...(S); ++k) p[k] = &ext[k];
  const Scalar<T> v = detail::to_scalar<T>(value);
  return Array<T, sizeof...(S)>(detail::allocate(dtype_of<T>(), p.data(), sizeof...(S), &v, {}));
}

template <Element T, class... S>
Array<T, sizeof...(S)> zeros(const S&... extents) {
  return full_of<T>(T(0), extents...);
}
template <Element T, class... S>
Array<T, sizeof...(S)> ones(const S&... extents) {
  return full_of<T>(T(1), extents...);
}

/// A new uninitialized array with the shape of `like`.
template <Element T, int R>
Array<T, R> empty_like(const Array<T, R>& like) {
  return Array<T, R>(detail::allocate_like(dtype_of<T>(), like.handle(), nullptr, {}));
}

}  // namespace kiln
