// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A rank's block: storage with ghost layers, scatter from and gather to a root with subarray datatypes.
#include "distributed/block.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "ir/messages.hpp"

namespace kiln::dist::detail {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::Bool: return MPI_C_BOOL;
    case DType::I32: return MPI_INT32_T;
    case DType::I64: return MPI_INT64_T;
    case DType::F32: return MPI_FLOAT;
    case DType::F64: return MPI_DOUBLE;
    case DType::U8: return MPI_UINT8_T;
    case DType::U16: return MPI_UINT16_T;
    case DType::U32: return MPI_UINT32_T;
    case DType::U64: return MPI_UINT64_T;
    case DType::I8: return MPI_INT8_T;
    case DType::I16: return MPI_INT16_T;
    case DType::F16: case DType::BF16: return MPI_UINT16_T;  // moved as their bits
  }
  return MPI_BYTE;
}

bool Box::empty(int rank) const {
  for (int d = 0; d < rank; ++d)
    if (hi[d] <= lo[d]) return true;
  return false;
}

using ir::shape_text;

Block::Block(const Grid& g, DType t, int r, const std::int64_t* shape)
    : grid(g), dtype(t), rank(r), elem_size(static_cast<std::int64_t>(size_of(t))) {
  if (g.ndims() > r)
    throw DistributedError(fmt::format("kiln::dist::Array of rank {} over a grid of {} axes: an array is split along at "
                                       "most its own axes; make the Grid with at most {} axes",
                                       r, g.ndims(), r));
  for (int d = 0; d < r; ++d) {
    global[d] = shape[d];
    if (shape[d] < 0) throw ShapeError(fmt::format("kiln::dist::Array: negative extent in shape {}", shape_text(r, shape)));
    if (d < g.ndims()) {
      const int p = g.dims()[static_cast<std::size_t>(d)];
      if (shape[d] < p)
        throw DistributedError(fmt::format("kiln::dist::Array of shape {} over {}: axis {} has {} elements for {} ranks, so "
                                           "a block would be empty: use at most {} ranks along that axis (Grid dims) or "
                                           "a larger array",
                                           shape_text(r, shape), g.describe(), d, shape[d], p, shape[d]));
      const BlockRange b = block_of(shape[d], p, g.coords()[static_cast<std::size_t>(d)]);
      start[d] = b.start;
      count[d] = b.count;
    } else {
      start[d] = 0;
      count[d] = shape[d];
    }
  }
  allocate();
}

Block::~Block() { free_types(); }

void Block::free_types() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (auto& [k, t] : types_)
    if (!finalized) MPI_Type_free(&t);
  types_.clear();
}

void Block::allocate() {
  std::int64_t n = 1;
  for (int d = rank - 1; d >= 0; --d) {
    extent[d] = count[d] + ghost_lo[d] + ghost_hi[d];
    strides[d] = n;
    n *= extent[d];
  }
  const std::size_t bytes = static_cast<std::size_t>(std::max<std::int64_t>(n, 1) * elem_size);
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw Error(fmt::format("kiln::dist::Array: out of memory for a block of {} bytes", bytes));
  std::memset(p, 0, rounded);
  storage_ = std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); });
  free_types();
}

std::byte* Block::owned() const {
  std::int64_t off = 0;
  for (int d = 0; d < rank; ++d) off += ghost_lo[d] * strides[d];
  return storage_.get() + off * elem_size;
}

std::byte* Block::at(const std::int64_t* i) const {
  std::int64_t off = 0;
  for (int d = 0; d < rank; ++d) off += i[d] * strides[d];
  return owned() + off * elem_size;
}

Box Block::owned_box() const {
  Box b;
  for (int d = 0; d < rank; ++d) b.hi[d] = count[d];
  return b;
}

ArrayDesc Block::desc(const Box& b) const {
  ArrayDesc a;
  a.data = at(b.lo);
  for (int d = 0; d < rank; ++d) {
    a.shape[d] = std::max<std::int64_t>(b.hi[d] - b.lo[d], 0);
    a.strides[d] = strides[d];
  }
  return a;
}

