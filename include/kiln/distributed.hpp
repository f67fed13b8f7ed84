// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributed kiln: n-d arrays block-partitioned over a Cartesian grid of MPI ranks, the same kiln
// kernels run SPMD on each rank's block (stencils reading ghost layers that kiln exchanges), and
// reductions whose result is bitwise the same for any number of ranks and threads. docs/distributed.md.
//
//   MPI_Init(&argc, &argv);
//   kiln::dist::Grid grid(2);                                    // 2-d grid of all ranks (MPI_Dims_create)
//   kiln::dist::Array<double, 2> u(grid, {n, m}), v(grid, {n, m});
//   u.scatter(host.data(), 0);                                   // from rank 0's row-major array
//   auto jacobi = kiln::stencil("jacobi", [](kiln::Window<double, 2> a) { ... }, kiln::border(kiln::Border::wrap));
//   for (int t = 0; t < steps; ++t) { kiln::dist::run(jacobi, v, u); u.swap(v); }   // one call per step
//   double total = kiln::dist::sum(u);                           // the same bits on every rank, for any -np
//   kiln::NDArray<double> all = u.gather(0);                     // rank 0's copy of the global array
//
// This header needs MPI (<mpi.h>) and the kiln_distributed library; kiln/kiln.hpp does not include it.
#pragma once

// The C API only: Open MPI's and MPICH's deprecated C++ bindings would need a library kiln does not link.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kiln/kiln.hpp"

namespace kiln::dist {

/// A distributed run went wrong in a way that involves several ranks: kernels traced differently on
/// different ranks, arrays of other shapes or grids, blocks too small for a stencil's reach. Every rank
/// that took part throws it (the ranks see the same gathered facts), so no rank waits forever.
class DistributedError : public Error {
 public:
  using Error::Error;
};

class Grid;

namespace detail {

struct GridState;
class Block;

/// What one kernel call through kiln::dist::run is given: its kernel, and per argument the value and,
/// for distributed arrays, their block (else null).
struct Call {
  std::shared_ptr<kiln::detail::KernelCore> core;
  int options_id = 0;
  std::vector<kiln::detail::ArgValue> args;
  std::vector<Block*> blocks;
  bool overlap = true;
  bool compute = true;  ///< false: exchange the halos only (kiln::dist::exchange)
  Target target = Target::cpu;  ///< cuda: the blocks' device copies on this rank's GPU (cuda::current_device)
};
/// Exchanges the halos the kernel's stencils need, then runs it on every rank's block (distributed/run.cpp).
void run(Call& call);

std::shared_ptr<Block> make_block(const Grid& grid, DType dtype, int rank, const std::int64_t* global);
ArrayDesc owned_desc(const Block& b);
/// The owned block's view of the host storage, without bringing a device copy down (kiln::dist::run
/// replaces it by the view of the copy the call's target uses).
ArrayDesc block_view(const Block& b);
/// DeviceMirror::whole_copies of the block (tests: CUDA time loops keep their arrays on the GPU).
std::int64_t whole_block_copies(const Block& b);
const std::int64_t* block_start(const Block& b);
const std::int64_t* block_count(const Block& b);
const std::int64_t* global_shape(const Block& b);
const Grid& block_grid(const Block& b);
void scatter(Block& b, const void* global, int root);
void gather(const Block& b, void* global, int root);
/// Exchanges storage and shape with another block of the same grid, element type and global shape.
void swap_blocks(Block& a, Block& b);

enum class ReduceOp : std::uint8_t { sum, prod, min, max };
/// The reduction of the block's array over every rank, into `out` (an element of the block's type).
void reduce(const Block& b, ReduceOp op, void* out);
/// The reduction along `axis`, into `out`: the row-major array of the other axes' global extents.
void reduce_axis(const Block& b, ReduceOp op, int axis, void* out);

/// Counts of the block's elements per bin (see kiln::dist::histogram), summed over every rank into `out`.
void histogram(const Block& b, std::int64_t bins, double lo, double hi, std::int64_t* out);

/// The options a kernel runs with on distributed arrays: its own, with halo reads. The interpreter target
/// is a DistributedError naming the kernel (it runs kernels on the cpu and cuda targets).
Options halo_options(Options o, const std::string& kernel);

}  // namespace detail

/// One GPU per rank: selects for the calling thread (kiln::cuda::set_device) the GPU numbered by this rank's
/// index among the ranks of `comm` on its node (MPI_Comm_split_type, shared memory), modulo the node's GPU
/// count, and returns that ordinal. Kernels run with kiln::Target::cuda then compute each rank's blocks on
/// it. Collective over `comm`. A DeviceError where the node has no GPU.
int select_gpu(MPI_Comm comm = MPI_COMM_WORLD);

/// A Cartesian grid of ranks (MPI_Dims_create, MPI_Cart_create): `ndims` (1..4) axes of ranks. Arrays
/// of rank R >= ndims are split along their first `ndims` axes, the rest kept whole. The communicator is
/// periodic along every axis; a `wrap` stencil uses the wrap-around neighbours, other borders do not.
class Grid {
 public:
  /// `dims`: ranks per axis (0 = let MPI choose, as MPI_Dims_create); empty: all chosen. Collective.
  explicit Grid(int ndims, MPI_Comm comm = MPI_COMM_WORLD, std::vector<int> dims = {});

