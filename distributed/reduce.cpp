// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reductions of distributed arrays in an order fixed by the global array alone (kiln/distributed.hpp,
// kSegment): along the last axis, segments of kSegment elements aligned at multiples of kSegment, each
// folded from the identity in index order; a segment that crosses a block boundary is continued on the
// next rank along the last axis from the accumulator the previous one sends (so a split segment is folded
// exactly as a whole one); the segments' partials are then gathered to every rank and folded in row-major
// order. Nothing in that order depends on the number of ranks, the grid or the threads (rows of a block
// run in parallel, each row's pieces in order), so neither does the result. Not MPI_Allreduce on floats,
// whose combination order is the library's. The parallel regions take kiln's thread count
// (KILN_NUM_THREADS), the team kiln's kernels fork: libgomp ends and re-creates pool threads whenever a
// region asks for fewer threads than the one before (distributed/run.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <fmt/format.h>

#include "distributed/block.hpp"
#include "ir/semantics.hpp"
#include "kiln/runtime.hpp"

namespace kiln::dist::detail {
namespace {

template <class T>
struct Fold {
  ReduceOp op;
  T identity() const {
    switch (op) {
      case ReduceOp::sum:
        if constexpr (std::is_floating_point_v<T>) return T(-0.0);  // kiln's: x + -0.0 is x for every x
        else return T(0);
      case ReduceOp::prod: return T(1);
      case ReduceOp::min:
        if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::max();
      case ReduceOp::max:
        if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
        else return std::numeric_limits<T>::lowest();
    }
    return T(0);
  }
  T operator()(T acc, T x) const {
    switch (op) {
      case ReduceOp::sum: return ir::sem::binary<T>(BinaryOp::Add, acc, x);  // integers wrap, as kiln's do
      case ReduceOp::prod: return ir::sem::binary<T>(BinaryOp::Mul, acc, x);
      case ReduceOp::min:
      case ReduceOp::max:
        // kiln's own min/max (NaN gives kiln's NaN, -0 orders before +0): so the fold is commutative
        // bitwise, and equals the single-process kernel's whichever rank holds which element.
        if constexpr (std::is_floating_point_v<T>)
          return op == ReduceOp::min ? ir::sem::float_min(acc, x) : ir::sem::float_max(acc, x);
        else
          return op == ReduceOp::min ? (x < acc ? x : acc) : (x > acc ? x : acc);
    }
    return acc;
  }
};

/// Every segment's partial along `axis`, in row-major order of (position of the other axes, segment), on
/// every rank. A "row" is a line along `axis`: one per position of the other axes.
template <class T>
std::vector<T> segment_partials(const Block& b, const Fold<T>& fold, int axis, std::int64_t& per_row) {
  const int R = b.rank;
  const std::int64_t S = kSegment;
  const std::int64_t M = b.global[axis], m = b.count[axis], c0 = b.start[axis], step = b.strides[axis];
  std::int64_t rows = 1, global_rows = 1;
  for (int d = 0; d < R; ++d) {
    if (d == axis) continue;
    rows *= b.count[d];
    global_rows *= b.global[d];
  }
  per_row = (M + S - 1) / S;
  // A block of no elements along the axis (an axis of extent 0) has no piece: no segment, no carry.
  const bool has = m > 0;
  const std::int64_t j0 = c0 / S, j1 = has ? (c0 + m - 1) / S : j0 - 1;
  const bool continues = has && c0 % S != 0;           // the first piece began on the rank to the left
  const bool carries = has && c0 + m < M && (c0 + m) % S != 0;  // the last piece goes on to the right
  const bool through = continues && carries && j0 == j1;  // one piece, begun left, going on right
  const bool split = axis < b.grid.ndims();
  int left = MPI_PROC_NULL, right = MPI_PROC_NULL;
  if (split) {
    std::vector<int> c = b.grid.coords();
    const auto k = static_cast<std::size_t>(axis);
    if (continues) {
      --c[k];
      left = b.grid.rank_at(c);
      ++c[k];
    }
    if (carries) {
      ++c[k];
      right = b.grid.rank_at(c);
    }
  }

  // Each local row's first element and its global row number (row-major over the other axes).
  std::vector<const T*> row_at(static_cast<std::size_t>(rows));
  std::vector<std::int64_t> row_global(static_cast<std::size_t>(rows));
  {
    std::int64_t idx[kMaxRank] = {};
    for (std::int64_t r = 0; r < rows; ++r) {
      row_at[static_cast<std::size_t>(r)] = reinterpret_cast<const T*>(b.at(idx));
      std::int64_t g = 0;
      for (int d = 0; d < R; ++d)
        if (d != axis) g = g * b.global[d] + b.start[d] + idx[d];
      row_global[static_cast<std::size_t>(r)] = g;
      for (int d = R - 1; d >= 0; --d) {
        if (d == axis) continue;
        if (++idx[d] < b.count[d]) break;
        idx[d] = 0;
      }
    }
  }
  auto fold_cols = [&](std::int64_t r, T acc, std::int64_t lo, std::int64_t hi) {  // global indices [lo, hi) along axis
    const T* p = row_at[static_cast<std::size_t>(r)];
    for (std::int64_t col = lo; col < hi; ++col) acc = fold(acc, p[(col - c0) * step]);
    return acc;
  };
  const MPI_Datatype type = mpi_type(b.dtype);
  MPI_Comm comm = b.grid.comm();
  constexpr int kCarryTag = 0x6b69;

  std::vector<T> carry_out(static_cast<std::size_t>(rows));
  MPI_Request sent = MPI_REQUEST_NULL;
  if (carries && !through) {  // the last piece starts here: its accumulator does not wait for the left
#pragma omp parallel for schedule(static) num_threads(kiln::num_threads())
    for (std::int64_t r = 0; r < rows; ++r) carry_out[static_cast<std::size_t>(r)] = fold_cols(r, fold.identity(), j1 * S, c0 + m);
    MPI_Isend(carry_out.data(), static_cast<int>(rows), type, right, kCarryTag, comm, &sent);
  }
  // Whole pieces (begun and ended in this block), then the piece continued from the left.
  const std::int64_t first_whole = continues ? j0 + 1 : j0, last_whole = carries ? j1 - 1 : j1;
  const std::int64_t slots = std::max<std::int64_t>(last_whole - first_whole + 1, 0) + (continues && !through ? 1 : 0);
  std::vector<T> part(static_cast<std::size_t>(rows * slots));
  std::vector<std::int64_t> index(static_cast<std::size_t>(rows * slots));
#pragma omp parallel for schedule(static) num_threads(kiln::num_threads())
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = first_whole; j <= last_whole; ++j) {
      const auto at = static_cast<std::size_t>(r * slots + (j - first_whole));
      part[at] = fold_cols(r, fold.identity(), std::max(j * S, c0), std::min((j + 1) * S, M));
      index[at] = row_global[static_cast<std::size_t>(r)] * per_row + j;
    }
  if (continues) {
    std::vector<T> carry_in(static_cast<std::size_t>(rows));
    MPI_Recv(carry_in.data(), static_cast<int>(rows), type, left, kCarryTag, comm, MPI_STATUS_IGNORE);
    const std::int64_t hi = std::min({(j0 + 1) * S, M, c0 + m});
#pragma omp parallel for schedule(static) num_threads(kiln::num_threads())
    for (std::int64_t r = 0; r < rows; ++r) {
      const T acc = fold_cols(r, carry_in[static_cast<std::size_t>(r)], c0, hi);
      if (through) {
        carry_out[static_cast<std::size_t>(r)] = acc;
      } else {
        const auto at = static_cast<std::size_t>(r * slots + slots - 1);
        part[at] = acc;
        index[at] = row_global[static_cast<std::size_t>(r)] * per_row + j0;
      }
    }
    if (through) MPI_Send(carry_out.data(), static_cast<int>(rows), type, right, kCarryTag, comm);
  }
  MPI_Wait(&sent, MPI_STATUS_IGNORE);

