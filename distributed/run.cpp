// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A kernel call on distributed arrays. The first call of a signature (global shapes included) traces the
// kernel (without compiling it) to learn what its stencils read, and checks across ranks, with one
// Allgather, that every rank traced the same IR and passed arrays of the same global shapes. Each call then
// checks that the blocks hold what the stencils reach, grows the ghost layers as needed, starts the halo exchange, and runs the kernel (compiled with Options::halo_reads, so stencils
// read the ghosts) on the block: with overlap, first on the interior, whose reads stay inside the block,
// while the halos travel, then on the rim slabs once they arrived.
//
// The rim is thin (a few planes per side) and cut into 2N slabs; called one by one, each slab would be a
// kernel call of its own whose parfor takes as many threads as the slab's size is worth — often one, or
// two for a column of a 2-d block. libgomp ends the surplus threads of its pool whenever a parallel
// region asks for fewer threads than the last one and creates them again for the next full team (one
// pthread_create per thread per step: 3.3 ms against 0.9 ms per jacobi2d step of 2048^2 on 16 threads).
// So the rim runs in one parallel region of the whole team, as chunks of at most kRimChunk positions
// dealt dynamically, each chunk one kernel call that runs on its thread alone (kiln's parfors inside a
// parallel region do). And when no message leaves the rank there is nothing to overlap: one call.
#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <omp.h>

#include "kiln/device.hpp"
#include "kiln/runtime.hpp"

#include "distributed/block.hpp"
#include "distributed/halo.hpp"
#include "ir/messages.hpp"

