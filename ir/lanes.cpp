// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/lanes.hpp"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "ir/ops.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

int float_bits_of(DType t) { return t == DType::F64 ? 64 : t == DType::F32 ? 32 : 0; }

/// The float variables that a sequential loop in `s` carries from one iteration to the next in order: those
/// assigned in the loop's body from a value that reads them (`s = s + x`, `x = x * a + b`), and declared
/// outside that body.
std::vector<Var> carried_floats(const Stmt& s) {
  struct Finder : IRVisitor {
    std::vector<Var> found;
    void visit(const ForStmt& f) override {
      const VarSet inside = declared_in(f.body);
      struct Updates : IRVisitor {
        const VarSet& inside;
        std::vector<Var>& found;
        Updates(const VarSet& in, std::vector<Var>& out) : inside(in), found(out) {}
        void visit(const AssignStmt& a) override {
          if (!float_bits_of(a.var->type.elem) || inside.count(a.var.get()) || !uses(a.value, a.var.get())) return;
          if (std::none_of(found.begin(), found.end(), [&](const Var& v) { return v == a.var; })) found.push_back(a.var);
        }
      } updates(inside, found);
      updates.walk(f.body);
      IRVisitor::visit(f);
    }
  } finder;
  finder.walk(s);
  return finder.found;
}

/// Builds the plan: the varying variables (a fixpoint: a value assigned in a loop may feed an earlier
/// statement), then every statement checked against what lanes can run.
class Planner : public IRVisitor {
 public:
  Planner(LanePlan& plan, Stmt body) : plan_(plan), body_(std::move(body)) {}

  /// Marks the variables that vary; true if any was added.
  bool spread() {
    added_ = false;
    divergent_ = 0;
    mode_ = Mode::Spread;
    walk(body_);
    return added_;
  }

  /// The first statement lanes cannot run, as a reason; empty when there is none.
  std::string refuse() {
    mode_ = Mode::Check;
    divergent_ = 0;
    stored_ = stored_arrays(body_);
    // Variables whose values change within one iteration: a subscript using one names different elements at
    // different points of the iteration.
    changing_ = assigned_vars(body_);
    struct Loops : IRVisitor {
      VarSet& out;
      explicit Loops(VarSet& o) : out(o) {}
      void visit(const ForStmt& f) override {
        out.insert(f.index.get());
        IRVisitor::visit(f);
      }
    } loops(changing_);
    loops.walk(body_);
    struct Stores : IRVisitor {
      std::vector<const StoreStmt*>& all;
      explicit Stores(std::vector<const StoreStmt*>& out) : all(out) {}
      void visit(const StoreStmt& s) override { all.push_back(&s); }
    } stores(stores_);
    stores.walk(body_);
    for (bool more = true; more;) {  // through lets of lets
      more = false;
      for (const auto& [v, init] : plan_.lets)
        for (const Var& u : free_vars(init))
          if (!moves_.count(v) && (changing_.count(u.get()) || moves_.count(u.get()))) more = moves_.insert(v).second;
    }
    walk(body_);
    if (far_ && !near_)
      refuse_with("every lane reads and writes its own pages in its loops (each access a gather or scatter a row or "
                  "4 KiB or more apart, which the prefetchers do not follow)");
    return refusal_;
  }

 protected:
  using IRVisitor::visit;

