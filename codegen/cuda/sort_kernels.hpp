// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA target's sort (ir::SortStmt): an LSD radix sort with 8-bit digits on ir/sort_keys.hpp's codes,
// segmented by rows, in the manner of Onesweep (Adinets & Merrill 2022):
// - Rows of at most a tile (4096 keys by default): a block per row sorts it in shared memory, every digit, and gathers
//   keys and payload through the carried tile positions (exact: no key is rebuilt from its code).
// - Longer rows: one read counts every digit's histogram per row; a small kernel scans them and marks the
//   passes whose digit is the same for every key of the row (skipped: no launch reads or writes their keys).
//   Then one kernel per digit: each 4096-key tile is ranked stably in shared memory (warp match multi-split,
//   the warps' counts scanned per digit), its digits' places in the row come from a decoupled look-back over
//   the earlier tiles' integer counts (exact and deterministic whatever the timing), and it is written in digit
//   order. Keys are decoded on the last write; the zeros and NaNs of float rows whose -0.0 or NaN payloads a
//   code cannot hold are put back in input order from a copy made by the counting read. A payload (argsort's
//   positions) moves as 32-bit row indices; the counting read checks that it is the indices (else the
//   positions are gathered through the sorted indices at the end).
// - Longer rows of one-byte integer keys alone: the counting read, then each row written from its histogram.
// The kernels are CUDA C compiled by NVRTC once per key type and architecture in a process and loaded once
// per device; the device machine (device_machine.hpp) launches them on the call's stream, without a wait.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dtype.hpp"

namespace kiln::codegen::cuda {

class CallState;

/// Keys per thread of the sort's 256-thread blocks unless CudaOptions::sort_items says otherwise: tiles of 4096.
inline constexpr int kSortItems = 16;

/// Keys per thread of the sort of keys of type `t`: `setting` (CudaOptions::sort_items) where it is not 0, else
/// the rule for the type, on a device whose blocks may have `shared_optin` bytes of shared memory (0: unknown).
int sort_items(DType t, int setting, int shared_optin = 0);
/// How the digit passes of a sort of keys of type `t` find a warp's equal digits (sort_source's `match`):
/// `setting` (CudaOptions::sort_match) where it is not negative, else the rule for the type.
int sort_match(DType t, int setting);
/// Whether rows of keys of type `t` longer than a tile are written from their digit counts instead of sorted by
/// digit passes: keys alone (`carry`: with a payload, argsort's positions, they are not) of one byte that every
/// key is the code of (integers and bool). Such a key is its code, so the stable sort of a row is its
/// histogram written out: one read and one write of the keys, where a pass and the copy back took two of each.
bool sort_fills(DType t, bool carry);
/// Both choices and their reasons, for diagnostics.
std::string sort_items_reason(DType t, int setting, int match_setting = -1);

/// The CUDA C of the sort kernels for keys of type `t`, `items` keys per thread (4 to 32, else a ValueError).
/// `match`: how a digit pass finds a warp's lanes of equal digits (CudaOptions::sort_match).
std::string sort_source(DType t, int items = kSortItems, int match = 0);

/// Bytes of dynamic shared memory of the kernels that hold a tile: the small sort, the digit pass, the digit
/// pass with a payload.
struct SortShared {
  int small = 0, pass = 0, pass_carry = 0;
};
SortShared sort_shared(DType t, int items);
/// Their __global__ functions, in the order the launcher uses.
std::vector<std::string> sort_entries();

/// Sorts the `rows` rows of `n` keys of type `t` at device address `keys` in place, in kiln's order, stably;
/// with `positions` (else 0) applies the same permutation to their rows. `items`: keys per thread (tiles of
/// 256 items keys). Scratch comes from the call's stream-ordered memory. `what` names the keys' array in
/// messages; `label` ("kiln's sort of x", outliving the call) names the sort's launches among those a failure lists.
void sort_on_device(CallState& call, DType t, std::uint64_t keys, std::uint64_t positions, std::int64_t rows,
                    std::int64_t n, int items, int match, const std::string& what, const std::string& label);

}  // namespace kiln::codegen::cuda