void Block::ensure_ghosts(const std::int64_t* lo, const std::int64_t* hi) {
  bool grow = false;
  for (int d = 0; d < rank; ++d) grow = grow || lo[d] > ghost_lo[d] || hi[d] > ghost_hi[d];
  if (!grow) return;
  mirror.before_reallocation(*this);
  const std::shared_ptr<std::byte> old = storage_;
  const std::byte* old_owned = owned();
  std::int64_t old_strides[kMaxRank];
  std::copy(strides, strides + rank, old_strides);
  for (int d = 0; d < rank; ++d) {
    ghost_lo[d] = std::max(ghost_lo[d], lo[d]);
    ghost_hi[d] = std::max(ghost_hi[d], hi[d]);
  }
  allocate();
  // Copy the owned elements row by row (the innermost axis is contiguous in both layouts).
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < rank; ++d) rows *= count[d];
  std::int64_t idx[kMaxRank] = {};
  const std::size_t row_bytes = static_cast<std::size_t>(count[rank - 1] * elem_size);
  for (std::int64_t r = 0; r < rows && row_bytes; ++r) {
    std::int64_t from = 0;
    for (int d = 0; d + 1 < rank; ++d) from += idx[d] * old_strides[d];
    std::memcpy(at(idx), old_owned + from * elem_size, row_bytes);
    for (int d = rank - 2; d >= 0 && ++idx[d] == count[d]; --d) idx[d] = 0;
  }
}

MPI_Datatype Block::box_type(const Box& b) {
  std::string key;
  for (int d = 0; d < rank; ++d) key += std::to_string(b.lo[d]) + ":" + std::to_string(b.hi[d]) + ",";
  if (auto it = types_.find(key); it != types_.end()) return it->second;
  int sizes[kMaxRank], sub[kMaxRank], starts[kMaxRank];
  for (int d = 0; d < rank; ++d) {
    sizes[d] = static_cast<int>(extent[d]);
    sub[d] = static_cast<int>(b.hi[d] - b.lo[d]);
    starts[d] = static_cast<int>(b.lo[d] + ghost_lo[d]);
  }
  MPI_Datatype t;
  MPI_Type_create_subarray(rank, sizes, sub, starts, MPI_ORDER_C, mpi_type(dtype), &t);
  MPI_Type_commit(&t);
  types_[key] = t;
  return t;
}

void Block::swap(Block& o) {
  std::swap(storage_, o.storage_);
  std::swap(ghost_lo, o.ghost_lo);
  std::swap(ghost_hi, o.ghost_hi);
  std::swap(extent, o.extent);
  std::swap(strides, o.strides);
  std::swap(types_, o.types_);
  mirror.swap(o.mirror);
}

// ---- the header's entry points ----------------------------------------------------------------------

std::shared_ptr<Block> make_block(const Grid& grid, DType dtype, int rank, const std::int64_t* global) {
  return std::make_shared<Block>(grid, dtype, rank, global);
}
ArrayDesc block_view(const Block& b) { return b.desc(b.owned_box()); }
std::int64_t whole_block_copies(const Block& b) { return b.mirror.whole_copies(); }
// Host access to the elements: the host copy made current, and (the caller may write through the view)
// the device copy marked stale.
ArrayDesc owned_desc(const Block& b) {
  b.mirror.to_host(b, true);
  return b.desc(b.owned_box());
}
const std::int64_t* block_start(const Block& b) { return b.start; }
const std::int64_t* block_count(const Block& b) { return b.count; }
const std::int64_t* global_shape(const Block& b) { return b.global; }
const Grid& block_grid(const Block& b) { return b.grid; }

void swap_blocks(Block& a, Block& b) {
  bool same = a.grid.comm() == b.grid.comm() && a.dtype == b.dtype && a.rank == b.rank;
  for (int d = 0; same && d < a.rank; ++d) same = a.global[d] == b.global[d];
  if (!same)
    throw DistributedError(fmt::format("kiln::dist::Array::swap: the arrays differ in grid, element type or shape {} and "
                                       "{}: swap arrays made alike",
                                       shape_text(a.rank, a.global), shape_text(b.rank, b.global)));
  a.swap(b);
}

