// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln_rt_combine_sums: the combine of an array sum's private copies, precompiled (runtime/parallel.hpp).
#include <algorithm>
#include <cstdint>

#include "kiln/abi.hpp"
#include "runtime/parallel.hpp"

namespace {

struct Sums {
  char* data;
  const char* copies;
  std::int64_t copy_bytes, pieces;
  const std::int64_t* shape;
  const std::int64_t* stride;
  std::int32_t rank;
  std::int64_t dense[kiln::kMaxRank];  ///< the copies' element strides (row-major)
};

/// One row of the innermost axis: out[e * stride] += in[e] for e < n. Unsigned integers for the integer
/// sums: they wrap, as the kernel's own additions do.
template <class T>
void add_row(T* out, std::int64_t stride, const T* in, std::int64_t n) {
  if (stride == 1) {
    for (std::int64_t e = 0; e < n; ++e) out[e] = out[e] + in[e];
  } else {
    for (std::int64_t e = 0; e < n; ++e) out[e * stride] = out[e * stride] + in[e];
  }
}

/// Rows [lo, hi) of the first axis: for a 1-d array its elements, the piece loop outside the element loop,
/// so that each pass streams through one row of one copy (the generated combine's order).
template <class T>
void combine_rows(const Sums& s, std::int64_t lo, std::int64_t hi) {
  T* data = reinterpret_cast<T*>(s.data);
  auto copy = [&](std::int64_t p) { return reinterpret_cast<const T*>(s.copies + p * s.copy_bytes); };
  const int last = s.rank - 1;
  if (last == 0) {
    for (std::int64_t p = 0; p < s.pieces; ++p) add_row(data + lo * s.stride[0], s.stride[0], copy(p) + lo, hi - lo);
    return;
  }
  for (int k = 1; k < last; ++k)
    if (s.shape[k] <= 0) return;
  // The index of every axis but the last, as an odometer; axis 0 from lo to hi.
  std::int64_t idx[kiln::kMaxRank] = {};
  idx[0] = lo;
  while (idx[0] < hi) {
    std::int64_t a_off = 0, c_off = 0;
    for (int k = 0; k < last; ++k) {
      a_off += idx[k] * s.stride[k];
      c_off += idx[k] * s.dense[k];
    }
    for (std::int64_t p = 0; p < s.pieces; ++p) add_row(data + a_off, s.stride[last], copy(p) + c_off, s.shape[last]);
    for (int k = last - 1; k >= 0; --k) {
      if (++idx[k] < (k == 0 ? hi : s.shape[k]) || k == 0) break;
      idx[k] = 0;
    }
  }
}

template <class T>
void chunk(void* ctx, std::int64_t lo, std::int64_t hi, void*) {
  combine_rows<T>(*static_cast<const Sums*>(ctx), lo, hi);
}

}  // namespace

void kiln_rt_combine_sums(void* data, const void* copies, std::int64_t copy_bytes, std::int64_t pieces,
                          const std::int64_t* shape, const std::int64_t* stride, std::int32_t rank,
                          std::int32_t type) noexcept {
  Sums s{static_cast<char*>(data), static_cast<const char*>(copies), copy_bytes, pieces, shape, stride, rank, {}};
  std::int64_t dense = 1;
  for (int k = rank - 1; k >= 0; --k) {
    s.dense[k] = dense;
    dense *= shape[k];
  }
  kiln_chunk_fn fn = nullptr;
  std::int64_t size = 8;
  switch (type) {
    case kiln_sum_f64: fn = chunk<double>; break;
    case kiln_sum_f32: fn = chunk<float>, size = 4; break;
    case kiln_sum_i64: fn = chunk<std::uint64_t>; break;
    case kiln_sum_i32: fn = chunk<std::uint32_t>, size = 4; break;
    default: return;
  }
  // A page's worth of rows per thread, as the generated combine takes (emit_array_reductions.cpp): the copies
  // sit in the caches of the threads that filled them, so moving their lines is most of the work.
  constexpr std::int64_t kPageBytes = 4096;
  std::int64_t row_bytes = size;
  for (int k = 1; k < rank; ++k) row_bytes *= std::min(std::max<std::int64_t>(shape[k], 1), kPageBytes);
  kiln_rt_parfor(fn, &s, 0, shape[0], std::max<std::int64_t>(kPageBytes / row_bytes, 1));
}
