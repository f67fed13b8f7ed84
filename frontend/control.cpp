// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Traced loops and branches.
#include <fmt/format.h>

#include "frontend/source_names.hpp"
#include "frontend/trace_context.hpp"
#include "kiln/control.hpp"
#include "ir/builder.hpp"

namespace kiln::detail {

struct LoopTrace::State {
  TraceContext* ctx;
  LoopKind kind;
  std::vector<ir::Expr> lo, hi;
  std::vector<ir::Var> indices;
  std::uint64_t scope;
  Where where;
  bool finished = false;
};

LoopTrace::LoopTrace(LoopKind kind, int rank, const Int* lo, const Int* hi, Where where) {
  TraceContext& ctx = TraceContext::active(kind == LoopKind::Parallel ? "kiln::prange" : "kiln::range");
  ctx.begin_statement();
  s_ = std::make_unique<State>();
  s_->ctx = &ctx;
  s_->kind = kind;
  s_->where = where;
  for (int d = 0; d < rank; ++d) {  // bounds are evaluated before the loop, in the enclosing scope
    s_->lo.push_back(lo[d].read().expr);
    s_->hi.push_back(hi[d].read().expr);
  }
  s_->scope = ctx.open_scope();
  Scope& body = ctx.scope(s_->scope);
  body.parallel = kind == LoopKind::Parallel;
  body.loop_lo = &s_->lo;
  body.loop_hi = &s_->hi;
  // The body lambda's own parameter names when they can be read from the source (`[&](Int row, Int col)`).
  const std::vector<std::string> names = lambda_param_names(where, static_cast<size_t>(rank));
  for (int d = 0; d < rank; ++d)
    s_->indices.push_back(ctx.new_index(names.empty() ? std::string(1, "ijkl"[d]) : names[static_cast<size_t>(d)]));
}

LoopTrace::~LoopTrace() {
  if (s_ && !s_->finished && TraceContext::current() == s_->ctx) s_->ctx->discard_scope(s_->scope);
}

Int LoopTrace::index(int d) const {
  Int i(Node{ir::make_ref(s_->indices.at(d)), DType::I64, false, false});
  i.make_read_only();
  return i;
}

void LoopTrace::finish() {
  TraceContext& ctx = *s_->ctx;
  ir::Stmt body = ctx.close_scope(s_->scope);
  s_->finished = true;
  if (s_->kind == LoopKind::Parallel) {
    const std::string origin = "prange" + (s_->where.str().empty() ? std::string() : " at " + s_->where.str());
    ctx.emit(ir::make_parfor(s_->indices, s_->lo, s_->hi, body, {}, origin));
  } else {
    for (size_t d = s_->indices.size(); d-- > 0;) {
      body = ir::make_for(s_->indices[d], s_->lo[d], s_->hi[d], body);
      if (d > 0) body = ir::make_block({body});
    }
    ctx.emit(body);
  }
}

BranchTrace::BranchTrace(const TracedValue& cond, Where) {
  TraceContext& ctx = TraceContext::active("kiln::if_");
  ctx.begin_statement();
  const Node c = cond.read();
  cond.release();  // the condition is the caller's own copy: read once, here
  chain_ = TraceContext::new_scope_id();
  Scope& here = ctx.scope(ctx.current_scope());
  here.pending = PendingIf{chain_, {c.expr}, {}, false, true};
  scope_ = ctx.open_scope();
}

BranchTrace::BranchTrace(std::uint64_t chain, const TracedValue* cond, Where where) : chain_(chain) {
  TraceContext& ctx = TraceContext::active(cond ? "elif_" : "else_");
  PendingIf* p = ctx.pending_in_current();
  if (!p || p->chain != chain || p->has_else || p->branch_open)
    ctx.fail(fmt::format("{} must directly follow its if_ (or elif_) in the same statement", cond ? "elif_" : "else_"),
             where);
  if (cond) {
    p->conds.push_back(cond->read().expr);  // read in the enclosing scope, before the branch opens
    cond->release();
  }
  else p->has_else = true;
  p->branch_open = true;
  scope_ = ctx.open_scope();
}

BranchTrace::~BranchTrace() {
  TraceContext* ctx = TraceContext::current();
  if (!done_ && ctx && ctx->on_stack(scope_)) ctx->discard_scope(scope_);
}

void BranchTrace::finish() {
  TraceContext& ctx = TraceContext::active("kiln::if_");
  ir::Stmt body = ctx.close_scope(scope_);
  done_ = true;
  PendingIf* p = ctx.pending_in_current();
  if (!p || p->chain != chain_) ctx.fail("internal: branch chain lost");
  p->bodies.push_back(std::move(body));
  p->branch_open = false;
}

}  // namespace kiln::detail
