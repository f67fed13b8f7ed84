// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Traced scalars: construction, reads and assignment (delegating the rules to TraceContext), and the
// operations that build IR nodes.
#include <cmath>

#include "frontend/trace_context.hpp"
#include "ir/builder.hpp"

namespace kiln::detail {
namespace {

Node combine(ir::Expr e, std::initializer_list<Node> parts) {
  Node n{std::move(e), DType::F64, false, false};
  n.type = n.expr->type;
  for (const Node& p : parts) {
    n.reads_memory |= p.reads_memory;
    n.reads_locals |= p.reads_locals;
  }
  return n;
}

/// Turns an IRError raised while building a node into a TraceError naming the kernel.
template <class F>
Node build(F&& f) {
  try {
    return f();
  } catch (const ir::IRError& e) {
    if (TraceContext* ctx = TraceContext::current()) ctx->fail(e.what());
    throw TraceError(e.what());
  }
}

}  // namespace

// ---- TracedValue ----------------------------------------------------------------------------------------

TracedValue::TracedValue(Node n, Where w) : node_(std::move(n)), where_(w) {
  if (TraceContext* ctx = TraceContext::current()) {
    scope_ = ctx->current_scope();
    ctx->note_line(w);
    enroll();
  }
}

TracedValue::TracedValue(const TracedValue& other, Where w) : where_(w) {
  TraceContext* ctx = TraceContext::current();
  node_ = ctx ? ctx->read(other) : other.node_;
  if (ctx) {
    scope_ = ctx->current_scope();
    ctx->note_line(w);
    enroll();
  } else if (other.scope_ != 0) {
    throw TraceError("a traced value is copied outside the kernel it belongs to");
  }
}

TracedValue::~TracedValue() { withdraw(); }

void TracedValue::enroll() {
  // Only values whose expression can change meaning later (it reads memory or variables) need watching.
  if (node_.reads_memory || node_.reads_locals) TraceContext::current()->enroll(this);
}

void TracedValue::withdraw() const {
  if (ctx_) ctx_->withdraw(const_cast<TracedValue*>(this));
}

Node TracedValue::read() const {
  TraceContext* ctx = TraceContext::current();
  if (!ctx) {
    if (scope_ != 0) throw TraceError("a traced value is used outside the kernel it belongs to");
    return node_;
  }
  return ctx->read(*this);
}

void TracedValue::assign(const TracedValue& v, bool consume) {
  TraceContext& ctx = TraceContext::active("assignment to a traced value");
  ctx.assign(*this, v, consume);
}

void TracedValue::set_name(std::string_view n) { name_ = std::string(n); }

// ---- node builders --------------------------------------------------------------------------------------

Node constant(DType t, double v) { return Node{ir::make_const(t, v), t, false, false}; }

Node constant_int(DType t, std::int64_t v) {
  if (is_float(t)) return constant(t, static_cast<double>(v));
  return Node{ir::make_int(t, v), t, false, false};
}

Node unary(UnaryOp op, const TracedValue& a) {
  const Node x = a.read();
  return build([&] { return combine(ir::make_unary(op, x.expr), {x}); });
}

Node binary(BinaryOp op, const TracedValue& a, const TracedValue& b) {
  const Node x = a.read(), y = b.read();
  return build([&] { return combine(ir::make_binary(op, x.expr, y.expr), {x, y}); });
}

Node cast(DType t, const TracedValue& a) {
  const Node x = a.read();
  return build([&] { return combine(ir::make_cast(t, x.expr), {x}); });
}

Node call(Intrinsic fn, const TracedValue& a) {
  const Node x = a.read();
  return build([&] { return combine(ir::make_call(fn, {x.expr}), {x}); });
}

Node call(Intrinsic fn, const TracedValue& a, const TracedValue& b) {
  const Node x = a.read(), y = b.read();
  return build([&] { return combine(ir::make_call(fn, {x.expr, y.expr}), {x, y}); });
}

Node call(Intrinsic fn, const TracedValue& a, const TracedValue& b, const TracedValue& c) {
  const Node x = a.read(), y = b.read(), z = c.read();
  return build([&] { return combine(ir::make_call(fn, {x.expr, y.expr, z.expr}), {x, y, z}); });
}

Node select(const TracedValue& c, const TracedValue& a, const TracedValue& b) {
  const Node x = c.read(), y = a.read(), z = b.read();
  return build([&] { return combine(ir::make_select(x.expr, y.expr, z.expr), {x, y, z}); });
}

}  // namespace kiln::detail
