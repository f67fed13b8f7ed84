// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Marching 3-d stencils (2.5-d blocking): a 3-d parfor that reads an array at several planes z + dz gives
// each block z a chunk of planes, and each thread walks its chunk in order. The plan (emit_stencil.cpp) is
// the strip form's: a warp takes 32 x rounds columns and each thread `rows` rows.
//
// Every value the body reads, at every live plane, is a register that moves one plane down after each
// step: a step loads only its newest plane (once per thread), writes the rows that exchange neighbours to
// the warp's tile, and reads from it, once, the neighbours its registers keep. The body then reads only
// registers. At 5c560b4 the older planes' neighbours were read from a tile slot per plane at every use: 18
// shared loads per element of a 27-point stencil, about 0.33 ms of an H100's shared-memory bandwidth for
// 512^3 on their own, against the 0.45 ms that 80 % of the copy ceiling allows.
//
// The next step's newest plane is loaded while the current step computes (kiln_n* registers): the loads
// are in flight during the body, which a kernel holding two blocks per SM needs to keep the memory busy.
#include <algorithm>

#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

std::string ll(std::int64_t v) { return v < 0 ? "(" + std::to_string(v) + "LL)" : std::to_string(v) + "LL"; }

/// 32-bit registers per value of type t.
std::int64_t words(DType t) { return std::max<std::int64_t>(1, static_cast<std::int64_t>(size_of(t)) / 4); }

/// What a marching thread keeps besides the window values (march_registers): the walk's indices, chunk bounds,
/// lane, masks and the parameters it reads each step; per window row its offset and load bits; a copy's sum
/// and the value it adds, in words of the widest element. Calibrated with ptxas -v (CUDA 13.0, sm_90) on the
/// 7- and 27-point float stencils and the suite's 27-point double one at 1-8 rows, 1-2 rounds and 0-1 planes
/// ahead under __launch_bounds__(256, 2): every form estimated at 128 or less compiled without spills, and
/// every one that spilled was estimated above 128 (the 27-point at 8 rows without the prefetch: 132
/// estimated, spilled), but for the 7-point at 8 rows with the prefetch: 128 estimated, 126 used before the
/// copies stored through a step pointer, 128 and 8 bytes of spills after.
constexpr std::int64_t kMarchFixedRegisters = 28;
constexpr std::int64_t kMarchRowRegisters = 1;
constexpr std::int64_t kMarchCopyWords = 4;
/// Each round past the first: its copies' addresses and ptxas's schedule (a 7-point float walk took 63 more
/// registers with 2 rounds than with 1 at 4 rows, 38 of them values).
constexpr std::int64_t kMarchRoundRegisters = 28;

/// The register of plane p's window row wi at column offset c, round u (c == base: the row's own column).
std::string plane_reg(int g, std::size_t wi, int p, const WindowRow& w, std::int64_t c, int u) {
  std::string s = "kiln_w" + std::to_string(g) + "_" + std::to_string(wi) + "_p" + std::to_string(p) + "_" + std::to_string(u);
  if (c != w.base) s += std::string("_x") + (c < w.base ? "m" : "p") + std::to_string(std::llabs(c - w.base));
  return s;
}

/// The newest plane's load of row wi into buffer b: round u (-1: what the last lanes hold from before the
/// strip, U: what the first lanes hold from after it).
std::string newest_reg(int g, std::size_t wi, int u, int U, int b) {
  return std::string(b ? "kiln_nb" : "kiln_n") + std::to_string(g) + "_" + std::to_string(wi) + "_" +
         (u < 0 ? std::string("m") : u == U ? std::string("e") : std::to_string(u));
}

/// What the emission of a marching group's code refers to.
struct GroupView {
  GroupView(const StencilPlan& sp, int g)
      : G(sp.groups[static_cast<std::size_t>(g)]), windows(window_rows(sp, g)), T(type_name(G.array->type.elem)), gs(std::to_string(g)),
        rank(G.array->type.rank), U(sp.columns) {}
  const StencilPlan::Group& G;
  const std::vector<WindowRow> windows;
  const std::string T, gs;  ///< the element type, the group's number
  const int rank, U;
};

}  // namespace

