// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Cooperative rows (ir/cooperative.hpp): a group of threads per iteration of the launched parfor (a "row") —
// a warp, with the block's warps on rows along y, or the whole block (geometry.cpp, cooperative_geometry,
// decides at launch). Every thread of the group runs the row's own statements, which compute the same values
// in every thread; the row's nested parfors are spread over the group, thread x taking iterations x,
// x + G, x + 2G, ... (a warp's loads are consecutive elements), and their reductions combine through
// kiln_group_reduce, a fixed tree whose result every thread receives; what the row stores, thread 0 stores.
//
// Two-way tiles (passes/two_way_products.hpp): a row that is a tile of a matrix, summed once along its columns
// (a parfor over columns, each walking the tile's rows in a loop) and once along its rows (a loop over rows,
// each a reduction parfor over the columns), reads every element twice when the two run one after the other.
// They run as one walk over the tile's rows instead: each thread keeps the sums of its columns (lane,
// lane + G, ...: kTwoWayLaneColumns of them) in registers, and each row's values of the thread's columns go
// into the row's sum, combined over the group by kiln_group_reduce. Each column's sum is still its rows in
// order, each row's sum a fixed tree: the same results as the two loops.
#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

/// Columns a thread of a two-way tile keeps sums of: passes/two_way_products.hpp makes tiles of 256 columns, a
/// warp's lanes take 8 each. A wider tile (or a narrower group) runs the two loops apart.
constexpr int kTwoWayLaneColumns = 8;

std::vector<ir::Stmt> statements_of(const ir::Stmt& s) {
  std::vector<ir::Stmt> out;
  flatten_blocks(s, out);
  return out;
}

/// Arrays whose elements `s` reads.
ir::VarSet loaded_arrays(const ir::Stmt& s) {
  struct Loads : ir::IRVisitor {
    ir::VarSet found;
    void visit(const ir::LoadExpr& l) override {
      found.insert(l.array.get());
      ir::IRVisitor::visit(l);
    }
  } loads;
  loads.walk(s);
  return loads.found;
}

/// Statements that only compute values: lets and assignments of the body's accumulator or its own lets.
bool computes_only(const ir::Stmt& body, const ir::VarNode* acc) {
  const ir::VarSet own = ir::declared_in(body);
  for (const ir::Stmt& s : statements_of(body)) {
    if (s->kind == ir::StmtKind::Let) continue;
    if (s->kind != ir::StmtKind::Assign) return false;
    const ir::VarNode* v = s->as<ir::AssignStmt>().var.get();
    if (v != acc && !own.count(v)) return false;
  }
  return true;
}

}  // namespace

std::optional<TwoWayTile> match_two_way(const ir::Stmt& first, const ir::Stmt& second) {
  const auto* c = ir::dyn<ir::ParforStmt>(first);
  const auto* r = ir::dyn<ir::ForStmt>(second);
  if (!c || !r || c->indices.size() != 1 || !c->reductions.empty() || !c->array_reductions.empty()) return std::nullopt;
  const std::vector<ir::Stmt> cs = statements_of(c->body), rs = statements_of(r->body);
  if (cs.size() != 3 || rs.size() != 3) return std::nullopt;
  TwoWayTile t;
  t.columns = c;
  t.rows = r;
  t.columns_stmt = first;
  t.rows_stmt = second;
  t.column_acc = ir::dyn<ir::LetStmt>(cs[0]);
  t.column_walk = ir::dyn<ir::ForStmt>(cs[1]);
  t.column_store = cs[2];
  t.row_acc = ir::dyn<ir::LetStmt>(rs[0]);
  t.row_sum = ir::dyn<ir::ParforStmt>(rs[1]);
  t.row_store = rs[2];
  if (!t.column_acc || !t.column_walk || t.column_store->kind != ir::StmtKind::Store || !t.row_acc || !t.row_sum ||
      t.row_store->kind != ir::StmtKind::Store)
    return std::nullopt;
  const ir::ParforStmt& q = *t.row_sum;
  // The same rows and columns.
  if (!ir::equal(t.column_walk->begin, r->begin) || !ir::equal(t.column_walk->end, r->end) || q.indices.size() != 1 ||
      !ir::equal(q.begins[0], c->begins[0]) || !ir::equal(q.ends[0], c->ends[0]))
    return std::nullopt;
  if (q.reductions.size() != 1 || q.reductions[0].var != t.row_acc->var || ir::is_arg_reduction(q.reductions[0].op) ||
      !q.array_reductions.empty())
    return std::nullopt;
  if (!computes_only(t.column_walk->body, t.column_acc->var.get()) || !computes_only(q.body, t.row_acc->var.get())) return std::nullopt;
  // Nothing either part reads is written by the tile, and the two stores are to distinct arrays: the stores may
  // move (each column's after the whole walk, each row's after its row) without changing what anything sees.
  const ir::VarNode* xs = t.column_store->as<ir::StoreStmt>().array.get();
  const ir::VarNode* ys = t.row_store->as<ir::StoreStmt>().array.get();
  if (ir::may_alias(xs, ys)) return std::nullopt;
  for (const ir::Stmt& part : {first, second})
    for (const ir::VarNode* a : loaded_arrays(part))
      if (ir::may_alias(a, xs) || ir::may_alias(a, ys)) return std::nullopt;
  return t;
}

