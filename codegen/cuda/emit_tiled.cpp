// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tiled loops (Strategy::Tiled): a parfor whose iterations ("rows") each run one sequential loop over the same
// range, reading arrays at indices that depend only on the loop's index and on values every row shares — the
// all-pairs form of n-body, where every body reads body j at step j. With one thread per row, every thread
// fetches step j's elements itself: every warp issues a global load per array and step, and the loop's steps
// wait on them. Here a block of T rows (kTiledThreads, fewer when the rows are few: launch_model.hpp) runs the
// loop in rounds of T steps: each thread fetches one step's elements of every tiled load into shared memory
// (consecutive threads, consecutive steps), the block waits at a barrier, and every row then runs the round's
// steps in order, reading those elements from the tile (one broadcast read, vectorized when a step's cells
// are 8 or 16 bytes).
//
// Each row's steps run in the order of its loop with the same expressions, so the results are the bits of
// one thread per row (and of the interpreter). The rule keeps that true and the barriers reachable:
// - the loop is the body's only loop at its top level; the statements before it hold no loop, check,
//   allocation or atomic (threads beyond the last row run them as the last row, their stores suppressed), and
//   no statement of the body can fail (a failing thread would leave before the barriers);
// - the loop's bounds read only values every row shares (captured scalars, extents, lets of them), so every
//   thread of a block runs the same rounds;
// - a tiled load's array is one the kernel never writes (and no written array may alias it), and its indices
//   read only the loop's index and shared values, no element: the tile's cell is the element the row's load
//   reads at that step. Each cell is fetched only when its indices lie within the array's extents, so a load
//   that the loop makes only under a condition is fetched safely at every step;
// - halo reads (kiln::dist views whose reads reach into ghost layers) keep their loads: the extents would
//   exclude the ghosts.
#include <algorithm>
#include <functional>

#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/loads_in.hpp"
#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

/// Cells per step for `count` sites of `elem`: padded so that a step's cells are 1, 2, 4, 8 or 16 bytes or a
/// whole number of 16-byte vectors, which the tile's alignment lets one vector load read.
int padded_width(int count, DType elem) {
  const int size = static_cast<int>(size_of(elem));
  int w = count;
  if (w * size <= 16) {
    while ((w * size) & (w * size - 1)) ++w;  // a power of two in bytes
  } else {
    while ((w * size) % 16) ++w;
  }
  return w;
}

}  // namespace

void Emitter::plan_tiled() {
  if (k_.strategy != Strategy::Elementwise || opts_.halo_reads || !p_.array_reductions.empty() || ir::can_fail(p_.body)) return;
  const std::optional<RowLoop> split = split_at_loop(p_.body);
  if (!split) return;
  TiledPlan plan;
  static_cast<RowLoop&>(plan) = *split;

  // Values that differ between rows: the parfor's indices and whatever its body declares or assigns, but the
  // lets before the loop whose values are shared.
  ir::VarSet varying = ir::declared_in(p_.body);
  for (const ir::VarNode* v : ir::assigned_vars(p_.body)) varying.insert(v);
  for (const ir::Var& i : p_.indices) varying.insert(i.get());
  const ir::VarSet assigned = ir::assigned_vars(p_.body);
  ir::LetValues lets;
  for (const ir::Stmt& s : plan.before)
    if (s->kind == ir::StmtKind::Let && !assigned.count(s->as<ir::LetStmt>().var.get()))
      lets[s->as<ir::LetStmt>().var.get()] = s->as<ir::LetStmt>().init;
  const ir::VarNode* k = plan.loop->index.get();
  // `shared(e, with_k)`: e reads no element and only values every row shares (and the loop's index if with_k).
  std::function<bool(const ir::Expr&, bool, int)> shared = [&](const ir::Expr& e, bool with_k, int depth) {
    if (depth > 16 || ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e)) {
      if (v.get() == k && with_k) continue;
      if (!varying.count(v.get())) continue;
      const auto it = lets.find(v.get());
      if (it == lets.end() || !shared(it->second, false, depth + 1)) return false;
    }
    return true;
  };
  if (!shared(plan.loop->begin, false, 0) || !shared(plan.loop->end, false, 0)) return;

  std::int64_t bytes = 0;
  for (const ir::LoadExpr* l : loads_in(plan.loop->body)) {
    const ir::VarNode* a = l->array.get();
    if (varying.count(a) || written_.count(a)) continue;
    bool aliased = false;
    for (const ir::VarNode* w : written_) aliased = aliased || ir::may_alias(w, a);
    if (aliased) continue;
    bool reads_k = false, ok = true;
    for (const ir::Expr& i : l->indices) {
      ok = ok && shared(i, true, 0);
      reads_k = reads_k || ir::uses(i, k);
    }
    if (!ok || !reads_k) continue;  // an index that is the same at every step is a loop invariant, not a tile's
    int site = site_of(plan.sites, *l);
    if (site < 0) {
      // A new site widens its element type's tile (or starts one): only while the tiles fit the budget.
      const DType t = a->type.elem;
      auto tile = std::find_if(plan.tiles.begin(), plan.tiles.end(), [&](const TiledPlan::Tile& x) { return x.elem == t; });
      const int count = 1 + static_cast<int>(std::count_if(plan.sites.begin(), plan.sites.end(),
                                                           [&](const TiledPlan::Site& x) { return x.array->type.elem == t; }));
      const std::int64_t grown = bytes - (tile == plan.tiles.end() ? 0 : static_cast<std::int64_t>(tile->width) * size_of(t)) * kTiledThreads +
                                 static_cast<std::int64_t>(padded_width(count, t)) * size_of(t) * kTiledThreads;
      if (grown > kMaxStencilTileBytes) continue;
      bytes = grown;
      if (tile == plan.tiles.end()) {
        plan.tiles.push_back({t, 0});
        tile = plan.tiles.end() - 1;
      }
      tile->width = padded_width(count, t);
      plan.sites.push_back({a, l->indices, static_cast<int>(tile - plan.tiles.begin()), count - 1});
      site = static_cast<int>(plan.sites.size()) - 1;
    }
    plan.loads[l] = site;
  }
  if (plan.sites.empty()) return;
  // No occupancy request by default: asking ptxas for 8 blocks of 256 (32 registers) made n-body slower on an
  // H100 (7.82 ms against 7.65 ms: a spill, while 65 536 rows put only 2 blocks on an SM anyway).
  plan.min_blocks = opts_.tiled_min_blocks;
  for (const TiledPlan::Site& s : plan.sites) guarded_arrays_.insert(s.array);
  tiled_ = std::move(plan);
  k_.strategy = Strategy::Tiled;
}