  void visit(const LetStmt& s) override {
    note_float(s.var->type.elem);
    if (mode_ == Mode::Spread && (varies(plan_, s.init) || divergent_)) add(s.var);
    IRVisitor::visit(s);
  }
  void visit(const AssignStmt& s) override {
    note_float(s.var->type.elem);
    if (mode_ == Mode::Spread && (varies(plan_, s.value) || divergent_)) add(s.var);
    IRVisitor::visit(s);
  }
  void visit(const LoadExpr& e) override {
    note_float(e.array->type.elem);
    note_access(e.array, e.indices);
    if (mode_ == Mode::Check && stored_.count(e.array.get()) && !same_as_a_store(e))
      refuse_with("it reads " + e.array->name + " at other elements than it writes");
    IRVisitor::visit(e);
  }
  void visit(const StoreStmt& s) override {
    note_access(s.array, s.indices);
    if (mode_ == Mode::Check) {
      const bool spread_out = std::any_of(s.indices.begin(), s.indices.end(), [&](const Expr& i) { return varies(plan_, i); });
      if (!spread_out) refuse_with("every lane stores to the same element of " + s.array->name);
    }
    IRVisitor::visit(s);
  }
  void visit(const IfStmt& s) override {
    walk(s.cond);
    const bool diverges = varies(plan_, s.cond);
    divergent_ += diverges;
    walk(s.then_body);
    if (s.else_body) walk(s.else_body);
    divergent_ -= diverges;
  }
  // A loop whose bounds differ between lanes runs over the union of the lanes' ranges with the lanes outside
  // their own range masked off: what it assigns differs between lanes.
  void visit(const ForStmt& s) override {
    walk(s.begin);
    walk(s.end);
    const bool diverges = varies(plan_, s.begin) || varies(plan_, s.end);
    divergent_ += diverges;
    ++loops_;
    walk(s.body);
    --loops_;
    divergent_ -= diverges;
  }
  void visit(const ParforStmt&) override { refuse_with("it holds a parallel loop"); }
  void visit(const CheckStmt&) override { refuse_with("it checks bounds (failures are reported in scalar order)"); }
  void visit(const AllocateStmt&) override { refuse_with("it allocates an array"); }
  void visit(const BindStmt&) override { refuse_with("it binds an array"); }
  void visit(const MapStmt&) override { refuse_with("it holds an array operation"); }
  void visit(const ReduceStmt&) override { refuse_with("it holds an array operation"); }
  void visit(const ReduceAxisStmt&) override { refuse_with("it holds an array operation"); }
  void visit(const StencilStmt&) override { refuse_with("it holds a stencil"); }
  void visit(const LaunchStmt&) override { refuse_with("it holds a launch"); }
  // Lanes would update their elements as one vector, not as one atomic step each.
  void visit(const AtomicStmt& s) override { refuse_with("it updates an element of " + s.array->name + " atomically"); }

 private:
  enum class Mode : std::uint8_t { Spread, Check };
  LanePlan& plan_;
  Stmt body_;
  Mode mode_ = Mode::Spread;
  bool added_ = false;
  int divergent_ = 0;
  VarSet stored_;
  VarSet changing_;
  std::vector<const StoreStmt*> stores_;
  std::string refusal_;
  // Accesses inside the body's sequential loops: far (a constant lane stride of a page or more: a blocked
  // prefix sum, lane k walking block b + k 8 KiB from its neighbour; or each lane on a row of its own at one
  // column, a scan along rows) or near (contiguous, short strides, uniform, or not judged). Lanes whose loops
  // make only far accesses gather one element per page per lane: a 1-d cumsum's passes ran 2x slower so than
  // scalar code, a scan along 4472-element rows 3.5x.
  int loops_ = 0;
  bool far_ = false, near_ = false;
  VarSet moves_;  ///< lets whose values depend on a loop index or an assigned variable (a block's first row)

  void note_access(const Var& array, const std::vector<Expr>& indices) {
    if (mode_ != Mode::Check || !loops_ || indices.empty()) return;
    bool any = false;
    for (const Expr& i : indices) any |= varies(plan_, i);
    if (!any) {
      near_ = true;  // one element for every lane, loaded once (syrk's a[j, k] beside its gathered a[i, k])
      return;
    }
    bool rows = false;
    for (size_t d = 0; d + 1 < indices.size(); ++d) rows |= varies(plan_, indices[d]);
    if (rows) {
      // Each lane on a row of its own at one column (a scan along the rows of a matrix): rows apart, as far
      // as the row length; with the column varying too the stride is not judged here.
      (varies(plan_, indices.back()) ? near_ : far_) = true;
      return;
    }
    const auto stride = lane_stride(plan_, indices.back());
    const std::int64_t bytes = size_of(array->type.elem);
    if (stride && (*stride >= 4096 / bytes || *stride <= -4096 / bytes)) far_ = true;
    else near_ = true;
    // Contiguous across the lanes, on a row that moves as the loop runs: the group walks down the rows.
    if (stride == 1)
      for (size_t d = 0; d + 1 < indices.size(); ++d)
        for (const Var& v : free_vars(indices[d]))
          if (changing_.count(v.get()) || moves_.count(v.get())) plan_.walks = true;
  }

