// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Statements inside a kernel: one thread's view of a parfor iteration. Nested parfors run in order inside
// the thread; array reductions become atomics; allocations use the device heap; checks and failed
// allocations record the status and leave the thread's remaining iterations.
#include <algorithm>
#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/reductions.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cuda {
namespace {

/// A C string literal holding `s`.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

/// Math library calls NVVM does not merge when they are repeated (they inline to code with branches).
bool costly(Intrinsic f) { return f >= Intrinsic::Exp && f <= Intrinsic::Erf; }

bool calls_costly(const ir::Expr& e) {
  if (!e) return false;
  switch (e->kind) {
    case ir::ExprKind::Unary: return calls_costly(e->as<ir::UnaryExpr>().a);
    case ir::ExprKind::Binary: return calls_costly(e->as<ir::BinaryExpr>().a) || calls_costly(e->as<ir::BinaryExpr>().b);
    case ir::ExprKind::Select: {
      const auto& x = e->as<ir::SelectExpr>();
      return calls_costly(x.cond) || calls_costly(x.a) || calls_costly(x.b);
    }
    case ir::ExprKind::Cast: return calls_costly(e->as<ir::CastExpr>().a);
    case ir::ExprKind::Call: {
      const auto& c = e->as<ir::CallExpr>();
      if (costly(c.fn)) return true;
      for (const auto& a : c.args)
        if (calls_costly(a)) return true;
      return false;
    }
    case ir::ExprKind::Load:
      for (const auto& i : e->as<ir::LoadExpr>().indices)
        if (calls_costly(i)) return true;
      return false;
    default: return false;
  }
}

/// The subexpressions of `e` that call a costly function and are evaluated whenever `e` is (not under an
/// arm of ?:, or the right of && and ||: hoisting those could evaluate a guarded load), children first.
void unconditional_costly(const ir::Expr& e, std::vector<ir::Expr>& out) {
  if (!calls_costly(e)) return;
  switch (e->kind) {
    case ir::ExprKind::Unary: unconditional_costly(e->as<ir::UnaryExpr>().a, out); break;
    case ir::ExprKind::Binary: {
      const auto& b = e->as<ir::BinaryExpr>();
      unconditional_costly(b.a, out);
      if (b.op != BinaryOp::And && b.op != BinaryOp::Or) unconditional_costly(b.b, out);
      break;
    }
    case ir::ExprKind::Select: unconditional_costly(e->as<ir::SelectExpr>().cond, out); break;
    case ir::ExprKind::Cast: unconditional_costly(e->as<ir::CastExpr>().a, out); break;
    case ir::ExprKind::Call:
      for (const auto& a : e->as<ir::CallExpr>().args) unconditional_costly(a, out);
      break;
    case ir::ExprKind::Load:
      for (const auto& i : e->as<ir::LoadExpr>().indices) unconditional_costly(i, out);
      break;
    default: break;
  }
  out.push_back(e);
}

}  // namespace

void Emitter::hoist_repeated_calls(const std::vector<ir::Stmt>& stmts, std::size_t at) {
  // Within a run of lets nothing is stored or assigned, so equal expressions have equal values: a costly
  // part of let `at` that it or a later let of the run repeats is computed once, just before let `at` (not
  // earlier: it may read variables that earlier lets define). Black-Scholes' two erf arguments both
  // contain d1 and its logarithm; the hand-written kernel computes them once.
  std::vector<ir::Expr> mine, later;
  unconditional_costly(stmts[at]->as<ir::LetStmt>().init, mine);
  for (std::size_t q = at + 1; q < stmts.size() && stmts[q]->kind == ir::StmtKind::Let; ++q)
    unconditional_costly(stmts[q]->as<ir::LetStmt>().init, later);
  for (const ir::Expr& cand : mine) {  // children first: a hoisted parent reads its hoisted children
    int uses = 0;
    for (const std::vector<ir::Expr>* list : {&mine, &later})
      for (const ir::Expr& other : *list) uses += ir::equal(cand, other);
    bool done = false;
    for (const auto& [init, let] : lets_.back()) done = done || ir::equal(init, cand);
    if (uses < 2 || done) continue;
    const std::string value = expr(cand);
    const std::string n = fresh("cse");
    line("const " + std::string(type_name(cand->type)) + " " + n + " = " + value + ";");
    lets_.back().emplace_back(cand, n);
  }
}

void Emitter::line(const std::string& s) {
  body_.append(static_cast<std::size_t>(2 * depth_), ' ');
  body_ += s;
  body_ += '\n';
}