bool known_at_launch(const ir::Expr& e, const ir::ParforStmt& p) {
  if (ir::has_load(e)) return false;  // an element the host would have to copy from the device first
  const ir::VarSet inside = ir::declared_in(p.body);
  for (const ir::Var& v : ir::free_vars(e)) {
    if (inside.count(v.get())) return false;
    for (const ir::Var& i : p.indices)
      if (i == v) return false;
  }
  return true;
}

void Emitter::cooperative_loops() {
  const int r = k_.rank;
  struct Loaded : ir::IRVisitor {
    std::unordered_set<const ir::VarNode*>& out;
    explicit Loaded(std::unordered_set<const ir::VarNode*>& o) : out(o) {}
    void visit(const ir::LoadExpr& l) override {
      out.insert(l.array.get());
      ir::IRVisitor::visit(l);
    }
  } loaded(coop_loaded_);
  loaded.walk(p_.body);
  if (const ir::ParforStmt* q = coop_->first_reduction; q && known_at_launch(q->begins[0], p_) && known_at_launch(q->ends[0], p_))
    k_.row_length = ir::make_binary(BinaryOp::Sub, q->ends[0], q->begins[0]);
  std::string rows = "kiln_n0";
  for (int d = 1; d < r; ++d) rows += " * kiln_n" + std::to_string(d);
  line("const unsigned kiln_lane = threadIdx.x, kiln_group = blockDim.x;  // this thread in its row's group");
  line("const unsigned long long kiln_rows = " + rows + ";");
  // A warp per row: the block's warps take rows along y; a block per row: blockDim.y == 1.
  line("for (unsigned long long kiln_row = (unsigned long long)blockIdx.x * blockDim.y + threadIdx.y; kiln_row < kiln_rows;");
  line("     kiln_row += (unsigned long long)gridDim.x * blockDim.y) {");
  ++depth_;
  bind_row_major("kiln_row");
  cooperative_row(p_.body);
  --depth_;
  line("}");
}

void Emitter::cooperative_row(const ir::Stmt& body) {
  if (body->kind != ir::StmtKind::Block) return stmt(body);
  const std::vector<ir::Stmt>& list = body->as<ir::BlockStmt>().stmts;
  lets_.emplace_back();
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (k + 1 < list.size())
      if (const std::optional<TwoWayTile> t = match_two_way(list[k], list[k + 1])) {
        two_way_tile(*t);
        lets_.back().clear();
        ++k;
        continue;
      }
    if (list[k]->kind == ir::StmtKind::Let) hoist_repeated_calls(list, k);
    stmt(list[k]);
    if (list[k]->kind != ir::StmtKind::Let) lets_.back().clear();
  }
  lets_.pop_back();
}

