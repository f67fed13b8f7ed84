// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln::atomic_* on array elements (ir::AtomicStmt; the rules are in ir/atomics.hpp): one call of the
// prelude's kiln_fetch_* helpers, CUDA's atomicAdd & co. at device scope and relaxed order, with
// compare-and-swap loops for float min/max (kiln's NaN-propagating minimum/maximum, which no atomic
// instruction computes). Each returns the element's old value, declared as the statement's result.
#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "ir/atomics.hpp"

namespace kiln::codegen::cuda {

void Emitter::atomic(const ir::AtomicStmt& a) {
  const DType t = a.array->type.elem;
  if (!ir::atomic_allowed(a.op, t))
    backend_error(fn_.name, fmt::format("{} on {} of type {}", ir::name_of(a.op), a.array->name, name_of(t)));
  for (std::size_t c = 0; c < privates_.size(); ++c) {
    if (privates_[c].array != a.array.get()) continue;
    // Nothing reads the old value (private_copies.hpp): the update without it, through the block's copy.
    const std::string v = expr(a.value);
    const char* update = a.op == AtomicOp::Min ? "kiln_atomic_min" : a.op == AtomicOp::Max ? "kiln_atomic_max" : "kiln_atomic_add";
    const std::string operand = a.op != AtomicOp::Sub ? v : is_float(t) ? "(-" + v + ")" : "kiln_neg(" + v + ")";
    return private_update(a.indices, static_cast<int>(c), update, operand);
  }
  const char* fn = "kiln_fetch_add";
  switch (a.op) {
    case AtomicOp::Add: fn = "kiln_fetch_add"; break;
    case AtomicOp::Sub: fn = "kiln_fetch_sub"; break;
    case AtomicOp::Min: fn = "kiln_fetch_min"; break;
    case AtomicOp::Max: fn = "kiln_fetch_max"; break;
    case AtomicOp::Exchange: fn = "kiln_fetch_exchange"; break;
    case AtomicOp::CompareExchange: fn = "kiln_fetch_cas"; break;
  }
  // The operands before the address, as a store evaluates them.
  const std::string value = expr(a.value);
  const std::string expected = a.expected ? expr(a.expected) + ", " : std::string();
  const std::string at = "&" + element(a.array.get(), a.indices);
  const std::string old = bind(a.result.get());
  line(fmt::format("const {} {} = {}({}, {}{});", type_name(t), old, fn, at, expected, value));
}

}  // namespace kiln::codegen::cuda