void Emitter::block(const ir::Stmt& s) {
  // A body may run many times (a loop) or not at all: it sees none of the enclosing block's lets.
  ++depth_;
  lets_.emplace_back();
  stmt(s);
  lets_.pop_back();
  --depth_;
}

void Emitter::stmt(const ir::Stmt& s) {
  switch (s->kind) {
    case ir::StmtKind::Block:
      lets_.emplace_back();
      for (std::size_t k = 0; k < s->as<ir::BlockStmt>().stmts.size(); ++k) {
        const ir::Stmt& x = s->as<ir::BlockStmt>().stmts[k];
        if (x->kind == ir::StmtKind::Let) hoist_repeated_calls(s->as<ir::BlockStmt>().stmts, k);
        stmt(x);
        if (x->kind != ir::StmtKind::Let) lets_.back().clear();  // it may store or assign (a nested block too)
      }
      lets_.pop_back();
      return;
    case ir::StmtKind::Let: {
      const auto& l = s->as<ir::LetStmt>();
      const std::string init = expr(l.init);  // before the name exists: the initializer cannot see it
      const std::string n = bind(l.var.get());
      line(std::string(type_name(l.var->type.elem)) + " " + n + " = " + init + ";");
      if (!lets_.empty() && !ir::dyn<ir::VarRefExpr>(l.init) && !ir::dyn<ir::ConstExpr>(l.init)) lets_.back().emplace_back(l.init, n);
      return;
    }
    case ir::StmtKind::Assign: {
      const auto& a = s->as<ir::AssignStmt>();
      line(name(a.var.get()) + " = " + expr(a.value) + ";");
      return;
    }
    case ir::StmtKind::Store: return store(s->as<ir::StoreStmt>());
    case ir::StmtKind::Atomic: return atomic(s->as<ir::AtomicStmt>());
    case ir::StmtKind::For: {
      const auto& f = s->as<ir::ForStmt>();
      const std::string begin = expr(f.begin), end = expr(f.end);
      line("{");
      ++depth_;
      const std::string i = bind(f.index.get());
      const std::string last = fresh(i + "_end");
      line("const long long " + last + " = " + end + ";");  // the bound is evaluated once, as in the IR
      line("for (long long " + i + " = " + begin + "; " + i + " < " + last + "; ++" + i + ") {");
      block(f.body);
      line("}");
      --depth_;
      line("}");
      return;
    }
    case ir::StmtKind::Parfor:
      if (coop_ && !spreading_) return spread_parfor(s->as<ir::ParforStmt>());
      return nested_parfor(s->as<ir::ParforStmt>());
    case ir::StmtKind::If: {
      const auto& i = s->as<ir::IfStmt>();
      line("if (" + expr(i.cond) + ") {");
      block(i.then_body);
      if (i.else_body) {
        line("} else {");
        block(i.else_body);
      }
      line("}");
      return;
    }
    case ir::StmtKind::Allocate: return allocate(s->as<ir::AllocateStmt>());
    case ir::StmtKind::Check: return check(s->as<ir::CheckStmt>());
    case ir::StmtKind::Bind: return bind_array(s->as<ir::BindStmt>());
    default:
      // Array-level operations are lowered to parfors before code generation; anything else is new.
      backend_error(fn_.name, fmt::format("statement kind {} cannot be compiled for the GPU", static_cast<int>(s->kind)));
  }
}

