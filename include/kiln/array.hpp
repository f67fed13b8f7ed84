// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Traced arrays: kernel parameters, arrays made inside a kernel, views of either, and element access.
//
// An Array is a handle, like a NumPy name: `Array c = a + b; c = a - b;` rebinds c to a new array, while
// `c(kiln::all) = a - b` and `c += a` write into c's elements. Array expressions (kiln/array_ops.hpp,
// kiln/reduce.hpp) are evaluated where they are written, so later writes never change an earlier result.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <source_location>
#include <utility>
#include <vector>

#include "kiln/complex_element.hpp"
#include "kiln/traced.hpp"
#include "kiln/views.hpp"

namespace kiln {

template <ArrayElement T, int Rank>
class Array;

template <Element T1, int R1, Element T2, int R2>
void swap(Array<T1, R1>& a, Array<T2, R2>& b, std::source_location where = std::source_location::current());

namespace detail {

struct ArrayInfo;  // frontend/array_info.hpp: the extents, index map and label of a temporary or a view

/// The traced identity of an array: the IR variable holding its elements and, for views and arrays made
/// by array operations, what the frontend knows about them.
struct ArrayHandle {
  VarPtr var;       ///< the array the elements live in (a view's base array)
  int rank = 0;     ///< this array's rank (a view's may be lower than its base's)
  std::uint64_t scope = 0;  ///< the scope it was made in: it is valid while that scope is open
  std::shared_ptr<const ArrayInfo> info;  ///< null: the whole of `var`, with `var`'s extents

  ArrayHandle() = default;
  ArrayHandle(VarPtr v, int r, std::uint64_t s, std::shared_ptr<const ArrayInfo> i = nullptr)
      : var(std::move(v)), rank(r), scope(s), info(std::move(i)) {}
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

/// A view of `a`: one ViewIndex per leading dimension (the rest are whole).
ArrayHandle make_view(const ArrayHandle& a, const ViewIndex* idx, int n, Where w);
/// A view of `a` with its dimensions permuted: dimension k of the view is dimension axes[k] of `a` (NumPy's
/// a.transpose(axes)); with n == 0 the dimensions are reversed (a.T). No copy: the view's index map reads
/// `a`'s elements with the strides exchanged.
ArrayHandle permute_view(const ArrayHandle& a, const int* axes, int n, Where w);
/// `a` as a whole array of its own: a view is copied into a new array, anything else is returned as is.
ArrayHandle materialize(const ArrayHandle& a);

/// The scope being traced (0 outside a trace): where an Array handle object lives.
std::uint64_t trace_scope();
/// Fails unless an Array handle declared in scope `home` may be rebound here (not from a nested loop or
/// branch, which is traced once however often it runs).
void check_rebind(std::uint64_t home, const ArrayHandle& to);
/// kiln::swap: exchanges the handles `a` and `b` (declared in scopes `home_a`, `home_b`), or, inside a loop
/// or branch, turns them into run-time array bindings and swaps those (frontend/swap.cpp).
void swap_arrays(ArrayHandle& a, std::uint64_t home_a, ArrayHandle& b, std::uint64_t home_b, Where where);

/// One operand of an array operation, type-erased: an array (or view), or a traced scalar.
struct OpArg {
  const ArrayHandle* array = nullptr;
  const TracedValue* scalar = nullptr;
};

/// `target[...] = value` over the target's elements (broadcasting value), or with `combine`
/// `target[...] = T(target[...] combine value)` computed in type `operand` (compound assignment).
void assign_into(const ArrayHandle& target, OpArg value, const BinaryOp* combine, DType operand, const char* what,
                 Where w);

template <class I>
constexpr bool is_index_v = IndexLike<I>;

template <class X>
struct array_traits {
  static constexpr bool value = false;
};
template <Element T, int R>
struct array_traits<Array<T, R>> {
  static constexpr bool value = true;
  using elem = T;
  static constexpr int rank = R;
};
template <class X>
concept IsArray = array_traits<std::remove_cvref_t<X>>::value;
template <class X>
concept ArrayOrOperand = IsArray<X> || Operand<X>;

/// Type computations treat an array like a scalar of its element type.
template <class X>
struct scalar_like {
  using type = X;
};
template <Element T, int R>
struct scalar_like<Array<T, R>> {
  using type = Scalar<T>;
};
template <class X>
using scalar_like_t = typename scalar_like<std::remove_cvref_t<X>>::type;

/// Keeps one operand of an array operation alive while the operation reads it: arrays by handle,
/// scalars converted to S.
template <Element S>
class ArgHolder {
 public:
  template <class X>
  explicit ArgHolder(const X& x) {
    if constexpr (IsArray<X>) {
      arg_.array = &x.traced_handle();
    } else {
      scalar_.emplace(to_scalar<S>(x));
      arg_.scalar = &*scalar_;
    }
  }
  ArgHolder(const ArgHolder&) = delete;
  ArgHolder& operator=(const ArgHolder&) = delete;
  OpArg get() const { return arg_; }

