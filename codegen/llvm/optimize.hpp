// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The LLVM optimization pipeline kernels go through, and machine-code generation.
#pragma once

#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::codegen::cpu::detail {

/// Runs the new pass manager's default pipeline for `opt_level` (0..3), tuned for the host.
void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level);

/// Moves loop strength reduction from the code generator into optimize(), which runs it only on loops with
/// arithmetic on their index to reduce (see StrengthReduceIndexArithmetic in optimize.cpp). Called once, before
/// KILN_LLVM_OPTIONS is applied; does nothing if LLVM's -disable-lsr was already set.
void take_over_strength_reduction();

/// Makes `context` drop what the loop vectorizer reports about a loop kiln gave a vectorization width
/// (emit_support.cpp: loops converting f16 with F16C) and that it could not vectorize: LLVM prints those on
/// stderr whatever -pass-remarks says, and a kernel's report is kernel.diagnostics(). Everything else is
/// reported as before.
void drop_hinted_loop_reports(llvm::LLVMContext& context);

/// Compiles `m` to a relocatable ELF object in memory.
std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace kiln::codegen::cpu::detail