void Emitter::store(const ir::StoreStmt& s) {
  if (coop_ && !spreading_ && !leading_) return leader_store(s);
  if (deferring_) {  // a deferred round or strip: the value and the element's offset wait in this store's slots
    const std::vector<const ir::StoreStmt*>& list = defer_strip_ ? strip_deferred_ : deferred_;
    const auto k = std::to_string(std::find(list.begin(), list.end(), &s) - list.begin());
    line("kiln_do" + k + "[" + defer_slot_ + "] = " + element_offset(s.array.get(), s.indices) + ";");
    line("kiln_dv" + k + "[" + defer_slot_ + "] = " + expr(s.value) + ";");
    if (defer_strip_ || deferred_flags_) line("kiln_df" + k + "[" + defer_slot_ + "] = true;");
    return;
  }
  if (staged_on_)
    if (auto it = staged_->stores.find(&s); it != staged_->stores.end()) {
      line(staged_cell(it->second) + " = " + expr(s.value) + ";");  // written back by the block after the chunk
      return;
    }
  if (staged_prefix_) {  // a thread beyond the block's rows runs the statements before the walk as the last row
    line("if (kiln_live) {");
    ++depth_;
    staged_prefix_ = false;
    store(s);
    staged_prefix_ = true;
    --depth_;
    line("}");
    return;
  }
  // `a[k] = a[k] op e` on an array the parfor reduces into: other threads update the same elements.
  for (const auto& r : p_.array_reductions) {
    if (!ir::is_array_update(s, r)) continue;
    const auto& b = s.value->as<ir::BinaryExpr>();
    const auto* first = ir::dyn<ir::LoadExpr>(b.a);
    const bool element_first = first && first->array == s.array && !ir::uses(b.b, s.array.get());
    std::string operand = expr(element_first ? b.b : b.a);
    const char* fn = "kiln_atomic_add";
    switch (b.op) {
      case BinaryOp::Sub: operand = is_float(b.type) ? "(-" + operand + ")" : "kiln_neg(" + operand + ")"; break;
      case BinaryOp::Mul: fn = "kiln_atomic_mul"; break;
      case BinaryOp::Div:  // float only (ir::is_array_update): x / e == x * (1 / e) is not exact, so divide
        operand = "(" + std::string(b.type == DType::F32 ? "1.0f" : "1.0") + " / " + operand + ")";
        fn = "kiln_atomic_mul";
        break;
      case BinaryOp::Min: fn = "kiln_atomic_min"; break;
      case BinaryOp::Max: fn = "kiln_atomic_max"; break;
      default: break;
    }
    for (std::size_t c = 0; c < privates_.size(); ++c)
      if (privates_[c].array == s.array.get()) return private_update(s.indices, static_cast<int>(c), fn, operand);
    // The operand in the element's own type: the atomics are overloaded (and templates) on it.
    line(std::string(fn) + "(&" + element(s.array.get(), s.indices) + ", (" + type_name(s.array->type.elem) + ")" +
         operand + ");");
    return;
  }
  const std::string value = expr(s.value);
  if (const auto it = march_out_.find(&s); it != march_out_.end()) {  // a marching copy's element: emit_march.cpp
    std::string at = stencil_v_ ? std::to_string(stencil_v_) + " * " + it->second.second : std::string();
    if (stencil_u_) at += (at.empty() ? "" : " + ") + std::to_string(32 * stencil_u_);
    line(it->second.first + "[" + (at.empty() ? "0" : at) + "] = " + value + ";");
    return;
  }
  line(element(s.array.get(), s.indices) + " = " + value + ";");
}

void Emitter::nested_parfor(const ir::ParforStmt& p) {
  // Inside a thread a parfor is a loop nest in row-major order; its reductions update their variables in
  // place, which is exactly the sequential meaning.
  line("{");
  ++depth_;
  std::vector<std::string> idx, first, last;
  for (std::size_t d = 0; d < p.indices.size(); ++d) {
    const std::string begin = expr(p.begins[d]), end = expr(p.ends[d]);
    idx.push_back(bind(p.indices[d].get()));
    first.push_back(fresh(idx.back() + "_begin"));
    last.push_back(fresh(idx.back() + "_end"));
    line("const long long " + first.back() + " = " + begin + ", " + last.back() + " = " + end + ";");
  }
  for (std::size_t d = 0; d < idx.size(); ++d) {
    line("for (long long " + idx[d] + " = " + first[d] + "; " + idx[d] + " < " + last[d] + "; ++" + idx[d] + ") {");
    ++depth_;
  }
  lets_.emplace_back();
  stmt(p.body);
  lets_.pop_back();
  for (std::size_t d = 0; d < idx.size(); ++d) {
    --depth_;
    line("}");
  }
  --depth_;
  line("}");
}

