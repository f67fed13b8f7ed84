// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/index_offsets.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

#include <vector>

namespace kiln::codegen::cpu::detail {

bool fold_invariant_index_offsets(llvm::Loop& l) {
  llvm::BasicBlock* pre = l.getLoopPreheader();
  if (!pre) return false;
  auto own = [&](const llvm::BasicBlock* b) {
    return std::none_of(l.begin(), l.end(), [&](const llvm::Loop* inner) { return inner->contains(b); });
  };
  std::vector<llvm::BinaryOperator*> adds;
  for (llvm::BasicBlock* b : l.blocks())
    if (own(b))
      for (llvm::Instruction& i : *b)
        if (auto* add = llvm::dyn_cast<llvm::BinaryOperator>(&i); add && add->getOpcode() == llvm::Instruction::Add &&
                                                                  add->getType()->isIntegerTy(64))
          adds.push_back(add);
  bool changed = false;
  for (llvm::BinaryOperator* add : adds) {
    // x + y with y invariant and not a constant, x changing.
    llvm::Value *x = add->getOperand(0), *y = add->getOperand(1);
    if (!l.isLoopInvariant(y)) std::swap(x, y);
    if (!l.isLoopInvariant(y) || l.isLoopInvariant(x) || llvm::isa<llvm::Constant>(y)) continue;
    std::vector<llvm::GetElementPtrInst*> geps;
    for (llvm::User* u : add->users())
      if (auto* g = llvm::dyn_cast<llvm::GetElementPtrInst>(u);
          g && g->getNumIndices() == 1 && g->getOperand(1) == add && l.contains(g) && l.isLoopInvariant(g->getPointerOperand()))
        geps.push_back(g);
    // Only where the add goes away: with other users (`x + y + 2`, a tap of a stencil's row) it stays in the
    // loop, LSR still runs for it, and every hoisted base would be one more register live through the loop
    // (conv5x5's 25-tap vector body then reloaded 5 more values per iteration).
    if (geps.empty() || geps.size() != add->getNumUses()) continue;
    for (llvm::GetElementPtrInst* g : geps) {
      auto* base = llvm::GetElementPtrInst::Create(g->getSourceElementType(), g->getPointerOperand(), {y},
                                                   g->getName() + ".base", pre->getTerminator());
      g->setOperand(0, base);
      g->setOperand(1, x);
      g->setIsInBounds(false);
      changed = true;
    }
    add->eraseFromParent();
  }
  return changed;
}

}  // namespace kiln::codegen::cpu::detail