MarchKept march_kept(const StencilPlan& plan, int g) {
  const StencilPlan::Group& G = plan.groups[static_cast<std::size_t>(g)];
  const std::vector<WindowRow> windows = window_rows(plan, g);
  MarchKept kept(static_cast<std::size_t>(G.planes()), std::vector<std::set<std::int64_t>>(windows.size()));
  for (const auto& [load, use] : plan.loads) {
    if (use.group != g) continue;
    for (std::size_t wi = 0; wi < windows.size(); ++wi)
      for (int v = 0; v < (G.vertical ? plan.rows : 1); ++v)
        if (windows[wi].row == (G.vertical ? v + use.d : 0)) kept[static_cast<std::size_t>(use.dz - G.zlo)][wi].insert(use.c);
  }
  // A value read at plane p arrives as the newest plane and moves down to p: every plane above holds it too.
  for (std::size_t p = 1; p < kept.size(); ++p)
    for (std::size_t wi = 0; wi < windows.size(); ++wi) kept[p][wi].insert(kept[p - 1][wi].begin(), kept[p - 1][wi].end());
  // Running sums read every plane's terms from the newest plane: no older plane is kept.
  if (plan.sums)
    for (std::size_t p = 0; p + 1 < kept.size(); ++p)
      for (auto& cs : kept[p]) cs.clear();
  return kept;
}

std::optional<StencilPlan::Sums> march_sums(const StencilPlan& plan, const ir::ParforStmt& p, const ir::Stmt& body, std::string* why) {
  auto no = [&](const std::string& r) -> std::optional<StencilPlan::Sums> {
    *why = "no running sums: " + r;
    return std::nullopt;
  };
  if (plan.groups.size() != 1 || !plan.groups[0].marching) return no("the body reads more than one window");
  std::vector<ir::Stmt> flat;
  flatten_blocks(body, flat);
  if (flat.size() != 1 || flat[0]->kind != ir::StmtKind::Store) return no("the body is not one store");
  // The planned loads an expression reads (their planes), and whether it reads anything else that varies along
  // the walk or between copies: another load, the parfor's indices.
  struct Reads : ir::IRVisitor {
    const StencilPlan& plan;
    const ir::ParforStmt& p;
    std::set<std::int64_t> planes;
    bool other = false;
    Reads(const StencilPlan& sp, const ir::ParforStmt& pf) : plan(sp), p(pf) {}
    void visit(const ir::LoadExpr& l) override {
      if (const auto it = plan.loads.find(&l); it != plan.loads.end()) {
        planes.insert(it->second.dz);
        return;
      }
      other = true;
    }
    void visit(const ir::VarRefExpr& r) override {
      for (const ir::Var& i : p.indices) other = other || r.var.get() == i.get();
    }
  };
  auto reads = [&](const ir::Expr& e) {
    Reads r(plan, p);
    r.walk(e);
    return r;
  };
  for (const ir::Expr& i : flat[0]->as<ir::StoreStmt>().indices)
    if (!reads(i).planes.empty()) return no("the store's indices read the window");
  // From the store's value down to the fold: through operations whose other operands read no window.
  ir::Expr e = flat[0]->as<ir::StoreStmt>().value;
  auto is_step = [](const ir::Expr& x) {
    const auto* b = ir::dyn<ir::BinaryExpr>(x);
    return b && (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) && b->a->type == b->type;
  };
  while (!is_step(e)) {
    if (const auto* u = ir::dyn<ir::UnaryExpr>(e)) {
      e = u->a;
    } else if (const auto* b = ir::dyn<ir::BinaryExpr>(e)) {
      const bool a = !reads(b->a).planes.empty(), c = !reads(b->b).planes.empty();
      if (a == c) return no("the stored value is not a fold of the window's terms");
      e = a ? b->a : b->b;
    } else {
      return no("the stored value is not a fold of the window's terms");
    }
  }
  StencilPlan::Sums sums;
  sums.root = e.get();
  sums.type = e->type;
  for (ir::Expr x = e; is_step(x); x = ir::dyn<ir::BinaryExpr>(x)->a) sums.spine.push_back(x);
  sums.spine.push_back(ir::dyn<ir::BinaryExpr>(sums.spine.back())->a);  // the first term
  std::reverse(sums.spine.begin(), sums.spine.end());
  // Each term reads one plane (or none: it joins its neighbours'), and the planes arrive in the fold's order.
  std::optional<std::int64_t> last;
  std::size_t leading = 0;  // terms before the first that reads a plane
  for (std::size_t k = 0; k < sums.spine.size(); ++k) {
    const Reads r = reads(k ? ir::dyn<ir::BinaryExpr>(sums.spine[k])->b : sums.spine[k]);
    if (r.other) return no("term " + std::to_string(k) + " of the fold reads an index or another array");
    if (r.planes.size() > 1) return no("term " + std::to_string(k) + " of the fold reads " + std::to_string(r.planes.size()) + " planes");
    if (r.planes.empty()) {
      if (!last) ++leading;
      sums.dz.push_back(last.value_or(0));
      continue;
    }
    if (last && *r.planes.begin() < *last) return no("the fold's terms are not ordered by plane (term " + std::to_string(k) + " reads an earlier plane)");
    last = *r.planes.begin();
    sums.dz.push_back(*last);
    if (leading) std::fill(sums.dz.begin(), sums.dz.begin() + static_cast<std::ptrdiff_t>(leading), *last), leading = 0;
  }
  *why = fmt::format("running sums: the store's value is a left fold of {} terms ordered by plane, so each step adds the newest plane's "
                     "terms to the sums of the {} outputs that read it, in the fold's order, and keeps only that plane",
                     sums.spine.size(), plan.groups[0].planes());
  return sums;
}

