// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::atomic_* (kiln/atomic.hpp): one ir::AtomicStmt, traced like an element store (which it also is), whose
// declared result is the old value.
#include <fmt/format.h>

#include "frontend/array_info.hpp"
#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "kiln/atomic.hpp"

namespace kiln::detail {

Node atomic_update(const ArrayHandle& a, const Int* const* indices, int n, AtomicOp op, const TracedValue& value,
                   const TracedValue* expected) {
  TraceContext& ctx = TraceContext::active("kiln::atomic_*");
  ctx.check_array(a, "an atomic update of an element");
  const DType t = elem_of(a);
  if (!ir::atomic_allowed(op, t))
    ctx.fail(fmt::format("kiln::{} on array '{}' of {}: {}", ir::name_of(op), label_of(a), name_of(t),
                         ir::atomic_types_text(op)));
  ctx.begin_statement();
  Node flags;
  std::vector<ir::Expr> idx = read_indices(ctx, a, indices, n, flags);
  const Node v = value.read();
  const ir::Expr e = expected ? expected->read().expr : nullptr;
  // Like a store, it changes the element: values that read the array must keep what they read.
  ctx.snapshot_memory_readers();
  note_write(ctx, a.var.get());
  const ir::Var old = ctx.new_local(t, "old", {});
  ctx.emit(ir::make_atomic(old, op, a.var, std::move(idx), v.expr, e));
  // The old value is never assigned again: reading it needs no snapshot.
  return Node{ir::make_ref(old), t, false, false};
}

}  // namespace kiln::detail
