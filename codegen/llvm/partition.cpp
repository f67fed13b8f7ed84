// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/partition.hpp"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>

namespace kiln::codegen::cpu::detail {
namespace {

constexpr std::size_t kLoopWeight = 4;

/// The expected cost of optimizing and compiling `f`, in instructions: one per instruction, kLoopWeight per
/// instruction in a loop, which the vectorizer copies into a vector body and its vector and scalar
/// remainders before code generation sees it (a kernel's entry, mostly argument checks and the calls that
/// run its parfors, is large before optimization and cheap to compile; its parfor bodies the reverse).
/// An unoptimized function (an entry that only launches parfors, entry_level.hpp) counts one per instruction:
/// no vectorizer copies its loops.
std::size_t instruction_count(const llvm::Function& f) {
  if (f.hasOptNone()) return f.getInstructionCount();
  llvm::DominatorTree dt(const_cast<llvm::Function&>(f));
  llvm::LoopInfo loops(dt);
  std::size_t n = 0;
  for (const llvm::BasicBlock& b : f) n += b.size() * (loops.getLoopFor(&b) ? kLoopWeight : 1);
  return n;
}

std::vector<const llvm::Function*> definitions(const llvm::Module& m) {
  std::vector<const llvm::Function*> out;
  for (const llvm::Function& f : m)
    if (!f.isDeclaration()) out.push_back(&f);
  return out;
}

/// Largest first, each to the lightest part; kiln_entry (a function like any other by size) stays in part 0
/// so that the kernel's first object is the one exporting it.
std::vector<std::vector<const llvm::Function*>> deal(const llvm::Module& m, int parts) {
  std::vector<const llvm::Function*> fns = definitions(m);
  std::stable_sort(fns.begin(), fns.end(),
                   [](const llvm::Function* a, const llvm::Function* b) { return instruction_count(*a) > instruction_count(*b); });
  std::vector<std::vector<const llvm::Function*>> out(static_cast<std::size_t>(parts));
  std::vector<std::size_t> load(static_cast<std::size_t>(parts), 0);
  const llvm::Function* entry = m.getFunction("kiln_entry");
  if (entry && !entry->isDeclaration()) {
    out[0].push_back(entry);
    load[0] = instruction_count(*entry);
  }
  for (const llvm::Function* f : fns) {
    if (f == entry) continue;
    const std::size_t p = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[p].push_back(f);
    load[p] += instruction_count(*f);
  }
  return out;
}

}  // namespace

int partition_count(const llvm::Module& m, int threads) {
  if (threads < 2) return 1;
  for (const llvm::GlobalVariable& g : m.globals())
    if (!g.isConstant()) return 1;  // a written global must stay one object's
  std::vector<std::size_t> sizes;
  std::size_t total = 0;
  for (const llvm::Function* f : definitions(m)) {
    sizes.push_back(instruction_count(*f));
    total += sizes.back();
  }
  if (sizes.size() < 2 || total < kMinSplitInstructions) return 1;
  // As many parts as threads and functions allow while each part still gets kMinPartInstructions.
  const int by_size = static_cast<int>(std::max<std::size_t>(1, total / kMinPartInstructions));
  return std::max(1, std::min({threads, static_cast<int>(sizes.size()), by_size}));
}

std::vector<std::string> partition_module(llvm::Module& m, int parts) {
  for (llvm::Function& f : m) {
    if (f.isIntrinsic()) continue;
    if (!f.isDeclaration()) f.setLinkage(llvm::GlobalValue::ExternalLinkage);
    f.setVisibility(llvm::GlobalValue::DefaultVisibility);
    f.setDSOLocal(false);
  }
  const std::vector<std::vector<const llvm::Function*>> groups = deal(m, parts);
  std::vector<std::string> out;
  for (const auto& group : groups) {
    llvm::ValueToValueMapTy map;
    std::unique_ptr<llvm::Module> part = llvm::CloneModule(m, map, [&](const llvm::GlobalValue* g) {
      if (const auto* f = llvm::dyn_cast<llvm::Function>(g)) return std::find(group.begin(), group.end(), f) != group.end();
      return true;  // constants: a copy in every part (the optimizer drops the unused ones)
    });
    std::string bitcode;
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(*part, os);
    os.flush();
    out.push_back(std::move(bitcode));
  }
  return out;
}

}  // namespace kiln::codegen::cpu::detail
