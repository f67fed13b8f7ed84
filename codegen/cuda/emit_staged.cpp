// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Staged walks (Strategy::Staged): a parfor whose iterations ("rows") each walk a run of consecutive elements
// in a sequential loop — the block totals and block scans of kiln::cumsum, the carry chain (ir/scan.hpp). One
// thread per row reads badly: the 32 threads of a warp read 32 runs far apart (a scan's blocks are 8 KB apart
// in f64), one useful word per 32-byte sector, and a single row (a 1-d scan's carries) waits out every
// load's latency alone. Here a block of kStagedThreads threads takes as many consecutive rows and walks them
// in step, a chunk of steps at a time: the block copies the chunk of every row's run into a shared tile
// (consecutive threads, consecutive elements: coalesced), each thread runs its row's steps in order on the
// tile, its stores going to a second tile that the block then writes back the same way. The block's rows
// share the tiles, so a block with one row walks it kStagedThreads * kStagedSteps steps per chunk. A thread's
// cells of a chunk are loaded into registers a chunk ahead (issued before the current chunk's steps run), so a
// chunk's loads travel while the one before it is walked: what keeps memory busy through the barriers, and
// what hides the loads behind a single row's chain of dependent steps.
//
// Each row's operations run in the order its loop states them, so the results are the bits of one thread
// per row. The rule keeps that true: the loop's body is straight-line (lets, assignments, stores); a staged
// access's index is loop-invariant but for `k`, `x + k` or `k + x` in a unit-stride last dimension (step j
// reads the element j after step 0's); an array the loop stores is stored at one index, and read in the
// loop only there (so the chunk's reads may precede its writes), and aliases nothing else the loop reads;
// the statements before the loop hold no loop or check (every thread of the block must reach the barriers:
// threads beyond the last row run them as the last row, their stores suppressed).
#include <algorithm>
#include <functional>
#include <optional>

#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {

void flatten_blocks(const ir::Stmt& s, std::vector<ir::Stmt>& out) {
  if (s->kind != ir::StmtKind::Block) {
    out.push_back(s);
    return;
  }
  for (const ir::Stmt& x : s->as<ir::BlockStmt>().stmts) flatten_blocks(x, out);
}

bool last_row_safe(const ir::Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Let:
    case ir::StmtKind::Assign:
    case ir::StmtKind::Store: return true;
    case ir::StmtKind::Block:
      for (const ir::Stmt& x : s->as<ir::BlockStmt>().stmts)
        if (!last_row_safe(x)) return false;
      return true;
    case ir::StmtKind::If: {
      const auto& i = s->as<ir::IfStmt>();
      return last_row_safe(i.then_body) && (!i.else_body || last_row_safe(i.else_body));
    }
    default: return false;
  }
}

std::optional<RowLoop> split_at_loop(const ir::Stmt& body) {
  std::vector<ir::Stmt> stmts;
  flatten_blocks(body, stmts);
  std::size_t at = 0;
  while (at < stmts.size() && stmts[at]->kind != ir::StmtKind::For) {
    if (!last_row_safe(stmts[at])) return std::nullopt;
    ++at;
  }
  if (at == stmts.size()) return std::nullopt;
  RowLoop r;
  r.loop = &stmts[at]->as<ir::ForStmt>();
  r.before.assign(stmts.begin(), stmts.begin() + static_cast<std::ptrdiff_t>(at));
  r.after.assign(stmts.begin() + static_cast<std::ptrdiff_t>(at) + 1, stmts.end());
  return r;
}