 private:
  std::optional<Scalar<S>> scalar_;
  OpArg arg_;
};

/// The rank of a view `a(i...)` of an array of static rank R (0: known only when traced): integer indices
/// drop a dimension, kiln::newaxis adds one.
template <int R, class... I>
constexpr int view_rank() {
  if constexpr (R == 0) {
    return 0;
  } else {
    constexpr int added = static_cast<int>((0 + ... + (is_newaxis_v<I> ? 1 : 0)));
    constexpr int dropped = static_cast<int>((0 + ... + (IndexLike<I> ? 1 : 0)));
    static_assert(static_cast<int>(sizeof...(I)) - added <= R, "more indices than the array has dimensions");
    static_assert(R - dropped + added <= kMaxRank, "kiln arrays have at most 4 dimensions");
    return R - dropped + added;
  }
}

template <class I>
Int index_or_zero(const I& i) {
  if constexpr (IndexLike<I>) return to_scalar<std::int64_t>(i);
  else return Int(0);
}

template <class I>
ViewIndex view_index(const I& i, const Int& as_index) {
  if constexpr (IndexLike<I>) return ViewIndex{&as_index, nullptr};
  else if constexpr (std::is_same_v<std::remove_cvref_t<I>, SliceSpec>) return ViewIndex{nullptr, &i};
  else if constexpr (is_newaxis_v<I>) return ViewIndex{nullptr, nullptr, true};
  else return ViewIndex{};
}

template <class... I, std::size_t... K>
ArrayHandle view_of(const ArrayHandle& a, std::index_sequence<K...>, const I&... i) {
  const Int ints[] = {index_or_zero(i)...};
  const ViewIndex v[] = {view_index(i, ints[K])...};
  return make_view(a, v, static_cast<int>(sizeof...(I)), {});
}

}  // namespace detail

namespace detail {
template <Element T>
struct ElementAccess;  // kiln/atomic.hpp: the element an atomic updates
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
  /// An element has no C++ value while the kernel is traced: the conversion exists only to say so.
  template <class U = T>
  explicit operator bool() const {
    static_assert(sizeof(U) == 0,
                  "a traced value is not a C++ bool: branch with kiln::if_(c, [&] {...}).else_([&] {...}) or choose with kiln::select(c, a, b)");
    return false;
  }

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

  friend struct detail::ElementAccess<T>;
  detail::ArrayHandle array_;
  std::vector<Int> idx_;
  Scalar<T> value_;
};

template <Element T>
Scalar<T>::Scalar(const ElementRef<T>& element, std::source_location l)
    : TracedValue(element.get(), detail::Where::here(l)) {}

/// A traced array of E. `Rank` 0 means "any rank": the rank is fixed per call signature. Arrays of complex
/// numbers are a specialization (kiln/complex.hpp).
template <ArrayElement E, int Rank = 0>
class Array {
  static_assert(Rank >= 0 && Rank <= kMaxRank, "kiln arrays have rank 1..4 (0 = any)");

 public:
  using value_type = E;
  static constexpr int static_rank = Rank;

  explicit Array(detail::ArrayHandle h) : h_(std::move(h)), home_(detail::trace_scope()) {}
  Array(const Array& other) : h_(other.h_), home_(detail::trace_scope()) {}
  template <int R>
    requires(Rank == 0 && R != 0)
  Array(const Array<E, R>& other) : h_(other.traced_handle()), home_(detail::trace_scope()) {}

  /// Rebinds this handle (NumPy's `c = a`); the elements are not copied.
  Array& operator=(const Array& other) & {
    detail::check_rebind(home_, other.h_);
    h_ = other.h_;
    return *this;
  }
  template <int R>
    requires(Rank == 0 && R != 0)
  Array& operator=(const Array<E, R>& other) & {
    detail::check_rebind(home_, other.traced_handle());
    h_ = other.traced_handle();
    return *this;
  }

