// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target's sort (ir::SortStmt): an LSD radix sort, 8-bit digits on ir/sort_keys.hpp's codes, segmented
// by rows. Per pass: a histogram kernel (a block per tile of a row, digit counts in shared memory, written
// digit-major and tile-minor per row), a scan kernel (a block per row: the counts become each tile's first
// slot per digit, which is what keeps equal digits in input order across tiles) and a scatter kernel (each
// tile in rounds of one element per thread: a thread's rank among the equal digits of its warp from ballots,
// the warps' counts scanned per digit in shared memory, so equal digits keep their order inside a tile too).
// The kernels are CUDA C compiled by NVRTC once per key type and architecture in a process and loaded once
// per device; the device machine (device_machine.hpp) launches them on the call's stream.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dtype.hpp"

namespace kiln::codegen::cuda {

class CallState;

/// The CUDA C of the sort kernels for keys of type `t`.
std::string sort_source(DType t);
/// Their __global__ functions, in the order the launcher uses.
std::vector<std::string> sort_entries();

/// Sorts the `rows` rows of `n` keys of type `t` at device address `keys` in place, in kiln's order, stably;
/// with `positions` (else 0) applies the same permutation to their rows. Scratch comes from
/// the call's stream-ordered memory. `what` names the keys' array in messages; `label` ("kiln's sort of x",
/// outliving the call) names the sort's launches among those a failure lists.
void sort_on_device(CallState& call, DType t, std::uint64_t keys, std::uint64_t positions, std::int64_t rows,
                    std::int64_t n, const std::string& what, const std::string& label);

}  // namespace kiln::codegen::cuda
