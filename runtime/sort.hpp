// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU's sort (ir::SortStmt), called by compiled kernels: a parallel, stable LSD radix sort on the
// order-preserving codes of ir/sort_keys.hpp.
//
// Why runtime code rather than emitted IR: the sort is the same few loops for every kernel (only the key type
// differs, a template parameter here), bound by memory traffic rather than by anything a kernel's JIT could
// specialize; compiled once with libkiln it costs no compile time per kernel, and its thread team, barriers and
// scratch memory are plain OpenMP and C++ instead of IR kiln has no statements for.
#pragma once

#include <cstdint>

#include "kiln/abi.hpp"

extern "C" {

/// Sorts each of the `rows` rows of `n` elements of `keys` (row-major, compact; DType `dtype`) in place in
/// kiln's order, stably; with `positions` (same layout, i64, else null) applies the same permutation to their
/// rows. Returns 0, or on failure (memory for the scratch buffers) fills `status`
/// naming the array `name` and returns the status code. Never throws.
std::int32_t kiln_rt_sort(kiln::KernelStatus* status, std::int32_t dtype, void* keys, std::int64_t* positions,
                          std::int64_t rows, std::int64_t n, const char* name) noexcept;
}