namespace kiln::dist::detail {
namespace {

using kiln::detail::ArgValue;
using kiln::detail::TraceSummary;

/// What the kernel's trace says about one signature, the same on every rank.
struct Analysis {
  TraceSummary summary;
  std::vector<std::optional<HaloNeed>> halos;  ///< per argument (block left null)
  std::int64_t skip_lo[kMaxRank] = {}, skip_hi[kMaxRank] = {};  ///< skip borders: global edge bands not computed
};

using ir::shape_text;

std::string arg_label(const TraceSummary& s, std::size_t i) {
  return ir::argument_text(i, i < s.param_names.size() ? s.param_names[i] : std::string());
}

/// Throws the DistributedError "kernel '<kernel>': <what>", `what` formatted from its arguments.
template <class... Args>
[[noreturn]] void fail(const std::string& kernel, fmt::format_string<Args...> what, Args&&... args) {
  throw DistributedError(fmt::format("kernel '{}': {}", kernel, fmt::format(what, std::forward<Args>(args)...)));
}

/// The key of an analysis: the kernel, its options, the grid (the checks are collective over it), what
/// selects a traced variant (element types, ranks, which arguments are distributed) and the distributed
/// arrays' global shapes: the trace and the cross-rank shape agreement are of those shapes, so arrays of
/// another shape are checked again (on every rank alike: each passes the same shapes, or the check says so).
std::string signature(const Call& c, const Block& any) {
  std::string key = std::to_string(reinterpret_cast<std::uintptr_t>(c.core.get())) + "/" + std::to_string(c.options_id) +
                    "/grid" + std::to_string(any.grid.state()->id);
  for (std::size_t i = 0; i < c.args.size(); ++i) {
    const ArgValue& a = c.args[i];
    key += a.is_array ? "a" + std::to_string(a.rank) + std::to_string(static_cast<int>(a.dtype)) + (c.blocks[i] ? "d" : "h")
                      : "s" + std::to_string(static_cast<int>(a.dtype));
    if (c.blocks[i]) key += shape_text(c.blocks[i]->rank, c.blocks[i]->global);
  }
  return key;
}

/// Every rank's trace hash and global shapes, compared: the same DistributedError on every rank when
/// they differ (each rank sees the same gathered table).
void check_agreement(const Call& c, const Analysis& an, const std::string& kernel, const Grid& grid) {
  MPI_Comm comm = grid.comm();
  const std::size_t n = c.args.size();
  const std::size_t width = 3 + n * (2 + kMaxRank);
  std::vector<std::int64_t> mine(width, 0);
  mine[0] = static_cast<std::int64_t>(an.summary.ir_hash_lo);
  mine[1] = static_cast<std::int64_t>(an.summary.ir_hash_hi);
  mine[2] = static_cast<std::int64_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t* row = &mine[3 + i * (2 + kMaxRank)];
    row[0] = c.blocks[i] ? 1 : 0;
    row[1] = c.args[i].is_array ? c.args[i].rank : 0;
    for (int d = 0; c.blocks[i] && d < c.blocks[i]->rank; ++d) row[2 + d] = c.blocks[i]->global[d];
  }
  std::vector<std::int64_t> all(width * static_cast<std::size_t>(grid.size()));
  MPI_Allgather(mine.data(), static_cast<int>(width), MPI_INT64_T, all.data(), static_cast<int>(width), MPI_INT64_T, comm);
  const std::int64_t* ref = all.data();
  for (int r = 1; r < grid.size(); ++r) {
    const std::int64_t* other = &all[static_cast<std::size_t>(r) * width];
    if (other[0] != ref[0] || other[1] != ref[1] || other[2] != ref[2])
      fail(kernel,
           "rank {} traced other IR than rank 0 (their structural hashes differ): every rank must run the same kernel on "
           "the same kinds of arguments. A host value the lambda captures (by [&]) that differs between ranks does this: "
           "pass it as a kernel parameter (kiln::Int, kiln::Double), whose value may differ per rank",
           r);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t* a = &ref[3 + i * (2 + kMaxRank)];
      const std::int64_t* b = &other[3 + i * (2 + kMaxRank)];
      if (std::memcmp(a, b, sizeof(std::int64_t) * (2 + kMaxRank)) == 0) continue;
      const int rank = static_cast<int>(std::max(a[1], b[1]));
      const std::string here = fmt::format("rank {}", r);
      const std::string what =
          a[0] != b[0] ? fmt::format("is a kiln::dist::Array on {} but not on {}", a[0] ? "rank 0" : here,
                                     a[0] ? here : "rank 0")
                       : fmt::format("has global shape {} on rank {} but {} on rank 0", shape_text(rank, b + 2), r,
                                     shape_text(rank, a + 2));
      fail(kernel, "{} {}: every rank passes the same distributed arrays (made with one global shape on every rank)",
           arg_label(an.summary, i), what);
    }
  }
}

/// A stencil writing into an array it reads would read neighbours it already overwrote (one process copies
/// the input first, which here would leave the ghost layers behind). Checked at every call: the arrays are
/// the call's, the same on every rank.
void check_in_place(const Call& c, const TraceSummary& s, const std::string& kernel) {
  for (const auto& st : s.stencils) {
    if (st.target < 0 || !c.blocks[static_cast<std::size_t>(st.target)]) continue;
    for (int w : st.windows)
      if (w >= 0 && c.blocks[static_cast<std::size_t>(w)] == c.blocks[static_cast<std::size_t>(st.target)])
        fail(kernel,
             "{} writes into {}, the array it reads as {}: write into a second kiln::dist::Array and swap the two after "
             "the call",
             st.origin, arg_label(s, static_cast<std::size_t>(st.target)), arg_label(s, static_cast<std::size_t>(w)));
  }
}