  void add(const Var& v) { added_ |= plan_.varying.insert(v.get()).second; }
  void note_float(DType t) { plan_.float_bits = std::max(plan_.float_bits, float_bits_of(t)); }
  void refuse_with(const std::string& why) {
    if (mode_ == Mode::Check && refusal_.empty()) refusal_ = why;
  }
  // A lane reading an element that another lane writes would see the writes in another order than the
  // scalar loop. Reading exactly the element it writes itself (a[i] = a[i] + x) is safe, when that element
  // is one for the whole iteration: its subscripts use no inner loop's index and no assigned variable
  // (a[i + j] over j reaches the elements the next lanes write). So is any read of an array that every lane
  // only touches in a slice of its own (owns_slices).
  bool same_as_a_store(const LoadExpr& e) const {
    if (owns_slices(e.array)) return true;
    if (uses_changing(e.indices)) return false;
    return std::any_of(stores_.begin(), stores_.end(), [&](const StoreStmt* s) {
      if (s->array != e.array || s->indices.size() != e.indices.size()) return false;
      for (size_t k = 0; k < e.indices.size(); ++k)
        if (!equal(s->indices[k], e.indices[k])) return false;
      return true;
    });
  }

  bool uses_changing(const std::vector<Expr>& indices) const {
    for (const Expr& i : indices)
      for (const Var& v : free_vars(i))
        if (changing_.count(v.get())) return true;
    return false;
  }

  /// True if some axis of `array` has one subscript in every load and store of it in the body, which is one
  /// value for the whole iteration (no inner loop's index, no assigned variable) and steps by a known nonzero
  /// amount from lane to lane: lanes then hold different values of it, so each lane reads and writes only
  /// the slice of the array at its own value, whatever the other axes' subscripts (syrk's C[i, j] over
  /// j <= i, each lane a row of its own). No lane sees another's writes, and its own come in its scalar order.
  bool owns_slices(const Var& array) const {
    std::vector<const std::vector<Expr>*> accesses;
    struct Loads : IRVisitor {
      const VarNode* array;
      std::vector<const std::vector<Expr>*>& out;
      Loads(const VarNode* a, std::vector<const std::vector<Expr>*>& o) : array(a), out(o) {}
      void visit(const LoadExpr& e) override {
        if (e.array.get() == array) out.push_back(&e.indices);
        IRVisitor::visit(e);
      }
    } loads(array.get(), accesses);
    loads.walk(body_);
    for (const StoreStmt* s : stores_)
      if (s->array == array) accesses.push_back(&s->indices);
    const size_t rank = accesses.empty() ? 0 : accesses.front()->size();
    for (size_t d = 0; d < rank; ++d) {
      const Expr& sub = (*accesses.front())[d];
      const bool same = std::all_of(accesses.begin(), accesses.end(), [&](const std::vector<Expr>* a) {
        return a->size() == rank && equal((*a)[d], sub);
      });
      if (!same || uses_changing({sub})) continue;
      const auto stride = lane_stride(plan_, sub);
      if (stride && *stride != 0) return true;
    }
    return false;
  }
};

}  // namespace