namespace {

/// The subarray of the global row-major array that rank `r` owns.
MPI_Datatype global_box_type(const Block& b, int r) {
  std::vector<int> coords(static_cast<std::size_t>(b.grid.ndims()));
  MPI_Cart_coords(b.grid.comm(), r, b.grid.ndims(), coords.data());
  int sizes[kMaxRank], sub[kMaxRank], starts[kMaxRank];
  for (int d = 0; d < b.rank; ++d) {
    BlockRange br{0, b.global[d]};
    if (d < b.grid.ndims()) br = block_of(b.global[d], b.grid.dims()[static_cast<std::size_t>(d)], coords[static_cast<std::size_t>(d)]);
    sizes[d] = static_cast<int>(b.global[d]);
    sub[d] = static_cast<int>(br.count);
    starts[d] = static_cast<int>(br.start);
  }
  MPI_Datatype t;
  MPI_Type_create_subarray(b.rank, sizes, sub, starts, MPI_ORDER_C, mpi_type(b.dtype), &t);
  MPI_Type_commit(&t);
  return t;
}

/// Before any message of a scatter or gather: every rank learns whether the root is a rank of the grid,
/// the same on every rank, and has the global array (null is allowed for an array of no elements), so
/// that all of them throw the same DistributedError instead of some waiting for a message never sent.
void agree_on_root(const Block& b, const void* global, int root, const char* what) {
  const int size = b.grid.size();
  const bool valid_root = root >= 0 && root < size;
  std::int64_t elements = 1;
  for (int d = 0; d < b.rank; ++d) elements *= b.global[d];
  const bool missing = valid_root && b.grid.rank() == root && !global && elements > 0;
  // One MPI_MAX over {root, -root, no buffer}: the largest and smallest root, and whether the root lacks one.
  int mine[3] = {root, -root, missing ? 1 : 0}, all[3] = {};
  MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MAX, b.grid.comm());
  if (all[0] != -all[1])
    throw DistributedError(fmt::format("kiln::dist::Array::{}: the ranks passed different roots ({} to {}): every rank "
                                       "passes the same root",
                                       what, -all[1], all[0]));
  if (!valid_root)
    throw DistributedError(fmt::format("kiln::dist::Array::{}: root {} is not a rank of the grid ({}): pass a root in "
                                       "0..{}",
                                       what, root, b.grid.describe(), size - 1));
  if (all[2])
    throw DistributedError(fmt::format("kiln::dist::Array::{}: the root (rank {}) passed no array: pass the global "
                                       "row-major array of shape {} there (other ranks may pass null)",
                                       what, root, shape_text(b.rank, b.global)));
}

}  // namespace

void scatter(Block& b, const void* global, int root) {
  agree_on_root(b, global, root, "scatter");
  b.mirror.to_host(b, true);
  MPI_Comm comm = b.grid.comm();
  const MPI_Datatype mine = b.box_type(b.owned_box());
  if (b.grid.rank() == root) {
    std::vector<MPI_Request> reqs;
    std::vector<MPI_Datatype> types;
    MPI_Request own;
    MPI_Irecv(b.base(), 1, mine, root, 0, comm, &own);  // the root's own block, through MPI too
    for (int r = 0; r < b.grid.size(); ++r) {
      types.push_back(global_box_type(b, r));
      reqs.emplace_back();
      MPI_Isend(global, 1, types.back(), r, 0, comm, &reqs.back());
    }
    reqs.push_back(own);
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    for (auto& t : types) MPI_Type_free(&t);
  } else {
    MPI_Recv(b.base(), 1, mine, root, 0, comm, MPI_STATUS_IGNORE);
  }
}

void gather(const Block& b, void* global, int root) {
  agree_on_root(b, global, root, "gather");
  b.mirror.to_host(b, false);
  Block& m = const_cast<Block&>(b);  // only the datatype cache changes
  MPI_Comm comm = b.grid.comm();
  const MPI_Datatype mine = m.box_type(b.owned_box());
  if (b.grid.rank() == root) {
    std::vector<MPI_Request> reqs;
    std::vector<MPI_Datatype> types;
    MPI_Request own;
    MPI_Isend(b.base(), 1, mine, root, 1, comm, &own);
    for (int r = 0; r < b.grid.size(); ++r) {
      types.push_back(global_box_type(b, r));
      reqs.emplace_back();
      MPI_Irecv(global, 1, types.back(), r, 1, comm, &reqs.back());
    }
    reqs.push_back(own);
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    for (auto& t : types) MPI_Type_free(&t);
  } else {
    MPI_Send(b.base(), 1, mine, root, 1, comm);
  }
}

Options halo_options(Options o, const std::string& kernel) {
  if (o.target == Target::interpreter)
    throw DistributedError(fmt::format("kernel '{}': kiln::dist runs kernels on the cpu and cuda targets (stencils read "
                                       "the ghost layers around each block), not on the interpreter: call it with "
                                       "kiln::Target::cpu or kiln::Target::cuda",
                                       kernel));
  o.halo_reads = true;
  return o;
}

}  // namespace kiln::dist::detail
