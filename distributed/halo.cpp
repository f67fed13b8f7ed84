// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Halo exchange with the 3^R - 1 neighbours of a block (faces, edges and corners at once, so one
// Waitall completes it), each region an MPI subarray datatype of the ghosted storage: no packing.
// A message's tag is the direction it travels in (plus 81 per array of the exchange), so that two
// neighbours that are the same rank (two ranks on a periodic axis) keep their messages apart.
//
// Global edges: along an axis where the border is not `wrap`, the neighbour beyond the edge is
// MPI_PROC_NULL and the ghost planes there are written afterwards from the block's own planes (and the
// ghosts just received), axis by axis over the full ghosted extent of the other axes, so that corners
// get the per-axis index map the single-process border rule applies.
#include "distributed/halo.hpp"

#include <cstring>

#include <fmt/format.h>

#include "ir/semantics.hpp"
#include "kiln/runtime.hpp"

namespace kiln::dist::detail {
namespace {

/// The fewest elements an edge fill forks threads for.
constexpr std::int64_t kParallelFill = 32768;

std::int64_t reach(const HaloNeed& n, int d) { return std::max(n.lo[d], n.hi[d]); }

bool split(const Block& b, int d) { return d < b.grid.ndims(); }
int ranks_along(const Block& b, int d) { return split(b, d) ? b.grid.dims()[static_cast<std::size_t>(d)] : 1; }
int coord(const Block& b, int d) { return split(b, d) ? b.grid.coords()[static_cast<std::size_t>(d)] : 0; }

/// The rank in direction `s` (each -1, 0 or 1), or MPI_PROC_NULL beyond a global edge without wrap.
int neighbour(const Block& b, const int* s, bool wrap) {
  std::vector<int> c(static_cast<std::size_t>(b.grid.ndims()));
  for (int d = 0; d < b.rank; ++d) {
    const int p = ranks_along(b, d), at = coord(b, d) + s[d];
    if ((at < 0 || at >= p) && !wrap) return MPI_PROC_NULL;
    if (split(b, d)) c[static_cast<std::size_t>(d)] = at;
  }
  return b.grid.rank_at(c);
}

void store_value(std::byte* p, DType t, double v) {
  // A border constant takes the element type by kiln's conversion rules (ir/semantics.hpp).
  ir::sem::with_type(t, [&](auto x) {
    const auto value = ir::sem::cast<decltype(x), double>(v);
    std::memcpy(p, &value, sizeof value);
  });
}

bool at_edge(const Block& b, int d, bool high) { return high ? coord(b, d) == ranks_along(b, d) - 1 : coord(b, d) == 0; }

/// Whether the ghosts of one side of axis d need nothing from the exchange: a global edge (no `wrap`)
/// whose border rule reads only the block's own planes (reflect and mirror reach past a block thinner
/// than their width, into the ghosts its neighbour sends). Under `skip` nothing there is read at all.
bool side_settled(const HaloNeed& n, int d, bool high) {
  if (n.border == Border::wrap || !at_edge(*n.block, d, high)) return false;
  const std::int64_t width = high ? n.hi[d] : n.lo[d], c = n.block->count[d];
  switch (n.border) {
    case Border::reflect: return width <= c;
    case Border::mirror: return width <= c - 1;
    default: return true;
  }
}

/// Which ghosts fill_edges writes.
enum class Fill : std::uint8_t {
  all,      ///< every global-edge side, over the ghosted extent of the other axes
  settled,  ///< the settled sides, over the other axes' owned extent and settled sides: what can be
            ///< written before the messages arrive, from what no message writes
  rest,     ///< `all` less what `settled` wrote
};

/// Fills the ghost planes of axis d at this rank's global edges by the border rule.
void fill_edges(const HaloNeed& n, int d, Fill fill) {
  const bool settled_only = fill == Fill::settled;
  const Block& b = *n.block;
  const std::int64_t c = b.count[d];
  const bool low_edge = settled_only ? side_settled(n, d, false) : at_edge(b, d, false);
  const bool high_edge = settled_only ? side_settled(n, d, true) : at_edge(b, d, true);
  // (ghost plane, source plane) pairs; the source is unused for a constant border.
  std::vector<std::pair<std::int64_t, std::int64_t>> planes;
  const bool low_settled = fill == Fill::rest && side_settled(n, d, false);
  const bool high_settled = fill == Fill::rest && side_settled(n, d, true);
  for (std::int64_t k = 1; low_edge && k <= n.lo[d]; ++k) {
    switch (n.border) {
      case Border::nearest: planes.push_back({-k, 0}); break;
      case Border::reflect: planes.push_back({-k, k - 1}); break;
      case Border::mirror: planes.push_back({-k, k}); break;
      default: planes.push_back({-k, 0}); break;
    }
  }
  for (std::int64_t k = 1; high_edge && k <= n.hi[d]; ++k) {
    switch (n.border) {
      case Border::nearest: planes.push_back({c - 1 + k, c - 1}); break;
      case Border::reflect: planes.push_back({c - 1 + k, c - k}); break;
      case Border::mirror: planes.push_back({c - 1 + k, c - 1 - k}); break;
      default: planes.push_back({c - 1 + k, c - 1}); break;
    }
  }
  if (planes.empty()) return;
  // The other axes over their ghosted extent (the exchange's widths), the innermost of them copied as
  // one contiguous run per row (for d the last axis, runs of one element).
  const int inner = d == b.rank - 1 ? -1 : b.rank - 1;
  std::int64_t lo[kMaxRank], hi[kMaxRank];
  std::int64_t rows = 1;
  for (int e = 0; e < b.rank; ++e) {
    lo[e] = e == d ? 0 : settled_only && !side_settled(n, e, false) ? 0 : -n.lo[e];
    hi[e] = e == d ? 1 : b.count[e] + (settled_only && !side_settled(n, e, true) ? 0 : n.hi[e]);
    if (e != inner) rows *= hi[e] - lo[e];
  }
  const std::int64_t run = inner < 0 ? 1 : hi[inner] - lo[inner];
  // For Fill::rest: the other axes' ranges of Fill::settled (a row inside them on a settled side of d is
  // written already; a row whose run goes beyond them is written again whole).
  std::int64_t pre_lo[kMaxRank], pre_hi[kMaxRank];
  bool run_pre = true;
  for (int e = 0; e < b.rank; ++e) {
    pre_lo[e] = side_settled(n, e, false) ? -n.lo[e] : 0;
    pre_hi[e] = b.count[e] + (side_settled(n, e, true) ? n.hi[e] : 0);
    if (e == inner) run_pre = pre_lo[e] == lo[e] && pre_hi[e] == hi[e];
  }
  const auto size = static_cast<std::size_t>(b.elem_size);
  // Rows in parallel, every plane of a row at once: along the last axis each row's ghosts and sources
  // share a cache line or two, which one thread walking 320^2 strided rows one miss at a time made
  // 17 ms of a 28 ms heat3d step of 320^3. The same thread count as the kernels (one libgomp team size).
  const auto nplanes = static_cast<std::int64_t>(planes.size());
  const bool parallel = rows * run * nplanes >= kParallelFill;
#pragma omp parallel for schedule(static) if (parallel) num_threads(kiln::num_threads())
  for (std::int64_t k = 0; k < rows; ++k) {
    std::int64_t j[kMaxRank] = {};
    if (inner >= 0) j[inner] = lo[inner];
    std::int64_t left = k;
    for (int e = b.rank - 1; e >= 0; --e) {
      if (e == inner) continue;
      const std::int64_t w = hi[e] - lo[e];
      j[e] = lo[e] + left % w;
      left /= w;
    }
    bool row_pre = run_pre;
    for (int e = 0; e < b.rank; ++e)
      if (e != d && e != inner) row_pre = row_pre && j[e] >= pre_lo[e] && j[e] < pre_hi[e];
    for (const auto& [ghost, source] : planes) {
      if (row_pre && (ghost < 0 ? low_settled : high_settled)) continue;
      j[d] = ghost;
      std::byte* to = b.at(j);
      if (n.border == Border::constant) {
        for (std::int64_t r = 0; r < run; ++r) store_value(to + r * b.elem_size, b.dtype, n.cval);
      } else {
        j[d] = source;
        std::memmove(to, b.at(j), size * static_cast<std::size_t>(run));
      }
    }
  }
}

std::string border_text(Border b) { return b == Border::mirror ? "mirror" : "reflect"; }  // the two that fold

}  // namespace

void check_halo(const std::string& kernel, const HaloNeed& n) {
  const Block& b = *n.block;
  const bool wrap = n.border == Border::wrap;
  const std::string head = fmt::format("kernel '{}': distributed array '{}': ", kernel, n.name);
  for (int d = 0; d < b.rank; ++d) {
    const std::int64_t r = reach(n, d);
    if (r == 0) continue;
    const int p = ranks_along(b, d);
    const std::int64_t smallest = block_of(b.global[d], p, p - 1).count;  // the last blocks are the short ones
    if ((p > 1 || wrap) && smallest < r)
      throw DistributedError(fmt::format("{}the stencil reaches {} elements along axis {}, but a block there has only {} "
                                         "({} elements over {} ranks): a block must hold what its neighbour reads; use "
                                         "fewer ranks along axis {} (Grid dims) or a larger array",
                                         head, r, d, smallest, b.global[d], p, d));
    // Mirror and reflect read planes up to the reach away from the edge: within the edge block and the
    // ghosts its inner neighbour sends.
    if (!wrap && n.border != Border::constant && n.border != Border::nearest && n.border != Border::skip) {
      const std::int64_t need_lo = n.border == Border::mirror ? n.lo[d] : n.lo[d] - 1;
      const std::int64_t need_hi = n.border == Border::mirror ? n.hi[d] : n.hi[d] - 1;
      const std::int64_t first = block_of(b.global[d], p, 0).count, last = block_of(b.global[d], p, p - 1).count;
      const std::int64_t first_has = first + (p > 1 ? n.hi[d] : 0), last_has = last + (p > 1 ? n.lo[d] : 0);
      if (need_lo >= first_has || need_hi >= last_has)
        throw DistributedError(fmt::format("{}the {} border at the global edge of axis {} reads {} planes in, more than "
                                           "the edge block and its neighbour's ghost layer hold ({} elements over {} "
                                           "ranks): use fewer ranks along axis {} or a larger array",
                                           head, border_text(n.border), d, std::max(need_lo, need_hi) + 1, b.global[d],
                                           p, d));
    }
  }
}

Exchange::Exchange(std::vector<HaloNeed> needs) : needs_(std::move(needs)) {
  for (std::size_t a = 0; a < needs_.size(); ++a) {
    HaloNeed& n = needs_[a];
    Block& b = *n.block;
    const bool wrap = n.border == Border::wrap;
    int directions = 1;
    for (int d = 0; d < b.rank; ++d) directions *= 3;
    for (int code = 0; code < directions; ++code) {
      int s[kMaxRank];
      bool zero = true;
      for (int d = 0, c = code; d < b.rank; ++d, c /= 3) {
        s[d] = c % 3 - 1;
        zero = zero && s[d] == 0;
      }
      if (zero) continue;
      // What goes toward s: the planes the neighbour there reads beyond its own block (its ghost on the
      // side facing us). What comes from s: our ghost on that side.
      Box send, recv;
      for (int d = 0; d < b.rank; ++d) {
        const std::int64_t c = b.count[d];
        if (s[d] == 1) {
          send.lo[d] = c - n.lo[d], send.hi[d] = c;
          recv.lo[d] = c, recv.hi[d] = c + n.hi[d];
        } else if (s[d] == -1) {
          send.lo[d] = 0, send.hi[d] = n.hi[d];
          recv.lo[d] = -n.lo[d], recv.hi[d] = 0;
        } else {
          send.lo[d] = recv.lo[d] = 0;
          send.hi[d] = recv.hi[d] = c;
        }
      }
      // The rank in direction s sends toward us in direction -s, with that direction's tag. An empty box
      // is not sent, and its partner is not received: both ends see the same widths (the kernel's).
      int back = 0;
      for (int d = b.rank - 1; d >= 0; --d) back = back * 3 + (-s[d] + 1);
      const int base = static_cast<int>(a) * 81, there = neighbour(b, s, wrap);
      MPI_Request rq;
      if (there != MPI_PROC_NULL && there != b.grid.rank() && !(recv.empty(b.rank) && send.empty(b.rank))) travels_ = true;
      if (!recv.empty(b.rank)) {
        MPI_Irecv(b.base(), 1, b.box_type(recv), there, base + back, b.grid.comm(), &rq);
        requests_.push_back(rq);
      }
      if (!send.empty(b.rank)) {
        MPI_Isend(b.base(), 1, b.box_type(send), there, base + code, b.grid.comm(), &rq);
        requests_.push_back(rq);
      }
    }
  }
}

Exchange::~Exchange() {
  if (!done_ && !requests_.empty()) MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

void Exchange::finish() {
  if (done_) return;
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  done_ = true;
  for (const HaloNeed& n : needs_)
    if (n.border != Border::wrap && n.border != Border::skip)
      for (int d = 0; d < n.block->rank; ++d) fill_edges(n, d, prefilled_ ? Fill::rest : Fill::all);
}

void Exchange::fill_settled() {
  for (const HaloNeed& n : needs_)
    if (n.border != Border::wrap && n.border != Border::skip)
      for (int d = 0; d < n.block->rank; ++d) fill_edges(n, d, Fill::settled);
  prefilled_ = true;
}

std::int64_t Exchange::wait_reach(int d, bool high) const {
  std::int64_t r = 0;
  for (const HaloNeed& n : needs_)
    if (d < n.block->rank && !side_settled(n, d, high)) r = std::max(r, high ? n.hi[d] : n.lo[d]);
  return r;
}

}  // namespace kiln::dist::detail
