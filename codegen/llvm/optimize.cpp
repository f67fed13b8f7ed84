#include "codegen/llvm/optimize.hpp"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassTimingInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>

#include <optional>

#include "codegen/llvm/host_target.hpp"

namespace kiln::codegen::cpu::detail {

namespace {

// Vector variants glibc 2.35 added to libmvec that LLVM 19's table lacks, at the SSE (b) and AVX2 (d) widths
// of LLVM's own libmvec entries. String literals: VecDesc keeps StringRefs.
#define KILN_LIBMVEC_1(f, ff)                                                                              \
  llvm::VecDesc(#f, "_ZGVbN2v_" #f, llvm::ElementCount::getFixed(2), false, "_ZGV_LLVM_N2v"),             \
      llvm::VecDesc(#f, "_ZGVdN4v_" #f, llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"),         \
      llvm::VecDesc(#ff, "_ZGVbN4v_" #ff, llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4v"),       \
      llvm::VecDesc(#ff, "_ZGVdN8v_" #ff, llvm::ElementCount::getFixed(8), false, "_ZGV_LLVM_N8v")
const llvm::VecDesc kLibmvec235[] = {
    KILN_LIBMVEC_1(erf, erff),   KILN_LIBMVEC_1(tanh, tanhf), KILN_LIBMVEC_1(asin, asinf),
    KILN_LIBMVEC_1(acos, acosf), KILN_LIBMVEC_1(atan, atanf), KILN_LIBMVEC_1(sinh, sinhf),
    KILN_LIBMVEC_1(cosh, coshf),
    llvm::VecDesc("atan2", "_ZGVbN2vv_atan2", llvm::ElementCount::getFixed(2), false, "_ZGV_LLVM_N2vv"),
    llvm::VecDesc("atan2", "_ZGVdN4vv_atan2", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4vv"),
    llvm::VecDesc("atan2f", "_ZGVbN4vv_atan2f", llvm::ElementCount::getFixed(4), false, "_ZGV_LLVM_N4vv"),
    llvm::VecDesc("atan2f", "_ZGVdN8vv_atan2f", llvm::ElementCount::getFixed(8), false, "_ZGV_LLVM_N8vv"),
};
#undef KILN_LIBMVEC_1

}  // namespace

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
  // KILN_LLVM_OPTIONS=-time-passes: the new pass manager times its passes only through instrumentation,
  // which then prints this kernel's table (to stderr, or -info-output-file) when it goes out of scope.
  llvm::PassInstrumentationCallbacks instrumentation;
  std::optional<llvm::StandardInstrumentations> timing;
  if (llvm::TimePassesIsEnabled) {
    timing.emplace(m.getContext(), /*DebugLogging=*/false);
    timing->registerCallbacks(instrumentation, &mam);
  }
  llvm::PassBuilder pb(&tm, tuning, std::nullopt, timing ? &instrumentation : nullptr);

  // Registered before the defaults so it wins: with libmvec known, the vectorizer turns exp, log, sin,
  // cos, pow, ... in vectorized loops into calls of glibc's SIMD variants instead of scalarizing them.
  const llvm::Triple triple(m.getTargetTriple());
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (libmvec_available()) tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  // glibc 2.35 added vector erf, tanh, inverse and hyperbolic trigonometry; without them a loop calling erf
  // (Black-Scholes' normal CDF) stayed scalar.
  if (libmvec_235_available()) tlii.addVectorizableFunctions(kLibmvec235);
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
