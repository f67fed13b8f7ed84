// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/printer.hpp"

#include "ir/atomics.hpp"
#include "ir/status.hpp"

#include "kiln/abi.hpp"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <cmath>
#include <unordered_map>

namespace kiln::ir {
namespace {

class Printer {
 public:
  /// fragment: printing a piece of a function, so variables defined outside it print by their plain name.
  Printer(bool canonical, bool fragment) : canonical_(canonical), fragment_(fragment) {}

  std::string out;

  void function(const Function& f) {
    if (!canonical_) locations_ = &f.locations;  // the canonical text keeps `{@k}`: positions stay out of keys
    out += "kernel " + (canonical_ ? std::string("k") : f.name) + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      if (i) out += ", ";
      out += define(f.params[i]) + ": " + to_string(f.params[i]->type);
    }
    out += ")";
    if (f.result) out += " -> " + std::string(name_of(f.result->type));
    if (f.result_array) out += " -> " + to_string(f.result_array->type);
    if (f.returns_tuple()) {
      out += " -> (";
      for (size_t i = 0; i < f.tuple.size(); ++i)
        out += (i ? ", " : "") + (f.tuple[i].scalar ? std::string(name_of(f.tuple[i].scalar->type)) : to_string(f.tuple[i].array->type));
      out += ")";
    }
    out += " {\n";
    block_body(f.body, 1);
    if (f.result) line(1, "return " + expr(f.result));
    if (f.result_array) line(1, "return " + name(f.result_array));
    if (f.returns_tuple()) {
      std::string members;
      for (size_t i = 0; i < f.tuple.size(); ++i)
        members += (i ? ", " : "") + (f.tuple[i].scalar ? expr(f.tuple[i].scalar) : name(f.tuple[i].array));
      line(1, "return (" + members + ")");
    }
    out += "}\n";
  }

