// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "frontend/trace_context.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <atomic>

#include "frontend/source_names.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/visitor.hpp"

namespace kiln::detail {

TraceContext*& current_trace() {
  thread_local TraceContext* ctx = nullptr;
  return ctx;
}

std::uint64_t TraceContext::new_scope_id() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

TraceContext::TraceContext(std::string kernel, std::vector<ParamInstance> params, std::vector<std::string> param_names)
    : kernel_(std::move(kernel)), instances_(std::move(params)), previous_(current_trace()) {
  scopes_.push_back(Scope{new_scope_id(), {}, std::nullopt});
  for (size_t i = 0; i < instances_.size(); ++i) {
    const ParamInstance& p = instances_[i];
    const std::string name = i < param_names.size() ? param_names[i] : "arg" + std::to_string(i);
    const ir::Type t = p.spec.is_array ? ir::Type::array(p.spec.dtype, p.rank, p.unit_stride, p.unit_dims)
                                       : ir::Type::scalar(p.spec.dtype);
    params_.push_back(ir::make_var(name, t, ir::VarKind::Param));
  }
  current_trace() = this;
}

TraceContext::~TraceContext() {
  // Values that outlive the trace (captured by reference, say) must not point back to it.
  for (TracedValue* v = live_; v;) {
    TracedValue* next = v->next_;
    v->ctx_ = nullptr;
    v->prev_ = v->next_ = nullptr;
    v = next;
  }
  current_trace() = previous_;
}

TraceContext* TraceContext::current() { return current_trace(); }

TraceContext& TraceContext::active(const char* what) {
  TraceContext* c = current_trace();
  if (!c) throw TraceError(std::string(what) + " used outside a kernel: traced operations only work while kiln::jit traces a lambda");
  return *c;
}

namespace {
std::string located(const std::string& kernel, const std::string& what, const Where& where) {
  std::string msg = "kernel '" + kernel + "': " + what;
  if (const std::string w = where.str(); !w.empty()) msg += " (at " + w + ")";
  return msg;
}
}  // namespace

void TraceContext::fail(const std::string& what, const Where& where) const {
  throw TraceError(located(kernel_, what, where));
}

void TraceContext::fail_type(const std::string& what, const Where& where) const {
  throw TypeError(located(kernel_, what, where));
}

// ---- scopes ---------------------------------------------------------------------------------------------

bool TraceContext::on_stack(std::uint64_t scope) const {
  return std::any_of(scopes_.rbegin(), scopes_.rend(), [&](const Scope& s) { return s.id == scope; });
}

Scope& TraceContext::scope(std::uint64_t id) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (it->id == id) return *it;
  fail("internal: scope not on the stack");
}

std::vector<Scope*> TraceContext::scopes_inside(std::uint64_t id) {
  std::vector<Scope*> out;
  bool inside = false;
  for (Scope& s : scopes_) {
    if (inside) out.push_back(&s);
    inside |= s.id == id;
  }
  return out;
}

std::uint64_t TraceContext::open_scope() {
  scopes_.push_back(Scope{new_scope_id(), {}, std::nullopt});
  return scopes_.back().id;
}

ir::Stmt TraceContext::close_scope(std::uint64_t id) {
  if (scopes_.size() < 2 || scopes_.back().id != id) fail("internal: scopes closed out of order");
  flush(scopes_.back());
  ir::Stmt block = ir::make_block(std::move(scopes_.back().stmts));
  scopes_.pop_back();
  return block;
}

void TraceContext::discard_scope(std::uint64_t id) {
  if (!on_stack(id) || scopes_.front().id == id) return;
  while (scopes_.back().id != id) scopes_.pop_back();
  scopes_.pop_back();
}

void TraceContext::flush(Scope& s) {
  if (!s.pending) return;
  PendingIf p = std::move(*s.pending);
  s.pending.reset();
  // Build the chain from the innermost else outwards: if c0 {b0} else { if c1 {b1} else {...} }.
  ir::Stmt tail = p.has_else ? p.bodies.back() : nullptr;
  for (size_t k = p.conds.size(); k-- > 0;) tail = ir::make_if(p.conds[k], p.bodies[k], tail);
  s.stmts.push_back(std::move(tail));
}

