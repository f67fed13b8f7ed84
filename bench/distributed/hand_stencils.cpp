// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "hand_stencils.hpp"

#include <omp.h>

#include <algorithm>
#include <utility>

namespace hand {

template <int N>
Block<N>::Block(MPI_Comm comm, const Index& global, const std::function<double(const Index&)>& fill) : global_(global) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Dims_create(size, N, dims_.data());
  std::array<int, N> periods{};  // not periodic: MPI_Cart_shift gives MPI_PROC_NULL beyond a global edge
  MPI_Cart_create(comm, N, dims_.data(), periods.data(), /*reorder=*/0, &cart_);
  int rank = 0;
  MPI_Comm_rank(cart_, &rank);
  MPI_Cart_coords(cart_, rank, N, coords_.data());
  std::int64_t total = 1;
  for (int d = 0; d < N; ++d) {
    const std::int64_t base = global[d] / dims_[d], extra = global[d] % dims_[d];
    count_[d] = base + (coords_[d] < extra ? 1 : 0);
    offset_[d] = coords_[d] * base + std::min<std::int64_t>(coords_[d], extra);
    MPI_Cart_shift(cart_, d, 1, &neighbour_[d][0], &neighbour_[d][1]);
    total *= count_[d] + 2;
  }
  for (int d = N - 1; d >= 0; --d) stride_[d] = d == N - 1 ? 1 : stride_[d + 1] * (count_[d + 1] + 2);
  cur_.assign(static_cast<std::size_t>(total), 0.0);
  next_ = cur_;

  // Faces: the owned extent of the other axes, one plane along `d`.
  std::array<int, N> sizes{}, sub{}, start{};
  for (int d = 0; d < N; ++d) sizes[d] = static_cast<int>(count_[d] + 2);
  for (int d = 0; d < N; ++d)
    for (int side = 0; side < 2; ++side) {
      for (int e = 0; e < N; ++e) {
        sub[e] = e == d ? 1 : static_cast<int>(count_[e]);
        start[e] = 1;
      }
      auto make = [&](int plane, MPI_Datatype& type) {
        start[d] = plane;
        MPI_Type_create_subarray(N, sizes.data(), sub.data(), start.data(), MPI_ORDER_C, MPI_DOUBLE, &type);
        MPI_Type_commit(&type);
      };
      make(side == 0 ? 1 : static_cast<int>(count_[d]), send_[d][side]);
      make(side == 0 ? 0 : static_cast<int>(count_[d]) + 1, recv_[d][side]);
    }

  std::int64_t owned = 1;
  for (int d = 0; d < N; ++d) owned *= count_[d];
  for (std::int64_t k = 0; k < owned; ++k) {
    Index s{}, g{};
    std::int64_t rest = k;
    for (int d = N - 1; d >= 0; --d) {
      s[d] = 1 + rest % count_[d];
      g[d] = offset_[d] + s[d] - 1;
      rest /= count_[d];
    }
    cur_[static_cast<std::size_t>(at(s))] = fill(g);
  }
}

template <int N>
Block<N>::~Block() {
  for (auto& axis : send_)
    for (auto& t : axis) MPI_Type_free(&t);
  for (auto& axis : recv_)
    for (auto& t : axis) MPI_Type_free(&t);
  MPI_Comm_free(&cart_);
}

template <int N>
std::int64_t Block<N>::at(const Index& s) const {
  std::int64_t p = 0;
  for (int d = 0; d < N; ++d) p += s[d] * stride_[d];
  return p;
}

template <int N>
double Block<N>::local(const Index& l) const {
  Index s = l;
  for (auto& x : s) ++x;
  return cur_[static_cast<std::size_t>(at(s))];
}

template <int N>
void Block<N>::post_faces() {
  requests_.clear();
  for (int d = 0; d < N; ++d)
    for (int side = 0; side < 2; ++side) {
      // A face sent toward side `side` arrives at the neighbour's opposite ghost plane: the tag says which.
      requests_.emplace_back();
      MPI_Irecv(cur_.data(), 1, recv_[d][side], neighbour_[d][side], 2 * d + (1 - side), cart_, &requests_.back());
      requests_.emplace_back();
      MPI_Isend(cur_.data(), 1, send_[d][side], neighbour_[d][side], 2 * d + side, cart_, &requests_.back());
    }
}