MarchRegisters march_registers(const StencilPlan& plan, int ahead) {
  MarchRegisters r;
  r.fixed = kMarchFixedRegisters;
  std::int64_t widest = 1;
  for (std::size_t g = 0; g < plan.groups.size(); ++g) {
    const StencilPlan::Group& G = plan.groups[g];
    const std::vector<WindowRow> windows = window_rows(plan, static_cast<int>(g));
    const std::int64_t w = words(G.array->type.elem), U = plan.columns;
    widest = std::max(widest, w);
    if (!G.marching) {
      r.values += static_cast<std::int64_t>(windows.size()) * U * w;
      continue;
    }
    for (const auto& plane : march_kept(plan, static_cast<int>(g)))
      for (const auto& cs : plane) r.values += static_cast<std::int64_t>(cs.size()) * U * w;
    if (plan.sums) r.values += G.planes() * plan.rows * U * words(plan.sums->type);  // a sum per output plane being added to
    // Each window row's offset (64 bits) and test stay across the walk; its newest loads, one set per plane
    // in flight.
    r.fixed += kMarchRowRegisters * static_cast<std::int64_t>(windows.size());
    for (const WindowRow& row : windows) r.ahead += (U + (row.lo() < 0) + (row.hi() > 0)) * w * ahead;
  }
  r.fixed += kMarchCopyWords * widest;  // a copy's sum and the value it adds (ptxas overlaps two copies)
  r.fixed += kMarchRoundRegisters * (plan.columns - 1);
  return r;
}

int march_register_cap(int min_blocks) {
  return std::min(255, 65536 / (32 * kStencilTileWarps * std::max(1, min_blocks)) / 8 * 8);
}

