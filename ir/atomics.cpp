// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/atomics.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

#include "ir/builder.hpp"
#include "ir/visitor.hpp"

namespace kiln::ir {
namespace {

constexpr std::array<std::pair<AtomicOp, std::string_view>, 6> kNames{{
    {AtomicOp::Add, "atomic_add"},
    {AtomicOp::Sub, "atomic_sub"},
    {AtomicOp::Min, "atomic_min"},
    {AtomicOp::Max, "atomic_max"},
    {AtomicOp::Exchange, "atomic_exchange"},
    {AtomicOp::CompareExchange, "atomic_compare_exchange"},
}};

[[noreturn]] void fail(const std::string& what) { throw IRError(fmt::format("malformed IR: {}", what)); }

}  // namespace

std::string_view name_of(AtomicOp op) {
  for (const auto& [o, n] : kNames)
    if (o == op) return n;
  return "atomic_?";
}

std::optional<AtomicOp> parse_atomic(std::string_view s) {
  for (const auto& [o, n] : kNames)
    if (n == s) return o;
  return std::nullopt;
}

bool atomic_allowed(AtomicOp, DType t) {
  switch (t) {
    case DType::I32: case DType::I64: case DType::F32: case DType::F64: return true;
    case DType::Bool: case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::I8:
    case DType::I16: case DType::F16: case DType::BF16:
      return false;
  }
  return false;
}

std::string atomic_types_text(AtomicOp op) {
  return fmt::format("kiln::{} takes elements of type int32, int64, float or double; a bool array has no atomics "
                     "(its one-byte elements have none on the GPU; unsigned, 8- and 16-bit and f16/bf16 arrays have "
                     "none either: keep such counters in int32 or int64): use an int32 flag array, kiln::atomic_max(flag(i), 1) "
                     "to set a flag and kiln::atomic_exchange to claim one",
                     name_of(op));
}

bool order_dependent(AtomicOp op, DType t) {
  switch (op) {
    case AtomicOp::Add: case AtomicOp::Sub: return is_float(t);
    case AtomicOp::Min: case AtomicOp::Max: return false;
    case AtomicOp::Exchange: case AtomicOp::CompareExchange: return true;
  }
  return true;
}

bool has_atomic(const Stmt& s, const VarNode* array) {
  struct Finder : IRVisitor {
    const VarNode* array;
    bool found = false;
    void visit(const AtomicStmt& a) override { found |= !array || a.array.get() == array; }
  } f;
  f.array = array;
  f.walk(s);
  return f.found;
}

Stmt make_atomic(Var result, AtomicOp op, Var array, std::vector<Expr> indices, Expr value, Expr expected) {
  if (!array || !array->type.is_array()) fail("an atomic on a non-array");
  const DType t = array->type.elem;
  if (!atomic_allowed(op, t)) fail(fmt::format("{} on {} of type {}", name_of(op), array->name, name_of(t)));
  if (indices.size() != array->type.rank)
    fail(fmt::format("{} has rank {} but an atomic indexes it with {} indices", array->name, array->type.rank,
                     indices.size()));
  for (const auto& i : indices)
    if (!i || i->type != DType::I64) fail("an atomic's array index must be i64");
  if (!result || !result->type.is_scalar() || result->type.elem != t || result->kind != VarKind::Local)
    fail(fmt::format("the result of {} on {} must be a local scalar of type {}", name_of(op), array->name, name_of(t)));
  if (!value || value->type != t) fail(fmt::format("the value of {} on {} must have type {}", name_of(op), array->name, name_of(t)));
  if ((op == AtomicOp::CompareExchange) != (expected != nullptr))
    fail(fmt::format("{} takes an expected value exactly when it is atomic_compare_exchange", name_of(op)));
  if (expected && expected->type != t)
    fail(fmt::format("the expected value of {} on {} must have type {}", name_of(op), array->name, name_of(t)));
  return std::make_shared<AtomicStmt>(std::move(result), op, std::move(array), std::move(indices), std::move(value),
                                      std::move(expected));
}

}  // namespace kiln::ir
