// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencils: elementwise parfors that read arrays at the index plus small constant offsets — the interiors
// that lower_stencils produces, and stencils written with prange. Emitted as plain grid-stride loops, each
// neighbour is a load of its own: a 3-point average loads every element three times and a 5-point Jacobi
// sweep four times, and although the caches absorb most of the DRAM traffic, the kernel is bound by the
// L1/L2 requests (ncu on an H200: L2 the busiest unit, 55 % L1 hits, 58-81 % of the copy ceiling).
//
// Here each warp takes a strip of `columns` runs of 32 consecutive elements of the contiguous axis (lane l
// computes elements l, l + 32, ...: every load and store of the warp is one coalesced line) and, when the
// stencil reaches across rows, `rows` consecutive rows. Each window row is loaded once into registers and
// the neighbours come from other lanes, through warp shuffles or a per-warp shared-memory tile; rows shared
// by several output rows of a thread are loaded once for all of them. The loads are guarded by the array's
// extents (a window may reach past what the body reads, e.g. behind a border branch) and are the same loads
// the body makes, so results are bit-identical to the plain loops.
#include <algorithm>
#include <cstdlib>

#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

/// What a parfor body defines per iteration (lets, loop and nested parfor indices), its lets by
/// initializer, its loads, and whether it can leave a thread's iterations early (a warp's shuffles need
/// every lane).
struct BodyFacts : ir::IRVisitor {
  ir::VarSet defined;
  ir::LetValues lets;
  std::vector<const ir::LoadExpr*> loads;
  bool leaves_early = false;

 protected:
  void visit(const ir::LetStmt& s) override {
    defined.insert(s.var.get());
    lets[s.var.get()] = s.init;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::ForStmt& s) override {
    defined.insert(s.index.get());
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::ParforStmt& s) override {
    for (const auto& i : s.indices) defined.insert(i.get());
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::CheckStmt& s) override {
    leaves_early = true;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::AllocateStmt& s) override {
    leaves_early = true;
    ir::IRVisitor::visit(s);
  }
  void visit(const ir::BindStmt&) override { leaves_early = true; }
  void visit(const ir::LoadExpr& e) override {
    loads.push_back(&e);
    ir::IRVisitor::visit(e);
  }
};

/// One row of a window: the column offsets read from it, the one its registers hold (`base`, read most
/// often), and the others relative to it (from other lanes).
struct WindowRow {
  std::int64_t row = 0;  ///< relative to the thread's first row (0 for a window that is not vertical)
  std::int64_t base = 0;
  std::vector<std::int64_t> deltas;  ///< c - base for every other offset c, ascending
  std::int64_t lo() const { return deltas.empty() ? 0 : std::min<std::int64_t>(0, deltas.front()); }
  std::int64_t hi() const { return deltas.empty() ? 0 : std::max<std::int64_t>(0, deltas.back()); }
};

std::vector<WindowRow> window_rows(const StencilPlan& plan, int g) {
  const auto& group = plan.groups[static_cast<std::size_t>(g)];
  std::map<std::int64_t, std::map<std::int64_t, int>> need;  // row -> column offset -> uses
  for (const auto& [d, cs] : group.offsets)
    for (int v = 0; v < (group.vertical ? plan.rows : 1); ++v)
      for (std::int64_t c : cs) ++need[v + d][c];
  std::vector<WindowRow> rows;
  for (const auto& [r, cs] : need) {
    WindowRow w;
    w.row = r;
    int best = -1;
    for (const auto& [c, n] : cs)
      if (n > best || (n == best && std::llabs(c) < std::llabs(w.base))) best = n, w.base = c;
    for (const auto& [c, n] : cs)
      if (c != w.base) w.deltas.push_back(c - w.base);
    rows.push_back(w);
  }
  return rows;
}