void Emitter::march_declare(int g) {
  const GroupView v(*stencil_, g);
  const auto& [G, windows, T, gs, rank, U] = v;
  const ArrayNames& n = array(G.array);
  const MarchKept& kept = march_kept_.at(g);
  line("// window " + gs + ": " + G.array->name + (G.vertical ? ", rows " : ", row ") + std::to_string(windows.front().row) + ".." +
       std::to_string(windows.back().row) + ", planes " + std::to_string(G.zlo) + ".." + std::to_string(G.zhi) +
       " of the step: every value the body reads in registers; the newest plane's rows exchange neighbours through the tile");
  // The leading indices before z and the rows do not change along the walk.
  for (std::size_t k = 0; k + 1 < G.prefix.size(); ++k) line("const long long kiln_g" + gs + "_i" + std::to_string(k) + " = " + expr(G.prefix[k]) + ";");
  if (G.vertical)
    for (std::size_t wi = 0; wi < windows.size(); ++wi) {
      const std::string wn = "kiln_w" + gs + "_" + std::to_string(wi);
      line("const long long " + wn + "_row = kiln_i0 + " + ll(windows[wi].row) + ";");
      line("const bool " + wn + "_ok = (unsigned long long)" + wn + "_row < (unsigned long long)" + n.extent[rank - 2] + ";");
      line("const long long " + wn + "_at = " + wn + "_row * " + n.stride[rank - 2] + ";");
    }
  // Which of a window row's loads (round u at bit u + 1: -1 and U are the edge lanes' loads beyond the strip)
  // stay inside the array: the row and the columns do not change along the walk, so each step's loads test a
  // bit and the plane (64-bit column comparisons per load took a fifth of a step's instructions).
  for (std::size_t wi = 0; wi < windows.size(); ++wi) {
    const WindowRow& w = windows[wi];
    std::string bits;
    for (int u = w.lo() < 0 ? -1 : 0; u <= (w.hi() > 0 ? U : U - 1); ++u) {
      const std::string lanes = u < 0 ? "kiln_lane >= " + std::to_string(32 + w.lo()) + "u && " : u == U ? "kiln_lane < " + std::to_string(w.hi()) + "u && " : "";
      bits += std::string(bits.empty() ? "" : " | ") + "(" + lanes + "(unsigned long long)(kiln_j0 + " + ll(w.base + 32 * static_cast<std::int64_t>(u)) +
              ") < (unsigned long long)" + n.extent[rank - 1] + " ? " + std::to_string(1u << (u + 1)) + "u : 0u)";
    }
    const std::string wn = "kiln_w" + gs + "_" + std::to_string(wi);
    line("const unsigned " + wn + "_in = " + (G.vertical ? wn + "_ok ? " + bits + " : 0u" : bits) + ";");
  }
  for (std::size_t wi = 0; wi < windows.size(); ++wi) {
    const WindowRow& w = windows[wi];
    for (int b = 0; b < std::max(1, stencil_->ahead); ++b) {
      std::string decl;
      for (int u = w.lo() < 0 ? -1 : 0; u <= (w.hi() > 0 ? U : U - 1); ++u) decl += (decl.empty() ? "" : ", ") + newest_reg(g, wi, u, U, b);
      line(T + " " + decl + ";");
    }
    for (int p = 0; p < G.planes(); ++p)
      for (std::int64_t c : kept[static_cast<std::size_t>(p)][wi]) {
        std::string regs;
        for (int u = 0; u < U; ++u) {
          regs += (u ? ", " : "") + plane_reg(g, wi, p, w, c, u);
          stencil_values_[{g, G.zlo + p, w.row, u, c}] = plane_reg(g, wi, p, w, c, u);
        }
        line(T + " " + regs + ";");
      }
  }
  if (!stencil_->sums) return;
  for (int j = 0; j < G.planes(); ++j) {
    std::string regs;
    for (int vv = 0; vv < stencil_->rows; ++vv)
      for (int u = 0; u < U; ++u) regs += std::string(regs.empty() ? "" : ", ") + march_sum_reg(j, vv, u) + " = 0";  // set before the chunk's first output reads it
    line(std::string(type_name(stencil_->sums->type)) + " " + regs + ";  // the sums of the outputs " + std::to_string(j) + " plane(s) on");
  }
}

std::string Emitter::march_sum_reg(int j, int v, int u) const {
  return "kiln_s" + std::to_string(j) + "_" + std::to_string(v) + "_" + std::to_string(u);
}

void Emitter::march_sums_add(int first_j) {
  const StencilPlan& sp = *stencil_;
  const StencilPlan::Sums& S = *sp.sums;
  const StencilPlan::Group& G = sp.groups.front();
  lets_.emplace_back();
  for (int j = first_j; j < G.planes(); ++j) {
    const std::int64_t dz = G.zhi - j;
    for (int v = 0; v < sp.rows; ++v)
      for (int u = 0; u < sp.columns; ++u) {
        stencil_v_ = v, stencil_u_ = u;
        const std::string r = march_sum_reg(j, v, u);
        for (std::size_t k = 0; k < S.spine.size(); ++k) {
          if (S.dz[k] != dz) continue;
          if (k == 0) {
            line(r + " = " + expr(S.spine[0]) + ";");
            continue;
          }
          march_sum_names_ = {{S.spine[k - 1].get(), r}};
          line(r + " = " + expr(S.spine[k]) + ";");
        }
      }
  }
  march_sum_names_.clear();
  lets_.pop_back();
}

void Emitter::march_load(int g, const std::string& z, int b) {
  const GroupView v(*stencil_, g);
  const auto& [G, windows, T, gs, rank, U] = v;
  const ArrayNames& n = array(G.array);
  const std::size_t zk = G.prefix.size() - 1;  // the index that walks
  line("{");
  ++depth_;
  line("const long long kiln_g" + gs + "_z = " + z + ";");
  std::string ok = "(unsigned long long)kiln_g" + gs + "_z < (unsigned long long)" + n.extent[zk];
  std::string at = "kiln_g" + gs + "_z * " + n.stride[zk];
  for (std::size_t k = 0; k < zk; ++k) {
    const std::string i = "kiln_g" + gs + "_i" + std::to_string(k);
    ok += " && (unsigned long long)" + i + " < (unsigned long long)" + n.extent[k];
    at += " + " + i + " * " + n.stride[k];
  }
  line("const bool kiln_g" + gs + "_ok = " + ok + ";");
  line("const long long kiln_g" + gs + "_at = " + at + " + kiln_j0;");
  for (std::size_t wi = 0; wi < windows.size(); ++wi) {
    const WindowRow& w = windows[wi];
    const std::string wn = "kiln_w" + gs + "_" + std::to_string(wi);
    const std::string row_at = G.vertical ? " + " + wn + "_at" : std::string();
    // The row's address in this plane, and the row's loads at constant offsets from it: the offsets become
    // the loads' immediates (summed with the invariant row offset, each load's address was a 64-bit
    // register kept across the walk: ptxas took 192 registers for the 7-point kernel).
    line("const " + T + "* " + wn + "_p = " + n.data + " + (kiln_g" + gs + "_at" + row_at + ");");
    for (int u = w.lo() < 0 ? -1 : 0; u <= (w.hi() > 0 ? U : U - 1); ++u)
      line(newest_reg(g, wi, u, U, b) + " = kiln_g" + gs + "_ok && (" + wn + "_in & " + std::to_string(1u << (u + 1)) + "u) ? " + wn + "_p[" +
           std::to_string(w.base + 32 * static_cast<std::int64_t>(u)) + "] : (" + T + ")0;");
  }
  --depth_;
  line("}");
}