  // Every segment's partial on every rank, folded in row-major order.
  const int size = b.grid.size();
  int count = static_cast<int>(part.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<T> all_part(static_cast<std::size_t>(total));
  std::vector<std::int64_t> all_index(static_cast<std::size_t>(total));
  MPI_Allgatherv(part.data(), count, type, all_part.data(), counts.data(), displs.data(), type, comm);
  MPI_Allgatherv(index.data(), count, MPI_INT64_T, all_index.data(), counts.data(), displs.data(), MPI_INT64_T, comm);
  if (static_cast<std::int64_t>(total) != global_rows * per_row)
    throw Error(fmt::format("kiln::dist reduction: gathered {} segment partials, expected {} (internal error)", total,
                            global_rows * per_row));
  std::vector<T> ordered(static_cast<std::size_t>(total));
  for (int k = 0; k < total; ++k) ordered[static_cast<std::size_t>(all_index[static_cast<std::size_t>(k)])] = all_part[static_cast<std::size_t>(k)];
  return ordered;
}

/// The whole array: the partials of the last axis folded in row-major order.
template <class T>
T reduce_typed(const Block& b, ReduceOp op) {
  const Fold<T> fold{op};
  std::int64_t per_row = 0;
  T acc = fold.identity();
  for (const T& p : segment_partials(b, fold, b.rank - 1, per_row)) acc = fold(acc, p);
  return acc;
}

/// Along one axis: each line's partials folded in order, into the row-major array of the other axes.
template <class T>
void reduce_axis_typed(const Block& b, ReduceOp op, int axis, T* out) {
  const Fold<T> fold{op};
  std::int64_t per_row = 0;
  const std::vector<T> parts = segment_partials(b, fold, axis, per_row);
  // The lines from the global shape: an axis of extent 0 has no partials but a line (the identity) each.
  std::int64_t lines = 1;
  for (int d = 0; d < b.rank; ++d)
    if (d != axis) lines *= b.global[d];
  for (std::int64_t l = 0; l < lines; ++l) {
    T acc = fold.identity();
    for (std::int64_t j = 0; j < per_row; ++j) acc = fold(acc, parts[static_cast<std::size_t>(l * per_row + j)]);
    out[l] = acc;
  }
}

template <class T>
void count_typed(const Block& b, std::int64_t bins, double lo, double hi, std::int64_t* out) {
  const int R = b.rank;
  const std::int64_t m = b.count[R - 1];
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < R; ++d) rows *= b.count[d];
  const double scale = static_cast<double>(bins) / (hi - lo);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(bins), 0);
#pragma omp parallel num_threads(kiln::num_threads())
  {
    // Per-thread counts, added at the end: integer sums, exact in any order.
    std::vector<std::int64_t> mine(static_cast<std::size_t>(bins), 0);
#pragma omp for schedule(static)
    for (std::int64_t r = 0; r < rows; ++r) {
      std::int64_t idx[kMaxRank] = {}, rest = r;
      for (int d = R - 2; d >= 0; --d) {
        idx[d] = rest % b.count[d];
        rest /= b.count[d];
      }
      const T* p = reinterpret_cast<const T*>(b.at(idx));
      for (std::int64_t c = 0; c < m; ++c) {
        const double x = static_cast<double>(p[c]);
        if (!(x >= lo && x <= hi)) continue;  // NaN too
        const std::int64_t k = std::min(static_cast<std::int64_t>((x - lo) * scale), bins - 1);
        ++mine[static_cast<std::size_t>(k)];
      }
    }
#pragma omp critical
    for (std::int64_t k = 0; k < bins; ++k) counts[static_cast<std::size_t>(k)] += mine[static_cast<std::size_t>(k)];
  }
  MPI_Allreduce(counts.data(), out, static_cast<int>(bins), MPI_INT64_T, MPI_SUM, b.grid.comm());
}

}  // namespace