  /// Writes into the elements of a view expression, broadcasting (NumPy's `a[1:-1] = x`):
  /// `a(kiln::range(1, n - 1)) = b + c;`, `a[kiln::all] = 0.0;`. When x reads the same elements at other
  /// positions it is evaluated completely first, as in NumPy.
  template <class X>
    requires detail::ArrayOrOperand<X>
  const Array& operator=(X&& x) && {
    detail::ArgHolder<E> v(x);
    detail::assign_into(h_, v.get(), nullptr, dtype_of<E>(), "=", {});
    detail::expire(std::forward<X>(x));
    return *this;
  }

  // In-place updates of the elements (the array itself, or a view expression): `a += b` is
  // `a[...] = E(a[...] + b)` with broadcasting, as for scalars.
  template <class X> requires detail::ArrayOrOperand<X> const Array& operator+=(X&& x) const { return update<X>(BinaryOp::Add, "+=", std::forward<X>(x)); }
  template <class X> requires detail::ArrayOrOperand<X> const Array& operator-=(X&& x) const { return update<X>(BinaryOp::Sub, "-=", std::forward<X>(x)); }
  template <class X> requires detail::ArrayOrOperand<X> const Array& operator*=(X&& x) const { return update<X>(BinaryOp::Mul, "*=", std::forward<X>(x)); }
  template <class X> requires detail::ArrayOrOperand<X> const Array& operator/=(X&& x) const { return update<X>(BinaryOp::Div, "/=", std::forward<X>(x)); }
  template <class X> requires detail::ArrayOrOperand<X> const Array& operator%=(X&& x) const { return update<X>(BinaryOp::Mod, "%=", std::forward<X>(x)); }

  int rank() const { return h_.rank; }
  Int shape(int axis) const { return Int(detail::dim(h_, axis)); }
  /// The number of elements.
  Int size() const { return Int(detail::size(h_)); }

  template <class I>
    requires detail::is_index_v<I>
  ElementRef<E> operator[](const I& i) const {
    static_assert(Rank == 0 || Rank == 1, "a[i] indexes a 1-d array; use a(i, j, ...) for more dimensions");
    return ElementRef<E>(h_, {detail::to_scalar<std::int64_t>(i)});
  }
  template <class... I>
    requires(sizeof...(I) >= 1 && (detail::is_index_v<I> && ...))
  ElementRef<E> operator()(const I&... i) const {
    static_assert(Rank == 0 || static_cast<int>(sizeof...(I)) == Rank, "number of indices differs from the array's rank");
    return ElementRef<E>(h_, {detail::to_scalar<std::int64_t>(i)...});
  }

  /// A view along the first dimension: `a[kiln::slice(1, -1)]`.
  template <class S>
    requires detail::is_slice_v<S>
  Array<E, Rank> operator[](const S& s) const {
    return Array<E, Rank>(detail::view_of(h_, std::index_sequence_for<S>{}, s));
  }
  /// A view: slices keep their dimension, integer indices drop theirs, kiln::newaxis inserts one of extent 1,
  /// missing trailing positions are whole dimensions: `a(kiln::range(1, n - 1), kiln::all)`, `a(i, kiln::all)`,
  /// `u(kiln::all, kiln::newaxis)`.
  template <class... I>
    requires(sizeof...(I) >= 1 && (detail::is_view_index_v<I> && ...) &&
             ((detail::is_slice_v<I> || detail::is_newaxis_v<I>) || ...))
  Array<E, detail::view_rank<Rank, I...>()> operator()(const I&... i) const {
    return Array<E, detail::view_rank<Rank, I...>()>(detail::view_of(h_, std::index_sequence_for<I...>{}, i...));
  }

  /// The transpose, NumPy's `a.T`: a view with the dimensions reversed (no copy), so `kiln::dot(v, A.T())`
  /// and `A.T() + B` read A's elements in place. A 1-d array is its own transpose (as in NumPy).
  Array<E, Rank> T() const { return Array<E, Rank>(detail::permute_view(h_, nullptr, 0, {})); }

  /// The handle as traced, views included (for kiln's own operations).
  const detail::ArrayHandle& traced_handle() const { return h_; }

  template <Element T1, int R1, Element T2, int R2>
  friend void swap(Array<T1, R1>& a, Array<T2, R2>& b, std::source_location where);
  /// The array as a whole array of its own: a view is copied first (a kernel's result must own its
  /// elements). Used when an array is returned.
  detail::ArrayHandle handle() const { return detail::materialize(h_); }

 private:
  template <class X>
  const Array& update(BinaryOp op, const char* what, X&& x) const {
    using R = detail::arith_result_t<Scalar<E>, detail::scalar_like_t<X>>;
    detail::ArgHolder<R> v(x);
    detail::assign_into(h_, v.get(), &op, dtype_of<R>(), what, {});
    detail::expire(std::forward<X>(x));
    return *this;
  }