/// The ghosts each block of the call needs: one need per block, however many arguments pass it (each need
/// posts its own receives into the block's ghosts, and fills them by its border rule), as wide as the
/// widest of them. Arguments of one block read under different border rules would need two sets of ghosts:
/// a DistributedError naming both. Per call: which arguments share a block is the call's, the same on
/// every rank (every rank passes the same arrays).
std::vector<HaloNeed> block_needs(const Call& c, const Analysis& an, const std::string& kernel) {
  std::vector<HaloNeed> needs;
  std::vector<std::size_t> first_arg;
  for (std::size_t i = 0; i < c.args.size(); ++i) {
    if (!an.halos[i]) continue;
    const HaloNeed& h = *an.halos[i];
    std::size_t k = 0;
    while (k < needs.size() && needs[k].block != c.blocks[i]) ++k;
    if (k == needs.size()) {
      needs.push_back(h);
      needs.back().block = c.blocks[i];
      first_arg.push_back(i);
      continue;
    }
    HaloNeed& m = needs[k];
    if (m.border != h.border || (h.border == Border::constant && m.cval != h.cval))
      fail(kernel,
           "{} and {} are one kiln::dist::Array, read by stencils with different borders in one call: its ghost layers "
           "hold one border. Pass a copy of the array as one of them, or run those stencils in separate kiln::dist::run "
           "calls",
           arg_label(an.summary, first_arg[k]), arg_label(an.summary, i));
    for (int d = 0; d < m.block->rank; ++d) {
      m.lo[d] = std::max(m.lo[d], h.lo[d]);
      m.hi[d] = std::max(m.hi[d], h.hi[d]);
    }
  }
  return needs;
}

Analysis analyze(Call& c, const std::string& kernel) {
  Analysis an;
  // Traced with the global shapes, so that every rank traces the same signature (a one-element block
  // would otherwise trace with a unit extent).
  std::vector<ArgValue> global = c.args;
  for (std::size_t i = 0; i < global.size(); ++i)
    if (c.blocks[i])
      for (int d = 0; d < c.blocks[i]->rank; ++d) global[i].array.shape[d] = c.blocks[i]->global[d];
  an.summary = c.core->summarize(c.options_id, global.data(), global.size());
  const TraceSummary& s = an.summary;
  if (s.has_result)
    throw DistributedError(fmt::format("kernel '{}' returns a value: on kiln::dist::Arrays a kernel writes into its "
                                       "arguments, one block per rank. Write the result into an argument, and reduce "
                                       "with kiln::dist::sum/min/max/prod",
                                       kernel));
  an.halos.resize(c.args.size());
  for (const auto& st : s.stencils) {
    const int rank = static_cast<int>(st.lo.size());
    const auto border = static_cast<Border>(st.border);
    for (std::size_t w = 0; w < st.windows.size(); ++w) {
      const int p = st.windows[w];
      if (p < 0)
        fail(kernel,
             "{} reads '{}', an array the kernel makes: on kiln::dist::Arrays a stencil reads the kernel's parameters, "
             "whose ghost layers kiln exchanges before the call. Split the kernel there (one kiln::dist::run per "
             "stencil of a computed array)",
             st.origin, st.window_names[w]);
      const auto i = static_cast<std::size_t>(p);
      if (!c.blocks[i])
        fail(kernel, "{} reads {}, which is not a kiln::dist::Array: pass the stencil's inputs as distributed arrays",
             st.origin, arg_label(s, i));
      std::optional<HaloNeed>& h = an.halos[i];
      if (!h) {
        h.emplace();
        h->border = border;
        h->cval = st.cval;
        h->name = st.window_names[w];
      } else if (h->border != border || (border == Border::constant && h->cval != st.cval)) {
        fail(kernel,
             "{} is read by stencils with different borders in one call: its ghost layers hold one border. Run those "
             "stencils in separate kiln::dist::run calls",
             arg_label(s, i));
      }
      for (int d = 0; d < rank; ++d) {
        h->lo[d] = std::max(h->lo[d], -st.lo[static_cast<std::size_t>(d)]);
        h->hi[d] = std::max(h->hi[d], st.hi[static_cast<std::size_t>(d)]);
        if (border == Border::skip) {
          an.skip_lo[d] = std::max(an.skip_lo[d], -st.lo[static_cast<std::size_t>(d)]);
          an.skip_hi[d] = std::max(an.skip_hi[d], st.hi[static_cast<std::size_t>(d)]);
        }
      }
    }
  }
  // One grid and one global shape for the call's distributed arrays: they are computed block by block.
  const Block* first = nullptr;
  std::size_t first_i = 0;
  for (std::size_t i = 0; i < c.args.size(); ++i) {
    const Block* b = c.blocks[i];
    if (!b) continue;
    if (!first) {
      first = b;
      first_i = i;
      continue;
    }
    int same_comm = MPI_UNEQUAL;
    if (b->grid.comm() != first->grid.comm()) MPI_Comm_compare(b->grid.comm(), first->grid.comm(), &same_comm);
    if (b->grid.comm() != first->grid.comm() && same_comm != MPI_IDENT)
      fail(kernel, "{} is distributed over another kiln::dist::Grid than {}: make the arrays of one call on one Grid",
           arg_label(s, i), arg_label(s, first_i));
    bool same = b->rank == first->rank;
    for (int d = 0; same && d < b->rank; ++d) same = b->global[d] == first->global[d];
    if (!same)
      fail(kernel,
           "{} has global shape {} but {} has {}: the distributed arrays of one call have one shape (they are computed "
           "block by block)",
           arg_label(s, i), shape_text(b->rank, b->global), arg_label(s, first_i), shape_text(first->rank, first->global));
  }
  return an;
}

