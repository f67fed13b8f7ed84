// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs one random program through every stage and compares each with the reference: the interpreter on the
// IR as generated, the interpreter after the pass pipeline (and after each pass, to name the one at fault), and
// the CPU JIT with one thread, with several, and with several and array reductions updated by atomics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tools/kiln_fuzz/program.hpp"

namespace kiln::fuzz {

struct Failure {
  std::string stage;    ///< "generator", "reference", "pipeline", "pass <name>", "compile", "jit ..."
  std::string message;  ///< what differed, or the exception's text
  std::string ir;       ///< the IR as generated
  std::string ir_at_fault;  ///< the IR the failing stage ran (after the passes up to the culprit), if different
};

/// The first failure of `p` (generated from `seed`, which also gives its arguments), or nothing. The interpreter
/// runs after the whole pipeline, and after every single pass only when that differs from the reference, or
/// always with `every_pass` (a pass whose mistake a later pass undoes shows up only then).
std::optional<Failure> check(const Program& p, std::uint64_t seed, bool every_pass = false);

/// Bounds-checked mode on arguments `p` indexes out of range (one array argument one element short along axis
/// 0): the CPU code of the pipeline in that mode must fail with kIndexOutOfRange exactly when the interpreter on
/// the IR as generated raises IndexError (values are not compared: arrays may be read where nothing was
/// written). Programs the interpreter fails in another way are skipped. Array operations must be off in the generator: their index spaces are checked
/// against the operands' shapes by the frontend, which generated programs do not go through.
std::optional<Failure> check_out_of_bounds(const Program& p, std::uint64_t seed);

}  // namespace kiln::fuzz
