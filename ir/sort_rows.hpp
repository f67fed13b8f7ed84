// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The interpreter's sort (ir::SortStmt): std::stable_sort of each row with kiln's comparator
// (ir/sort_keys.hpp), the definition the radix sorts of the CPU runtime and the CUDA target are tested against.
#pragma once

#include <cstdint>
#include <functional>

#include "ir/interpreter.hpp"
#include "kiln/abi.hpp"
#include "kiln/dtype.hpp"

namespace kiln::ir {

/// Sorts every row along the last axis of `keys` (elements of type `t`, row-major and compact, `rank`
/// extents) in place; with `positions` (same shape, i64, else null) applies the same permutation to them.
void stable_sort_rows(DType t, const ArrayDesc& keys, const ArrayDesc* positions, int rank);

/// The closure that runs `sort` on host memory, its arrays found through `scope`.
std::function<void(Frame&)> host_sort(const SortStmt& sort, HostScope& scope);

}  // namespace kiln::ir