  detail::ArrayHandle h_;
  std::uint64_t home_;  ///< the scope this handle object was made in (rebinding is only allowed there)
};

/// Swaps two traced array handles, as `std::swap` swaps two NumPy names: a time loop's buffers
/// (`kiln::swap(u, v)` at the end of each step). Inside a loop or branch, which is traced once, the handles
/// become run-time array bindings that are swapped each time the swap runs. Both arrays must have one
/// element type and rank (else TraceError), arrays swapped inside a loop or branch one shape (checked when
/// the kernel runs: ShapeError); swapping inside a prange is a TraceError (iterations run in any order).
template <Element T1, int R1, Element T2, int R2>
void swap(Array<T1, R1>& a, Array<T2, R2>& b, std::source_location where) {
  // Element types and ranks are compared by swap_arrays, so that misuse is a TraceError with both names.
  detail::swap_arrays(a.h_, a.home_, b.h_, b.home_, detail::Where::here(where));
}

/// NumPy's np.transpose(a): the view `a.T()`, the dimensions reversed.
template <Element E, int R>
Array<E, R> transpose(const Array<E, R>& a, std::source_location l = std::source_location::current()) {
  return Array<E, R>(detail::permute_view(a.traced_handle(), nullptr, 0, detail::Where::here(l)));
}
/// np.transpose(a, axes): dimension k of the view is dimension axes[k] of a (negative axes count from the
/// last); `axes` must be a permutation of a's dimensions (else TraceError). A view, no copy.
template <Element E, int R>
Array<E, R> transpose(const Array<E, R>& a, std::initializer_list<int> axes,
                      std::source_location l = std::source_location::current()) {
  return Array<E, R>(detail::permute_view(a.traced_handle(), axes.begin(), static_cast<int>(axes.size()),
                                          detail::Where::here(l)));
}

/// Allocates an array inside a kernel (contents undefined until written). Named after the variable it
/// initializes (`auto buf = kiln::empty<double>(n);` is `buf` in IR dumps and messages).
template <Element T, detail::IndexLike S0>
Array<T, 1> empty(const S0& n0, std::source_location l = std::source_location::current()) {
  const Int e[] = {detail::to_scalar<std::int64_t>(n0)};
  const Int* p[] = {&e[0]};
  return Array<T, 1>(detail::allocate(dtype_of<T>(), p, 1, nullptr, detail::Where::here(l)));
}
template <Element T, detail::IndexLike S0, detail::IndexLike S1>
Array<T, 2> empty(const S0& n0, const S1& n1, std::source_location l = std::source_location::current()) {
  const Int e[] = {detail::to_scalar<std::int64_t>(n0), detail::to_scalar<std::int64_t>(n1)};
  const Int* p[] = {&e[0], &e[1]};
  return Array<T, 2>(detail::allocate(dtype_of<T>(), p, 2, nullptr, detail::Where::here(l)));
}
template <Element T, detail::IndexLike S0, detail::IndexLike S1, detail::IndexLike S2>
Array<T, 3> empty(const S0& n0, const S1& n1, const S2& n2, std::source_location l = std::source_location::current()) {
  const Int e[] = {detail::to_scalar<std::int64_t>(n0), detail::to_scalar<std::int64_t>(n1),
                   detail::to_scalar<std::int64_t>(n2)};
  const Int* p[] = {&e[0], &e[1], &e[2]};
  return Array<T, 3>(detail::allocate(dtype_of<T>(), p, 3, nullptr, detail::Where::here(l)));
}
template <Element T, detail::IndexLike S0, detail::IndexLike S1, detail::IndexLike S2, detail::IndexLike S3>
Array<T, 4> empty(const S0& n0, const S1& n1, const S2& n2, const S3& n3,
                  std::source_location l = std::source_location::current()) {
  const Int e[] = {detail::to_scalar<std::int64_t>(n0), detail::to_scalar<std::int64_t>(n1),
                   detail::to_scalar<std::int64_t>(n2), detail::to_scalar<std::int64_t>(n3)};
  const Int* p[] = {&e[0], &e[1], &e[2], &e[3]};
  return Array<T, 4>(detail::allocate(dtype_of<T>(), p, 4, nullptr, detail::Where::here(l)));
}

/// A new uninitialized array with the shape of `like`.
template <Element T, int R>
Array<T, R> empty_like(const Array<T, R>& like, std::source_location l = std::source_location::current()) {
  return Array<T, R>(detail::allocate_like(dtype_of<T>(), like.traced_handle(), nullptr, detail::Where::here(l)));
}

}  // namespace kiln