void Emitter::march_store(int g, int p, int b) {
  const GroupView v(*stencil_, g);
  const std::int64_t h = stencil_->halo;
  const std::vector<WindowRow>& windows = v.windows;
  const int U = v.U;
  int row_slot = 0;
  for (std::size_t wi = 0; wi < windows.size(); ++wi) {
    const WindowRow& w = windows[wi];
    if (march_kept_.at(g)[static_cast<std::size_t>(p)][wi].count(w.base))
      for (int u = 0; u < U; ++u) line(plane_reg(g, wi, p, w, w.base, u) + " = " + newest_reg(g, wi, u, U, b) + ";");
    if (w.deltas.empty()) continue;
    const std::string tile = "kiln_tile" + v.gs + "[kiln_warp][" + std::to_string(row_slot++) + "]";
    if (w.lo() < 0)
      line("if (kiln_lane >= " + std::to_string(32 + w.lo()) + "u) " + tile + "[kiln_lane - " + std::to_string(32 - h) + "] = " + newest_reg(g, wi, -1, U, b) + ";");
    for (int u = 0; u < U; ++u) line(tile + "[kiln_lane + " + std::to_string(h + 32 * u) + "] = " + newest_reg(g, wi, u, U, b) + ";");
    if (w.hi() > 0)
      line("if (kiln_lane < " + std::to_string(w.hi()) + "u) " + tile + "[kiln_lane + " + std::to_string(h + 32 * U) + "] = " + newest_reg(g, wi, U, U, b) + ";");
  }
}

void Emitter::march_neighbours(int g, int p) {
  const GroupView v(*stencil_, g);
  int row_slot = 0;
  for (std::size_t wi = 0; wi < v.windows.size(); ++wi) {
    const WindowRow& w = v.windows[wi];
    if (w.deltas.empty()) continue;
    const std::string tile = "kiln_tile" + v.gs + "[kiln_warp][" + std::to_string(row_slot++) + "]";
    const std::int64_t h = stencil_->halo;
    for (std::int64_t c : march_kept_.at(g)[static_cast<std::size_t>(p)][wi])
      for (int u = 0; c != w.base && u < v.U; ++u)
        line(plane_reg(g, wi, p, w, c, u) + " = " + tile + "[kiln_lane + " + std::to_string(h + 32 * u + c - w.base) + "];");
  }
}

void Emitter::march_shift(int g) {
  const StencilPlan& sp = *stencil_;
  const StencilPlan::Group& G = sp.groups[static_cast<std::size_t>(g)];
  const std::vector<WindowRow> windows = window_rows(sp, g);
  const MarchKept& kept = march_kept_.at(g);
  for (int p = 0; p + 1 < G.planes(); ++p)
    for (std::size_t wi = 0; wi < windows.size(); ++wi)
      for (std::int64_t c : kept[static_cast<std::size_t>(p)][wi])
        for (int u = 0; u < sp.columns; ++u) line(plane_reg(g, wi, p, windows[wi], c, u) + " = " + plane_reg(g, wi, p + 1, windows[wi], c, u) + ";");
  if (sp.sums)
    for (int j = 0; j + 1 < G.planes(); ++j)
      for (int v = 0; v < sp.rows; ++v)
        for (int u = 0; u < sp.columns; ++u) line(march_sum_reg(j, v, u) + " = " + march_sum_reg(j + 1, v, u) + ";");
}

