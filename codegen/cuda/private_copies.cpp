// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/cuda/private_copies.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "ir/analysis.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"

namespace kiln::codegen::cuda {
namespace {

/// Every access of one array in a parfor body: the updates of its array reduction, or (without one) its
/// kiln::atomic_* statements (and whether each is inside a loop, and its constant operand if it has one), or
/// the first access that is not such an update.
class Accesses final : public ir::IRVisitor {
 public:
  explicit Accesses(const ir::ArrayReduction& r, bool atomics) : r_(r), atomics_(atomics) {}

  std::string other;           ///< what else touches the array ("" when nothing)
  int updates = 0;             ///< update statements
  bool looped = false;         ///< some update is inside a loop of the body (runs more than once an iteration)
  bool constants = true;       ///< every update adds or subtracts an integer constant
  std::int64_t magnitude = 0;  ///< the sum of those constants' magnitudes (saturated at 2^62)
  std::optional<ReduceOp> op;  ///< atomics: the combination they share (add and sub: Add)
  std::vector<const ir::VarNode*> olds;  ///< atomics: their results

 protected:
  void visit(const ir::StoreStmt& s) override {
    if (s.array.get() != r_.array.get()) return ir::IRVisitor::visit(s);
    if (!ir::is_array_update(s, r_)) {
      note("a store that is not its update");
      return ir::IRVisitor::visit(s);
    }
    // is_array_update: neither the operand nor the indices read the array.
    ++updates;
    looped |= loops_ > 0;
    const auto& b = s.value->as<ir::BinaryExpr>();
    const auto* first = ir::dyn<ir::LoadExpr>(b.a);
    const ir::Expr operand = first && first->array == s.array ? b.b : b.a;
    const auto* c = ir::dyn<ir::ConstExpr>(operand);
    if (!c || is_float(c->type) || (b.op != BinaryOp::Add && b.op != BinaryOp::Sub) || c->i == INT64_MIN) {
      constants = false;
      return;
    }
    magnitude = std::min<std::int64_t>(magnitude + std::min<std::int64_t>(std::llabs(c->i), std::int64_t{1} << 62), std::int64_t{1} << 62);
  }
  void visit(const ir::LoadExpr& e) override {
    if (e.array.get() == r_.array.get()) note("a load outside its updates");
    ir::IRVisitor::visit(e);
  }
  void visit(const ir::AtomicStmt& s) override {
    if (s.array.get() != r_.array.get()) return ir::IRVisitor::visit(s);
    if (!atomics_) {
      note("a kiln::atomic_* on it");
      return ir::IRVisitor::visit(s);
    }
    std::optional<ReduceOp> o;
    switch (s.op) {
      case AtomicOp::Add:
      case AtomicOp::Sub: o = ReduceOp::Add; break;
      case AtomicOp::Min: o = ReduceOp::Min; break;
      case AtomicOp::Max: o = ReduceOp::Max; break;
      default: break;
    }
    if (!o || (op && *op != *o)) {
      note(o ? "atomics of different operations on it" : "a kiln::atomic_exchange or compare-exchange on it");
      return ir::IRVisitor::visit(s);
    }
    op = o;
    olds.push_back(s.result.get());
    for (const ir::Expr& k : s.indices) walk(k);
    walk(s.value);
    ++updates;
    looped |= loops_ > 0;
    const auto* c = ir::dyn<ir::ConstExpr>(s.value);
    if (!c || is_float(c->type) || *o != ReduceOp::Add || c->i == INT64_MIN) {
      constants = false;
      return;
    }
    magnitude = std::min<std::int64_t>(magnitude + std::min<std::int64_t>(std::llabs(c->i), std::int64_t{1} << 62), std::int64_t{1} << 62);
  }
  void visit(const ir::BindStmt& s) override {
    if (s.source.get() == r_.array.get() || s.target.get() == r_.array.get()) note("an array binding of it");
  }
  void visit(const ir::ForStmt& s) override {
    ++loops_;
    ir::IRVisitor::visit(s);
    --loops_;
  }
  void visit(const ir::ParforStmt& s) override {  // a nested parfor is a loop nest inside the thread
    ++loops_;
    ir::IRVisitor::visit(s);
    --loops_;
  }

