// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-written C++/MPI/OpenMP reference of kiln-dist-bench: the jacobi2d and heat3d steps as an MPI
// programmer writes them without kiln. A Cartesian grid from MPI_Dims_create/MPI_Cart_create (the same
// calls as kiln::dist::Grid, so the same blocks), one ghost layer, faces exchanged with MPI_Isend/Irecv
// of MPI subarray types (a 5- or 7-point stencil reads no corner), the interior computed while the faces
// travel, then the rim; OpenMP inside each rank. Global edges repeat the edge plane (kiln's `reflect` and
// `nearest` are that for a one-wide neighbourhood).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace hand {

/// One rank's block of an N-d (N = 2 or 3) global array of doubles, in storage with one ghost layer.
template <int N>
class Block {
 public:
  using Index = std::array<std::int64_t, N>;
  /// Splits `global` over all ranks of `comm` as an N-d Cartesian grid; `fill` gives each element from its
  /// global index.
  Block(MPI_Comm comm, const Index& global, const std::function<double(const Index&)>& fill);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  /// `steps` stencil steps (jacobi2d for N = 2, heat3d for N = 3) with two buffers swapped after each;
  /// `overlap`: the interior computed while the faces travel.
  void steps(int steps, bool overlap);

  MPI_Comm comm() const { return cart_; }
  const Index& offset() const { return offset_; }
  const Index& count() const { return count_; }
  /// The owned element at local index `l` of the current buffer.
  double local(const Index& l) const;

 private:
  std::int64_t at(const Index& storage) const;  ///< the flat position of a storage index (ghosts at 0)
  void post_faces();                              ///< MPI_Irecv/Isend of every face
  void fill_global_edges();                       ///< ghost faces beyond a global edge: the edge plane
  void compute(const Index& lo, const Index& hi); ///< the stencil over owned local indices [lo, hi)

  MPI_Comm cart_ = MPI_COMM_NULL;
  Index global_{}, offset_{}, count_{}, stride_{};
  std::array<int, N> dims_{}, coords_{};
  std::array<std::array<int, 2>, N> neighbour_{};          ///< [axis][side]: rank or MPI_PROC_NULL
  std::array<std::array<MPI_Datatype, 2>, N> send_{}, recv_{};  ///< [axis][side] face types
  std::vector<double> cur_, next_;
  std::vector<MPI_Request> requests_;
};

}  // namespace hand