/// Analyses by kernel and signature. An entry remembers its kernel weakly: a kernel made later at the
/// same address (a new kiln::jit in a loop) is another kernel, and must not find the old entry — on one
/// rank but not another, it would skip the first call's collective check the others enter.
struct Entry {
  std::weak_ptr<kiln::detail::KernelCore> core;
  std::shared_ptr<const Analysis> analysis;
};
struct Table {
  std::mutex mutex;
  std::map<std::string, Entry> entries;
};
Table& table() {
  static Table* t = new Table;  // never destroyed: calls may come from exit handlers
  return *t;
}

void call_on(const Call& c, const Box& box, int rank) {
  if (box.empty(rank)) return;
  std::vector<ArgValue> args = c.args;
  for (std::size_t i = 0; i < args.size(); ++i)
    if (c.blocks[i]) args[i].array = c.blocks[i]->desc(box);
  c.core->call(c.options_id, args.data(), args.size(), nullptr);
}

/// The most positions of one rim chunk: large enough that a kernel call's fixed cost (argument checks,
/// variant lookup: about a microsecond) is small against its work, small enough that a slab of a large
/// block spreads over the team.
constexpr std::int64_t kRimChunk = 16384;

/// Cuts `slab` into chunks of at most kRimChunk positions along its longest axis, each at least two
/// positions long there (a chunk of extent 1 would select another compiled variant of the kernel).
void cut(const Box& slab, int rank, std::vector<Box>& out) {
  if (slab.empty(rank)) return;
  int axis = 0;
  std::int64_t positions = 1;
  for (int d = 0; d < rank; ++d) {
    positions *= slab.hi[d] - slab.lo[d];
    if (slab.hi[d] - slab.lo[d] > slab.hi[axis] - slab.lo[axis]) axis = d;
  }
  const std::int64_t extent = slab.hi[axis] - slab.lo[axis];
  const std::int64_t pieces = std::clamp<std::int64_t>((positions + kRimChunk - 1) / kRimChunk, 1, std::max<std::int64_t>(1, extent / 2));
  for (std::int64_t p = 0; p < pieces; ++p) {
    Box b = slab;
    b.lo[axis] = slab.lo[axis] + extent * p / pieces;
    b.hi[axis] = slab.lo[axis] + extent * (p + 1) / pieces;
    out.push_back(b);
  }
}