void Emitter::march_step(const std::string& z, int b, const std::string& ahead) {
  const StencilPlan& sp = *stencil_;
  std::vector<int> marching, others;
  for (std::size_t g = 0; g < sp.groups.size(); ++g) (sp.groups[g].marching ? marching : others).push_back(static_cast<int>(g));
  const int ahead_planes = sp.ahead;
  line("{");
  ++depth_;
  line("const long long " + bind(p_.indices[0].get()) + " = kiln_b0 + (long long)" + z + ";");
  if (ahead_planes == 0)
    for (int g : marching) march_load(g, march_plane(z, sp.groups[static_cast<std::size_t>(g)].zhi), b);
  for (int g : marching) march_store(g, sp.groups[static_cast<std::size_t>(g)].planes() - 1, b);
  if (ahead_planes > 0) {
    // The buffer just stored takes the plane `ahead_planes` steps on: in flight while this step computes.
    line("if (" + z + " + " + std::to_string(ahead_planes) + " < kiln_zend) {  // " + ahead);
    ++depth_;
    for (int g : marching) march_load(g, march_plane(z, sp.groups[static_cast<std::size_t>(g)].zhi + ahead_planes), b);
    --depth_;
    line("}");
  }
  line("__syncwarp();");
  for (int g : marching) march_neighbours(g, sp.groups[static_cast<std::size_t>(g)].planes() - 1);
  for (int g : others) stencil_window(g);
  if (!others.empty()) line("__syncwarp();");
  if (sp.sums) {
    line("// the newest plane's terms added to the sums of the outputs that read it; the step's output is finished");
    march_sums_add(0);
  }
  stencil_bodies();
  line("__syncwarp();  // the tiles are written again by the next step");
  line("// each plane moves one down");
  for (int g : marching) march_shift(g);
  --depth_;
  line("}");
}

std::string Emitter::march_plane(const std::string& z, std::int64_t dz) const { return "kiln_b0 + (long long)" + z + " + " + ll(dz); }

namespace {

/// The bounds tests as conjuncts (band_clamps gives one test over every index): each is classified by the
/// indices it reads. They are comparisons, so evaluating them apart and in another order changes nothing.
void conjuncts(const ir::Expr& e, std::vector<ir::Expr>& out) {
  const auto* b = ir::dyn<ir::BinaryExpr>(e);
  if (b && b->op == ir::BinaryOp::And && b->type == DType::Bool) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
  } else {
    out.push_back(e);
  }
}
std::vector<ir::Expr> conjuncts(const std::vector<ir::Expr>& tests) {
  std::vector<ir::Expr> out;
  for (const ir::Expr& t : tests) conjuncts(t, out);
  return out;
}

/// Which parfor indices a bounds test reads: the walked one (z), the row (y) and the column (x).
struct TestIndices {
  bool z = false, y = false, x = false;
};
TestIndices test_indices(const ir::Expr& t, const ir::ParforStmt& p) {
  return {ir::uses(t, p.indices[0].get()), ir::uses(t, p.indices[1].get()), ir::uses(t, p.indices[2].get())};
}

}  // namespace

std::string Emitter::march_live_test(int v, int u) const {
  if (stencil_->block)
    return "kiln_tile_y + threadIdx.y * " + std::to_string(stencil_->rows) + "u + " + std::to_string(v) + "u < kiln_n1 && kiln_tile_x + threadIdx.x < kiln_n2";
  return "kiln_ty * " + std::to_string(stencil_->rows) + " + " + std::to_string(v) + " < kiln_n1 && kiln_t + " + std::to_string(32 * u) +
         "ull - kiln_off < kiln_n2";
}

void Emitter::march_masks(const std::string& bits) {
  const StencilPlan& sp = *stencil_;
  const int U = sp.columns, V = sp.rows;
  const bool split = !sp.tests.empty();
  const std::vector<ir::Expr> tests = conjuncts(sp.tests);
  line(bits + " kiln_live = 0" + (split ? ", kiln_inner = 0" : "") + ";");
  for (int v = 0; v < V; ++v)
    for (int u = 0; u < U; ++u) {
      const std::string bit = "(" + bits + ")1 << " + std::to_string(v * U + u);
      line("if (" + march_live_test(v, u) + ") {");
      ++depth_;
      line("kiln_live |= " + bit + ";");
      if (split) {
        bool y = false, x = false;
        for (const ir::Expr& t : tests)
          if (const TestIndices ti = test_indices(t, p_); !ti.z) y = y || ti.y, x = x || ti.x;
        if (y) line("const long long " + bind(p_.indices[1].get()) + " = kiln_i0 + " + std::to_string(v) + ";");
        if (x) line("const long long " + bind(p_.indices[2].get()) + " = kiln_j0 + " + std::to_string(32 * u) + ";");
        std::string test;
        lets_.emplace_back();
        for (const ir::Expr& t : tests)
          if (!test_indices(t, p_).z) test += (test.empty() ? "" : " && ") + expr(t);
        lets_.pop_back();
        line((test.empty() ? std::string() : "if (" + test + ") ") + "kiln_inner |= " + bit + ";");
      }
      --depth_;
      line("}");
    }
}