namespace {

/// The loads in `e`, outermost first (a load in another's index too).
void collect_loads(const ir::Expr& e, std::vector<const ir::LoadExpr*>& out) {
  struct Collect : ir::IRVisitor {
    std::vector<const ir::LoadExpr*>& out;
    explicit Collect(std::vector<const ir::LoadExpr*>& o) : out(o) {}
    void visit(const ir::LoadExpr& l) override {
      out.push_back(&l);
      ir::IRVisitor::visit(l);
    }
  } c(out);
  c.walk(e);
}

/// How far the value of `e` moves when the parfor's innermost index `i` grows by one: e = s * i + (terms
/// free of i), through the lets in `lets`; nothing when it is not that simple.
std::optional<std::int64_t> slope(const ir::Expr& e, const ir::VarNode* i, const ir::LetValues& lets, int depth = 0) {
  if (depth > 16) return std::nullopt;
  switch (e->kind) {
    case ir::ExprKind::Const: return 0;
    case ir::ExprKind::VarRef: {
      const ir::VarNode* v = e->as<ir::VarRefExpr>().var.get();
      if (v == i) return 1;
      if (auto it = lets.find(v); it != lets.end()) return slope(it->second, i, lets, depth + 1);
      // Other indices stay put; a local the statements before the loop assign could be anything.
      return v->kind == ir::VarKind::Local ? std::nullopt : std::optional<std::int64_t>(0);
    }
    case ir::ExprKind::Cast: return slope(e->as<ir::CastExpr>().a, i, lets, depth + 1);
    case ir::ExprKind::Binary: {
      const auto& b = e->as<ir::BinaryExpr>();
      const auto sa = slope(b.a, i, lets, depth + 1), sb = slope(b.b, i, lets, depth + 1);
      if (!sa || !sb) return std::nullopt;
      if (b.op == BinaryOp::Add) return *sa + *sb;
      if (b.op == BinaryOp::Sub) return *sa - *sb;
      if (b.op == BinaryOp::Mul) {
        const auto* ca = ir::dyn<ir::ConstExpr>(b.a);
        const auto* cb = ir::dyn<ir::ConstExpr>(b.b);
        if (*sa == 0 && *sb == 0) return 0;
        if (ca && is_int(ca->type)) return ca->i * *sb;
        if (cb && is_int(cb->type)) return cb->i * *sa;
      }
      return *sa == 0 && *sb == 0 ? std::optional<std::int64_t>(0) : std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace

bool Emitter::staged_access(const ir::VarNode* array, const std::vector<ir::Expr>& indices) const {
  const ir::VarNode* k = staged_->loop->index.get();
  if (!array->type.unit_stride || indices.empty()) return false;
  auto invariant = [&](const ir::Expr& e) {
    if (ir::has_load(e) || ir::uses(e, k)) return false;
    for (const ir::Var& v : ir::free_vars(e))
      if (staged_->inner.count(v.get())) return false;
    return true;
  };
  for (std::size_t d = 0; d + 1 < indices.size(); ++d)
    if (!invariant(indices[d])) return false;
  const ir::Expr& last = indices.back();
  auto is_k = [&](const ir::Expr& e) {
    const auto* r = ir::dyn<ir::VarRefExpr>(e);
    return r && r->var.get() == k;
  };
  if (is_k(last)) return true;
  const auto* b = ir::dyn<ir::BinaryExpr>(last);
  if (!b || b->op != BinaryOp::Add) return false;
  return (is_k(b->a) && invariant(b->b)) || (is_k(b->b) && invariant(b->a));
}

bool Emitter::staged_spread(const std::vector<ir::Expr>& indices) const {
  // Rows a row apart (an earlier index moves with the innermost parfor index) or runs at least two elements
  // apart: a warp's reads of one step scatter over many sectors. Runs one element apart (a sliding window)
  // already coalesce, and runs that every row shares are one broadcast read: those stay as they are.
  const ir::VarNode* i = p_.indices.back().get();
  for (std::size_t d = 0; d + 1 < indices.size(); ++d) {
    const auto s = slope(indices[d], i, staged_->lets);
    if (!s || *s != 0) return true;
  }
  const ir::Expr& last = indices.back();
  const ir::VarNode* k = staged_->loop->index.get();
  const auto* b = ir::dyn<ir::BinaryExpr>(last);
  if (!b) return false;  // k alone: every row's run is the same
  const ir::Expr& base = ir::uses(b->a, k) ? b->b : b->a;
  const auto s = slope(base, i, staged_->lets);
  return !s || *s >= 2 || *s <= -2;
}

void Emitter::plan_staged() {
  // A check or allocation may fail, and a failing thread leaves its iterations: it would miss the barriers.
  if (k_.strategy != Strategy::Elementwise || !p_.array_reductions.empty() || ir::can_fail(p_.body)) return;
  const std::optional<RowLoop> split = split_at_loop(p_.body);
  if (!split) return;
  StagedPlan plan;
  static_cast<RowLoop&>(plan) = *split;
  std::vector<ir::Stmt> steps;
  flatten_blocks(plan.loop->body, steps);
  for (const ir::Stmt& s : steps)
    if (s->kind != ir::StmtKind::Let && s->kind != ir::StmtKind::Assign && s->kind != ir::StmtKind::Store) return;
  plan.inner = ir::declared_in(plan.loop->body);
  for (const ir::VarNode* v : ir::assigned_vars(plan.loop->body)) plan.inner.insert(v);
  const ir::VarSet assigned = ir::assigned_vars(p_.body);
  for (const ir::Stmt& s : plan.before)
    if (s->kind == ir::StmtKind::Let && !assigned.count(s->as<ir::LetStmt>().var.get()))
      plan.lets[s->as<ir::LetStmt>().var.get()] = s->as<ir::LetStmt>().init;
  staged_ = std::move(plan);  // staged_access reads the loop and its variables

  // Stores first: each must be staged, one index per array.
  auto site_of = [&](const ir::VarNode* a, const std::vector<ir::Expr>& idx, bool store) -> int {
    for (std::size_t i = 0; i < staged_->sites.size(); ++i) {
      const StagedPlan::Site& s = staged_->sites[i];
      if (s.array != a || s.store != store || s.indices.size() != idx.size()) continue;
      bool same = true;
      for (std::size_t d = 0; d < idx.size(); ++d) same = same && ir::equal(s.indices[d], idx[d]);
      if (same) return static_cast<int>(i);
    }
    return -1;
  };
  auto fail = [&] { staged_.reset(); };
  std::int64_t bytes = 0;
  const std::int64_t chunk_steps = opts_.staged_steps;
  auto room = [&](DType t) { return bytes + kStagedThreads * (chunk_steps + 1) * static_cast<std::int64_t>(size_of(t)) <= kMaxStencilTileBytes; };
  auto add_site = [&](const ir::VarNode* a, const std::vector<ir::Expr>& idx, bool store) {
    bytes += kStagedThreads * (chunk_steps + 1) * static_cast<std::int64_t>(size_of(a->type.elem));
    staged_->sites.push_back({a, idx, store, 0, std::nullopt});
    return static_cast<int>(staged_->sites.size()) - 1;
  };
  for (const ir::Stmt& s : steps) {
    if (s->kind != ir::StmtKind::Store) continue;
    const auto& st = s->as<ir::StoreStmt>();
    if (!staged_access(st.array.get(), st.indices) || !staged_spread(st.indices)) return fail();
    int site = site_of(st.array.get(), st.indices, true);
    if (site < 0) {
      for (const StagedPlan::Site& other : staged_->sites)
        if (other.store && other.array == st.array.get()) return fail();  // two indices: the steps' order matters
      if (!room(st.array->type.elem)) return fail();
      site = add_site(st.array.get(), st.indices, true);
    }
    staged_->stores[s.get()] = site;
  }
  // Then the loads: staged while the tiles have room, read in place otherwise (not an array the loop stores).
  std::vector<const ir::LoadExpr*> loads;
  std::unordered_set<const ir::VarNode*> stored_before;  // by an earlier statement of the step
  for (const ir::Stmt& s : steps) {
    const std::size_t from = loads.size();
    if (s->kind == ir::StmtKind::Let) collect_loads(s->as<ir::LetStmt>().init, loads);
    if (s->kind == ir::StmtKind::Assign) collect_loads(s->as<ir::AssignStmt>().value, loads);
    if (s->kind == ir::StmtKind::Store) {
      const auto& st = s->as<ir::StoreStmt>();
      for (const ir::Expr& i : st.indices) collect_loads(i, loads);
      collect_loads(st.value, loads);
    }
    // A step that reads back what it stored would see the tile's copy from before the chunk.
    for (std::size_t i = from; i < loads.size(); ++i)
      if (stored_before.count(loads[i]->array.get())) return fail();
    if (s->kind == ir::StmtKind::Store) stored_before.insert(s->as<ir::StoreStmt>().array.get());
  }
  for (const ir::LoadExpr* l : loads) {
    const int written = site_of(l->array.get(), l->indices, true);
    for (const StagedPlan::Site& s : staged_->sites)
      if (s.store && s.array != l->array.get() && ir::may_alias(s.array, l->array.get())) return fail();
    bool stored = false;
    for (const StagedPlan::Site& s : staged_->sites) stored = stored || (s.store && s.array == l->array.get());
    if (stored && written < 0) return fail();  // it reads an element another step writes
    if (!staged_access(l->array.get(), l->indices) || !staged_spread(l->indices)) {
      if (stored) return fail();
      continue;
    }
    int site = site_of(l->array.get(), l->indices, false);
    if (site < 0) {
      if (!room(l->array->type.elem)) {
        if (stored) return fail();
        continue;
      }
      site = add_site(l->array.get(), l->indices, false);
    }
    staged_->loads[l] = site;
  }
  if (staged_->loads.empty() && staged_->stores.empty()) return fail();
  // A store shares the tile of a load of its element type (an in-place walk's: the same array; a scan pass's:
  // its input): every step reads its load cells into registers before it stores (staged_loops), and each cell
  // belongs to one step, so the store overwrites only a cell its step has read. Half the shared memory of a
  // scan pass's block, so twice the blocks an SM can hold.
  std::vector<bool> paired(staged_->sites.size(), false);
  for (std::size_t i = 0; i < staged_->sites.size(); ++i) {
    StagedPlan::Site& st = staged_->sites[i];
    st.tile = static_cast<int>(i);
    if (!st.store) continue;
    for (std::size_t j = 0; j < staged_->sites.size(); ++j)
      if (!staged_->sites[j].store && !paired[j] && staged_->sites[j].array->type.elem == st.array->type.elem) {
        paired[j] = true;
        st.tile = static_cast<int>(j);
        break;
      }
  }
  // How far each site's run moves from row to row (along the innermost parfor index): the offset's terms of
  // the earlier dimensions must stay put (their strides are run-time values), the last dimension's is its slope.
  const ir::VarNode* innermost = p_.indices.back().get();
  for (StagedPlan::Site& st : staged_->sites) {
    bool fixed = true;
    for (std::size_t d = 0; d + 1 < st.indices.size(); ++d) {
      const auto sd = slope(st.indices[d], innermost, staged_->lets);
      fixed = fixed && sd && *sd == 0;
    }
    if (fixed) st.slope = slope(st.indices.back(), innermost, staged_->lets);
  }
  k_.strategy = Strategy::Staged;
}

void Emitter::staged_loops() {
  const StagedPlan& sp = *staged_;
  const std::string T = std::to_string(kStagedThreads), S = std::to_string(opts_.staged_steps);
  const std::string G = std::to_string(kStagedGroup);
  const std::int64_t rows_apart = kStagedThreads / opts_.staged_steps;  // a uniform block's cell r is in row x / S + r * this
  auto num = [](std::size_t i) { return std::to_string(i); };
  auto tile = [&](std::size_t i) { return "kiln_tile" + num(static_cast<std::size_t>(sp.sites[i].tile)); };
  auto tile_of = [&](std::size_t i, const std::string& what) { return what + num(static_cast<std::size_t>(sp.sites[i].tile)); };
  // A cell's place: a uniform block's from the thread's first cell, any other's from the tile's start.
  auto cell = [&](std::size_t i, bool fast) { return (fast ? tile_of(i, "kiln_mine") : tile(i)) + "[kiln_tc]"; };
  auto data = [&](std::size_t i) { return array(sp.sites[i].array).data; };
  for (std::size_t i = 0; i < sp.sites.size(); ++i) {
    if (sp.sites[i].tile != static_cast<int>(i)) continue;
    std::string users = sp.sites[i].array->name;
    for (const StagedPlan::Site& o : sp.sites)
      if (&o != &sp.sites[i] && o.tile == static_cast<int>(i)) users += ", " + o.array->name + " (stored)";
    line("__shared__ " + std::string(type_name(sp.sites[i].array->type.elem)) + " kiln_tile" + num(i) + "[" + T + " * (" + S +
         " + 1)];  // " + users + (sp.sites[i].store ? " (stored)" : ""));
  }
  for (std::size_t i = 0; i < sp.sites.size(); ++i)
    line("__shared__ long long kiln_off" + num(i) + "[" + T + "];  // each row's step 0 in " + sp.sites[i].array->name);
  line("__shared__ long long kiln_steps[" + T + "];");
  // Blocks whose rows all take the same number of steps, each access's runs equally spaced (a scan's blocks of
  // a line, the rows of a matrix), address their cells from one pointer an access, as a hand-written kernel
  // would: no lookups of each cell's row in shared memory, no 64-bit index arithmetic per cell. The spacing is
  // a constant where the plan knows it (then the offsets are immediates), else the block's first two rows'.
  // Which blocks are so is checked at run time, once per block; the others take the general cells.
  open_block_rows(std::to_string(kStagedThreads), sp.before, /*spread=*/true);
  const ir::ForStmt& f = *sp.loop;
  const std::string begin = expr(f.begin), end = expr(f.end);
  line("{");
  ++depth_;
  const std::string k = bind(f.index.get());
  const std::string k0 = fresh(k + "_begin");
  line("const long long " + k0 + " = " + begin + ";");
  line("const long long kiln_n = kiln_live ? max(0LL, (long long)(" + end + ") - " + k0 + ") : 0LL;  // this row's steps");
  line("kiln_steps[threadIdx.x] = kiln_n;");
  line("{");
  ++depth_;
  line("const long long " + k + " = " + k0 + ";");
  for (std::size_t i = 0; i < sp.sites.size(); ++i)
    line("kiln_off" + num(i) + "[threadIdx.x] = " + element_offset(sp.sites[i].array, sp.sites[i].indices) + ";");
  --depth_;
  line("}");
  line("// The block's rows share the tiles: " + T + " * " + S + " steps per chunk among them.");
  line("const unsigned kiln_chunk = " + T + " * " + S + " / kiln_here, kiln_pitch = kiln_chunk + 1;");
  line("const unsigned kiln_cells = kiln_here * kiln_chunk;");
  line("// A cell's row is e / kiln_chunk = umulhi(e, ceil(2^32 / kiln_chunk)): exact while e * kiln_chunk < 2^32");
  line("// (both are at most " + T + " * " + S + "), and one multiplication where a division per cell was most of the code.");
  line("const unsigned kiln_inverse = 0xFFFFFFFFu / kiln_chunk + 1u;");
  line("__syncthreads();");
  {
    std::string same = "kiln_here == " + T + " && kiln_steps[threadIdx.x] == kiln_steps[0]";
    for (std::size_t i = 0; i < sp.sites.size(); ++i) {
      const std::string apart = sp.sites[i].slope ? std::to_string(*sp.sites[i].slope) + "LL" : "kiln_apart" + num(i);
      if (!sp.sites[i].slope)
        line("const long long kiln_apart" + num(i) + " = kiln_off" + num(i) + "[1] - kiln_off" + num(i) + "[0];  // " +
             sp.sites[i].array->name + "'s runs apart, if the rows are equally spaced");
      same += " && kiln_off" + num(i) + "[threadIdx.x] == kiln_off" + num(i) + "[0] + (long long)threadIdx.x * " + apart;
    }
    line("// Every row has its steps, and each access's runs are equally spaced (then kiln_chunk == " + S + ").");
    line("const bool kiln_uniform = __syncthreads_and(" + same + ");");
    line("const long long kiln_n_all = kiln_steps[0];");
    for (std::size_t i = 0; i < sp.sites.size(); ++i) {
      const std::string t = type_name(sp.sites[i].array->type.elem);
      line(std::string(sp.sites[i].store ? "" : "const ") + t + "* const kiln_p" + num(i) + " = " + data(i) + " + (kiln_off" + num(i) +
           "[threadIdx.x / " + S + "] + threadIdx.x % " + S + ");  // the first row's cell of this thread");
    }
  }
  // Shared-memory cells through per-thread pointers and signed offsets: NVRTC addresses shared memory with
  // 64-bit pointers, and an unsigned 32-bit index (which may wrap) cannot fold into a load's immediate offset,
  // so every cell of a group kept an address register of its own (128 registers a thread for a scan's rescan,
  // against 80 from the same source with 32-bit shared pointers).
  for (std::size_t i = 0; i < sp.sites.size(); ++i) {
    if (sp.sites[i].tile != static_cast<int>(i)) continue;
    const std::string t = type_name(sp.sites[i].array->type.elem);
    line(t + "* const kiln_row" + num(i) + " = kiln_tile" + num(i) + " + (kiln_live ? threadIdx.x * kiln_pitch : 0u);  // this thread's row of steps");
    line(t + "* const kiln_mine" + num(i) + " = kiln_tile" + num(i) + " + (threadIdx.x / " + S + ") * (" + S + " + 1) + threadIdx.x % " + S +
         ";  // a uniform block's first cell of this thread");
  }
  // A thread's cells of a chunk are e = x + r * T for r < S (the chunk has T * S cells at most): row e / chunk,
  // step e % chunk, so consecutive threads touch consecutive steps of a row (coalesced). `body` sees kiln_r,
  // kiln_t, kiln_j and kiln_ok (the cell is a step of its row), and is told whether the block is uniform.
  auto cells = [&](const std::string& s0, const std::function<void(bool)>& body) {
    // A uniform block's cell r: step x % S of row x / S + r * T / S, at a fixed distance from kiln_p.
    line("if (kiln_uniform) {");
    ++depth_;
    line("const unsigned kiln_j = threadIdx.x % " + S + ";");
    line("const bool kiln_ok = " + s0 + " + kiln_j < kiln_n_all;");
    line("#pragma unroll");
    line("for (unsigned kiln_r = 0; kiln_r < " + S + "; ++kiln_r) {");
    ++depth_;
    line("[[maybe_unused]] const int kiln_tc = (int)kiln_r * " + std::to_string(rows_apart * (opts_.staged_steps + 1)) +
         ";  // the cell in the tiles, from kiln_mine");
    body(true);
    --depth_;
    line("}");
    --depth_;
    line("} else {");
    ++depth_;
    line("#pragma unroll");
    line("for (unsigned kiln_r = 0; kiln_r < " + S + "; ++kiln_r) {");
    ++depth_;
    line("const unsigned kiln_e = threadIdx.x + kiln_r * " + T + ";");
    line("const unsigned kiln_t = __umulhi(kiln_e, kiln_inverse), kiln_j = kiln_e - kiln_t * kiln_chunk;");
    line("[[maybe_unused]] const int kiln_tc = (int)(kiln_t * kiln_pitch + kiln_j);");
    line("const bool kiln_ok = kiln_e < kiln_cells && " + s0 + " + kiln_j < kiln_steps[kiln_t];");
    body(false);
    --depth_;
    line("}");
    --depth_;
    line("}");
  };
  // Site i's element at step s0 + kiln_j of the cell's row.
  auto at = [&](std::size_t i, const std::string& s0, bool fast) {
    if (fast && sp.sites[i].slope) return "kiln_p" + num(i) + "[" + s0 + " + kiln_r * " + std::to_string(rows_apart * *sp.sites[i].slope) + "LL]";
    if (fast) return "kiln_p" + num(i) + "[" + s0 + " + (long long)(kiln_r * " + std::to_string(rows_apart) + ") * kiln_apart" + num(i) + "]";
    return data(i) + "[kiln_off" + num(i) + "[kiln_t] + " + s0 + " + kiln_j]";
  };
  const bool any_load = std::any_of(sp.sites.begin(), sp.sites.end(), [](const StagedPlan::Site& s) { return !s.store; });
  const bool any_store = std::any_of(sp.sites.begin(), sp.sites.end(), [](const StagedPlan::Site& s) { return s.store; });
  // The loads of a chunk go to registers first, all S of them in flight at once, and are issued one chunk
  // ahead: the next chunk's loads travel while this chunk's steps run and its stores are written back, which
  // is what hides a load's latency behind a chain of dependent steps (a 1-d scan's carries, one row).
  auto fetch = [&](const std::string& s0) {
    cells(s0, [&](bool fast) {
      for (std::size_t i = 0; i < sp.sites.size(); ++i)
        if (!sp.sites[i].store)
          line("kiln_fetch" + num(i) + "[kiln_r] = kiln_ok ? " + at(i, s0, fast) + " : kiln_cell" + num(i) + "_t();");
    });
  };
  if (any_load) {
    for (std::size_t i = 0; i < sp.sites.size(); ++i)
      if (!sp.sites[i].store) {
        line("typedef " + std::string(type_name(sp.sites[i].array->type.elem)) + " kiln_cell" + num(i) + "_t;");
        line("kiln_cell" + num(i) + "_t kiln_fetch" + num(i) + "[" + S + "];  // registers (indexed only in unrolled loops)");
      }
    fetch("0LL");
  }
  line("for (long long kiln_s0 = 0; __syncthreads_or(kiln_s0 < kiln_n); kiln_s0 += kiln_chunk) {");
  ++depth_;
  if (any_load) {
    cells("kiln_s0", [&](bool fast) {
      for (std::size_t i = 0; i < sp.sites.size(); ++i)
        if (!sp.sites[i].store) line("if (kiln_ok) " + cell(i, fast) + " = kiln_fetch" + num(i) + "[kiln_r];");
    });
    line("__syncthreads();");
    line("{");
    ++depth_;
    line("const long long kiln_next = kiln_s0 + kiln_chunk;");
    fetch("kiln_next");
    --depth_;
    line("}");
  }
  // The row's steps, in order: groups of G whose tile reads all go first, into registers, then the group's
  // steps; the rest one by one, each step's reads first too. Reading the tile inside each step put a shared-
  // memory load's latency into every step of a chain of dependent steps (a tile store comes between a step's
  // read and the next: the compiler keeps them in order), which made a 1-d scan's carry chain take about 28 ns
  // a step on an H100 where the hand-written chain (bench/gpu/scan_rows.cpp) takes 5.9. Reads first is also
  // what lets a store share a load's tile (plan_staged).
  auto reads = [&](const std::string& count, const std::string& j0) {
    for (std::size_t i = 0; i < sp.sites.size(); ++i)
      if (!sp.sites[i].store) {
        line("kiln_cell" + num(i) + "_t kiln_read" + num(i) + "[" + count + "];  // registers (indexed only in unrolled loops)");
        line("#pragma unroll");
        line("for (int kiln_u = 0; kiln_u < " + count + "; ++kiln_u) kiln_read" + num(i) + "[kiln_u] = " + tile_of(i, "kiln_row") +
             "[" + j0 + " + kiln_u];");
      }
  };
  auto step = [&](const std::string& j) {
    line("[[maybe_unused]] const long long " + k + " = " + k0 + " + kiln_s0 + " + j + ";  // the staged accesses do not read it");
    line("[[maybe_unused]] const int kiln_cell = " + j + ";  // a store's cell in the thread's row");
    lets_.emplace_back();
    staged_on_ = true;
    stmt(f.body);
    staged_on_ = false;
    lets_.pop_back();
  };
  line("const int kiln_last = (int)max(0LL, min((long long)kiln_chunk, kiln_n - kiln_s0));  // this row's steps of the chunk");
  line("int kiln_j0 = 0;");
  line("for (; kiln_j0 + " + G + " <= kiln_last; kiln_j0 += " + G + ") {");
  ++depth_;
  reads(G, "kiln_j0");
  line("#pragma unroll");
  line("for (int kiln_u = 0; kiln_u < " + G + "; ++kiln_u) {");
  ++depth_;
  step("kiln_j0 + kiln_u");
  --depth_;
  line("}");
  --depth_;
  line("}");
  line("for (; kiln_j0 < kiln_last; ++kiln_j0) {");
  ++depth_;
  reads("1", "kiln_j0");
  line("const int kiln_u = 0;");
  step("kiln_j0");
  --depth_;
  line("}");
  if (any_store) {
    line("__syncthreads();");
    cells("kiln_s0", [&](bool fast) {
      for (std::size_t i = 0; i < sp.sites.size(); ++i)
        if (sp.sites[i].store) line("if (kiln_ok) " + at(i, "kiln_s0", fast) + " = " + cell(i, fast) + ";");
    });
  }
  --depth_;
  line("}  // the next round's __syncthreads_or: every thread is done with the tiles");
  --depth_;
  line("}");
  close_block_rows(sp.after);
}

void Emitter::open_block_rows(const std::string& most, const std::vector<ir::Stmt>& before, bool spread) {
  std::string rows = "kiln_n0";
  for (int d = 1; d < k_.rank; ++d) rows += " * kiln_n" + std::to_string(d);
  line("const unsigned long long kiln_rows = " + rows + ";");
  std::string T = most;
  if (spread) {  // geometry.cpp: a grid of more blocks than full ones spreads the rows over them
    line("const unsigned long long kiln_per = min((unsigned long long)" + most + ", (kiln_rows + gridDim.x - 1) / gridDim.x);  // rows a block");
    T = "kiln_per";
  }
  line("for (unsigned long long kiln_first = (unsigned long long)blockIdx.x * " + T + "; kiln_first < kiln_rows; kiln_first += (unsigned long long)gridDim.x * " + T + ") {");
  ++depth_;
  lets_.emplace_back();
  line("const unsigned kiln_here = (unsigned)min((unsigned long long)" + T + ", kiln_rows - kiln_first);  // rows of this block");
  line("const bool kiln_live = threadIdx.x < kiln_here;");
  line("// A thread beyond the last row runs the statements before the loop as the last row (its stores suppressed),");
  line("// so that every thread reaches the barriers.");
  bind_row_major("(kiln_first + (kiln_live ? threadIdx.x : kiln_here - 1))");
  staged_prefix_ = true;
  for (const ir::Stmt& s : before) {
    stmt(s);
    if (s->kind != ir::StmtKind::Let) lets_.back().clear();  // it may store or assign
  }
  staged_prefix_ = false;
  lets_.back().clear();
}

void Emitter::close_block_rows(const std::vector<ir::Stmt>& after) {
  if (!after.empty()) {
    line("if (kiln_live) {");
    ++depth_;
    lets_.emplace_back();
    for (const ir::Stmt& s : after) {
      stmt(s);
      if (s->kind != ir::StmtKind::Let) lets_.back().clear();
    }
    lets_.pop_back();
    --depth_;
    line("}");
  }
  lets_.pop_back();
  --depth_;
  line("}");
}

std::string Emitter::staged_cell(int site) const {
  // A load site's value is in the step's registers (read before the step: see staged_loops); a store goes to
  // its tile.
  const StagedPlan::Site& st = staged_->sites[static_cast<std::size_t>(site)];
  if (!st.store) return "kiln_read" + std::to_string(site) + "[kiln_u]";
  return "kiln_row" + std::to_string(st.tile) + "[kiln_cell]";
}

}  // namespace kiln::codegen::cuda
