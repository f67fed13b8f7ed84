// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written C++/OpenMP references for the element-type rows (bench/rows_element_types.cpp), built with
// -O3 -march=native like the other references.
#pragma once

#include <complex>
#include <cstdint>

namespace ref {

/// out[i] = a[i] + b[i] on bytes (wrapping).
void u8_add(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, long long n, int threads);
/// The sum of n bytes, in 64 bits.
std::uint64_t u8_sum(const std::uint8_t* a, long long n, int threads);
/// y[i] = f16(alpha * f32(x[i]) + f32(y[i])) on binary16 bits, with F16C's conversions (round to nearest even).
void f16_axpy(float alpha, const std::uint16_t* x, std::uint16_t* y, long long n, int threads);
/// y[i] = a[i] * b[i] + y[i] on std::complex<float>, as anyone writes it with std::complex.
void c64_mul_add(const std::complex<float>* a, const std::complex<float>* b, std::complex<float>* y, long long n,
                 int threads);

}  // namespace ref