/// Shared-memory tile row: the warp's 32 x columns elements with room for the farthest neighbours.
constexpr std::int64_t kTileHalo = 2 * kMaxStencilOffset;
std::int64_t tile_width(int columns) { return 32 * columns + 2 * kTileHalo; }

std::string ll(std::int64_t v) { return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL"; }

}  // namespace

void Emitter::plan_stencil() {
  const StencilSettings& st = opts_.stencil;
  // Windows are loaded ahead of the body, which is right only where the arrays read do not overlap the
  // arrays written: the __restrict__ kernels (unroll > 1), whose host checks that at each launch.
  if (st.mode == StencilMode::Off || opts_.halo_reads || k_.strategy != Strategy::Elementwise || k_.unroll <= 1 || !p_.array_reductions.empty()) return;
  BodyFacts facts;
  facts.walk(p_.body);
  if (facts.leaves_early) return;
  for (const ir::VarNode* v : ir::assigned_vars(p_.body)) facts.lets.erase(v);
  const int r = k_.rank;
  const ir::VarNode* col = p_.indices[static_cast<std::size_t>(r - 1)].get();
  const ir::VarNode* row = r >= 2 ? p_.indices[static_cast<std::size_t>(r - 2)].get() : nullptr;
  auto invariant = [&](const ir::Expr& e) {
    if (ir::has_load(e)) return false;
    for (const ir::Var& v : ir::free_vars(e))
      if (v.get() == col || v.get() == row || facts.defined.count(v.get())) return false;
    return true;
  };
  StencilPlan plan;
  plan.mode = st.mode;
  plan.columns = st.rounds;
  for (const ir::LoadExpr* l : facts.loads) {
    const ir::VarNode* a = l->array.get();
    if (written_.count(a) || !a->type.unit_stride) continue;
    const std::size_t rank = l->indices.size();
    const auto c = ir::index_offset(l->indices[rank - 1], col, &facts.lets);
    if (!c || std::llabs(*c) > kMaxStencilOffset) continue;
    std::int64_t d = 0;
    bool vertical = false;
    std::size_t leading = rank - 1;
    if (row && rank >= 2)
      if (const auto dd = ir::index_offset(l->indices[rank - 2], row, &facts.lets); dd && std::llabs(*dd) <= kMaxStencilOffset) {
        vertical = true;
        d = *dd;
        leading = rank - 2;
      }
    bool ok = true;
    for (std::size_t k = 0; k < leading; ++k) ok = ok && invariant(l->indices[k]);
    if (!ok) continue;
    int g = -1;
    for (std::size_t k = 0; k < plan.groups.size() && g < 0; ++k) {
      const StencilPlan::Group& G = plan.groups[k];
      if (G.array != a || G.vertical != vertical || G.prefix.size() != leading) continue;
      bool same = true;
      for (std::size_t q = 0; q < leading; ++q) same = same && ir::equal(G.prefix[q], l->indices[q]);
      if (same) g = static_cast<int>(k);
    }
    if (g < 0) {
      StencilPlan::Group G;
      G.array = a;
      G.vertical = vertical;
      G.prefix.assign(l->indices.begin(), l->indices.begin() + static_cast<std::ptrdiff_t>(leading));
      plan.groups.push_back(std::move(G));
      g = static_cast<int>(plan.groups.size()) - 1;
    }
    plan.groups[static_cast<std::size_t>(g)].offsets[d].insert(*c);
    plan.loads[l] = {g, d, *c};
  }
  // Worth it only where an element is read by more than one iteration.
  bool reuse = false, across_rows = false;
  for (const auto& G : plan.groups) {
    std::size_t pairs = 0;
    for (const auto& [d, cs] : G.offsets) pairs += cs.size();
    reuse = reuse || pairs >= 2;
    across_rows = across_rows || (G.vertical && G.offsets.size() >= 2);
  }
  if (!reuse) return;
  plan.rows = across_rows ? st.rows : 1;
  if (plan.mode == StencilMode::Shared) {
    // Static shared memory: past 40 KiB the tiles would limit occupancy (and 48 KiB is the static limit).
    // Fewer rows per thread need fewer tile rows; if even one row's tiles do not fit, the plain loops
    // (measured faster than the shuffle form, docs/gpu.md).
    auto tile_bytes = [&] {
      std::int64_t bytes = 0;
      for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        std::int64_t exchanged = 0;
        for (const WindowRow& w : window_rows(plan, static_cast<int>(g))) exchanged += !w.deltas.empty();
        bytes += kStencilTileWarps * exchanged * tile_width(plan.columns) * size_of(plan.groups[g].array->type.elem);
      }
      return bytes;
    };
    while (tile_bytes() > kMaxStencilTileBytes && plan.rows > 1) plan.rows /= 2;
    if (tile_bytes() > kMaxStencilTileBytes) return;
  }
  for (const auto& G : plan.groups) guarded_arrays_.insert(G.array);
  k_.stencil_columns = plan.columns;
  k_.stencil_rows = plan.rows;
  k_.stencil_mode = plan.mode;
  stencil_ = std::move(plan);
}