void Emitter::march_copies(const std::string& bits) {
  const StencilPlan& sp = *stencil_;
  const int U = sp.columns, V = sp.rows;
  const bool split = !sp.tests.empty();
  const std::vector<ir::Expr> tests = conjuncts(sp.tests);
  if (split) {
    std::string ztest;
    for (const ir::Expr& t : tests)
      if (const TestIndices ti = test_indices(t, p_); ti.z && !ti.y && !ti.x) ztest += (ztest.empty() ? "" : " && ") + expr(t);
    line("const bool kiln_zin = " + (ztest.empty() ? std::string("true") : ztest) + ";");
  }
  // With the border after the walk, a copy runs where its element is inside the array and the interior: one
  // bit of a mask made once a step.
  const bool after = march_border_after();
  if (after) line("const " + bits + " kiln_run = kiln_zin ? kiln_live & kiln_inner : 0;");
  march_out_rows();
  // The row and column indices, where the copy reads them besides the planned loads and the stores through the
  // step's pointers.
  struct Reads : ir::IRVisitor {
    const Emitter& e;
    bool y = false, x = false;
    explicit Reads(const Emitter& em) : e(em) {}
    void visit(const ir::StoreStmt& s) override {
      if (e.march_out_.count(&s)) return walk(s.value);
      ir::IRVisitor::visit(s);
    }
    void visit(const ir::LoadExpr& l) override {
      if (!e.stencil_->loads.count(&l)) ir::IRVisitor::visit(l);  // a planned load is a register
    }
    void visit(const ir::VarRefExpr& r) override {
      y = y || r.var.get() == e.p_.indices[1].get();
      x = x || r.var.get() == e.p_.indices[2].get();
    }
  } reads(*this);
  reads.walk(split ? sp.interior : p_.body);
  for (int v = 0; v < V; ++v)
    for (int u = 0; u < U; ++u) {
      const std::string b = std::to_string(v * U + u);
      line("if ((" + std::string(after ? "kiln_run" : "kiln_live") + " >> " + b + ") & 1u) {");
      ++depth_;
      if (reads.y) line("const long long " + bind(p_.indices[1].get()) + " = kiln_i0 + " + std::to_string(v) + ";");
      if (reads.x) line("const long long " + bind(p_.indices[2].get()) + " = kiln_j0 + " + std::to_string(32 * u) + ";");
      std::string test;
      if (after) {
        test = "true";  // kiln_run held the tests
      } else if (split) {
        test = "((kiln_inner >> " + b + ") & 1u) && kiln_zin";
        for (const ir::Expr& t : tests)
          if (const TestIndices ti = test_indices(t, p_); ti.z && (ti.y || ti.x)) test += " && " + expr(t);
      }
      if (sp.sums) march_sum_names_ = {{sp.sums->root, march_sum_reg(0, v, u)}};
      stencil_copy(v, u, test, bits, !after);
      march_sum_names_.clear();
      --depth_;
      line("}");
    }
  march_out_.clear();
}

void Emitter::march_out_rows() {
  // The element a copy stores is the step's first element plus its row times the row stride plus 32 u: one
  // pointer a step, and constant offsets (each copy's 64-bit offset from three products took about a third
  // of a 7-point copy's instructions).
  struct Stores : ir::IRVisitor {
    std::vector<const ir::StoreStmt*> all;
    void visit(const ir::StoreStmt& s) override {
      all.push_back(&s);
      ir::IRVisitor::visit(s);
    }
  } stores;
  stores.walk(stencil_->tests.empty() ? p_.body : stencil_->interior);
  int k = 0;
  for (const ir::StoreStmt* s : stores.all) {
    const ir::VarNode* a = s->array.get();
    if (s->indices.size() != 3 || !a->type.unit_stride) continue;
    const auto dy = ir::index_offset(s->indices[1], p_.indices[1].get()), dx = ir::index_offset(s->indices[2], p_.indices[2].get());
    if (!ir::index_offset(s->indices[0], p_.indices[0].get()) || !dy || !dx) continue;
    const ArrayNames& n = array(a);
    const std::string name = "kiln_o" + std::to_string(k++);
    line(std::string(type_name(a->type.elem)) + "* __restrict__ const " + name + " = " + n.data + " + (" + expr(s->indices[0]) + " * " + n.stride[0] +
         " + (kiln_i0 + " + ll(*dy) + ") * " + n.stride[1] + " + (kiln_j0 + " + ll(*dx) + "));");
    march_out_[s] = {name, n.stride[1]};
  }
}

