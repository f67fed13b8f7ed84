// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Cartesian grid of ranks: MPI chooses the factorization (MPI_Dims_create) unless the caller fixes
// some axes; the communicator is periodic along every axis so that a `wrap` border finds its neighbours
// across the ends, while other borders treat the ends as global edges (distributed/halo.cpp).
#include <atomic>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "distributed/block.hpp"

namespace kiln::dist {

namespace detail {

GridState::~GridState() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
}

}  // namespace detail

Grid::Grid(int ndims, MPI_Comm comm, std::vector<int> dims) : s_(std::make_shared<detail::GridState>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    throw DistributedError("kiln::dist::Grid: MPI is not initialized: call MPI_Init (or MPI_Init_thread) first");
  if (ndims < 1 || ndims > kMaxRank)
    throw ValueError(fmt::format("kiln::dist::Grid: ndims must be 1..{}, got {}", kMaxRank, ndims));
  if (dims.empty()) dims.assign(static_cast<std::size_t>(ndims), 0);
  if (dims.size() != static_cast<std::size_t>(ndims))
    throw ValueError(fmt::format("kiln::dist::Grid: {} entries in dims for a grid of {} axes: give one per axis (0 lets "
                                 "MPI choose)",
                                 dims.size(), ndims));
  int size = 0;
  MPI_Comm_size(comm, &size);
  for (int d : dims)
    if (d < 0) throw ValueError("kiln::dist::Grid: a negative number of ranks along an axis");
  if (MPI_Dims_create(size, ndims, dims.data()) != MPI_SUCCESS)
    throw DistributedError(fmt::format("kiln::dist::Grid: the fixed axes of dims do not divide the {} ranks: choose dims "
                                       "whose product is the number of ranks",
                                       size));
  std::vector<int> periods(static_cast<std::size_t>(ndims), 1);
  detail::GridState& s = *s_;
  static std::atomic<std::uint64_t> grids{0};
  s.id = ++grids;
  MPI_Cart_create(comm, ndims, dims.data(), periods.data(), /*reorder=*/0, &s.comm);
  s.ndims = ndims;
  s.dims = dims;
  s.coords.assign(static_cast<std::size_t>(ndims), 0);
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.size);
  MPI_Cart_coords(s.comm, s.rank, ndims, s.coords.data());
}

int Grid::ndims() const { return s_->ndims; }
int Grid::size() const { return s_->size; }
int Grid::rank() const { return s_->rank; }
const std::vector<int>& Grid::dims() const { return s_->dims; }
const std::vector<int>& Grid::coords() const { return s_->coords; }
MPI_Comm Grid::comm() const { return s_->comm; }

int Grid::rank_at(const std::vector<int>& coords) const {
  std::vector<int> c = coords;
  for (std::size_t d = 0; d < c.size(); ++d) c[d] = ((c[d] % s_->dims[d]) + s_->dims[d]) % s_->dims[d];
  int r = 0;
  MPI_Cart_rank(s_->comm, c.data(), &r);
  return r;
}

std::string Grid::describe() const {
  return fmt::format("{} ranks", fmt::join(s_->dims, " x "));
}

BlockRange block_of(std::int64_t n, int p, int c) {
  const std::int64_t q = n / p, r = n % p;
  return BlockRange{c * q + std::min<std::int64_t>(c, r), q + (c < r ? 1 : 0)};
}

}  // namespace kiln::dist