  int ndims() const;
  int size() const;   ///< the number of ranks
  int rank() const;   ///< this rank in comm()
  const std::vector<int>& dims() const;
  const std::vector<int>& coords() const;  ///< this rank's position in the grid
  MPI_Comm comm() const;  ///< the Cartesian communicator
  /// The rank at `coords` (each taken modulo its axis's ranks).
  int rank_at(const std::vector<int>& coords) const;
  /// "2 x 3 ranks" and the like, for messages.
  std::string describe() const;

  const std::shared_ptr<detail::GridState>& state() const { return s_; }

 private:
  std::shared_ptr<detail::GridState> s_;
};

/// Block partition of one axis: `n` elements over `p` ranks, the first n % p blocks one element longer.
struct BlockRange {
  std::int64_t start = 0, count = 0;
};
BlockRange block_of(std::int64_t n, int p, int c);

/// An n-d array of T distributed over a Grid: each rank holds its block (owned elements) inside ghost
/// layers that grow to what the stencils run on it read. Copies share the block (like NDArray).
template <Element T, int N>
class Array {
  static_assert(N >= 1 && N <= kMaxRank, "a kiln::dist::Array has rank 1..4");

 public:
  /// A zero-filled array of `shape` over `grid`. Collective only in that every rank must make it.
  Array(const Grid& grid, const std::array<std::int64_t, N>& shape)
      : b_(detail::make_block(grid, dtype_of<T>(), N, shape.data())) {}

  const Grid& grid() const { return detail::block_grid(*b_); }
  /// The global extents.
  std::array<std::int64_t, N> shape() const { return take(detail::global_shape(*b_)); }
  /// This rank's block: its first global index and its extents.
  std::array<std::int64_t, N> offset() const { return take(detail::block_start(*b_)); }
  std::array<std::int64_t, N> local_shape() const { return take(detail::block_count(*b_)); }
  std::int64_t local_size() const {
    std::int64_t s = 1;
    for (int d = 0; d < N; ++d) s *= detail::block_count(*b_)[d];
    return s;
  }

  /// Whether this rank owns the element at global index `g`, and its local index (global - offset()).
  bool owns(const std::array<std::int64_t, N>& g) const {
    for (int d = 0; d < N; ++d)
      if (g[d] < detail::block_start(*b_)[d] || g[d] >= detail::block_start(*b_)[d] + detail::block_count(*b_)[d]) return false;
    return true;
  }
  std::array<std::int64_t, N> to_local(const std::array<std::int64_t, N>& g) const {
    std::array<std::int64_t, N> l;
    for (int d = 0; d < N; ++d) l[d] = g[d] - detail::block_start(*b_)[d];
    return l;
  }
  std::array<std::int64_t, N> to_global(const std::array<std::int64_t, N>& l) const {
    std::array<std::int64_t, N> g;
    for (int d = 0; d < N; ++d) g[d] = l[d] + detail::block_start(*b_)[d];
    return g;
  }

  /// The owned element at local index `l` (0 <= l[d] < local_shape()[d]). References and views into the
  /// block (local(), local_desc()) hold until the next kiln::dist call or swap on the array: a call may
  /// move the block (wider ghost layers) or, on the CUDA target, make the GPU's copy the current one.
  T& local(const std::array<std::int64_t, N>& l) {
    const ArrayDesc d = detail::owned_desc(*b_);
    std::int64_t off = 0;
    for (int k = 0; k < N; ++k) off += l[k] * d.strides[k];
    return static_cast<T*>(d.data)[off];
  }
  const T& local(const std::array<std::int64_t, N>& l) const { return const_cast<Array*>(this)->local(l); }
  /// The owned block as a view (strides of the ghosted storage): pass it to any kiln kernel.
  ArrayDesc local_desc() const { return detail::owned_desc(*b_); }

  /// Sets every owned element to f(global index).
  template <class F>
  void fill(F&& f) {
    const std::array<std::int64_t, N> n = local_shape();
    std::array<std::int64_t, N> l{};
    const std::int64_t total = local_size();
    for (std::int64_t k = 0; k < total; ++k) {
      local(l) = static_cast<T>(f(to_global(l)));
      for (int d = N - 1; d >= 0 && ++l[d] == n[d]; --d) l[d] = 0;
    }
  }

