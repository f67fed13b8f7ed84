// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Cooperative rows (ir/cooperative.hpp): a group of threads per iteration of the launched parfor (a "row") —
// a warp, with the block's warps on rows along y, or the whole block (geometry.cpp, cooperative_geometry,
// decides at launch). Every thread of the group runs the row's own statements, which compute the same values
// in every thread; the row's nested parfors are spread over the group, thread x taking iterations x,
// x + G, x + 2G, ... (a warp's loads are consecutive elements), and their reductions combine through
// kiln_group_reduce, a fixed tree whose result every thread receives; what the row stores, thread 0 stores.
#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {

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
  stmt(p_.body);
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
