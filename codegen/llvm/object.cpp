// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Machine-code generation for the host into an in-memory ELF object.
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassTimingInfo.h>
#include <llvm/Pass.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/llvm/optimize.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cpu::detail {

std::string emit_object(llvm::Module& m, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  // The code generator still runs on the legacy pass manager.
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, out, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw CompileError("kiln CPU backend: the target cannot emit object files", "");
  pm.run(m);
  // KILN_LLVM_OPTIONS=-time-passes: this kernel's code-generation passes, printed now rather than summed
  // over the process at exit, next to the table optimize() printed.
  if (llvm::TimePassesIsEnabled) llvm::reportAndResetTimings();
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace kiln::codegen::cpu::detail