 private:
  void note(const char* what) {
    if (other.empty()) other = what;
  }
  const ir::ArrayReduction& r_;
  bool atomics_;
  int loops_ = 0;
};

/// Whether `body` reads any of `vars`.
bool reads_any(const ir::Stmt& body, const std::vector<const ir::VarNode*>& vars) {
  struct Finder final : ir::IRVisitor {
    const std::vector<const ir::VarNode*>* vars = nullptr;
    bool found = false;
    void visit(const ir::VarRefExpr& e) override { found |= std::find(vars->begin(), vars->end(), e.var.get()) != vars->end(); }
  } f;
  f.vars = &vars;
  f.walk(body);
  return f.found;
}

/// The arrays `body` updates with kiln::atomic_*, in the order of their first atomic.
std::vector<ir::Var> atomic_arrays(const ir::Stmt& body) {
  struct Finder final : ir::IRVisitor {
    std::vector<ir::Var> found;
    void visit(const ir::AtomicStmt& s) override {
      if (std::find(found.begin(), found.end(), s.array) == found.end()) found.push_back(s.array);
      ir::IRVisitor::visit(s);
    }
  } f;
  f.walk(body);
  return f.found;
}

bool copyable(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::U32 || t == DType::U64 || t == DType::F32 || t == DType::F64;
}

}  // namespace

std::vector<PrivateCandidate> plan_private_copies(const ir::ParforStmt& p, std::string* why_not) {
  std::vector<PrivateCandidate> out;
  std::vector<ir::ArrayReduction> arrays = p.array_reductions;
  const std::size_t reductions = arrays.size();
  for (const ir::Var& a : atomic_arrays(p.body)) {
    bool reduced = false;
    for (std::size_t i = 0; i < reductions; ++i) reduced |= arrays[i].array == a;
    if (!reduced) arrays.push_back({a, ReduceOp::Add});  // the op is the atomics' (Accesses::op)
  }
  if (arrays.empty()) return out;
  std::vector<const ir::VarNode*> free;
  for (const ir::Var& v : ir::free_vars(p.body)) free.push_back(v.get());
  auto refuse = [&](const ir::ArrayReduction& r, const std::string& why) {
    if (why_not) *why_not += fmt::format("{}: no private copies: {}\n", r.array->name, why);
  };
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    const ir::ArrayReduction& r = arrays[i];
    const bool atomics = i >= reductions;
    const DType t = r.array->type.elem;
    if (std::find(free.begin(), free.end(), r.array.get()) == free.end()) {
      refuse(r, "the body allocates or binds it (each iteration may update another array)");
      continue;
    }
    if (!copyable(t)) {
      refuse(r, fmt::format("{}-byte elements (copies hold 4- and 8-byte ones)", size_of(t)));
      continue;
    }
    Accesses a(r, atomics);
    a.walk(p.body);
    if (!a.other.empty()) {
      refuse(r, "the body has " + a.other);
      continue;
    }
    if (atomics && reads_any(p.body, a.olds)) {
      refuse(r, "the body reads the old value an atomic returns (it depends on the order of the updates)");
      continue;
    }
    if (static_cast<int>(out.size()) == kMaxPrivateArrays) {
      refuse(r, fmt::format("a kernel copies at most {} arrays", kMaxPrivateArrays));
      continue;
    }
    PrivateCandidate c{r.array.get(), atomics ? *a.op : r.op, t, 0, atomics};
    if (c.op == ReduceOp::Add && size_of(t) == 8 && !is_float(t) && a.updates > 0 && !a.looped && a.constants &&
        a.magnitude < (std::int64_t{1} << 31))
      c.narrow_bound = std::max<std::int64_t>(1, a.magnitude);
    out.push_back(c);
  }
  return out;
}

}  // namespace kiln::codegen::cuda
