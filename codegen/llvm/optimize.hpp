// The LLVM optimization pipeline kernels go through, and machine-code generation.
#pragma once

#include <string>

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace kiln::codegen::cpu::detail {

/// Runs the new pass manager's default pipeline for `opt_level` (0..3), tuned for the host.
void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level);

/// Compiles `m` to a relocatable ELF object in memory.
std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm);

}  // namespace kiln::codegen::cpu::detail
