// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/trip_bound.hpp"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "ir/visitor.hpp"

namespace kiln::codegen::cpu::detail {

namespace {

class CollectLets final : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::VarNode*, const ir::ExprNode*> lets;
  std::unordered_set<const ir::VarNode*> assigned;

 protected:
  void visit(const ir::LetStmt& s) override {
    lets[s.var.get()] = s.init.get();
    IRVisitor::visit(s);
  }
  void visit(const ir::AssignStmt& s) override {
    assigned.insert(s.var.get());
    IRVisitor::visit(s);
  }
  void visit(const ir::BindStmt& s) override {
    if (!s.declare) assigned.insert(s.target.get());  // rebound: its extents change
  }
  void visit(const ir::ParforStmt& s) override {
    for (const ir::Reduction& r : s.reductions) {  // updated by the loop without an AssignStmt of their own
      assigned.insert(r.var.get());
      if (r.index) assigned.insert(r.index.get());
    }
    IRVisitor::visit(s);
  }
};

/// What a bound is stated in: an integer constant (no variable) or `var` (a scalar variable, axis < 0) or
/// `dim(var, axis)` plus a constant.
struct Atom {
  const ir::VarNode* var = nullptr;
  int axis = -1;
  bool operator==(const Atom&) const = default;
};

struct Term {
  Atom atom;
  std::int64_t c = 0;
};

/// Bounds of one side: at most one per atom, each valid on its own (upper: e <= atom + c; lower: e >= atom + c).
class Bounds {
 public:
  Bounds(bool upper) : upper_(upper) {}
  void add(Atom a, std::int64_t c) {
    for (Term& t : terms_)
      if (t.atom == a) {
        t.c = upper_ ? std::min(t.c, c) : std::max(t.c, c);
        return;
      }
    terms_.push_back({a, c});
  }
  void add(const Bounds& other) {
    for (const Term& t : other.terms_) add(t.atom, t.c);
  }
  const std::vector<Term>& terms() const { return terms_; }

 private:
  bool upper_;
  std::vector<Term> terms_;
};

/// A definition chain longer than this is not followed (each level only restates the next).
constexpr int kMaxDepth = 12;

class Analysis {
 public:
  explicit Analysis(const LetDefinitions& lets) : lets_(lets) {}

  Bounds bound(const ir::ExprNode& e, bool upper, int depth) const {
    Bounds out(upper);
    if (e.type != DType::I64 || depth > kMaxDepth) return out;
    switch (e.kind) {
      case ir::ExprKind::Const: out.add(Atom{}, e.as<ir::ConstExpr>().i); break;
      case ir::ExprKind::VarRef: {
        const ir::VarNode* v = e.as<ir::VarRefExpr>().var.get();
        if (lets_.changes(v)) break;  // two reads may see different values
        out.add(Atom{v, -1}, 0);
        if (const ir::ExprNode* init = lets_.init(v)) out.add(bound(*init, upper, depth + 1));
        break;
      }
      case ir::ExprKind::Dim: {
        const auto& d = e.as<ir::DimExpr>();
        if (lets_.changes(d.array.get())) break;
        out.add(Atom{d.array.get(), d.axis}, 0);
        if (!upper) out.add(Atom{}, 0);  // extents are never negative
        break;
      }
      case ir::ExprKind::Binary: binary(e.as<ir::BinaryExpr>(), upper, depth, out); break;
      case ir::ExprKind::Select: {
        const auto& s = e.as<ir::SelectExpr>();
        either(bound(*s.a, upper, depth + 1), bound(*s.b, upper, depth + 1), upper, out);
        break;
      }
      default: break;
    }
    return out;
  }

 private:
  const LetDefinitions& lets_;

  /// Bounds valid for whichever of two values it is: per atom both have, the looser one.
  static void either(const Bounds& x, const Bounds& y, bool upper, Bounds& out) {
    for (const Term& a : x.terms())
      for (const Term& b : y.terms())
        if (a.atom == b.atom) out.add(a.atom, upper ? std::max(a.c, b.c) : std::min(a.c, b.c));
  }

  /// `a + b` (sign 1) or `a - b` (sign -1), from bounds of a on this side and of b on the side given.
  static void sum(const Bounds& x, const Bounds& y, int sign, Bounds& out) {
    for (const Term& a : x.terms())
      for (const Term& b : y.terms()) {
        std::int64_t c = 0;
        if (sign > 0 ? __builtin_add_overflow(a.c, b.c, &c) : __builtin_sub_overflow(a.c, b.c, &c)) continue;
        if (b.atom.var == nullptr) out.add(a.atom, c);
        else if (sign > 0 && a.atom.var == nullptr) out.add(b.atom, c);
        else if (sign < 0 && a.atom == b.atom) out.add(Atom{}, c);  // the variable part cancels
      }
  }

  void binary(const ir::BinaryExpr& e, bool upper, int depth, Bounds& out) const {
    switch (e.op) {
      case BinaryOp::Add:
        sum(bound(*e.a, upper, depth + 1), bound(*e.b, upper, depth + 1), 1, out);
        return;
      case BinaryOp::Sub:
        sum(bound(*e.a, upper, depth + 1), bound(*e.b, !upper, depth + 1), -1, out);
        return;
      case BinaryOp::Min:
      case BinaryOp::Max: {
        const Bounds x = bound(*e.a, upper, depth + 1), y = bound(*e.b, upper, depth + 1);
        // min(a, b) <= either's upper bound and >= the lower of both lower bounds; max the other way round.
        if ((e.op == BinaryOp::Min) == upper) {
          out.add(x);
          out.add(y);
        } else {
          either(x, y, upper, out);
        }
        return;
      }
      default: return;
    }
  }
};

}  // namespace

LetDefinitions::LetDefinitions(const ir::Function& f) {
  CollectLets c;
  c.walk(f);
  for (const auto& [var, init] : c.lets)
    if (!c.assigned.count(var)) init_.emplace(var, init);
  changing_ = std::move(c.assigned);
}

bool LetDefinitions::changes(const ir::VarNode* v) const { return changing_.count(v) != 0; }

const ir::ExprNode* LetDefinitions::init(const ir::VarNode* v) const {
  const auto it = init_.find(v);
  return it == init_.end() ? nullptr : it->second;
}

std::optional<std::int64_t> max_trip_count(const ir::Expr& begin, const ir::Expr& end, const LetDefinitions& lets) {
  const Analysis a(lets);
  const Bounds hi = a.bound(*end, true, 0), lo = a.bound(*begin, false, 0);
  std::optional<std::int64_t> best;
  for (const Term& h : hi.terms())
    for (const Term& l : lo.terms()) {
      std::int64_t trips = 0;
      if (!(h.atom == l.atom) || __builtin_sub_overflow(h.c, l.c, &trips)) continue;
      trips = std::max<std::int64_t>(trips, 0);
      if (!best || trips < *best) best = trips;
    }
  return best;
}

}  // namespace kiln::codegen::cpu::detail