/// Runs the kernel on every chunk: in one parallel region of the kernels' thread count (the interior's
/// team, so libgomp keeps its threads), each chunk on one thread. The first error is rethrown after it.
/// A single chunk goes through the region too: called alone, its parfor would fork a team of the size its
/// work is worth (a 1 x 2048 row of jacobi2d on 8 threads: 1.96 ms per step against 0.89 without overlap).
void call_on_chunks(const Call& c, const std::vector<Box>& chunks, int rank) {
  const int threads = kiln::num_threads();
  if (chunks.empty()) return;
  if (threads <= 1) {
    for (const Box& b : chunks) call_on(c, b, rank);
    return;
  }
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto n = static_cast<std::int64_t>(chunks.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t k = 0; k < n; ++k) {
    try {
      call_on(c, chunks[static_cast<std::size_t>(k)], rank);
    } catch (...) {
      std::lock_guard lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

/// The CUDA target, one GPU per rank: each block's copy on this rank's GPU made current; the halos exchanged
/// through the host (the owned bands the messages and border rules read brought down, the exchange and the
/// border fill done on the host copy, the ghost layers taken up); then one kernel call on the region with the
/// device copies as arguments. No overlap: a CUDA call returns when its kernel has finished, so the interior
/// cannot run while the halos travel.
void run_on_device(const Call& c, std::vector<HaloNeed> needs, const Box& region, int rank, const Grid& grid,
                   const std::string& kernel) {
  const int device = cuda::current_device();
  std::vector<Block*> exchanged;
  // What can fail on one rank alone (device or pinned memory, the copy kernel's first compilation) comes
  // before the exchange, which the other ranks would otherwise wait in for ever: the ranks agree first.
  std::string failure;
  try {
    for (Block* b : c.blocks)
      if (b) b->mirror.to_device(*b, device);
    for (const HaloNeed& h : needs) {
      h.block->mirror.download_bands(*h.block, h.lo, h.hi);
      exchanged.push_back(h.block);
    }
  } catch (const Error& e) {
    failure = e.what();
  }
  if (!needs.empty()) {
    int failed_here = failure.empty() ? 0 : 1, failed_anywhere = 0;
    MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX, grid.comm());
    if (failed_anywhere && !failed_here)
      fail(kernel, "another rank failed to take its blocks to its GPU (its error is printed there); this rank stops too");
  }
  if (!failure.empty()) throw DeviceError(failure);
  if (!needs.empty()) {
    Exchange exchange(std::move(needs));
    exchange.finish();
    for (Block* b : exchanged) b->mirror.upload_ghosts(*b);
  }
  if (!c.compute || region.empty(rank)) return;
  std::vector<ArgValue> args = c.args;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const Block* b = c.blocks[i];
    if (!b) continue;
    args[i].array = b->desc(region);  // the host copy's view, moved onto the device copy (the same layout)
    args[i].array.data = b->mirror.base() + (static_cast<std::byte*>(args[i].array.data) - b->base());
    args[i].on_device = true;
    args[i].device = device;
  }
  c.core->call(c.options_id, args.data(), args.size(), nullptr);
  for (std::size_t i = 0; i < args.size(); ++i)
    if (c.blocks[i] && args[i].writable) c.blocks[i]->mirror.written_on_device();
}

}  // namespace

