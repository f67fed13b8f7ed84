// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions of traced arrays: sum prod min max argmin argmax mean var std any alltrue count_nonzero ptp
// nansum nanmean, over the whole array (a traced scalar) or along one axis (an array; `kiln::keepdims` keeps
// the axis with extent 1), and dot.
//
// As in NumPy: sums and products of bool and integer arrays narrower than 64 bits accumulate in int64 (uint64
// for unsigned ones); mean/var/std are float32 for
// float32 arrays and float64 otherwise; argmin/argmax give the first position of the extreme value, a NaN
// counting as the extreme (the whole-array forms give the row-major flat index). min, max, argmin and
// argmax of an empty array are a kiln::ValueError; the sum of an empty array is 0 and the product 1. An axis
// outside the array is a TraceError; negative axes count from the last.
#pragma once

#include "kiln/array.hpp"
#include "kiln/math.hpp"

namespace kiln {

/// Keeps a reduced axis, with extent 1: `kiln::mean(x, 1, kiln::keepdims)` broadcasts against x.
struct KeepDims {};
inline constexpr KeepDims keepdims{};

/// Delta degrees of freedom of var/std: the divisor is n - ddof (`kiln::var(x, kiln::ddof(1))`).
struct Ddof {
  int value = 0;
};
inline Ddof ddof(int v) { return Ddof{v}; }

namespace detail {

enum class Reduction : std::uint8_t {
  Sum, Prod, Min, Max, ArgMin, ArgMax, Mean, Var, Std, Any, All, CountNonzero, Ptp, NanSum, NanMean
};

/// The whole-array reduction of `a`, as a value of type `result`.
Node reduce(Reduction r, const ArrayHandle& a, DType result, int ddof, Where w);
/// The reduction of `a` along `axis` into a new array of element type `result`.
ArrayHandle reduce_axis(Reduction r, const ArrayHandle& a, DType result, int axis, bool keepdims, int ddof, Where w);
/// Vector · vector.
Node dot(const ArrayHandle& a, const ArrayHandle& b, DType t, Where w);
/// Matrix · vector, vector · matrix and matrix · matrix.
ArrayHandle dot_array(const ArrayHandle& a, const ArrayHandle& b, DType t, Where w);

/// An axis is a C++ integer (so that `kiln::min(a, 0.0)` does not quietly become a reduction along axis 0).
template <class A>
concept Axis = std::is_integral_v<A> && !std::is_same_v<A, bool>;

template <class X>
using elem_t = typename array_traits<std::remove_cvref_t<X>>::elem;
template <class X>
constexpr int array_rank_v = array_traits<std::remove_cvref_t<X>>::rank;

/// f16 and bf16 are reduced in f32, and their reductions are f32 (their argmin/argmax/count/any/all as for
/// every type): rounding partial results to 11 or 8 significant bits would lose what the reduction computes.
template <class T>
using accum_t = std::conditional_t<std::is_same_v<T, half> || std::is_same_v<T, bfloat16>, float, T>;
/// Sums and products of bool and signed integers narrower than 64 bits accumulate in int64, of unsigned ones
/// in uint64 (NumPy).
template <class T>
using sum_t = std::conditional_t<
    std::is_same_v<T, bool> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::int16_t> ||
        std::is_same_v<T, std::int32_t>,
    std::int64_t,
    std::conditional_t<std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::uint16_t> ||
                           std::is_same_v<T, std::uint32_t>,
                       std::uint64_t, accum_t<T>>>;
/// mean/var/std: float32 for float32 (and f16, bf16), float64 otherwise.
template <class T>
using moment_t = std::conditional_t<std::is_same_v<accum_t<T>, float>, float, double>;

/// The static rank after reducing one axis (0: known only when traced).
template <int R, bool Keep>
constexpr int reduced_rank() {
  static_assert(R != 1 || Keep, "reducing the only axis of a 1-d array gives a scalar: drop the axis, or keep it "
                                "with kiln::keepdims");
  return R == 0 ? 0 : (Keep ? R : R - 1);
}

template <Reduction Op, class T>
using reduced_t = std::conditional_t<
    Op == Reduction::Sum || Op == Reduction::Prod || Op == Reduction::NanSum, sum_t<T>,
    std::conditional_t<
        Op == Reduction::ArgMin || Op == Reduction::ArgMax || Op == Reduction::CountNonzero, std::int64_t,
        std::conditional_t<Op == Reduction::Any || Op == Reduction::All, bool,
                           std::conditional_t<Op == Reduction::Min || Op == Reduction::Max || Op == Reduction::Ptp, accum_t<T>,
                                              moment_t<T>>>>>;

template <Reduction Op, class T>
constexpr void check_reduction() {
  static_assert(Op != Reduction::Ptp || !std::is_same_v<T, bool>,
                "kiln::ptp of a bool array (max - min of bools, which NumPy refuses too): cast it to an integer type");
}

template <Reduction Op, class X>
Scalar<reduced_t<Op, elem_t<X>>> reduce_all(const X& a, int ddof, std::source_location l) {
  check_reduction<Op, elem_t<X>>();
  using R = reduced_t<Op, elem_t<X>>;
  return Scalar<R>(reduce(Op, a.traced_handle(), dtype_of<R>(), ddof, Where::here(l)));
}

template <Reduction Op, bool Keep, class X>
Array<reduced_t<Op, elem_t<X>>, reduced_rank<array_rank_v<X>, Keep>()> reduce_along(const X& a, int axis, int ddof,
                                                                                   std::source_location l) {
  check_reduction<Op, elem_t<X>>();
  using R = reduced_t<Op, elem_t<X>>;
  return Array<R, reduced_rank<array_rank_v<X>, Keep>()>(
      reduce_axis(Op, a.traced_handle(), dtype_of<R>(), axis, Keep, ddof, Where::here(l)));
}

}  // namespace detail

#define KILN_REDUCTION(name, op)                                                                                \
  template <detail::IsArray X>                                                                                  \
  auto name(const X& a, std::source_location l = std::source_location::current()) {                             \
    return detail::reduce_all<detail::Reduction::op>(a, 0, l);                                                  \
  }                                                                                                             \
  template <detail::IsArray X, detail::Axis A>                                                                  \
  auto name(const X& a, A axis, std::source_location l = std::source_location::current()) {                     \
    return detail::reduce_along<detail::Reduction::op, false>(a, static_cast<int>(axis), 0, l);                 \
  }                                                                                                             \
  template <detail::IsArray X, detail::Axis A>                                                                  \
  auto name(const X& a, A axis, KeepDims, std::source_location l = std::source_location::current()) {           \
    return detail::reduce_along<detail::Reduction::op, true>(a, static_cast<int>(axis), 0, l);                  \
  }
KILN_REDUCTION(sum, Sum)
KILN_REDUCTION(prod, Prod)
KILN_REDUCTION(min, Min)
KILN_REDUCTION(max, Max)
KILN_REDUCTION(argmin, ArgMin)
KILN_REDUCTION(argmax, ArgMax)
KILN_REDUCTION(mean, Mean)
// np.any / np.all: whether some / every element is nonzero (NaN counts as nonzero, as x != 0 says); of an
// empty array false / true. np.all is kiln::alltrue (NumPy's older name for it): kiln::all is the `:` of views.
KILN_REDUCTION(any, Any)
KILN_REDUCTION(alltrue, All)
// np.count_nonzero: how many elements are nonzero, as int64 (NaN counts).
KILN_REDUCTION(count_nonzero, CountNonzero)
// np.ptp: max - min in the element type (NaN propagates; integers wrap as NumPy's do); of an empty array a
// ValueError, as min and max.
KILN_REDUCTION(ptp, Ptp)
// np.nansum: the sum with NaNs counted as +0 (all NaN: +0; empty: the zero kiln::sum gives), typed as sum. np.nanmean: the mean of
// the elements that are not NaN, typed as mean (all NaN or empty: NaN, where NumPy also warns).
KILN_REDUCTION(nansum, NanSum)
KILN_REDUCTION(nanmean, NanMean)
#undef KILN_REDUCTION

// var and std are two-pass (the mean first, then the squared deviations from it), for accuracy.
#define KILN_MOMENT(name, op)                                                                                   \
  template <detail::IsArray X>                                                                                  \
  auto name(const X& a, Ddof d = {}, std::source_location l = std::source_location::current()) {                \
    return detail::reduce_all<detail::Reduction::op>(a, d.value, l);                                            \
  }                                                                                                             \
  template <detail::IsArray X, detail::Axis A>                                                                  \
  auto name(const X& a, A axis, Ddof d = {}, std::source_location l = std::source_location::current()) {        \
    return detail::reduce_along<detail::Reduction::op, false>(a, static_cast<int>(axis), d.value, l);           \
  }                                                                                                             \
  template <detail::IsArray X, detail::Axis A>                                                                  \
  auto name(const X& a, A axis, KeepDims, Ddof d = {},                                                          \
            std::source_location l = std::source_location::current()) {                                         \
    return detail::reduce_along<detail::Reduction::op, true>(a, static_cast<int>(axis), d.value, l);            \
  }
KILN_MOMENT(var, Var)
KILN_MOMENT(std, Std)
#undef KILN_MOMENT

/// Inner product of two vectors.
template <Element A, Element B>
Scalar<detail::accum_t<detail::arith_result_t<Scalar<A>, Scalar<B>>>> dot(const Array<A, 1>& a, const Array<B, 1>& b,
                                                         std::source_location l = std::source_location::current()) {
  using R = detail::accum_t<detail::arith_result_t<Scalar<A>, Scalar<B>>>;
  return Scalar<R>(detail::dot(a.traced_handle(), b.traced_handle(), dtype_of<R>(), detail::Where::here(l)));
}
/// Matrix · vector (m, n)·(n) -> (m), vector · matrix (m)·(m, n) -> (n), matrix · matrix (m, k)·(k, n) -> (m, n).
template <Element A, Element B, int RA, int RB>
  requires((RA == 2 && RB == 1) || (RA == 1 && RB == 2) || (RA == 2 && RB == 2))
Array<detail::accum_t<detail::arith_result_t<Scalar<A>, Scalar<B>>>, RA + RB - 2> dot(
    const Array<A, RA>& a, const Array<B, RB>& b, std::source_location l = std::source_location::current()) {
  using R = detail::accum_t<detail::arith_result_t<Scalar<A>, Scalar<B>>>;
  return Array<R, RA + RB - 2>(detail::dot_array(a.traced_handle(), b.traced_handle(), dtype_of<R>(), detail::Where::here(l)));
}

}  // namespace kiln