  void stmt(const Stmt& s, int depth) {
    switch (s->kind) {
      case StmtKind::Block:
        line(depth, "{");
        block_body(s, depth + 1);
        line(depth, "}");
        break;
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        std::string init = expr(l.init);  // the initializer cannot see the variable it defines
        line(depth, "let " + define(l.var) + ": " + to_string(l.var->type) + " = " + init);
        break;
      }
      case StmtKind::Assign: {
        const auto& a = s->as<AssignStmt>();
        line(depth, name(a.var) + " = " + expr(a.value));
        break;
      }
      case StmtKind::Store: {
        const auto& st = s->as<StoreStmt>();
        line(depth, name(st.array) + "[" + exprs(st.indices) + "] = " + expr(st.value));
        break;
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        std::string range = expr(f.begin) + " .. " + expr(f.end);
        line(depth, "for " + define(f.index) + " in " + range + " {");
        block_body(f.body, depth + 1);
        line(depth, "}");
        break;
      }
      case StmtKind::Parfor: {
        const auto& p = s->as<ParforStmt>();
        std::vector<std::string> ranges;
        for (size_t d = 0; d < p.indices.size(); ++d) ranges.push_back(expr(p.begins[d]) + " .. " + expr(p.ends[d]));
        std::string head = "parfor (";
        for (size_t d = 0; d < p.indices.size(); ++d) {
          if (d) head += ", ";
          head += define(p.indices[d]) + " in " + ranges[d];
        }
        head += ")";
        if (!p.reductions.empty() || !p.array_reductions.empty()) {
          std::vector<std::string> clauses;
          for (const auto& r : p.reductions)
            clauses.push_back(std::string(name_of(r.op)) + " " + name(r.var) + (r.index ? " @" + name(r.index) : ""));
          for (const auto& r : p.array_reductions)
            clauses.push_back(std::string(name_of(r.op)) + " " + name(r.array) + "[*]");
          head += " reduce(";
          for (size_t r = 0; r < clauses.size(); ++r) head += (r ? ", " : "") + clauses[r];
          head += ")";
        }
        head += " {";
        if (!canonical_ && !p.origin.empty()) head += "  # " + p.origin;
        line(depth, head);
        block_body(p.body, depth + 1);
        line(depth, "}");
        break;
      }
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        line(depth, "if " + expr(i.cond) + " {");
        block_body(i.then_body, depth + 1);
        if (i.else_body) {
          line(depth, "} else {");
          block_body(i.else_body, depth + 1);
        }
        line(depth, "}");
        break;
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        std::string shape = exprs(a.shape);
        line(depth, "alloc " + define(a.array) + ": " + to_string(a.array->type) + " (" + shape + ")");
        break;
      }
      case StmtKind::Check: {
        const auto& c = s->as<CheckStmt>();
        const std::string message = locations_ ? resolve_locations(c.message, *locations_) : c.message;
        std::string text = "check " + expr(c.cond) + " else " + status_name(c.code) + " " + quoted(message);
        if (!c.args.empty()) text += " (" + exprs(c.args) + ")";
        line(depth, text);
        break;
      }
      case StmtKind::Map: {
        const auto& m = s->as<MapStmt>();
        const std::string space = index_space(m.indices, m.shape);
        const std::string target_index = exprs(m.target_index);  // uses the indices defined just above
        const std::string value = expr(m.value);
        std::string target = m.allocate ? define(m.target) + ": " + to_string(m.target->type)
                                        : name(m.target) + "[" + target_index + "]";
        line(depth, "map " + target + " over " + space + " = " + value + origin(m.origin));
        break;
      }
      case StmtKind::Reduce: {
        const auto& r = s->as<ReduceStmt>();
        const std::string space = index_space(r.indices, r.shape);
        const std::string value = expr(r.value);
        line(depth, "reduce " + define(r.result) + ": " + to_string(r.result->type) + " = " +
                        std::string(name_of(r.op)) + " over " + space + " of " + value + origin(r.origin));
        break;
      }
      case StmtKind::ReduceAxis: {
        const auto& r = s->as<ReduceAxisStmt>();
        const std::string space = index_space(r.indices, r.shape);
        const std::string value = expr(r.value);
        line(depth, "reduce " + define(r.target) + ": " + to_string(r.target->type) + " = " +
                        std::string(name_of(r.op)) + " along " + std::to_string(r.axis) +
                        (r.keepdims ? " keepdims" : "") + " over " + space + " of " + value + origin(r.origin));
        break;
      }
      case StmtKind::Bind: {
        const auto& b = s->as<BindStmt>();
        const std::string source = name(b.source);
        if (b.declare) line(depth, "bind " + define(b.target) + ": " + to_string(b.target->type) + " = " + source);
        else line(depth, "rebind " + name(b.target) + " = " + source);
        break;
      }
      case StmtKind::Sort: {
        const auto& x = s->as<SortStmt>();
        line(depth, "sort rows of " + name(x.keys) + (x.positions ? " with positions " + name(x.positions) : "") +
                        origin(x.origin));
        break;
      }
      case StmtKind::Scan: {
        const auto& x = s->as<ScanStmt>();
        line(depth, std::string(x.exclusive ? "exclusive " : "") + "scan " + std::string(name_of(x.op)) + " in " +
                        std::string(name_of(x.type)) + " of rows of " + name(x.source) + " into " + name(x.out) +
                        origin(x.origin));
        break;
      }
      case StmtKind::Atomic: {
        const auto& a = s->as<AtomicStmt>();
        // As kiln::atomic_compare_exchange(element, expected, desired) spells it.
        std::string args = name(a.array) + "[" + exprs(a.indices) + "], ";
        if (a.expected) args += expr(a.expected) + ", ";
        args += expr(a.value);
        line(depth, "let " + define(a.result) + ": " + to_string(a.result->type) + " = " +
                        std::string(name_of(a.op)) + "(" + args + ")");
        break;
      }
      case StmtKind::Launch: {
        const auto& l = s->as<LaunchStmt>();
        line(depth, "launch kernel " + std::to_string(l.kernel) + " {");
        stmt(l.body, depth + 1);
        line(depth, "}");
        break;
      }
      case StmtKind::Stencil: {
        const auto& st = s->as<StencilStmt>();
        const std::string space = index_space(st.indices, st.shape);
        const std::string target_index = exprs(st.target_index);
        const std::string value = expr(st.value);
        std::string windows, halo;
        for (size_t k = 0; k < st.windows.size(); ++k) windows += (k ? ", " : "") + name(st.windows[k]);
        for (size_t d = 0; d < st.lo.size(); ++d)
          halo += (d ? ", " : "") + std::to_string(st.lo[d]) + ".." + std::to_string(st.hi[d]);
        std::string border(name_of(st.border));
        if (st.cval) border += "(" + expr(st.cval) + ")";
        std::string target = st.allocate ? define(st.target) + ": " + to_string(st.target->type)
                                         : name(st.target) + "[" + target_index + "]";
        line(depth, "stencil " + target + " over " + space + " windows(" + windows + ") halo(" + halo + ") border " +
                        border + " = " + value + origin(st.origin));
        break;
      }
    }
  }

  /// `(i in 0 .. n, j in 0 .. m)`: the extents are printed before the indices are defined.
  std::string index_space(const std::vector<Var>& indices, const std::vector<Expr>& shape) {
    std::vector<std::string> extents;
    for (const auto& e : shape) extents.push_back(expr(e));
    std::string s = "(";
    for (size_t d = 0; d < indices.size(); ++d) s += (d ? ", " : "") + define(indices[d]) + " in 0 .. " + extents[d];
    return s + ")";
  }

  std::string origin(const std::string& o) const { return canonical_ || o.empty() ? "" : "  # " + o; }

  static std::string quoted(const std::string& m) {
    std::string q = "\"";
    for (char c : m) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  }

  static std::string status_name(std::int32_t code) {
    switch (code) {
      case kOutOfMemory: return "OutOfMemory";
      case kShapeMismatch: return "ShapeError";
      case kIndexOutOfRange: return "IndexError";
      case kValueError: return "ValueError";
      default: return "Status" + std::to_string(code);
    }
  }

  std::string expr(const Expr& e) {
    std::string s;
    expr_to(s, e);
    return s;
  }

  /// Appends `e` to `s`, left to right. Into one string, not a string per node: the cache key prints every
  /// traced kernel, a fresh process's first call included (conv5x5's canonical text was 245k instructions,
  /// most of them allocating, copying and freeing the pieces).
  void expr_to(std::string& s, const Expr& e) {
    switch (e->kind) {
      case ExprKind::Const: s += literal(e->as<ConstExpr>()); return;
      case ExprKind::VarRef: s += name(e->as<VarRefExpr>().var); return;
      case ExprKind::Load: {
        const auto& l = e->as<LoadExpr>();
        s += name(l.array);
        s += '[';
        exprs_to(s, l.indices);
        s += ']';
        return;
      }
      case ExprKind::Dim: {
        const auto& d = e->as<DimExpr>();
        s += "dim(";
        s += name(d.array);
        s += ", ";
        s += std::to_string(d.axis);
        s += ')';
        return;
      }
      case ExprKind::Unary: {
        const auto& u = e->as<UnaryExpr>();
        s += name_of(u.op);
        expr_to(s, u.a);
        return;
      }
      case ExprKind::Binary: {
        const auto& b = e->as<BinaryExpr>();
        if (b.op == BinaryOp::Min || b.op == BinaryOp::Max) {
          s += name_of(b.op);
          s += '(';
          expr_to(s, b.a);
          s += ", ";
        } else {
          s += '(';
          expr_to(s, b.a);
          s += ' ';
          s += name_of(b.op);
          s += ' ';
        }
        expr_to(s, b.b);
        s += ')';
        return;
      }
      case ExprKind::Select: {
        const auto& x = e->as<SelectExpr>();
        s += "select(";
        expr_to(s, x.cond);
        s += ", ";
        expr_to(s, x.a);
        s += ", ";
        expr_to(s, x.b);
        s += ')';
        return;
      }
      case ExprKind::Cast:
        s += name_of(e->type);
        s += '(';
        expr_to(s, e->as<CastExpr>().a);
        s += ')';
        return;
      case ExprKind::Call: {
        const auto& c = e->as<CallExpr>();
        s += name_of(c.fn);
        s += '(';
        exprs_to(s, c.args);
        s += ')';
        return;
      }
    }
    s += '?';
  }

  void block_body(const Stmt& s, int depth) {
    if (!s) return;
    if (const auto* b = dyn<BlockStmt>(s)) {
      for (const auto& x : b->stmts) stmt(x, depth);
    } else {
      stmt(s, depth);
    }
  }

 private:
  bool canonical_;
  const std::vector<std::string>* locations_ = nullptr;
  bool fragment_;
  std::unordered_map<const VarNode*, std::string> names_;
  std::unordered_map<std::string, int> used_;

  std::string define(const Var& v) {
    auto it = names_.find(v.get());
    if (it != names_.end()) return it->second;  // re-definition (malformed); print consistently anyway
    std::string n;
    if (canonical_) {
      n = "v" + std::to_string(names_.size());
    } else {
      std::string base = v->name.empty() ? "t" : v->name;
      int& count = used_[base];
      n = count == 0 ? base : base + "." + std::to_string(count);
      ++count;
    }
    names_.emplace(v.get(), n);
    return n;
  }

  std::string name(const Var& v) {
    auto it = names_.find(v.get());
    if (it != names_.end()) return it->second;
    if (canonical_ || fragment_) return define(v);
    return "?" + v->name;  // used before its definition: malformed IR, marked so the verifier's output shows it
  }

  std::string exprs(const std::vector<Expr>& es) {
    std::string s;
    exprs_to(s, es);
    return s;
  }

  void exprs_to(std::string& s, const std::vector<Expr>& es) {
    for (size_t i = 0; i < es.size(); ++i) {
      if (i) s += ", ";
      expr_to(s, es[i]);
    }
  }

  void line(int depth, const std::string& text) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += text;
    out += '\n';
  }

};

}  // namespace