void histogram(const Block& b, std::int64_t bins, double lo, double hi, std::int64_t* out) {
  b.mirror.to_host(b, false);
  switch (b.dtype) {
    case DType::F64: return count_typed<double>(b, bins, lo, hi, out);
    case DType::F32: return count_typed<float>(b, bins, lo, hi, out);
    case DType::I32: return count_typed<std::int32_t>(b, bins, lo, hi, out);
    case DType::I64: return count_typed<std::int64_t>(b, bins, lo, hi, out);
    case DType::U8: return count_typed<std::uint8_t>(b, bins, lo, hi, out);
    case DType::U16: return count_typed<std::uint16_t>(b, bins, lo, hi, out);
    case DType::U32: return count_typed<std::uint32_t>(b, bins, lo, hi, out);
    case DType::U64: return count_typed<std::uint64_t>(b, bins, lo, hi, out);
    case DType::I8: return count_typed<std::int8_t>(b, bins, lo, hi, out);
    case DType::I16: return count_typed<std::int16_t>(b, bins, lo, hi, out);
    case DType::Bool: case DType::F16: case DType::BF16: break;
  }
  throw TypeError(fmt::format("kiln::dist::histogram takes integer, f32 or f64 arrays, not {}: convert it first",
                              name_of(b.dtype)));
}