void Emitter::allocate(const ir::AllocateStmt& a) {
  // The pointer and its extents were declared at the top of the kernel (declare_locals), so every exit
  // frees them; a site that runs again frees its previous array first, as on the CPU.
  const ArrayNames& n = array(a.array.get());
  const int rank = a.array->type.rank;
  std::vector<std::string> ext;
  for (const auto& e : a.shape) ext.push_back(expr(e));
  line("{");
  ++depth_;
  for (int k = 0; k < rank; ++k) line(n.extent[k] + " = " + ext[static_cast<std::size_t>(k)] + ";");
  std::string negative, shape_args;
  std::string shape_text = "(";
  for (int k = 0; k < rank; ++k) {
    negative += (k ? " || " : "") + n.extent[k] + " < 0";
    shape_args += (k ? ", " : "") + n.extent[k];
    shape_text += k ? ", {}" : "{}";
  }
  shape_text += rank == 1 ? ",)" : ")";
  line("if (" + negative + ") {");
  ++depth_;
  std::vector<std::string> args;
  for (int k = 0; k < rank; ++k) args.push_back(n.extent[k]);
  fail(kShapeMismatch, "cannot allocate an array of shape " + shape_text + ": negative extent", args);
  --depth_;
  line("}");
  std::string count = "1ull";
  for (int k = 0; k < rank; ++k) count += " * (unsigned long long)" + n.extent[k];
  for (int k = rank - 1; k-- > 0;) line(n.stride[k] + " = " + (n.stride[k + 1].empty() ? "1" : n.stride[k + 1]) + " * " + n.extent[k + 1] + ";");
  const std::string t = type_name(a.array->type.elem);
  line("free(" + n.data + ");");
  // malloc(0) may return null, which is no failure: an empty array gets one byte.
  line(n.data + " = (" + t + "*)malloc(" + count + " * sizeof(" + t + ") + (" + count + " == 0));");
  line("if (" + n.data + " == nullptr) {");
  ++depth_;
  args.clear();
  std::string bytes_expr = "(long long)(" + count + " * sizeof(" + t + "))";
  args.push_back(bytes_expr);
  fail(kOutOfMemory,
       "out of device heap memory allocating " + a.array->name + " ({} bytes) inside a parfor; KILN_CUDA_HEAP_MB sets the heap size",
       args);
  --depth_;
  line("}");
  --depth_;
  line("}");
}

void Emitter::bind_array(const ir::BindStmt& b) {
  const ArrayNames src = array(b.source.get());  // a copy: arrays_ may grow below
  const int rank = b.target->type.rank;
  const bool unit = b.target->type.unit_stride;
  std::vector<std::string> extent, stride;
  for (int k = 0; k < rank; ++k) {
    if (src.extent[k].empty())
      backend_error(fn_.name,
                    fmt::format("the extents of {} are not available to bind {}", b.source->name, b.target->name));
    extent.push_back(src.extent[k]);
    stride.push_back(src.stride[k].empty() ? "1LL" : src.stride[k]);  // only a unit innermost stride is implicit
  }
  if (b.declare) {
    ArrayNames n;
    n.rank = rank;
    n.data = fresh(b.target->name);
    std::string dims;
    for (int k = 0; k < rank; ++k) {
      n.extent[k] = fresh(n.data + "_n" + std::to_string(k));
      dims += (k ? ", " : "") + n.extent[k] + " = " + extent[static_cast<std::size_t>(k)];
      if (k == rank - 1 && unit) continue;
      n.stride[k] = fresh(n.data + "_s" + std::to_string(k));
      dims += ", " + n.stride[k] + " = " + stride[static_cast<std::size_t>(k)];
    }
    line(std::string(written_.count(b.target.get()) ? "" : "const ") + type_name(b.target->type.elem) + "* " + n.data + " = " + src.data +
         ";  // binding");
    line("long long " + dims + ";");
    arrays_[b.target.get()] = n;
    return;
  }
  const ArrayNames& n = array(b.target.get());
  line(n.data + " = " + src.data + ";  // rebinding");
  for (int k = 0; k < rank; ++k) {
    line(n.extent[k] + " = " + extent[static_cast<std::size_t>(k)] + ";");
    if (!n.stride[k].empty()) line(n.stride[k] + " = " + stride[static_cast<std::size_t>(k)] + ";");
  }
}

void Emitter::check(const ir::CheckStmt& c) {
  line("if (!" + expr(c.cond) + ") {");
  ++depth_;
  std::vector<std::string> args;
  for (const auto& a : c.args) args.push_back(expr(a));
  fail(c.code, c.message, args);
  --depth_;
  line("}");
}

void Emitter::fail(int code, const std::string& message, const std::vector<std::string>& args) {
  k_.may_fail = true;
  std::string list;
  for (std::size_t i = 0; i < args.size(); ++i) list += (i ? ", " : "") + std::string("(long long)") + args[i];
  if (args.empty()) {
    line("kiln_fail(kiln_status, " + std::to_string(code) + ", " + quoted(message) + ", 0, nullptr);");
  } else {
    line("const long long kiln_args[] = {" + list + "};");
    line("kiln_fail(kiln_status, " + std::to_string(code) + ", " + quoted(message) + ", " + std::to_string(args.size()) +
         ", kiln_args);");
  }
  line("goto kiln_stop;");
}

}  // namespace kiln::codegen::cuda
