// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A prefix scan as plain statements (parfors, sequential loops) in the order ir/semantics.hpp defines
// (kScanBlock): what kiln::cumsum and its kin trace (frontend/scans.cpp) and what kiln-fuzz generates. The
// order of every operation is fixed by the statements themselves, so every target that runs them as written
// (the interpreter, the CPU's threads, the GPU's) gives the same bits:
//
//   1. totals:  parfor over the space with the axis cut into its blocks but the last
//                 { carry[b] = v[lo] op v[lo+1] op ... op v[lo+B-1] }                  (in order)
//   2a. groups: parfor over the other axes and the carries cut into groups of B
//                 { acc = carry[lo]; for k: acc = acc op carry[lo+k]; carry[lo+k] = acc; group[g] = acc }
//   2b. chain:  parfor over the other axes (only past one group)
//                 { acc = group[0]; for g in 1..: acc = acc op group[g]; group[g] = acc }
//   3. scan:    parfor over the space with the axis cut into blocks
//                 { acc = v[lo]; out[lo] = C(acc); for k: acc = acc op v[k]; out[k] = C(acc) }
//               with C(acc) = acc in block 0 and c op acc in block b > 0 (a select, not a branch), where
//               c = carry[b-1], after the first group of carries group[(b-1)/B - 1] op carry[b-1].
// So the carries are the block totals scanned by the same rule one level up, the groups' carries a chain: a
// 1-d scan's longest chain of dependent operations is B + B + n / B^2, not n / B.
// Each pass's loop sits at the top level of its parfor's body and each step reads and writes only its own
// elements: the form the CUDA backend stages through shared memory (codegen/cuda/emit_staged.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/stmt.hpp"

namespace kiln::ir {

struct ScanSpec {
  ReduceOp op = ReduceOp::Add;  ///< Add, Mul, Min or Max
  DType type = DType::F64;      ///< the type values are combined in
  DType result = DType::F64;    ///< out's element type (each stored value is converted to it)
  bool exclusive = false;       ///< element i combines 0..i-1 (element 0: the identity, +0 for Add)
  std::vector<Expr> shape;      ///< the scanned space, out's shape
  size_t axis = 0;              ///< the axis scanned along
  /// The element (of `type`) at an index of the space; called once per use, each call a fresh expression.
  std::function<Expr(const std::vector<Expr>&)> value;
  Var out;                      ///< allocated by the caller, of `shape`
  std::string name;             ///< names the scan's variables (name_carry, name_acc, ...)
  std::string origin;           ///< the parfors' origin, followed by ": block totals" and so on
  /// The target runs neighbouring parfor iterations in lock step (a GPU's warps): the rows form (a whole line
  /// per iteration) is then taken only along an axis other than the last, where neighbouring rows' elements
  /// are adjacent; along the last axis (and in 1-d) the three passes run, whose block walks such a target
  /// stages through shared memory (codegen/cuda/emit_staged.cpp). Either form gives the defined bits.
  bool lockstep_rows = false;
};

/// Whether a ScanStmt scans `source` elements in `type` into `out` elements: `type` an integer type, f32 or f64;
/// `source` that type, or bool or an integer type that converts to it exactly (a narrower one of no wider
/// range: int32 counts into int64); `out` that type, or bool for an int32 scan of bools (min and max).
bool scan_stmt_types(DType source, DType type, DType out);

/// The statements that fill `s.out` (after its allocation): the carry array's allocation and the three passes,
/// or only pass 3 when the axis is a constant of at most one block. Variables are fresh.
std::vector<Stmt> scan_statements(const ScanSpec& s);

}  // namespace kiln::ir