std::string Emitter::stencil_value(const StencilPlan::Use& use) const {
  const StencilPlan::Group& G = stencil_->groups[static_cast<std::size_t>(use.group)];
  const std::int64_t r = G.vertical ? stencil_v_ + use.d : 0;
  return stencil_values_.at({use.group, r, stencil_u_, use.c});
}

void Emitter::stencil_loops() {
  const StencilPlan& sp = *stencil_;
  const int r = k_.rank, U = sp.columns, V = sp.rows;
  const bool shared = sp.mode == StencilMode::Shared;
  const std::string strip = std::to_string(32 * U);
  const std::string nx = "kiln_n" + std::to_string(r - 1), bx = "kiln_b" + std::to_string(r - 1);
  stencil_values_.clear();

  std::vector<std::vector<WindowRow>> windows;
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    windows.push_back(window_rows(sp, static_cast<int>(g)));
    if (!shared) continue;
    int exchanged = 0;
    for (const WindowRow& w : windows.back()) exchanged += !w.deltas.empty();
    if (exchanged)
      line("__shared__ " + std::string(type_name(sp.groups[g].array->type.elem)) + " kiln_tile" + std::to_string(g) + "[" +
           std::to_string(kStencilTileWarps) + "][" + std::to_string(exchanged) + "][" + std::to_string(tile_width(U)) + "];");
  }

  int open = 0;
  auto index = [&](int d, const std::string& t) {
    line("const long long " + bind(p_.indices[static_cast<std::size_t>(d)].get()) + " = kiln_b" + std::to_string(d) + " + (long long)" + t + ";");
  };
  if (r >= 3) {
    std::string count = "kiln_n0";
    for (int d = 1; d < r - 2; ++d) count += " * kiln_n" + std::to_string(d);
    line("for (unsigned long long kiln_tz = (unsigned long long)blockIdx.z * blockDim.z + threadIdx.z; kiln_tz < " + count +
         "; kiln_tz += (unsigned long long)gridDim.z * blockDim.z) {");
    ++depth_, ++open;
    if (r == 3) {
      index(0, "kiln_tz");
    } else {
      index(0, "(kiln_tz / kiln_n1)");
      index(1, "(kiln_tz % kiln_n1)");
    }
  }
  const std::string ny = "kiln_n" + std::to_string(r - 2), vv = std::to_string(V);
  if (r >= 2) {
    // Each thread takes V consecutive rows: the window rows between them are loaded once.
    line("for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty * " + vv + " < " + ny +
         "; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {");
    ++depth_, ++open;
    line("const long long kiln_i0 = kiln_b" + std::to_string(r - 2) + " + (long long)(kiln_ty * " + vv + ");");
  }
  // Strips start at multiples of 32 of the index (aligned lines when the rows are); blockDim.x is a
  // multiple of 32 (geometry), so a warp's lanes share their row and run the loops below together.
  line("const unsigned kiln_lane = threadIdx.x & 31u;");
  if (shared) line("const unsigned kiln_warp = (threadIdx.x + blockDim.x * threadIdx.y) >> 5;");
  line("const long long kiln_wa = " + bx + " - (((" + bx + " % 32) + 32) % 32);");
  line("const unsigned long long kiln_off = (unsigned long long)(" + bx + " - kiln_wa);");
  line("const unsigned long long kiln_wsx = ((unsigned long long)gridDim.x * blockDim.x) >> 5;");
  line("for (unsigned long long kiln_wx = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5; kiln_wx * " + strip +
       " < kiln_off + " + nx + "; kiln_wx += kiln_wsx) {");
  ++depth_, ++open;
  line("const unsigned long long kiln_t = kiln_wx * " + strip + " + kiln_lane;");
  line("const long long kiln_j0 = kiln_wa + (long long)kiln_t;");

  // The windows: registers for every row, then the neighbours' elements.
  for (std::size_t g = 0; g < sp.groups.size(); ++g) {
    const StencilPlan::Group& G = sp.groups[g];
    const ArrayNames& n = array(G.array);
    const int rank = G.array->type.rank;
    const std::string T = type_name(G.array->type.elem), gs = std::to_string(g);
    line("// window " + gs + ": " + G.array->name + (G.vertical ? ", rows " : ", row ") + std::to_string(windows[g].front().row) + ".." +
         std::to_string(windows[g].back().row));
    std::string guard, at;
    for (std::size_t k = 0; k < G.prefix.size(); ++k) {
      const std::string p = "kiln_g" + gs + "_i" + std::to_string(k);
      line("const long long " + p + " = " + expr(G.prefix[k]) + ";");
      guard += (guard.empty() ? "" : " && ") + std::string("(unsigned long long)") + p + " < (unsigned long long)" + n.extent[k];
      at += (at.empty() ? "" : " + ") + p + " * " + n.stride[k];
    }
    int slot = 0;
    for (std::size_t wi = 0; wi < windows[g].size(); ++wi) {
      const WindowRow& w = windows[g][wi];
      const std::string wn = "kiln_w" + gs + "_" + std::to_string(wi);
      std::string ok = guard, off = at;
      if (G.vertical) {
        const std::string rv = wn + "_row";
        line("const long long " + rv + " = kiln_i0 + " + ll(w.row) + ";");
        ok += (ok.empty() ? "" : " && ") + std::string("(unsigned long long)") + rv + " < (unsigned long long)" + n.extent[rank - 2];
        off += (off.empty() ? "" : " + ") + rv + " * " + n.stride[rank - 2];
      }
      if (ok.empty()) ok = "true";
      if (off.empty()) off = "0LL";
      line("const bool " + wn + "_ok = " + ok + ";");
      line("const long long " + wn + "_at = " + off + ";");
      // Round u holds element base + 32 u of the lane; round -1 (the last lanes) and round U (the first)
      // hold what the warp's edge lanes need from beyond the strip.
      auto reg = [&](int u) { return wn + "_" + (u < 0 ? std::string("m") : std::to_string(u)); };
      auto load = [&](int u, const std::string& lanes) {
        const std::string colv = "kiln_j0 + " + ll(w.base + 32 * static_cast<std::int64_t>(u));
        line("const " + T + " " + reg(u) + " = " + wn + "_ok" + lanes + " && (unsigned long long)(" + colv + ") < (unsigned long long)" +
             n.extent[rank - 1] + " ? " + n.data + "[" + wn + "_at + " + colv + "] : (" + T + ")0;");
      };
      const std::int64_t lo = w.lo(), hi = w.hi();
      if (lo < 0) load(-1, " && kiln_lane >= " + std::to_string(32 + lo) + "u");
      for (int u = 0; u < U; ++u) load(u, "");
      if (hi > 0) load(U, " && kiln_lane < " + std::to_string(hi) + "u");
      for (int u = 0; u < U; ++u) stencil_values_[{static_cast<int>(g), w.row, u, w.base}] = reg(u);
      if (w.deltas.empty()) continue;
      if (shared) {
        const std::string tile = "kiln_tile" + gs + "[kiln_warp][" + std::to_string(slot) + "]";
        if (lo < 0) line("if (kiln_lane >= " + std::to_string(32 + lo) + "u) " + tile + "[kiln_lane - " + std::to_string(32 - kTileHalo) + "] = " + reg(-1) + ";");
        for (int u = 0; u < U; ++u) line(tile + "[kiln_lane + " + std::to_string(kTileHalo + 32 * u) + "] = " + reg(u) + ";");
        if (hi > 0) line("if (kiln_lane < " + std::to_string(hi) + "u) " + tile + "[kiln_lane + " + std::to_string(kTileHalo + 32 * U) + "] = " + reg(U) + ";");
        for (std::int64_t dlt : w.deltas)
          for (int u = 0; u < U; ++u)
            stencil_values_[{static_cast<int>(g), w.row, u, w.base + dlt}] = tile + "[kiln_lane + " + std::to_string(kTileHalo + 32 * u + dlt) + "]";
        ++slot;
        continue;
      }
      for (std::int64_t dlt : w.deltas) {
        // x_u: round u of lane (l + delta) mod 32. Lanes whose neighbour lies beyond the warp take the
        // next (or previous) round of it.
        const std::string dn = wn + (dlt < 0 ? "_m" : "_p") + std::to_string(std::llabs(dlt));
        const int first = dlt < 0 ? -1 : 0, last = dlt > 0 ? U : U - 1;
        auto x = [&](int u) { return dn + "_x" + (u < 0 ? std::string("m") : std::to_string(u)); };
        for (int u = first; u <= last; ++u)
          line("const " + T + " " + x(u) + " = kiln_shfl(" + reg(u) + ", (kiln_lane + " + std::to_string(dlt & 31) + "u) & 31u);");
        for (int u = 0; u < U; ++u) {
          const std::string name = dn + "_" + std::to_string(u);
          if (dlt < 0)
            line("const " + T + " " + name + " = kiln_lane < " + std::to_string(-dlt) + "u ? " + x(u - 1) + " : " + x(u) + ";");
          else
            line("const " + T + " " + name + " = kiln_lane >= " + std::to_string(32 - dlt) + "u ? " + x(u + 1) + " : " + x(u) + ";");
          stencil_values_[{static_cast<int>(g), w.row, u, w.base + dlt}] = name;
        }
      }
    }
  }
  if (shared) line("__syncwarp();");

  // The body once per row and round, each guarded by the iteration space.
  for (int v = 0; v < V; ++v) {
    bool row_open = false;
    if (r >= 2) {
      if (V > 1) {
        line("if (kiln_ty * " + vv + " + " + std::to_string(v) + " < " + ny + ") {");
        ++depth_;
        row_open = true;
      }
      line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 2)].get()) + " = kiln_i0 + " + std::to_string(v) + ";");
    }
    for (int u = 0; u < U; ++u) {
      line("if (kiln_t + " + std::to_string(32 * u) + "ull - kiln_off < " + nx + ") {");
      ++depth_;
      line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 1)].get()) + " = kiln_j0 + " + std::to_string(32 * u) + ";");
      stencil_v_ = v;
      stencil_u_ = u;
      lets_.emplace_back();
      stmt(p_.body);
      lets_.pop_back();
      --depth_;
      line("}");
    }
    if (row_open) {
      --depth_;
      line("}");
    }
  }
  if (shared) line("__syncwarp();  // the tile is written again by the next strip");
  while (open-- > 0) {
    --depth_;
    line("}");
  }
}

}  // namespace kiln::codegen::cuda