void Emitter::tiled_loops() {
  const TiledPlan& tp = *tiled_;
  const std::string T = std::to_string(kTiledThreads);
  for (std::size_t t = 0; t < tp.tiles.size(); ++t) {
    std::string what;
    for (const TiledPlan::Site& s : tp.sites)
      if (s.tile == static_cast<int>(t)) what += (what.empty() ? "" : ", ") + s.array->name;
    line("__shared__ __align__(16) " + std::string(type_name(tp.tiles[t].elem)) + " kiln_tile" + std::to_string(t) + "[" + T + " * " +
         std::to_string(tp.tiles[t].width) + "];  // " + what + " at a round's steps");
  }
  open_block_rows("blockDim.x", tp.before);  // threads past the last row also fetch their share of each round
  const ir::ForStmt& f = *tp.loop;
  const std::string begin = expr(f.begin), end = expr(f.end);
  line("{");
  ++depth_;
  const std::string k = bind(f.index.get());
  // The same for every row. A round starts at kiln_k0, so that few values stay live across the steps.
  line("const long long kiln_end = " + end + ";");
  line("for (long long kiln_k0 = " + begin + "; kiln_k0 < kiln_end; kiln_k0 += blockDim.x) {");
  ++depth_;
  line("if (threadIdx.x < kiln_end - kiln_k0) {  // thread t fetches step k0 + t");
  ++depth_;
  line("const long long " + k + " = kiln_k0 + threadIdx.x;");
  lets_.emplace_back();
  for (std::size_t s = 0; s < tp.sites.size(); ++s) {
    const TiledPlan::Site& site = tp.sites[s];
    const std::string inside = fetched_in_extents(site.array, site.indices, s);
    line("if (" + inside + ") kiln_tile" + std::to_string(site.tile) + "[threadIdx.x * " + std::to_string(tp.tiles[static_cast<std::size_t>(site.tile)].width) +
         " + " + std::to_string(site.slot) + "] = " + element(site.array, site.indices) + ";");
    lets_.back().clear();
  }
  lets_.pop_back();
  --depth_;
  line("}");
  line("__syncthreads();");
  line("if (kiln_live) {");
  ++depth_;
  line("const unsigned kiln_round = (unsigned)min((long long)blockDim.x, kiln_end - kiln_k0);");
  line("#pragma unroll 4");
  line("for (unsigned kiln_j = 0; kiln_j < kiln_round; ++kiln_j) {  // this row's steps, in order");
  ++depth_;
  line("[[maybe_unused]] const long long " + k + " = kiln_k0 + kiln_j;");
  lets_.emplace_back();
  tiled_on_ = true;
  stmt(f.body);
  tiled_on_ = false;
  lets_.pop_back();
  --depth_;
  line("}");
  --depth_;
  line("}");
  line("__syncthreads();  // every row is done with the round's tiles");
  --depth_;
  line("}");
  --depth_;
  line("}");
  close_block_rows(tp.after);
}

std::string Emitter::fetched_in_extents(const ir::VarNode* v, const std::vector<ir::Expr>& indices, std::size_t site) {
  const ArrayNames& a = array(v);
  std::string inside;
  for (std::size_t d = 0; d < indices.size(); ++d) {
    // Each index once: the test and the address read the same named value.
    const std::string i = fresh("kiln_i" + std::to_string(site) + "_" + std::to_string(d));
    line("const long long " + i + " = " + expr(indices[d]) + ";");
    lets_.back().emplace_back(indices[d], i);
    inside += (inside.empty() ? "" : " && ") + std::string("(unsigned long long)") + i + " < (unsigned long long)" + a.extent[d];
  }
  return inside;
}

std::string Emitter::tiled_cell(int site) const {
  const TiledPlan::Site& s = tiled_->sites[static_cast<std::size_t>(site)];
  return "kiln_tile" + std::to_string(s.tile) + "[kiln_j * " + std::to_string(tiled_->tiles[static_cast<std::size_t>(s.tile)].width) + " + " +
         std::to_string(s.slot) + "]";
}

}  // namespace kiln::codegen::cuda
