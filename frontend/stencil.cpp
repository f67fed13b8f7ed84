// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tracing a stencil application: its inputs and their checks, the windows' relative reads, and the body
// turned into a StencilStmt (frontend/stencil_flatten.cpp makes the body one expression).
#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "frontend/index_math.hpp"
#include "frontend/source_names.hpp"
#include "frontend/stencil_flatten.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/visitor.hpp"
#include "kiln/stencil.hpp"

namespace kiln::detail {

struct StencilTrace::State {
  TraceContext* ctx = nullptr;
  const StencilSpec* spec = nullptr;
  DType elem = DType::F64;
  int rank = 0;
  std::vector<ArrayHandle> inputs;  ///< whole arrays (views are copied first)
  std::vector<std::string> window_names;
  std::vector<ir::Var> proxies;  ///< what the body's reads refer to until they become reads of `inputs`
  std::vector<ir::Var> indices;
  const ArrayHandle* out = nullptr;
  std::uint64_t body_scope = 0;
  bool open = false;  ///< the body is being traced: windows may be read

  [[noreturn]] void fail(const std::string& what) const {
    ctx->fail(fmt::format("stencil '{}': {}", spec->name, what), spec->where);
  }
  std::string range_text(int axis) const {
    const Offsets& o = spec->declared.at(static_cast<size_t>(axis));
    return fmt::format("{}..{}", o.lo, o.hi);
  }
  /// A window read at `offset` (a number, or "{}" for one known at run time) beyond the declared reach.
  std::string outside_text(const std::string& window, const std::string& offset, int axis) const {
    return fmt::format("window '{}' is read at offset {} along axis {}, outside the declared neighbourhood {}", window,
                       offset, axis, range_text(axis));
  }
};

namespace {

/// Turns the body's reads of window proxies into reads of the input arrays at index + offset, checking
/// the offsets against the neighbourhood (or inferring it), and collecting run-time offset checks.
class WindowReads : public ir::IRMutator {
 public:
  explicit WindowReads(const StencilTrace::State& s) : s_(s) {
    const size_t r = static_cast<size_t>(s.rank);
    lo.assign(r, 0);
    hi.assign(r, 0);
  }

  std::vector<std::int64_t> lo, hi;  ///< the constant offsets seen (and 0)
  struct UniformOffset {
    ir::Expr offset;
    int window, axis;
  };
  std::vector<UniformOffset> uniform;  ///< traced offsets equal for every element: checked before the stencil

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::LoadExpr& e, const ir::Expr& self) override {
    ir::Expr r = ir::IRMutator::visit(e, self);
    const auto& l = r->as<ir::LoadExpr>();
    const auto it = std::find(s_.proxies.begin(), s_.proxies.end(), l.array);
    if (it == s_.proxies.end()) return r;
    const int k = static_cast<int>(it - s_.proxies.begin());
    std::vector<ir::Expr> idx;
    for (int d = 0; d < s_.rank; ++d) {
      const size_t du = static_cast<size_t>(d);
      const ir::Expr o = fold_constants(l.indices[du]);
      const ir::Expr at = ir::make_ref(s_.indices[du]);
      if (const auto c = ix::value(o)) {
        if (!s_.spec->declared.empty()) {
          const Offsets& n = s_.spec->declared[du];
          if (*c < n.lo || *c > n.hi)
            s_.fail(s_.outside_text(s_.window_names[static_cast<size_t>(k)], std::to_string(*c), d));
        }
        lo[du] = std::min(lo[du], *c);
        hi[du] = std::max(hi[du], *c);
        idx.push_back(ix::add(at, o));
      } else if (!reads_windows(o)) {
        // The same offset for every element (a scalar parameter, say): checked once, before the stencil.
        uniform.push_back({o, k, d});
        idx.push_back(ix::add(at, o));
      } else {
        // An offset computed from the windows' values differs per element and cannot be checked before the
        // stencil runs: it is clamped into the declared neighbourhood, so that no read ever leaves it (the
        // size check and the border handling rely on that).
        const Offsets& n = s_.spec->declared[du];
        idx.push_back(ix::add(at, ix::min(ix::max(o, ix::c(n.lo)), ix::c(n.hi))));
      }
    }
    return ir::make_load(s_.inputs[static_cast<size_t>(k)].var, std::move(idx));
  }

 private:
  const StencilTrace::State& s_;