bool Emitter::march_border_after() const {
  if (stencil_->tests.empty()) return false;
  for (const ir::Expr& t : conjuncts(stencil_->tests))
    if (const TestIndices ti = test_indices(t, p_); ti.z && (ti.y || ti.x)) return false;
  return true;
}

void Emitter::march_border_pass(const std::string& bits) {
  line("// the border elements of each plane of the chunk: the rows' and columns' (kiln_live & ~kiln_inner), and on planes outside the");
  line("// interior every element");
  line("for (unsigned long long kiln_z = kiln_zbeg; kiln_z < kiln_zend; ++kiln_z) {");
  ++depth_;
  lets_.emplace_back();
  line("const long long " + bind(p_.indices[0].get()) + " = kiln_b0 + (long long)kiln_z;");
  std::string ztest;
  for (const ir::Expr& t : conjuncts(stencil_->tests))
    if (test_indices(t, p_).z) ztest += (ztest.empty() ? "" : " && ") + expr(t);
  line(bits + " kiln_border = " + (ztest.empty() ? std::string("kiln_live & ~kiln_inner") : "(" + ztest + ") ? (kiln_live & ~kiln_inner) : kiln_live") + ";");
  border_loop(bits);
  lets_.pop_back();
  --depth_;
  line("}");
}

void Emitter::march_loops() {
  const StencilPlan& sp = *stencil_;
  const int ahead = sp.ahead;
  std::vector<int> marching;
  for (std::size_t g = 0; g < sp.groups.size(); ++g)
    if (sp.groups[g].marching) marching.push_back(static_cast<int>(g));
  auto exchanges = [&](int g) {
    for (const WindowRow& w : window_rows(sp, g))
      if (!w.deltas.empty()) return true;
    return false;
  };
  for (int g : marching) {
    march_kept_[g] = march_kept(sp, g);
    march_declare(g);
  }
  const std::string bits = sp.rows * sp.columns <= 32 ? "unsigned" : "unsigned long long";
  march_masks(bits);
  // The planes below the first step's newest, one at a time through the tile.
  for (int g : marching) {
    const StencilPlan::Group& G = sp.groups[static_cast<std::size_t>(g)];
    for (int p = 0; p + 1 < G.planes(); ++p) {
      // Running sums keep the newest plane only: each plane below the first step's adds its terms to the sums of
      // the chunk's outputs that read it.
      const int kept = sp.sums ? G.planes() - 1 : p;
      march_load(g, march_plane("kiln_zbeg", G.zlo + p), 0);
      march_store(g, kept, 0);
      if (exchanges(g)) {
        line("__syncwarp();");
        march_neighbours(g, kept);
        line("__syncwarp();  // the tile is written again by the next plane");
      }
      if (!sp.sums) continue;
      march_sums_add(G.planes() - 1 - p);
      march_shift(g);
    }
  }
  // The first steps' newest planes, one buffer each.
  for (int b = 0; b < ahead; ++b) {
    if (b > 0) line("if (kiln_zbeg + " + std::to_string(b) + " < kiln_zend) {");
    for (int g : marching) march_load(g, march_plane("kiln_zbeg", sp.groups[static_cast<std::size_t>(g)].zhi + b), b);
    if (b > 0) line("}");
  }
  if (ahead < 2) {
    line("for (unsigned long long kiln_z = kiln_zbeg; kiln_z < kiln_zend; ++kiln_z) {");
    ++depth_;
    march_step("kiln_z", 0, "the next step's newest plane");
  } else {
    // Two steps per trip, each storing its own buffer and reloading it two planes on: a buffer is read a whole
    // step after its loads were issued (a copy between buffers would wait for them at once).
    line("for (unsigned long long kiln_z = kiln_zbeg; kiln_z < kiln_zend; kiln_z += 2) {");
    ++depth_;
    march_step("kiln_z", 0, "the newest plane two steps on");
    line("if (kiln_z + 1 >= kiln_zend) break;");
    line("const unsigned long long kiln_z1 = kiln_z + 1;");
    march_step("kiln_z1", 1, "the newest plane two steps on");
  }
  --depth_;
  line("}");
  if (march_border_after()) march_border_pass(bits);
}

}  // namespace kiln::codegen::cuda
