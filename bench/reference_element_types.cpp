// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "reference_element_types.hpp"

#include <immintrin.h>

namespace ref {

void u8_add(const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out, long long n, int threads) {
#pragma omp parallel for simd num_threads(threads) schedule(static)
  for (long long i = 0; i < n; ++i) out[i] = static_cast<std::uint8_t>(a[i] + b[i]);
}

std::uint64_t u8_sum(const std::uint8_t* a, long long n, int threads) {
  std::uint64_t s = 0;
#pragma omp parallel for simd num_threads(threads) schedule(static) reduction(+ : s)
  for (long long i = 0; i < n; ++i) s += a[i];
  return s;
}

// What a careful programmer writes on x86: F16C's vcvtph2ps / vcvtps2ph, eight lanes at a time.
void f16_axpy(float alpha, const std::uint16_t* x, std::uint16_t* y, long long n, int threads) {
  const long long blocks = n / 8;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long b = 0; b < blocks; ++b) {
    const long long i = b * 8;
    const __m256 xv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    const __m256 yv = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
    const __m256 r = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(alpha), xv), yv);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT));
  }
  for (long long i = blocks * 8; i < n; ++i) {
    const float r = alpha * _cvtsh_ss(x[i]) + _cvtsh_ss(y[i]);
    y[i] = _cvtss_sh(r, _MM_FROUND_TO_NEAREST_INT);
  }
}

// GCC's std::complex product is the textbook one, with a call to __mulsc3 only when both parts come out NaN
// (Annex G's recovery of infinities): for finite operands the same bits as kiln's definition.
void c64_mul_add(const std::complex<float>* a, const std::complex<float>* b, std::complex<float>* y, long long n,
                 int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long i = 0; i < n; ++i) y[i] = a[i] * b[i] + y[i];
}

}  // namespace ref
