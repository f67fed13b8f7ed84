// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The interpreter's scan statement (ir::ScanStmt): the order of ir/semantics.hpp (kScanBlock) written down as a
// sequential loop nest on host memory, independent of ir/scan.cpp's parfors, which the tests compare it with
// (and the CUDA target's single-pass kernels with it).
#pragma once

#include <cstdint>
#include <functional>

#include "ir/interpreter.hpp"
#include "kiln/abi.hpp"
#include "kiln/dtype.hpp"

namespace kiln::ir {

/// The value a scan starts an exclusive scan's element 0 from: +0 for Add (not -0), 1, +inf or the largest
/// integer for Min, -inf or the lowest for Max.
template <class T>
T scan_identity(ReduceOp op);

/// Scans every row along the last axis of `source` (compact, `rank` extents, elements of type `from`) into
/// `out` (compact, the same shape, elements of type `to`) with `op` in type `t`, in the defined order.
void scan_rows(DType from, DType t, DType to, ReduceOp op, bool exclusive, const ArrayDesc& source,
               const ArrayDesc& out, int rank);

/// The closure that runs `scan` on host memory, its arrays found through `scope`.
std::function<void(Frame&)> host_scan(const ScanStmt& scan, HostScope& scope);

}  // namespace kiln::ir