void run(Call& c) {
  const Block* any = nullptr;
  for (const Block* b : c.blocks)
    if (b) any = b;
  const std::string kernel = c.core->name();
  if (!any)
    fail(kernel, "kiln::dist::run was given no kiln::dist::Array: call the kernel itself");
  const std::string key = signature(c, *any);
  std::shared_ptr<const Analysis> an;
  {
    std::lock_guard lock(table().mutex);
    if (auto it = table().entries.find(key); it != table().entries.end()) {
      if (it->second.core.lock() == c.core) an = it->second.analysis;
      else table().entries.erase(it);
    }
  }
  if (!an) {
    // The agreement check comes first: a rank whose trace fails must not leave the others waiting in it.
    auto fresh = std::make_shared<Analysis>();
    std::string failure;
    try {
      *fresh = analyze(c, kernel);
    } catch (const Error& e) {
      failure = e.what();
    }
    int failed_here = failure.empty() ? 0 : 1, failed_anywhere = 0;
    MPI_Allreduce(&failed_here, &failed_anywhere, 1, MPI_INT, MPI_MAX, any->grid.comm());
    if (failed_here) throw DistributedError(failure);
    if (failed_anywhere)
      fail(kernel, "another rank failed to trace or check this call (its error is printed there); this rank stops too");
    check_agreement(c, *fresh, kernel, any->grid);
    std::lock_guard lock(table().mutex);
    an = fresh;
    table().entries[key] = Entry{c.core, std::move(fresh)};
  }

  check_in_place(c, an->summary, kernel);
  std::vector<HaloNeed> needs = block_needs(c, *an, kernel);
  // Checked at every call, not with the cached analysis: it is of this call's blocks (rank-local, and the
  // same answer on every rank, from the partition alone).
  for (const HaloNeed& h : needs) check_halo(kernel, h);
  // Ghost layers as wide as the reads, then the arguments' views of the (possibly new) storage.
  for (HaloNeed& h : needs) h.block->ensure_ghosts(h.lo, h.hi);
  const int rank = any->rank;
  // The positions computed: the block, less the global edge bands a skip border leaves alone.
  Box region;
  for (int d = 0; d < rank; ++d) {
    region.lo[d] = std::max<std::int64_t>(0, an->skip_lo[d] - any->start[d]);
    region.hi[d] = std::min<std::int64_t>(any->count[d], any->global[d] - an->skip_hi[d] - any->start[d]);
  }
  if (c.target == Target::cuda) {
    run_on_device(c, std::move(needs), region, rank, any->grid, kernel);
    return;
  }
  // The cpu target works on the host copies (after a CUDA call on these arrays, brought down first).
  for (Block* b : c.blocks)
    if (b) b->mirror.to_host(*b, true);
  if (needs.empty()) {
    if (c.compute) call_on(c, region, rank);
    return;
  }
  Exchange exchange(std::move(needs));
  if (!c.compute) {
    exchange.finish();
    return;
  }
  // The interior: the positions whose reads touch no ghost that a message writes. At a global edge whose
  // border rule needs only the block's own planes, the ghosts are written first and the interior reaches
  // the edge: no rim there (a rim along the last axis is a strided second pass over the block).
  Box interior = region;
  for (int d = 0; d < rank; ++d) {
    interior.lo[d] = std::max(region.lo[d], exchange.wait_reach(d, false));
    interior.hi[d] = std::min(region.hi[d], any->count[d] - exchange.wait_reach(d, true));
  }
  if (!c.overlap || !exchange.travels() || interior.empty(rank)) {
    exchange.finish();
    call_on(c, region, rank);
    return;
  }
  exchange.fill_settled();
  call_on(c, interior, rank);  // reads only the block and settled ghosts: runs while the halos travel
  exchange.finish();
  // The rim: per axis d, the slabs below and above the interior, over the interior of the axes before d
  // and the whole region of those after it (together the region less the interior, each position once).
  std::vector<Box> chunks;
  for (int d = 0; d < rank; ++d) {
    Box low, high;
    for (int e = 0; e < rank; ++e) {
      low.lo[e] = high.lo[e] = e < d ? interior.lo[e] : region.lo[e];
      low.hi[e] = high.hi[e] = e < d ? interior.hi[e] : region.hi[e];
    }
    low.hi[d] = interior.lo[d];
    high.lo[d] = interior.hi[d];
    cut(low, rank, chunks);
    cut(high, rank, chunks);
  }
  call_on_chunks(c, chunks, rank);
}

}  // namespace kiln::dist::detail