  /// Whether `e` (already rewritten) differs per element: it reads the element's index (through a window).
  bool reads_windows(const ir::Expr& e) const {
    for (const ir::Var& i : s_.indices)
      if (ir::uses(e, i.get())) return true;
    return false;
  }
};

/// Reads of arrays at positions that are the same for every element (the weights of a convolution) become
/// variables read once before the stencil. In the stencil's loop a backend could not hoist them itself: the
/// target may be the same array as far as it knows, and every element stores into the target. Reads under
/// a select (or the right operand of && and ||) stay where they are: they may be guarded by the condition.
class UniformReads : public ir::IRMutator {
 public:
  UniformReads(TraceContext& ctx, const std::vector<ir::Var>& indices) : ctx_(ctx), indices_(indices) {}
  std::vector<ir::Stmt> lets;

 protected:
  using ir::IRMutator::visit;

  ir::Expr visit(const ir::LoadExpr& e, const ir::Expr& self) override {
    ir::Expr r = ir::IRMutator::visit(e, self);
    if (guarded_ > 0) return r;
    for (const ir::Var& i : indices_)
      if (ir::uses(r, i.get())) return r;
    for (const auto& [load, var] : hoisted_)
      if (ir::equal(load, r)) return ir::make_ref(var);
    const ir::Var v = ctx_.new_local(r->type, e.array->name, {});
    lets.push_back(ir::make_let(v, r));
    hoisted_.emplace_back(r, v);
    return ir::make_ref(v);
  }
  ir::Expr visit(const ir::SelectExpr& e, const ir::Expr& self) override {
    const ir::Expr c = mutate(e.cond);
    ++guarded_;
    const ir::Expr a = mutate(e.a), b = mutate(e.b);
    --guarded_;
    return c == e.cond && a == e.a && b == e.b ? self : ir::make_select(c, a, b);
  }
  ir::Expr visit(const ir::BinaryExpr& e, const ir::Expr& self) override {
    if (e.op != BinaryOp::And && e.op != BinaryOp::Or) return ir::IRMutator::visit(e, self);
    const ir::Expr a = mutate(e.a);
    ++guarded_;
    const ir::Expr b = mutate(e.b);
    --guarded_;
    return a == e.a && b == e.b ? self : ir::make_binary(e.op, a, b);
  }

 private:
  TraceContext& ctx_;
  const std::vector<ir::Var>& indices_;
  std::vector<std::pair<ir::Expr, ir::Var>> hoisted_;
  int guarded_ = 0;
};

ir::Expr all_of(const std::vector<ir::Expr>& conds) {
  ir::Expr c = ir::make_bool(true);
  for (const ir::Expr& x : conds) c = ix::both(c, x);
  return c;
}

}  // namespace

std::vector<std::string> stencil_param_names(const Where& where, std::size_t n) { return lambda_param_names(where, n); }

StencilTrace::StencilTrace(const StencilSpec& spec, DType elem, int rank, const ArrayHandle* const* windows,
                           int nwindows, const ArrayHandle* out)
    : s_(std::make_shared<State>()) {
  TraceContext& ctx = TraceContext::active("a kiln::stencil");
  ctx.begin_statement();
  State& s = *s_;
  s.ctx = &ctx;
  s.spec = &spec;
  s.elem = elem;
  s.rank = rank;
  s.out = out;
  if (!spec.declared.empty()) {
    if (static_cast<int>(spec.declared.size()) != rank)
      s.fail(fmt::format("the declared neighbourhood has {} dimensions but the windows have rank {}", spec.declared.size(),
                         rank));
    for (int d = 0; d < rank; ++d) {
      const Offsets& o = spec.declared[static_cast<size_t>(d)];
      if (o.lo > 0 || o.hi < 0)
        s.fail(fmt::format("the declared neighbourhood {} along axis {} must contain offset 0 (lo <= 0 <= hi)",
                           s.range_text(d), d));
    }
  }
  for (int k = 0; k < nwindows; ++k) {
    const ArrayHandle& h = *windows[k];
    const size_t ku = static_cast<size_t>(k);
    s.window_names.push_back(ku < spec.param_names.size() ? spec.param_names[ku] : fmt::format("w{}", k));
    ctx.check_array(h, "a stencil input");
    if (h.rank != rank)
      s.fail(fmt::format("input '{}' has rank {} but window '{}' has rank {}", label_of(h), h.rank, s.window_names.back(),
                         rank));
    s.inputs.push_back(materialize(h));  // a view is copied: windows are whole arrays
    s.proxies.push_back(ir::make_var(s.window_names.back(), ir::Type::array(elem, rank, true), ir::VarKind::Local));
  }
  if (out) {
    ctx.check_array(*out, "a stencil output");
    if (out->rank != rank)
      s.fail(fmt::format("output '{}' has rank {}, the inputs rank {}", label_of(*out), out->rank, rank));
    if (is_view(*out))
      s.fail(fmt::format("writes into the view '{}': a stencil writes whole arrays (use Border::skip to leave the border "
                         "of the output untouched)",
                         label_of(*out)));
    for (const ArrayHandle& in : s.inputs)
      if (in.var == out->var)
        s.fail(fmt::format("writes into '{}', which it also reads: a stencil reads neighbours it would already have "
                           "overwritten; write into another array (and kiln::swap them in a time loop)",
                           label_of(*out)));
  }
  s.indices = space_indices(ctx, rank);
  s.body_scope = ctx.open_scope();
  s.open = true;
}