template <int N>
void Block<N>::fill_global_edges() {
  for (int d = 0; d < N; ++d)
    for (int side = 0; side < 2; ++side) {
      if (neighbour_[d][side] != MPI_PROC_NULL) continue;
      const std::int64_t from = side == 0 ? 1 : count_[d], to = side == 0 ? 0 : count_[d] + 1;
      // Every storage index of the face (owned extent of the other axes), flattened.
      std::int64_t n = 1;
      for (int e = 0; e < N; ++e)
        if (e != d) n *= count_[e];
#pragma omp parallel for schedule(static)
      for (std::int64_t k = 0; k < n; ++k) {
        Index s{};
        std::int64_t rest = k;
        for (int e = N - 1; e >= 0; --e) {
          if (e == d) continue;
          s[e] = 1 + rest % count_[e];
          rest /= count_[e];
        }
        s[d] = from;
        const double v = cur_[static_cast<std::size_t>(at(s))];
        s[d] = to;
        cur_[static_cast<std::size_t>(at(s))] = v;
      }
    }
}

template <>
void Block<2>::compute(const Index& lo, const Index& hi) {
  const double* __restrict c = cur_.data();  // the two buffers never overlap
  double* __restrict o = next_.data();
  const std::int64_t s0 = stride_[0];
  // Rows in parallel; a slab of fewer rows than threads (the rim's top and bottom rows) splits its rows.
  if (hi[0] - lo[0] >= omp_get_max_threads()) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = lo[0]; i < hi[0]; ++i)
      for (std::int64_t p = (i + 1) * s0 + lo[1] + 1; p < (i + 1) * s0 + hi[1] + 1; ++p)
        o[p] = 0.25 * (c[p + 1] + c[p - 1] + c[p - s0] + c[p + s0]);
  } else {
    for (std::int64_t i = lo[0]; i < hi[0]; ++i)
#pragma omp parallel for schedule(static)
      for (std::int64_t p = (i + 1) * s0 + lo[1] + 1; p < (i + 1) * s0 + hi[1] + 1; ++p)
        o[p] = 0.25 * (c[p + 1] + c[p - 1] + c[p - s0] + c[p + s0]);
  }
}

template <>
void Block<3>::compute(const Index& lo, const Index& hi) {
  const double* __restrict u = cur_.data();  // the two buffers never overlap
  double* __restrict o = next_.data();
  const std::int64_t s0 = stride_[0], s1 = stride_[1];
#pragma omp parallel for collapse(2) schedule(static)
  for (std::int64_t i = lo[0]; i < hi[0]; ++i)
    for (std::int64_t j = lo[1]; j < hi[1]; ++j) {
      const std::int64_t row = (i + 1) * s0 + (j + 1) * s1 + 1;
      for (std::int64_t k = lo[2]; k < hi[2]; ++k) {
        const std::int64_t p = row + k;
        o[p] = u[p] + 0.125 * (u[p - s0] + u[p + s0] + u[p - s1] + u[p + s1] + u[p - 1] + u[p + 1] - 6.0 * u[p]);
      }
    }
}

template <int N>
void Block<N>::steps(int steps, bool overlap) {
  const Index zero{};
  for (int t = 0; t < steps; ++t) {
    post_faces();
    fill_global_edges();  // reads owned planes only: nothing a message writes
    if (overlap) {
      // The interior reads nothing outside the block; the rim (a slab below and above along each axis, the
      // earlier axes' interior range across it) waits for the faces.
      Index lo, hi;
      for (int d = 0; d < N; ++d) {
        lo[d] = 1;
        hi[d] = std::max<std::int64_t>(1, count_[d] - 1);
      }
      compute(lo, hi);
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      for (int d = 0; d < N; ++d) {
        Index slab_lo = zero, slab_hi = count_;
        for (int e = 0; e < d; ++e) {
          slab_lo[e] = lo[e];
          slab_hi[e] = hi[e];
        }
        slab_hi[d] = std::min<std::int64_t>(1, count_[d]);
        compute(slab_lo, slab_hi);
        slab_lo[d] = std::max<std::int64_t>(1, count_[d] - 1);
        slab_hi[d] = count_[d];
        compute(slab_lo, slab_hi);
      }
    } else {
      MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      compute(zero, count_);
    }
    std::swap(cur_, next_);
  }
}

template class Block<2>;
template class Block<3>;

}  // namespace hand
