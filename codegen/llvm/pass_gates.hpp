// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// LLVM passes of the default pipeline that kiln runs only on IR where they can change something (issue #15,
// compile latency). Each gate tests, cheaply and conservatively, the precondition of every transformation
// its pass makes: where the precondition fails the pass could only have left the IR as it was (or put it
// in a canonical form that the passes after it establish anyway), so skipping it keeps the generated code
// and saves its analyses. KILN_LLVM_OPTIONS=-kiln-pass-gates=false runs every pass as LLVM would.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class PassInstrumentationCallbacks;
}  // namespace llvm

namespace kiln::codegen::cpu::detail {

/// Registers the gates with `callbacks` (as "should run" callbacks of the new pass manager); `fam` gives
/// them the analyses of a function (loops, scalar evolution).
void register_pass_gates(llvm::PassInstrumentationCallbacks& callbacks, llvm::FunctionAnalysisManager& fam);

}  // namespace kiln::codegen::cpu::detail
