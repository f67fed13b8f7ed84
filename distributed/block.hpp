// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank's block of a distributed array: where it lies in the global array, its storage with ghost
// layers around the owned elements, and the MPI datatypes of its halo regions.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "distributed/device_mirror.hpp"
#include "kiln/distributed.hpp"

namespace kiln::dist::detail {

struct GridState {
  /// This process's number for the grid: the first-call checks of distributed/run.cpp are collective over
  /// a grid, so what they learned is kept per grid (a new grid, made by all its ranks, checks again).
  std::uint64_t id = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  int ndims = 0, rank = 0, size = 0;
  std::vector<int> dims, coords;
  ~GridState();
};

/// The MPI datatype of one element of `t`.
MPI_Datatype mpi_type(DType t);

/// A box of a block in owned-relative coordinates (the owned elements are [0, count)), per dimension.
struct Box {
  std::int64_t lo[kMaxRank] = {}, hi[kMaxRank] = {};
  bool empty(int rank) const;
};

class Block {
 public:
  Block(const Grid& g, DType dtype, int rank, const std::int64_t* global);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Grid grid;
  DType dtype;
  int rank;
  std::int64_t elem_size;
  std::int64_t global[kMaxRank] = {}, start[kMaxRank] = {}, count[kMaxRank] = {};

  /// Ghost widths of the storage, below and above the owned elements, per dimension.
  std::int64_t ghost_lo[kMaxRank] = {}, ghost_hi[kMaxRank] = {};
  std::int64_t extent[kMaxRank] = {}, strides[kMaxRank] = {};  ///< of the storage, row-major

  /// The start of the storage: the buffer every box_type is relative to.
  std::byte* base() const { return storage_.get(); }
  /// The owned element (0, ..., 0).
  std::byte* owned() const;
  /// The element at owned-relative index `i` (negative or >= count inside the ghosts).
  std::byte* at(const std::int64_t* i) const;
  /// The owned block, or a box of it, as a kernel argument (storage strides).
  ArrayDesc desc(const Box& b) const;
  Box owned_box() const;

  /// Grows the ghost layers to at least `lo`/`hi` per dimension, keeping the owned elements.
  void ensure_ghosts(const std::int64_t* lo, const std::int64_t* hi);
  /// The committed subarray datatype of `box` within the storage (cached until the storage changes).
  MPI_Datatype box_type(const Box& b);

  void swap(Block& o);

  /// The copy of the storage on this rank's GPU for the CUDA target, and which copy is current. Mutable:
  /// a const access from the host (gather, a reduction) may first bring the device copy down.
  mutable DeviceMirror mirror;

 private:
  void allocate();
  void free_types();
  std::shared_ptr<std::byte> storage_;
  std::map<std::string, MPI_Datatype> types_;
};

}  // namespace kiln::dist::detail
