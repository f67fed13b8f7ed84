// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/pass_gates.hpp"

#include <llvm/ADT/Any.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Support/CommandLine.h>

namespace kiln::codegen::cpu::detail {
namespace {

llvm::cl::opt<bool> g_gates("kiln-pass-gates", llvm::cl::init(true), llvm::cl::Hidden,
                            llvm::cl::desc("kiln: skip LLVM passes where their precondition fails "
                                           "(codegen/llvm/pass_gates.hpp)"));

/// LoopLoadElimination replaces a load in an innermost loop by the value a store of an earlier iteration
/// put there (LoopAccessAnalysis: a dependence at a distance of one iteration), which needs the load's and
/// the store's addresses to differ by a constant that is not zero. kiln's loops read inputs and write
/// outputs, or update an element in place (out[i, j] = out[i, j] + ..., distance 0); a recurrence such as
/// x[i] = x[i - 1] + ... is what opens the gate. Elsewhere the pass only computes the loops' memory
/// dependences (13 of 418 million instructions of correlation's compile, 3 %) and puts the loops in the
/// simplified form that the loop passes after it establish again; over kiln-suite --smoke and the examples
/// it forwarded nothing, and their machine code is the same without it.
bool may_forward_stores(const llvm::Function& cf, llvm::FunctionAnalysisManager& fam) {
  auto& f = const_cast<llvm::Function&>(cf);  // analyses take a mutable function; the gate changes nothing
  const llvm::LoopInfo& loops = fam.getResult<llvm::LoopAnalysis>(f);
  llvm::ScalarEvolution* se = nullptr;
  for (const llvm::Loop* l : loops.getLoopsInPreorder()) {
    if (!l->isInnermost()) continue;
    llvm::SmallVector<const llvm::Value*, 16> loaded, stored;
    for (const llvm::BasicBlock* b : l->blocks())
      for (const llvm::Instruction& i : *b) {
        if (const auto* load = llvm::dyn_cast<llvm::LoadInst>(&i)) loaded.push_back(load->getPointerOperand());
        else if (const auto* store = llvm::dyn_cast<llvm::StoreInst>(&i)) stored.push_back(store->getPointerOperand());
      }
    if (loaded.empty() || stored.empty()) continue;
    if (!se) se = &fam.getResult<llvm::ScalarEvolutionAnalysis>(f);
    auto scev = [&](const llvm::Value* p) { return se->getSCEV(const_cast<llvm::Value*>(p)); };
    for (const llvm::Value* s : stored) {
      const llvm::SCEV* to = scev(s);
      const llvm::SCEV* base = se->getPointerBase(to);
      for (const llvm::Value* l : loaded) {
        const llvm::SCEV* from = scev(l);
        if (se->getPointerBase(from) != base) continue;  // no constant distance
        const auto* distance = llvm::dyn_cast<llvm::SCEVConstant>(se->getMinusSCEV(from, to));
        if (!distance || !distance->getValue()->isZero()) return true;  // unknown or a constant other than 0
      }
    }
  }
  return false;
}

/// CalledValuePropagation annotates indirect call sites with the functions they may call (!callees).
/// kiln's kernels call only named functions (the runtime, libm); a parfor body's address is an argument of
/// the runtime's entry, not a call site of the module.
bool has_indirect_calls(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    for (const llvm::BasicBlock& b : f)
      for (const llvm::Instruction& i : b)
        if (const auto* call = llvm::dyn_cast<llvm::CallBase>(&i); call && call->isIndirectCall()) return true;
  return false;
}

}  // namespace

void register_pass_gates(llvm::PassInstrumentationCallbacks& callbacks, llvm::FunctionAnalysisManager& fam) {
  if (!g_gates) return;
  callbacks.registerShouldRunOptionalPassCallback([&fam](llvm::StringRef pass, llvm::Any ir) {
    if (pass == "LoopLoadEliminationPass") {
      if (const auto* f = llvm::any_cast<const llvm::Function*>(&ir)) return may_forward_stores(**f, fam);
    } else if (pass == "CalledValuePropagationPass") {
      if (const auto* m = llvm::any_cast<const llvm::Module*>(&ir)) return has_indirect_calls(**m);
    }
    return true;
  });
}

}  // namespace kiln::codegen::cpu::detail
