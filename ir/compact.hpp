// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which arrays are compact row-major memory whatever a call passes: what a SortStmt's arrays must be (the
// backends sort rows at `data + row * n`), checked by make_sort and by forward_destinations before it sorts a
// destination in place.
#pragma once

#include "ir/type.hpp"

namespace kiln::ir {

/// An array the kernel allocates (kind Local: row-major, compact), or a 1-d parameter whose stride is 1 (the
/// unit innermost stride is part of the kernel's signature, so every call passes one).
inline bool always_compact(const VarNode& v) {
  return v.type.is_array() &&
         (v.kind == VarKind::Local || (v.kind == VarKind::Param && v.type.rank == 1 && v.type.unit_stride));
}

}  // namespace kiln::ir
