// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Call-time handling of array arguments that share memory (see ir/argument_access.hpp for the kernel side).
//
// At each call the byte ranges of the array arguments are compared. Where a written argument overlaps
// another argument in a way the kernel could observe, kiln either copies the read-only argument first (the
// answer is then the one distinct arrays give, as NumPy does) or, when both are written, throws
// kiln::AliasError naming the kernel and both arguments. Overlaps the kernel cannot observe — reads that end
// before the writes begin, or `y[i] = f(y[i], x[i])` with x and y the same view — cost nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/argument_access.hpp"
#include "kiln/kernel.hpp"

namespace kiln::detail {

/// Memory kiln allocated for the duration of one call (the copies of overlapping inputs).
struct OverlapCopies {
  std::vector<std::unique_ptr<void, void (*)(void*)>> buffers;
  std::string note;  ///< what was copied and why, for the kernel's diagnostics; empty when nothing was
};

/// Checks the array arguments of one call against the kernel's access summary. Replaces `args[i].array` by a
/// copy where needed (keeping the copies alive in `copies`); throws AliasError where no copy can help.
/// `arg_names[i]` names argument i in messages. Returns the arguments that still share memory with another
/// array argument, one of the two written by the kernel (bit i: argument i): overlaps the kernel cannot
/// observe, which a backend may still have to respect (the CUDA target's `__restrict__`-free kernels).
std::uint32_t separate_overlapping_arguments(const std::string& kernel, const ir::ArgumentAccess& access, ArgValue* args,
                                             std::size_t nargs, const std::vector<std::string>& arg_names,
                                             OverlapCopies& copies);

}  // namespace kiln::detail