/// NaNs keep their sign and payload in the text (copysign and bit casts can observe them, and the cache
/// key hashes this text): `nan` is the default quiet NaN, `-nan` its negation, `nan:0x...` any other.
static std::string nan_text(double v, bool f32) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  const bool negative = bits >> 63;
  std::uint64_t payload = bits & ((std::uint64_t{1} << 52) - 1);
  if (f32) {  // an f32 value is stored widened: its 23-bit payload is the top of the 52-bit one
    payload >>= 29;
    if (payload == (std::uint64_t{1} << 22)) return negative ? "-nan" : "nan";
  } else if (payload == (std::uint64_t{1} << 51)) {
    return negative ? "-nan" : "nan";
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%snan:0x%llx", negative ? "-" : "", static_cast<unsigned long long>(payload));
  return buf;
}

std::string literal(const ConstExpr& c) {
  switch (c.type) {
    case DType::Bool: return c.i ? "true" : "false";
    case DType::I32: return std::to_string(c.i) + "i32";
    case DType::I64: return std::to_string(c.i);
    case DType::I8: case DType::I16: return std::to_string(c.i) + std::string(name_of(c.type));
    case DType::U8: case DType::U16: case DType::U32: case DType::U64:
      return std::to_string(static_cast<std::uint64_t>(c.i)) + std::string(name_of(c.type));
    case DType::F16: case DType::BF16:  // exact as f32 values: printed as the shortest f32, then the type
    case DType::F32:
    case DType::F64: {
      const bool f32 = c.type != DType::F64;
      std::string s;
      if (std::isnan(c.f)) s = nan_text(c.f, f32);
      else if (std::isinf(c.f)) s = c.f < 0 ? "-inf" : "inf";
      else {
        char buf[64];
        auto r = f32 ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(c.f))
                     : std::to_chars(buf, buf + sizeof buf, c.f);
        s.assign(buf, r.ptr);
        if (s.find_first_of(".e") == std::string::npos) s += ".0";
      }
      if (is_half(c.type)) return s + std::string(name_of(c.type));
      return f32 ? s + "f" : s;
    }
  }
  return "?";
}

std::string to_string(const Function& f, const PrintOptions& opts) {
  Printer p(opts.canonical, false);
  p.function(f);
  return p.out;
}

std::string to_string(const Stmt& s) {
  if (!s) return "<null>";
  Printer p(false, true);
  p.stmt(s, 0);
  return p.out;
}

std::string to_string(const Expr& e) {
  if (!e) return "<null>";
  Printer p(false, true);
  return p.expr(e);
}

}  // namespace kiln::ir