LanePlan plan_lanes(const ParforStmt& p) {
  LanePlan plan;
  plan.index = p.indices.back();
  const std::vector<Var> carried = carried_floats(p.body);
  if (carried.empty()) return plan;
  plan.wanted = true;

  plan.varying.insert(plan.index.get());
  // A reduction keeps one partial per lane, folded in lane order after the groups of lanes.
  for (const auto& r : p.reductions) plan.varying.insert(r.var.get());
  const VarSet assigned = assigned_vars(p.body);
  struct Lets : IRVisitor {
    const VarSet& assigned;
    LetValues& out;
    Lets(const VarSet& a, LetValues& o) : assigned(a), out(o) {}
    void visit(const LetStmt& s) override {
      if (!assigned.count(s.var.get())) out[s.var.get()] = s.init;
      IRVisitor::visit(s);
    }
  } lets(assigned, plan.lets);
  lets.walk(p.body);

  Planner planner(plan, p.body);
  while (planner.spread()) {
  }
  std::string refusal;
  VarSet reduced;
  for (const auto& r : p.reductions) {
    reduced.insert(r.var.get());
    if (is_arg_reduction(r.op) && refusal.empty()) refusal = "the parfor finds the first position of a minimum or maximum, " + r.var->name;
  }
  if (refusal.empty() && !p.array_reductions.empty())
    refusal = "the parfor updates " + p.array_reductions.front().array->name + " as a reduction";
  if (refusal.empty()) refusal = planner.refuse();
  // A variable of the enclosing code assigned here is one of the parfor's reductions, or lanes cannot say
  // which lane's value it ends with.
  const VarSet local = declared_in(p.body);
  for (const VarNode* v : assigned)
    if (refusal.empty() && !local.count(v) && !reduced.count(v) && !v->type.is_array())
      refusal = "it assigns " + v->name + ", declared outside it";

  std::string names;
  for (const Var& v : carried) names += (names.empty() ? "" : ", ") + v->name;
  const std::string why = "a sequential loop carries " + names + " in order";
  plan.eligible = refusal.empty();
  std::string partials;
  for (const auto& r : p.reductions) partials += (partials.empty() ? "" : ", ") + r.var->name;
  plan.reason = plan.eligible ? "lanes across " + plan.index->name + ": " + why + ", each lane one " + plan.index->name +
                                    (partials.empty() ? "" : "; a partial per lane for " + partials) +
                                    (plan.walks ? "; " + std::to_string(kWalkingVectors) +
                                                      " vectors of lanes at a time: its loops walk down rows"
                                                : "")
                              : "not in lanes across " + plan.index->name + " (" + why + "): " + refusal;
  return plan;
}

bool varies(const LanePlan& plan, const Expr& e) {
  struct Finder : IRVisitor {
    const LanePlan& plan;
    bool found = false;
    explicit Finder(const LanePlan& p) : plan(p) {}
    void visit(const VarRefExpr& v) override { found |= plan.varying.count(v.var.get()) > 0; }
  } finder(plan);
  finder.walk(e);
  return finder.found;
}

std::optional<std::int64_t> lane_stride(const LanePlan& plan, const Expr& e) {
  if (!varies(plan, e)) return 0;
  if (e->type != DType::I64) return std::nullopt;  // i32 arithmetic wraps at 32 bits, lane by lane
  auto checked = [](std::int64_t a, std::int64_t b, bool multiply) -> std::optional<std::int64_t> {
    std::int64_t r = 0;
    if (multiply ? __builtin_mul_overflow(a, b, &r) : __builtin_add_overflow(a, b, &r)) return std::nullopt;
    return r;
  };
  switch (e->kind) {
    case ExprKind::VarRef: {
      const VarNode* v = e->as<VarRefExpr>().var.get();
      if (v == plan.index.get()) return 1;
      const auto it = plan.lets.find(v);
      return it == plan.lets.end() ? std::nullopt : lane_stride(plan, it->second);
    }
    case ExprKind::Unary: {
      const auto& u = e->as<UnaryExpr>();
      const auto a = u.op == UnaryOp::Neg ? lane_stride(plan, u.a) : std::nullopt;
      return a ? checked(*a, -1, true) : std::nullopt;
    }
    case ExprKind::Binary: {
      const auto& b = e->as<BinaryExpr>();
      const auto x = lane_stride(plan, b.a), y = lane_stride(plan, b.b);
      if (!x || !y) return std::nullopt;
      switch (b.op) {
        case BinaryOp::Add: return checked(*x, *y, false);
        case BinaryOp::Sub: return *y == std::numeric_limits<std::int64_t>::min() ? std::nullopt : checked(*x, -*y, false);
        case BinaryOp::Mul: {
          // A constant multiple: the other side must be a literal for the step to be known here.
          const auto* cx = dyn<ConstExpr>(b.a);
          const auto* cy = dyn<ConstExpr>(b.b);
          if (cy && *y == 0) return checked(*x, cy->i, true);
          if (cx && *x == 0) return checked(*y, cx->i, true);
          return std::nullopt;
        }
        default: return std::nullopt;
      }
    }
    default: return std::nullopt;
  }
}

}  // namespace kiln::ir