StencilTrace::~StencilTrace() {
  if (s_->open && TraceContext::current() == s_->ctx && s_->ctx->on_stack(s_->body_scope))
    s_->ctx->discard_scope(s_->body_scope);
  s_->open = false;
}

Node window_load(const std::shared_ptr<StencilTrace::State>& s, int window, const OffsetArg* offsets, int n) {
  TraceContext& ctx = TraceContext::active("a kiln::Window");
  if (!s || !s->open || s->ctx != &ctx || !ctx.on_stack(s->body_scope))
    ctx.fail(s ? fmt::format("a kiln::Window is read outside the body of its stencil '{}'", s->spec->name)
               : std::string("a kiln::Window is read outside the body of its stencil"));
  const std::string& name = s->window_names.at(static_cast<size_t>(window));
  Node node{nullptr, s->elem, true, false};
  std::vector<ir::Expr> offs;
  for (int d = 0; d < n; ++d) {
    const OffsetArg& o = offsets[d];
    if (o.traced) {
      if (s->spec->declared.empty())
        s->fail(fmt::format("window '{}' is read at a traced offset along axis {} (a kiln::Int, not a C++ integer): its "
                            "reach is unknown while tracing, so declare the neighbourhood in the stencil's options, e.g. "
                            "kiln::neighborhood({{-2, 2}}, {{-2, 2}})",
                            name, d));
      const Node v = o.traced->read();
      node.reads_locals |= v.reads_locals;
      offs.push_back(v.expr);
    } else {
      if (!s->spec->declared.empty()) {
        const Offsets& r = s->spec->declared[static_cast<size_t>(d)];
        if (o.value < r.lo || o.value > r.hi)
          s->fail(s->outside_text(name, std::to_string(o.value), d));
      }
      offs.push_back(ir::make_i64(o.value));
    }
  }
  node.expr = ir::make_load(s->proxies.at(static_cast<size_t>(window)), std::move(offs));
  return node;
}

Node window_dim(const std::shared_ptr<StencilTrace::State>& s, int window, int axis) {
  TraceContext& ctx = TraceContext::active("a kiln::Window");
  if (!s || s->ctx != &ctx) ctx.fail("a kiln::Window's shape is read outside the kernel of its stencil");
  return dim(s->inputs.at(static_cast<size_t>(window)), axis);
}