void Emitter::two_way_tile(const TwoWayTile& t) {
  const std::string n = std::to_string(spread_count_++);
  const std::string u = std::to_string(kTwoWayLaneColumns);
  const std::string cb = "kiln_wb" + n, ce = "kiln_we" + n, rb = "kiln_wr" + n, re = "kiln_wre" + n, acc = "kiln_wc" + n, i = "kiln_wi" + n,
                    j = "kiln_wj" + n, entering = "kiln_win" + n;
  const ir::Reduction& red = t.row_sum->reductions[0];
  const DType ct = t.column_acc->var->type.elem, rt = red.var->type.elem;
  const std::string identity = constant(ir::identity_of(red.op, rt)->as<ir::ConstExpr>());
  if (k_.plan.find("two-way tile") == std::string::npos)
    k_.plan += "; two-way tile: each thread's " + u + " column sums in registers over the tile's rows, each row's sum combined over the "
               "group: one pass over the tile for both (while the tile is at most " + u + " columns a thread)";
  line("{  // two-way tile: the column sums of " + (t.columns->origin.empty() ? std::string("a parfor") : t.columns->origin) +
       " and the row sums of " + (t.row_sum->origin.empty() ? std::string("a parfor") : t.row_sum->origin) + " in one walk");
  ++depth_;
  line("const long long " + cb + " = " + expr(t.columns->begins[0]) + ", " + ce + " = " + expr(t.columns->ends[0]) + ";");
  line("const long long " + rb + " = " + expr(t.rows->begin) + ", " + re + " = " + expr(t.rows->end) + ";");
  line("if (" + ce + " - " + cb + " <= " + u + "LL * (long long)kiln_group) {");
  ++depth_;
  auto column_at = [&](const std::string& uu) {
    line("const long long " + j + " = " + cb + " + (long long)(kiln_lane + " + uu + " * kiln_group);");
  };
  line(std::string(type_name(ct)) + " " + acc + "[" + u + "];");
  line("#pragma unroll");
  line("for (unsigned kiln_u = 0; kiln_u < " + u + "; ++kiln_u) " + acc + "[kiln_u] = " + expr(t.column_acc->init) + ";");
  line("for (long long " + i + " = " + rb + "; " + i + " < " + re + "; ++" + i + ") {");
  ++depth_;
  lets_.emplace_back();
  line("const long long " + bind(t.column_walk->index.get()) + " = " + i + ";");
  line("const long long " + bind(t.rows->index.get()) + " = " + i + ";");
  // The row's sum: each thread its columns from the identity, then the group's total joins the let's value.
  line("const " + std::string(type_name(rt)) + " " + entering + " = " + expr(t.row_acc->init) + ";");
  line(std::string(type_name(rt)) + " " + bind(red.var.get()) + " = " + identity + ";");
  line("#pragma unroll");
  line("for (unsigned kiln_u = 0; kiln_u < " + u + "; ++kiln_u) {");
  ++depth_;
  column_at("kiln_u");
  line("if (" + j + " < " + ce + ") {");
  ++depth_;
  line("const long long " + bind(t.columns->indices[0].get()) + " = " + j + ";");
  line("const long long " + bind(t.row_sum->indices[0].get()) + " = " + j + ";");
  line(std::string(type_name(ct)) + "& " + bind(t.column_acc->var.get()) + " = " + acc + "[kiln_u];");
  spreading_ = true;
  block(t.column_walk->body);
  block(t.row_sum->body);
  spreading_ = false;
  --depth_;
  line("}");
  --depth_;
  line("}");
  const std::string v = name(red.var.get());
  line(v + " = " + op_functor(red.op) + "(" + entering + ", kiln_group_reduce(" + v + ", " + op_functor(red.op) + ", " + identity +
       ", kiln_coop_shared));");
  stmt(t.row_store);
  lets_.pop_back();
  --depth_;
  line("}");
  // Each column's sum, stored by its thread.
  line("#pragma unroll");
  line("for (unsigned kiln_u = 0; kiln_u < " + u + "; ++kiln_u) {");
  ++depth_;
  column_at("kiln_u");
  line("if (" + j + " < " + ce + ") {");
  ++depth_;
  lets_.emplace_back();
  line("const long long " + bind(t.columns->indices[0].get()) + " = " + j + ";");
  line(std::string(type_name(ct)) + "& " + bind(t.column_acc->var.get()) + " = " + acc + "[kiln_u];");
  spreading_ = true;
  stmt(t.column_store);
  spreading_ = false;
  lets_.pop_back();
  --depth_;
  line("}");
  --depth_;
  line("}");
  --depth_;
  line("} else {  // wider than the threads' registers: the two loops one after the other");
  ++depth_;
  stmt(t.columns_stmt);
  stmt(t.rows_stmt);
  --depth_;
  line("}");
  --depth_;
  line("}");
}