void TraceContext::begin_statement() { flush(scopes_.back()); }

void TraceContext::emit(ir::Stmt s) {
  begin_statement();
  scopes_.back().stmts.push_back(std::move(s));
}

// ---- values -------------------------------------------------------------------------------------------

void TraceContext::enroll(TracedValue* v) {
  v->ctx_ = this;
  v->prev_ = nullptr;
  v->next_ = live_;
  if (live_) live_->prev_ = v;
  live_ = v;
}

void TraceContext::withdraw(TracedValue* v) {
  if (v->prev_) v->prev_->next_ = v->next_;
  else live_ = v->next_;
  if (v->next_) v->next_->prev_ = v->prev_;
  v->prev_ = v->next_ = nullptr;
  v->ctx_ = nullptr;
}

Node TraceContext::read(const TracedValue& v) {
  if (v.scope_ == 0) return v.node_;  // a constant made outside any trace
  if (!on_stack(v.scope_)) {
    fail("a traced value is used outside the loop, branch or kernel it was created in" +
             std::string(v.where_.file ? " (it was created at " + v.where_.str() + ")" : ""),
         {});
  }
  if (v.slot_) return Node{ir::make_ref(v.slot_), v.node_.type, false, true};
  // Read in a deeper loop or branch: it must become a variable, because that loop may assign it later
  // and every iteration has to see the assignment. (simplify removes the variable again if it is not.)
  if (v.scope_ != current_scope() && !v.read_only_) {
    promote(v);
    return Node{ir::make_ref(v.slot_), v.node_.type, false, true};
  }
  return v.node_;
}

void TraceContext::promote(const TracedValue& v) {
  if (v.slot_) return;
  const ir::Var var = new_local(v.node_.type, name_of(v), v.where_);
  scope(v.scope_).stmts.push_back(ir::make_let(var, v.node_.expr));  // before any pending branch chain
  if (v.ctx_) withdraw(const_cast<TracedValue*>(&v));
  v.slot_ = var;
  v.node_ = Node{ir::make_ref(var), v.node_.type, false, true};
}

void TraceContext::assign(TracedValue& x, const TracedValue& v, bool consume) {
  begin_statement();
  const Node rhs = read(v);
  if (x.scope_ == 0) fail("cannot assign to a traced value created outside the kernel", x.where_);
  if (x.read_only_) fail("a loop index is read-only; copy it into a variable to modify it", x.where_);
  if (!on_stack(x.scope_)) fail("assignment to a traced value outside the loop or branch it was created in", x.where_);
  promote(x);
  if (consume) this->consume(v);
  snapshot_readers_of(x.slot_.get());
  emit(ir::make_assign(x.slot_, rhs.expr));
}

void TraceContext::consume(const TracedValue& v) {
  if (v.ctx_) withdraw(const_cast<TracedValue*>(&v));
}

void TraceContext::snapshot_memory_readers() {
  for (TracedValue* v = live_; v;) {
    TracedValue* next = v->next_;
    if (v->node_.reads_memory && on_stack(v->scope_)) promote(*v);
    v = next;
  }
}

void TraceContext::rewrite_values_inside(std::uint64_t id, ir::IRMutator& rewrite) {
  std::vector<std::uint64_t> inside;
  for (const Scope* s : scopes_inside(id)) inside.push_back(s->id);
  for (TracedValue* v = live_; v; v = v->next_)
    if (std::find(inside.begin(), inside.end(), v->scope_) != inside.end()) v->node_.expr = rewrite.mutate(v->node_.expr);
}

void TraceContext::snapshot_readers_of(const ir::VarNode* slot) {
  for (TracedValue* v = live_; v;) {
    TracedValue* next = v->next_;
    if (v->node_.reads_locals && on_stack(v->scope_) && ir::uses(v->node_.expr, slot)) promote(*v);
    v = next;
  }
}

