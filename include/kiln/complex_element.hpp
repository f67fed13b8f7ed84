// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The complex element types: what kiln::Array and kiln::ArrayRef accept besides kiln/dtype.hpp's Elements.
#pragma once

#include <complex>
#include <type_traits>

#include "kiln/dtype.hpp"

namespace kiln {

/// std::complex<float> and std::complex<double>: complex64 and complex128 (kiln/complex.hpp). They are array
/// elements stored interleaved (re, im) as std::complex stores them, but not a DType: the frontend traces a
/// complex value as its two real parts, so the IR, the passes and every backend see reals only
/// (docs/element_types.md, "Complex numbers").
template <class T>
inline constexpr bool is_complex_element_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T>
concept ComplexElement = is_complex_element_v<std::remove_cv_t<T>>;

/// What a kiln::Array may hold: an Element, or a complex number of float or double parts.
template <class T>
concept ArrayElement = Element<T> || ComplexElement<T>;

}  // namespace kiln