void Emitter::spread_parfor(const ir::ParforStmt& q) {
  const std::string n = std::to_string(spread_count_++);
  // The threads store elements the row also reads: every thread has read what it needed before any stores
  // (a group's threads need not run in step), and the stores are visible before anything reads them.
  bool shared_writes = false;
  for (const ir::VarNode* a : ir::stored_arrays(q.body)) shared_writes = shared_writes || coop_loaded_.count(a);
  if (shared_writes) line("kiln_group_sync();");
  const std::string c = "kiln_c" + n, count = "kiln_cn" + n;
  line("{  // " + (q.origin.empty() ? std::string("nested parfor") : q.origin) + ": spread over the row's group");
  ++depth_;
  const std::string begin = expr(q.begins[0]), end = expr(q.ends[0]);
  const std::string first = "kiln_cb" + n;
  line("const long long " + first + " = " + begin + ", kiln_ce" + n + " = " + end + ";");
  line("const unsigned long long " + count + " = kiln_ce" + n + " > " + first + " ? (unsigned long long)kiln_ce" + n + " - (unsigned long long)" +
       first + " : 0ull;");
  // Each thread accumulates its own iterations from the identity; the group's total then joins the value the
  // variable had, as the host does with a grid's total (v = v op total).
  std::vector<std::string> entering;
  for (std::size_t i = 0; i < q.reductions.size(); ++i) {
    const ir::Reduction& red = q.reductions[i];
    const DType t = red.var->type.elem;
    entering.push_back("kiln_in" + n + "_" + std::to_string(i));
    line("const " + std::string(type_name(t)) + " " + entering.back() + " = " + name(red.var.get()) + ";");
    line(name(red.var.get()) + " = " + constant(ir::identity_of(red.op, t)->as<ir::ConstExpr>()) + ";");
  }
  line("unsigned long long " + c + " = kiln_lane;");
  const ir::Var& k = q.indices[0];
  auto body = [&](const std::string& at) {
    line("const long long " + bind(k.get()) + " = " + first + " + (long long)(" + at + ");");
    lets_.emplace_back();
    stmt(q.body);
    lets_.pop_back();
  };
  spreading_ = true;
  if (k_.unroll > 1) {
    // Rounds of `unroll` iterations whose loads are in flight together; each thread still takes its
    // iterations in order, so the rounds change no result.
    const std::string u = std::to_string(k_.unroll);
    line("for (; " + c + " + " + std::to_string(k_.unroll - 1) + "ull * kiln_group < " + count + "; " + c + " += " + u + "ull * kiln_group) {");
    ++depth_;
    line("#pragma unroll");
    line("for (unsigned kiln_u = 0; kiln_u < " + u + "; ++kiln_u) {");
    ++depth_;
    body(c + " + kiln_u * kiln_group");
    --depth_;
    line("}");
    --depth_;
    line("}");
  }
  line("for (; " + c + " < " + count + "; " + c + " += kiln_group) {");
  ++depth_;
  body(c);
  --depth_;
  line("}");
  spreading_ = false;
  for (std::size_t i = 0; i < q.reductions.size(); ++i) {
    const ir::Reduction& red = q.reductions[i];
    const DType t = red.var->type.elem;
    const std::string v = name(red.var.get());
    line(v + " = " + op_functor(red.op) + "(" + entering[i] + ", kiln_group_reduce(" + v + ", " + op_functor(red.op) + ", " +
         constant(ir::identity_of(red.op, t)->as<ir::ConstExpr>()) + ", kiln_coop_shared));");
  }
  if (shared_writes) line("kiln_group_sync();");
  --depth_;
  line("}");
}

void Emitter::leader_store(const ir::StoreStmt& s) {
  // An array the row reads as well: the group's reads before the store end before it, those after it see it.
  const bool shared = coop_loaded_.count(s.array.get()) > 0;
  if (shared) line("kiln_group_sync();");
  line("if (kiln_lane == 0) {");
  ++depth_;
  leading_ = true;
  store(s);
  leading_ = false;
  --depth_;
  line("}");
  if (shared) line("kiln_group_sync();");
}

}  // namespace kiln::codegen::cuda