// ---- variables ------------------------------------------------------------------------------------------

ir::Var TraceContext::new_local(DType t, std::string name, const Where& where) {
  return ir::make_var(std::move(name), ir::Type::scalar(t), ir::VarKind::Local, where.str());
}

ir::Var TraceContext::new_index(std::string name) {
  return ir::make_var(std::move(name), ir::Type::scalar(DType::I64), ir::VarKind::Index);
}

ir::Var TraceContext::new_array(DType t, int rank, std::string name, const Where& where) {
  return ir::make_var(std::move(name), ir::Type::array(t, rank, true), ir::VarKind::Local, where.str());
}

void TraceContext::check_array(const ArrayHandle& a, const char* what) const {
  if (!a.var) fail(std::string(what) + " of an empty kiln::Array handle");
  if (!on_stack(a.scope))
    fail(std::string(what) + " of array '" + a.var->name + "' outside the loop, branch or kernel it belongs to");
}

std::string TraceContext::name_of(const TracedValue& v) const {
  if (!v.name_.empty()) return v.name_;
  if (std::string n = declared_name(v.where_); !n.empty()) return n;
  return "t";
}

void TraceContext::note_location(const std::string& where) {
  if (std::find(locations_.begin(), locations_.end(), where) == locations_.end()) locations_.push_back(where);
}

void TraceContext::note_line(const Where& where) {
  if (!where.file || where.line == 0) return;
  for (LineSpan& s : line_spans_)
    if (s.file == where.file || std::strcmp(s.file, where.file) == 0) {
      s.first = std::min(s.first, where.line);
      s.last = std::max(s.last, where.line);
      return;
    }
  line_spans_.push_back({where.file, where.line, where.line});
}

std::pair<unsigned, unsigned> TraceContext::noted_lines(const char* file) const {
  if (file)
    for (const LineSpan& s : line_spans_)
      if (s.file == file || std::strcmp(s.file, file) == 0) return {s.first, s.last};
  return {0, 0};
}

namespace {

/// Check messages with the source positions they name replaced by `{@k}` references to `locations`.
class LocationReferences final : public ir::IRMutator {
 public:
  explicit LocationReferences(const std::vector<std::string>& locations) : locations_(locations), order_(locations.size()) {
    // Longest first, so that "k.cpp:12" is not taken for "k.cpp:1" followed by a digit.
    for (std::size_t k = 0; k < order_.size(); ++k) order_[k] = k;
    std::sort(order_.begin(), order_.end(), [&](auto a, auto b) { return locations_[a].size() > locations_[b].size(); });
  }

 protected:
  ir::Stmt visit(const ir::CheckStmt& c, const ir::Stmt& self) override {
    std::string m = c.message;
    bool changed = false;
    for (const std::size_t k : order_) {
      const std::string& l = locations_[k];
      for (std::size_t at = m.find(l); at != std::string::npos; at = m.find(l, at + 1)) {
        const std::size_t end = at + l.size();
        if (end < m.size() && std::isdigit(static_cast<unsigned char>(m[end]))) continue;
        const std::string ref = "{@" + std::to_string(k) + "}";
        m.replace(at, l.size(), ref);
        changed = true;
      }
    }
    if (!changed) return self;
    return ir::make_check(c.cond, c.code, m, c.args);
  }

 private:
  const std::vector<std::string>& locations_;
  std::vector<std::size_t> order_;  ///< indices into locations_, longest first
};

}  // namespace

ir::Function TraceContext::finish() {
  if (scopes_.size() != 1) fail("internal: trace finished inside a loop or branch");
  flush(scopes_.front());
  ir::Function f;
  f.name = kernel_;
  f.params = params_;
  f.body = ir::make_block(std::move(scopes_.front().stmts));
  f.result = result_;
  f.result_array = result_array_;
  f.tuple = tuple_;
  f.locations = locations_;
  if (!f.locations.empty()) f.body = LocationReferences(f.locations).mutate(f.body);
  return f;
}

}  // namespace kiln::detail
