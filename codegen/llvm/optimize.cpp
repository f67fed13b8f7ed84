#include "codegen/llvm/optimize.hpp"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include "codegen/llvm/host_target.hpp"

namespace kiln::codegen::cpu::detail {

void optimize(llvm::Module& m, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;

  // As clang does at each level: vectorization and unrolling from O2.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  tuning.LoopInterleaving = opt_level >= 2;
  tuning.LoopUnrolling = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);

  // Registered before the defaults so it wins: with libmvec known, the vectorizer turns exp, log, sin,
  // cos, pow, ... in vectorized loops into calls of glibc's SIMD variants instead of scalarizing them.
  const llvm::Triple triple(m.getTargetTriple());
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (libmvec_available()) tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });

  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  if (opt_level == 1) level = llvm::OptimizationLevel::O1;
  else if (opt_level == 2) level = llvm::OptimizationLevel::O2;
  llvm::ModulePassManager mpm =
      opt_level <= 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

}  // namespace kiln::codegen::cpu::detail
