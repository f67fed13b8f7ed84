// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hand-written references of the random-number rows (compiled -O3 -march=native -fopenmp).
#pragma once

#include <cstdint>

namespace ref {

/// out[i] = kiln::random::uniform<float>(key, i), written out by hand: Philox-4x32-10, high 24 bits of word 0.
void random_uniform_f32(float* out, long n, std::int64_t key, int threads);
/// out[i] = kiln::random::normal<double>(key, i): Box-Muller with the same ln and cos polynomials.
void random_normal_f64(double* out, long n, std::int64_t key, int threads);
/// out[f] = kiln::random::packed::uniform<float>(key, f): one Philox block (counter word 2 = 1) per 4 elements.
void random_packed_uniform_f32(float* out, long n, std::int64_t key, int threads);
/// out[f] = kiln::random::packed::normal<double>(key, f): one block, Box-Muller's cosine and sine per 2 elements.
void random_packed_normal_f64(double* out, long n, std::int64_t key, int threads);

}  // namespace ref
