// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A binary form of ir::Function, for the on-disk kernel cache: a CUDA entry keeps the lowered host function,
// so that a hit skips the passes. The encoding is deterministic (a function gives the same bytes in every
// process: nothing depends on addresses or hash-map order) and decoding treats its input as hostile.
//
// Format (version kSerialFormatVersion). Integers are little-endian and fixed width.
//   u32 version
//   u32 n, then n variables: str name, str where, u8 VarKind, u8 DType elem, u8 rank, u8 unit_stride, u8 unit_dims
//   str name, vars params, stmt body, opt<expr> result, opt<var> result_array,
//   u32 n, then n tuple members: opt<expr> scalar, opt<var> array,
//   u32 n, then n strs: locations
// where str = u32 length + bytes; var = u32 index into the variable table; vars, exprs, stmts, i64s = u32 count +
// items; opt<x> = u8 0 (absent) or 1 + x; bool = u8 0 or 1.
//   expr = u8 ExprKind, then
//     Const: u8 DType + value (bool: u8; i32: u32; i64 and the other integers: the u64 bits of the wrapped
//            value held; floats: the u64 bits of the double held)
//     VarRef: var | Load: var array, exprs indices | Dim: var array, i32 axis | Unary: u8 UnaryOp, expr
//     Binary: u8 BinaryOp, expr, expr | Select: expr cond, expr, expr | Cast: u8 DType, expr | Call: u8 Intrinsic, exprs
//   stmt = u8 StmtKind, then
//     Block: stmts | Let, Assign: var, expr | Store: var, exprs indices, expr value
//     For: var index, expr begin, expr end, stmt body
//     Parfor: vars indices, exprs begins, exprs ends, stmt body,
//             u32 n + n x (var, u8 ReduceOp, opt<var> index) reductions, u32 n + n x (var, u8 ReduceOp) array
//             reductions, str origin
//     If: expr cond, stmt then, opt<stmt> else | Allocate: var, exprs shape
//     Check: expr cond, i32 code, str message, exprs args
//     Map: var target, bool allocate, vars indices, exprs shape, exprs target_index (only when !allocate), expr value,
//          str origin
//     Reduce: var result, u8 ReduceOp, vars indices, exprs shape, expr value, str origin
//     ReduceAxis: var target, u8 ReduceOp, i32 axis, bool keepdims, vars indices, exprs shape, expr value, str origin
//     Bind: var target, var source, bool declare
//     Stencil: var target, bool allocate, vars indices, exprs shape, exprs target_index (only when !allocate),
//              expr value, vars windows, i64s lo, i64s hi, u8 Border, opt<expr> cval, str origin
//     Launch: i32 kernel, stmt body
//     Atomic: var result, u8 AtomicOp, var array, exprs indices, expr value, opt<expr> expected
//     Sort: var keys, opt<var> positions, str origin
// Variables are numbered in the order the encoding first refers to them (a reference names a known variable or
// the next one). Expressions are written as trees: a subexpression shared by two parents is written twice, so the
// decoded tree is never larger than its input. An allocating Map or Stencil omits its target index, which is its
// own index space. With these rules every accepted input is exactly what serialize writes for the function it
// decodes to.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/stmt.hpp"

namespace kiln::ir {

/// Written first and checked first. Change it with any change to the encoding (a node kind or field added to
/// ir/expr.hpp or ir/stmt.hpp included), so that stored entries in the old form are refused, never misread.
inline constexpr std::uint32_t kSerialFormatVersion = 5;  // 4: the integer and 16-bit float types; 5: ScanStmt

/// The deepest nesting (a statement or expression inside another is one level deeper) either direction accepts:
/// decoding recurses once per level, as do the verifier, the printer and the passes on what it returns, so a
/// hostile input must not choose the depth. Traced kernels stay far below it.
inline constexpr int kMaxSerialDepth = 4096;

/// The bytes of `f`, a well-formed function. Throws IRError if it nests deeper than kMaxSerialDepth (deserialize
/// would refuse it) or holds a null node where one is required.
std::string serialize(const Function& f);

/// The function `bytes` encodes. Throws IRError, saying what is wrong and at which byte offset, for input that is
/// not exactly what serialize writes: another version, truncation, trailing bytes, an unknown enum value, a
/// variable index out of range or out of order, nesting deeper than kMaxSerialDepth, or a node the ir/builder.hpp
/// constructors refuse; and, after decoding, for a function the verifier rejects (ir/verifier.hpp).
Function deserialize(std::string_view bytes);

}  // namespace kiln::ir