ArrayHandle StencilTrace::finish(const TracedValue& value) {
  State& s = *s_;
  TraceContext& ctx = *s.ctx;
  ctx.begin_statement();
  const Node v = value.read();
  ctx.consume(value);
  const ir::Stmt body = ctx.close_scope(s.body_scope);
  s.open = false;

  const ir::Expr flat = flatten_stencil_body(body, v.expr, [&](const std::string& why) {
    s.fail(fmt::format("its body cannot be evaluated per element: {}", why));
  });
  WindowReads reads(s);
  const ir::Expr element = reads.mutate(flat);

  const size_t r = static_cast<size_t>(s.rank);
  std::vector<std::int64_t> lo = reads.lo, hi = reads.hi;
  for (size_t d = 0; d < r && !s.spec->declared.empty(); ++d) {
    lo[d] = s.spec->declared[d].lo;
    hi[d] = s.spec->declared[d].hi;
  }

  // Run-time requirements, before the stencil: inputs of one shape (and the output too), each at least as
  // large as the neighbourhood (so that every read outside the array is within one reflection of it, as the
  // border rules assume), and traced offsets inside the declared neighbourhood.
  const std::vector<ir::Expr> shape = extents_of(s.inputs[0]);
  // The checks' messages are formats of their own, whose {} the failing values fill in (ir/status.hpp).
  const std::string head = fmt::format("stencil '{}'{}: ", s.spec->name, at(s.spec->where));
  auto same_shape = [&](const ArrayHandle& other, const std::string& role) {
    const std::vector<ir::Expr> e = extents_of(other);
    std::vector<ir::Expr> conds, args = e;
    for (size_t d = 0; d < r; ++d) conds.push_back(ix::eq(e[d], shape[d]));
    args.insert(args.end(), shape.begin(), shape.end());
    const ir::Expr c = fold_constants(all_of(conds));
    if (const auto* k = ir::dyn<ir::ConstExpr>(c); k && k->i) return;  // known equal while tracing
    ctx.emit(ir::make_check(c, kShapeMismatch,
                            fmt::format("{}{} '{}' has shape {} but input '{}' has shape {} (a stencil's inputs and "
                                        "output have one shape)",
                                        head, role, label_of(other), shape_holes(r), label_of(s.inputs[0]),
                                        shape_holes(r)),
                              args));
  };
  for (size_t k = 1; k < s.inputs.size(); ++k) same_shape(s.inputs[k], "input");
  if (s.out) same_shape(*s.out, "output");
  for (size_t d = 0; d < r && !ctx.halo_reads; ++d) {
    const std::int64_t width = hi[d] - lo[d] + 1;
    if (width <= 1) continue;
    const ir::Expr c = fold_constants(ir::make_binary(BinaryOp::Ge, shape[d], ix::c(width)));
    if (const auto* k = ir::dyn<ir::ConstExpr>(c); k && k->i) continue;
    ctx.emit(ir::make_check(c, kShapeMismatch,
                            fmt::format("{}input '{}' has extent {{}} along axis {}, smaller than the neighbourhood "
                                        "(offsets {}..{} need at least {} elements)",
                                        head, label_of(s.inputs[0]), d, lo[d], hi[d], width),
                            {shape[d]}));
  }
  for (const auto& u : reads.uniform) {
    const Offsets& n = s.spec->declared[static_cast<size_t>(u.axis)];
    const ir::Expr inside = ix::both(ir::make_binary(BinaryOp::Ge, u.offset, ix::c(n.lo)),
                                     ir::make_binary(BinaryOp::Le, u.offset, ix::c(n.hi)));
    ctx.emit(ir::make_check(inside, kIndexOutOfRange,
                            head + s.outside_text(s.window_names[static_cast<size_t>(u.window)], "{}", u.axis),
                            {u.offset}));
  }

  UniformReads uniform_reads(ctx, s.indices);
  const ir::Expr computed = uniform_reads.mutate(element);
  for (const ir::Stmt& let : uniform_reads.lets) ctx.emit(let);

  std::vector<ir::Var> windows;
  for (const ArrayHandle& in : s.inputs) windows.push_back(in.var);
  const ir::Expr cval = s.spec->border == Border::constant ? ir::make_const(s.elem, s.spec->cval) : nullptr;
  const std::string origin = "stencil " + s.spec->name + at(s.spec->where);
  if (s.out) {
    const ir::Var target = s.out->var;
    if (ir::uses(element, target.get()))
      s.fail(fmt::format("writes into '{}', which its body also reads: write into another array", label_of(*s.out)));
    ctx.snapshot_memory_readers();
    note_write(ctx, target.get());
    ctx.emit(ir::make_stencil(target, false, s.indices, shape, refs(s.indices), computed, windows, lo, hi,
                              s.spec->border, cval, origin));
    return *s.out;
  }
  const ir::Var target = ctx.new_array(s.elem, s.rank, s.spec->name, s.spec->where);
  ctx.emit(ir::make_stencil(target, true, s.indices, shape, {}, computed, windows, lo, hi, s.spec->border, cval,
                            origin));
  return new_handle(ctx, target, shape, s.spec->name + "(" + label_of(s.inputs[0]) + ")");
}

}  // namespace kiln::detail