  /// Every rank's block from `root`'s row-major array of the global shape (ignored on other ranks). Collective.
  void scatter(const T* global, int root = 0) { detail::scatter(*b_, global, root); }
  /// The global array on `root` (an empty NDArray elsewhere). Collective.
  NDArray<T> gather(int root = 0) const {
    const std::array<std::int64_t, N> s = shape();
    NDArray<T> out = grid().rank() == root ? NDArray<T>(std::vector<std::int64_t>(s.begin(), s.end())) : NDArray<T>();
    detail::gather(*b_, grid().rank() == root ? out.data() : nullptr, root);
    return out;
  }

  /// Exchanges the two arrays' storage (no data moves): the `swap` of a time loop.
  void swap(Array& o) { detail::swap_blocks(*b_, *o.b_); }

  detail::Block& block() const { return *b_; }

 private:
  static std::array<std::int64_t, N> take(const std::int64_t* p) {
    std::array<std::int64_t, N> a;
    for (int d = 0; d < N; ++d) a[d] = p[d];
    return a;
  }
  std::shared_ptr<detail::Block> b_;
};

namespace detail {

template <class X>
struct is_dist_array : std::false_type {};
template <Element T, int N>
struct is_dist_array<Array<T, N>> : std::true_type {};

template <class X>
void add_arg(Call& c, X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (is_dist_array<D>::value) {
    const ArrayDesc d = block_view(x.block());
    using T = std::remove_cvref_t<decltype(x.local({}))>;
    constexpr int N = static_cast<int>(std::tuple_size_v<decltype(x.shape())>);
    c.args.push_back(kiln::detail::array_arg(static_cast<T*>(d.data), N, d.shape, d.strides, !std::is_const_v<std::remove_reference_t<X>>,
                                             "kiln::dist::Array"));
    c.blocks.push_back(&x.block());
  } else {
    c.args.push_back(kiln::detail::make_arg(std::forward<X>(x)));
    c.blocks.push_back(nullptr);
  }
}

}  // namespace detail

/// How kiln::dist::run runs a kernel.
struct RunOptions {
  /// Compute the interior of each block while the halos travel, then the rim (false: wait for the halos,
  /// then compute the block in one call; for measuring what the overlap gains). A rank whose exchange
  /// sends nothing to another rank (one rank; neighbours only beyond global edges or itself) has nothing
  /// to overlap and computes its block in one call either way.
  bool overlap = true;
};

/// Runs a kiln kernel SPMD: every rank calls it with the same arguments, kiln::dist::Arrays standing for
/// their blocks. Before the call kiln exchanges the ghost layers the kernel's stencils read (widths from
/// the traced stencils' neighbourhoods; border rules at the global edges only, `wrap` across ranks), and
/// the kernel runs on each block. The kernel writes into its arguments and returns nothing; it computes
/// each element from the same position of its inputs (elementwise operations, stencils over its
/// parameters). Collective. The first call of each signature checks that every rank traced the same IR
/// and passed arrays of the same global shapes (DistributedError otherwise).
template <class F, class... A>
void run(const RunOptions& o, const Kernel<F>& kernel, A&&... args) {
  const Kernel<F> k = kernel.with(detail::halo_options(kernel.options(), kernel.name()));
  detail::Call c;
  c.core = k.core();
  c.options_id = k.options_id();
  c.target = k.options().target;
  c.overlap = o.overlap;
  (detail::add_arg(c, std::forward<A>(args)), ...);
  detail::run(c);
}
template <class F, class... A>
void run(const Kernel<F>& kernel, A&&... args) {
  run(RunOptions{}, kernel, std::forward<A>(args)...);
}

/// A stencil on distributed arrays: `run(st, out, inputs...)` is `st.into(out, inputs...)` on each block.
template <class F, class... A>
void run(const RunOptions& o, const Stencil<F>& st, A&&... args) {
  const Stencil<F> s = st.with(detail::halo_options(st.options(), st.name()));
  detail::Call c;
  c.core = s.into_core();
  c.options_id = s.into_options_id();
  c.target = s.options().target;
  c.overlap = o.overlap;
  (detail::add_arg(c, std::forward<A>(args)), ...);
  detail::run(c);
}
template <class F, class... A>
void run(const Stencil<F>& st, A&&... args) {
  run(RunOptions{}, st, std::forward<A>(args)...);
}

/// The halo exchange of `run(kernel, args...)` without the kernel: the ghost layers its stencils read
/// are filled (from the neighbouring ranks, and by the border rule at the global edges) and nothing is
/// computed. For timing the exchange alone, or before calling kernels on local_desc() views directly.
/// Collective, with run's first-call checks.
template <class F, class... A>
void exchange(const Kernel<F>& kernel, A&&... args) {
  const Kernel<F> k = kernel.with(detail::halo_options(kernel.options(), kernel.name()));
  detail::Call c;
  c.core = k.core();
  c.options_id = k.options_id();
  c.target = k.options().target;
  c.compute = false;
  (detail::add_arg(c, std::forward<A>(args)), ...);
  detail::run(c);
}
template <class F, class... A>
void exchange(const Stencil<F>& st, A&&... args) {
  const Stencil<F> s = st.with(detail::halo_options(st.options(), st.name()));
  detail::Call c;
  c.core = s.into_core();
  c.options_id = s.into_options_id();
  c.target = s.options().target;
  c.compute = false;
  (detail::add_arg(c, std::forward<A>(args)), ...);
  detail::run(c);
}

/// Reductions over every element of a distributed array, the result on every rank. The order is fixed
/// by the global array alone: along the last axis the elements form segments of kSegment (aligned at
/// multiples of kSegment), each folded from the identity in index order, a segment split between ranks
/// continued across them; the segments' partials are folded in row-major order. So the result is bitwise
/// the same for any number of ranks, grid shape and threads (and NaN propagates as in kiln::min/max).
inline constexpr std::int64_t kSegment = 1024;

template <Element T, int N>
T sum(const Array<T, N>& a) {
  T out{};
  detail::reduce(a.block(), detail::ReduceOp::sum, &out);
  return out;
}
template <Element T, int N>
T prod(const Array<T, N>& a) {
  T out{};
  detail::reduce(a.block(), detail::ReduceOp::prod, &out);
  return out;
}
template <Element T, int N>
T min(const Array<T, N>& a) {
  T out{};
  detail::reduce(a.block(), detail::ReduceOp::min, &out);
  return out;
}
template <Element T, int N>
T max(const Array<T, N>& a) {
  T out{};
  detail::reduce(a.block(), detail::ReduceOp::max, &out);
  return out;
}

/// Reductions along one axis, the result (the global shape less `axis`; a 1-d array of 1 element for a
/// 1-d input) on every rank. Each line along `axis` is folded in the order above (segments of kSegment
/// along it, continued across ranks, their partials in order): the same bits for any number of ranks,
/// grid and threads.
template <Element T, int N>
NDArray<T> reduce_along(const Array<T, N>& a, detail::ReduceOp op, int axis) {
  if (axis < 0 || axis >= N)
    throw ValueError("kiln::dist: axis " + std::to_string(axis) + " of an array of rank " + std::to_string(N) +
                     ": give 0.." + std::to_string(N - 1));
  std::vector<std::int64_t> shape;
  for (int d = 0; d < N; ++d)
    if (d != axis) shape.push_back(a.shape()[static_cast<std::size_t>(d)]);
  if (shape.empty()) shape.push_back(1);
  NDArray<T> out(shape);
  detail::reduce_axis(a.block(), op, axis, out.data());
  return out;
}
template <Element T, int N>
NDArray<T> sum(const Array<T, N>& a, int axis) { return reduce_along(a, detail::ReduceOp::sum, axis); }
template <Element T, int N>
NDArray<T> prod(const Array<T, N>& a, int axis) { return reduce_along(a, detail::ReduceOp::prod, axis); }
template <Element T, int N>
NDArray<T> min(const Array<T, N>& a, int axis) { return reduce_along(a, detail::ReduceOp::min, axis); }
template <Element T, int N>
NDArray<T> max(const Array<T, N>& a, int axis) { return reduce_along(a, detail::ReduceOp::max, axis); }

/// The histogram of a distributed array, the counts on every rank: `bins` bins of equal width over
/// [lo, hi]; element x (as a double) goes to bin floor((x - lo) / (hi - lo) * bins), x == hi to the last
/// one; elements outside [lo, hi] and NaN are not counted. Counts are integers, summed exactly
/// (MPI_Allreduce on int64), so they are the same for any number of ranks and threads.
template <Element T, int N>
NDArray<std::int64_t> histogram(const Array<T, N>& a, std::int64_t bins, double lo, double hi) {
  if (bins < 1 || !(lo < hi))
    throw ValueError("kiln::dist::histogram: needs bins >= 1 and lo < hi, got " + std::to_string(bins) + " bins over [" +
                     std::to_string(lo) + ", " + std::to_string(hi) + "]");
  NDArray<std::int64_t> out({bins});
  detail::histogram(a.block(), bins, lo, hi, out.data());
  return out;
}

/// Runs `body` on this rank; if it throws, prints "kiln: rank R: <what>" to stderr and ends the whole job
/// with MPI_Abort(comm, 1), so that the other ranks, perhaps waiting in a collective, do not hang.
/// Returns 0 when `body` returned.
int run_or_abort(const std::function<void()>& body, MPI_Comm comm = MPI_COMM_WORLD);

}  // namespace kiln::dist