void reduce_axis(const Block& b, ReduceOp op, int axis, void* out) {
  b.mirror.to_host(b, false);
  switch (b.dtype) {
    case DType::F64: return reduce_axis_typed<double>(b, op, axis, static_cast<double*>(out));
    case DType::F32: return reduce_axis_typed<float>(b, op, axis, static_cast<float*>(out));
    case DType::I32: return reduce_axis_typed<std::int32_t>(b, op, axis, static_cast<std::int32_t*>(out));
    case DType::I64: return reduce_axis_typed<std::int64_t>(b, op, axis, static_cast<std::int64_t*>(out));
    case DType::U8: return reduce_axis_typed<std::uint8_t>(b, op, axis, static_cast<std::uint8_t*>(out));
    case DType::U16: return reduce_axis_typed<std::uint16_t>(b, op, axis, static_cast<std::uint16_t*>(out));
    case DType::U32: return reduce_axis_typed<std::uint32_t>(b, op, axis, static_cast<std::uint32_t*>(out));
    case DType::U64: return reduce_axis_typed<std::uint64_t>(b, op, axis, static_cast<std::uint64_t*>(out));
    case DType::I8: return reduce_axis_typed<std::int8_t>(b, op, axis, static_cast<std::int8_t*>(out));
    case DType::I16: return reduce_axis_typed<std::int16_t>(b, op, axis, static_cast<std::int16_t*>(out));
    case DType::Bool: case DType::F16: case DType::BF16: break;
  }
  throw TypeError(fmt::format("kiln::dist reductions take integer, f32 or f64 arrays, not {}: convert it first",
                              name_of(b.dtype)));
}

void reduce(const Block& b, ReduceOp op, void* out) {
  b.mirror.to_host(b, false);
  switch (b.dtype) {
    case DType::F64: *static_cast<double*>(out) = reduce_typed<double>(b, op); return;
    case DType::F32: *static_cast<float*>(out) = reduce_typed<float>(b, op); return;
    case DType::I32: *static_cast<std::int32_t*>(out) = reduce_typed<std::int32_t>(b, op); return;
    case DType::I64: *static_cast<std::int64_t*>(out) = reduce_typed<std::int64_t>(b, op); return;
    case DType::U8: *static_cast<std::uint8_t*>(out) = reduce_typed<std::uint8_t>(b, op); return;
    case DType::U16: *static_cast<std::uint16_t*>(out) = reduce_typed<std::uint16_t>(b, op); return;
    case DType::U32: *static_cast<std::uint32_t*>(out) = reduce_typed<std::uint32_t>(b, op); return;
    case DType::U64: *static_cast<std::uint64_t*>(out) = reduce_typed<std::uint64_t>(b, op); return;
    case DType::I8: *static_cast<std::int8_t*>(out) = reduce_typed<std::int8_t>(b, op); return;
    case DType::I16: *static_cast<std::int16_t*>(out) = reduce_typed<std::int16_t>(b, op); return;
    case DType::Bool: case DType::F16: case DType::BF16: break;
  }
  throw TypeError(fmt::format("kiln::dist reductions take integer, f32 or f64 arrays, not {}: convert it first",
                              name_of(b.dtype)));
}

}  // namespace kiln::dist::detail
