// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "codegen/llvm/optimize.hpp"

#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LLVMContext.h>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassTimingInfo.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/StandardInstrumentations.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopStrengthReduce.h>
#include <llvm/Transforms/Utils/CanonicalizeFreezeInLoops.h>
#include <llvm/Transforms/Utils/LoopUtils.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "codegen/llvm/host_target.hpp"
#include "codegen/llvm/index_offsets.hpp"
#include "codegen/llvm/pass_gates.hpp"

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

/// Marks "llvm.loop.unroll.runtime.disable", before the vectorizer, the loops whose unrolling by a trip
/// count known only at run time (which LLVM's unroller does where the host's loop buffer invites it, znver4)
/// costs code generation and buys no run time:
///  - a loop that contains another loop: the unroller copies the whole nest, each inner loop already
///    vectorized with its vector and scalar remainders, plus a remainder copy of the nest, to save one
///    branch per trip of the outer loop (heat3d: a 3-d copy's j loop around its vector k loop; a matrix
///    product's rows around its vector loop over a block);
///  - a loop that updates memory atomically: each update is a locked instruction (a compare-exchange loop
///    for floating point) that waits for the one before, so copies of the body cannot overlap (the atomic
///    variant of a parfor with an array reduction: four or eight copies of a compare-exchange loop).
/// Other innermost loops keep LLVM's choice. On the 2-core znver4 VM (kiln-suite --smoke and the examples,
/// median of 5 interleaved runs) cold codegen went from 116 to 92 ms on 2mm, 115 to 95 correlation, 109 to 95
/// heat3d, 109 to 94 row_stats, 78 to 62 covariance, 61 to 47 doitgen, 59 to 48 gemm, 78 to 70 life; kiln-suite
/// and kiln-bench rows ran within their A/A bands.
struct NoUselessRuntimeUnrolling : llvm::PassInfoMixin<NoUselessRuntimeUnrolling> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& fam) {
    bool changed = false;
    for (llvm::Loop* l : fam.getResult<llvm::LoopAnalysis>(f).getLoopsInPreorder())
      if ((!l->isInnermost() || updates_atomically(*l)) &&
          !llvm::findStringMetadataForLoop(l, "llvm.loop.unroll.runtime.disable")) {
        llvm::addStringMetadataToLoop(l, "llvm.loop.unroll.runtime.disable");
        changed = true;
      }
    if (!changed) return llvm::PreservedAnalyses::all();
    llvm::PreservedAnalyses kept;  // only loop metadata changed
    kept.preserveSet<llvm::CFGAnalyses>();
    return kept;
  }

  static bool updates_atomically(const llvm::Loop& l) {
    for (const llvm::BasicBlock* b : l.blocks())
      for (const llvm::Instruction& i : *b)
        if (llvm::isa<llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst>(i)) return true;
    return false;
  }
};

/// Loop strength reduction where there is arithmetic to reduce. LLVM's code generator runs LSR on every
/// loop, and on kiln's kernels it was the most expensive pass of all: a sixth of cold codegen over kiln-suite
/// --smoke and the examples (268 of 1611 ms CPU on the 2-core znver4 VM, more than instruction selection's
/// 208), 0.3 to 1 ms per loop even for a one-block loop, mostly spent building scalar-evolution expressions
/// for the loop's addresses. What it buys on x86 is taking arithmetic on the loop's index out of the loop:
/// a product by a stride known only at run time (`j * stride`, a column walk) becomes a pointer advanced by
/// the stride; a run-time offset added to the index (the vector body of `k_lo .. k_hi`, which counts from
/// 0) is folded into the base; of several integer induction variables (a loop unrolled by a trip count
/// known at run time counts its copies apart from its index) one is kept. An address that is a
/// loop-invariant base plus the index times the element size is already one addressing mode
/// ([base + index*8]), which is what the rest of a chunk's loops use once LICM has hoisted each row's base
/// (loops from 0, the scalar remainders after a vector loop). So LSR runs only on loops with such
/// arithmetic, at the end of the optimization pipeline (where the code generator would run it: only IR
/// verification, loop simplification and freeze canonicalization come before it there), and the code
/// generator's run is switched off (take_over_strength_reduction). Over kiln-suite --smoke and the examples,
/// codegen CPU went from 1534 to 1229 ms (correlation 114 -> 92 ms, conv5x5_into 93 -> 65, heat3d 86 -> 56,
/// stencil27 54 -> 25); of the suite's 367 innermost loops in machine code, 327 kept their instruction count
/// and 40 got one more instruction per iteration: vector epilogues and scalar remainders, argument checks,
/// and nbody's 47- and 91-instruction lane loops (bound by vector divides and square roots); of the
/// examples' main vector loops, conv5x5's 70 -> 71 and pi's 34 -> 35. KILN_LLVM_OPTIONS=-disable-lsr=false
/// restores LLVM's choice (any mention of -disable-lsr turns this pass off).
struct StrengthReduceIndexArithmetic : llvm::PassInfoMixin<StrengthReduceIndexArithmetic> {
  llvm::PreservedAnalyses run(llvm::Loop& l, llvm::LoopAnalysisManager& am, llvm::LoopStandardAnalysisResults& ar,
                              llvm::LPMUpdater& u) {
    // A run-time offset of the index goes into the base pointers first (index_offsets.hpp): where that was
    // all the loop's index arithmetic, LSR is not needed.
    const bool folded = fold_invariant_index_offsets(l);
    if (is_remainder(l) || runs_little(l) || !has_index_arithmetic(l))
      return folded ? llvm::getLoopPassPreservedAnalyses() : llvm::PreservedAnalyses::all();
    // As the code generator does before LSR: freeze instructions moved off induction variables.
    llvm::PreservedAnalyses kept = llvm::CanonicalizeFreezeInLoopsPass().run(l, am, ar, u);
    if (folded) kept.intersect(llvm::getLoopPassPreservedAnalyses());
    kept.intersect(llvm::LoopStrengthReducePass().run(l, am, ar, u));
    return kept;
  }

  /// A loop the vectorizer left to finish what its vector loop did not (the vector epilogue, the scalar
  /// remainder): marked vectorized, and no integer induction starts at 0 (the main vector loop's canonical
  /// index does; a remainder's resumes where the vector loop stopped). It runs fewer iterations than one
  /// pass of the vector loop covers, so an instruction saved per iteration is worth nothing, while LSR's
  /// time on it is the main loop's (1.2-1.4 ms each for the products' vector epilogues in correlation).
  static bool is_remainder(const llvm::Loop& l) {
    if (!llvm::getBooleanLoopAttribute(&l, "llvm.loop.isvectorized")) return false;
    const llvm::BasicBlock* pre = l.getLoopPreheader();
    if (!pre) return false;
    for (const llvm::PHINode& phi : l.getHeader()->phis())
      if (const auto* start = llvm::dyn_cast<llvm::ConstantInt>(phi.getIncomingValueForBlock(pre)); start && start->isZero())
        return false;
    return true;
  }

  /// A loop the emitter kept from vectorizing (llvm.loop.vectorize.enable false, which only it sets: Emitter::loop's
  /// no_vectorize): a loop whose trip count is bounded below 16 (trip_bound.hpp), or a sequential loop in the
  /// iterations after a parfor's whole groups of lanes (the masked rest, the scalar loop after a reduction's
  /// groups). Either runs a small share of the kernel's iterations, so the instruction LSR saves per iteration is
  /// worth less than its time: instructions per cold compile (callgrind) 2mm 211.0 -> 202.5 M, gemm 133.1 -> 128.5,
  /// covariance 270.7 -> 267.0, correlation 368.9 -> 365.2 (their products' masked rest groups).
  static bool runs_little(const llvm::Loop& l) {
    return llvm::getOptionalBoolLoopAttribute(&l, "llvm.loop.vectorize.enable") == std::optional<bool>(false);
  }

  /// In the loop's own blocks (not in inner loops): a scalar integer multiplication or left shift of a value
  /// that changes from one iteration to the next. In a loop of at most kShortBody instructions also a sum or
  /// difference of such a value and a loop-invariant value that is not a constant (a constant is an
  /// addressing mode's displacement, or an increment), or more than one integer phi in the header: each
  /// costs one instruction per iteration, which matters in a short body, while LSR's time grows with the
  /// number of addresses it rewrites (conv5x5's 25-point vector body alone took 14 ms of it).
  static bool has_index_arithmetic(const llvm::Loop& l) {
    constexpr std::size_t kShortBody = 64;
    std::vector<const llvm::BasicBlock*> own;
    std::size_t size = 0;
    for (const llvm::BasicBlock* b : l.blocks())
      if (std::none_of(l.begin(), l.end(), [&](const llvm::Loop* inner) { return inner->contains(b); })) {
        own.push_back(b);
        size += b->size();
      }
    const bool short_body = size <= kShortBody;
    int integer_phis = 0;
    for (const llvm::PHINode& phi : l.getHeader()->phis())
      if (phi.getType()->isIntegerTy() && ++integer_phis > 1 && short_body) return true;
    auto variable = [&](const llvm::Value* v) { return !l.isLoopInvariant(v); };
    auto runtime_invariant = [&](const llvm::Value* v) { return l.isLoopInvariant(v) && !llvm::isa<llvm::Constant>(v); };
    for (const llvm::BasicBlock* b : own) {
      for (const llvm::Instruction& i : *b) {
        if (!i.getType()->isIntegerTy()) continue;
        switch (i.getOpcode()) {
          case llvm::Instruction::Mul:
          case llvm::Instruction::Shl:
            if (variable(i.getOperand(0)) || variable(i.getOperand(1))) return true;
            break;
          case llvm::Instruction::Add:
          case llvm::Instruction::Sub:
            if (short_body && ((variable(i.getOperand(0)) && runtime_invariant(i.getOperand(1))) ||
                               (variable(i.getOperand(1)) && runtime_invariant(i.getOperand(0)))))
              return true;
            break;
          default:
            break;
        }
      }
    }
    return false;
  }
};

/// Set when take_over_strength_reduction switched the code generator's LSR off, so optimize() runs it.
bool g_strength_reduction_here = false;

/// True if LLVM's command line (KILN_LLVM_OPTIONS) asks for something the new pass manager only does through
/// its instrumentation: -time-passes (each kernel's table), or printing the IR around passes (-print-changed,
/// which shows what each pass changed and so which passes do nothing on a kernel; -print-after-all, ...).
bool wants_instrumentation() {
  if (llvm::TimePassesIsEnabled) return true;
  static const bool printing = [] {
    auto& options = llvm::cl::getRegisteredOptions();
    for (const char* name : {"print-changed", "print-after-all", "print-before-all", "print-after", "print-before"})
      if (auto it = options.find(name); it != options.end() && it->second->getNumOccurrences() > 0) return true;
    return false;
  }();
  return printing;
}

}  // namespace

void take_over_strength_reduction() {
  auto& options = llvm::cl::getRegisteredOptions();
  auto it = options.find("disable-lsr");
  if (it == options.end() || it->second->getNumOccurrences() > 0) return;
  static_cast<llvm::cl::opt<bool>*>(it->second)->setValue(true);
  g_strength_reduction_here = true;
}

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
  // which then prints this kernel's table (to stderr, or -info-output-file) when it goes out of scope; the
  // same instrumentation prints the IR where -print-changed or -print-after-all ask for it.
  llvm::PassInstrumentationCallbacks instrumentation;
  std::optional<llvm::StandardInstrumentations> timing;
  if (wants_instrumentation()) {
    timing.emplace(m.getContext(), /*DebugLogging=*/false);
    timing->registerCallbacks(instrumentation, &mam);
  }
  register_pass_gates(instrumentation, fam);
  llvm::PassBuilder pb(&tm, tuning, std::nullopt, &instrumentation);

  // Registered before the defaults so it wins: with libmvec known, the vectorizer turns exp, log, sin,
  // cos, pow, ... in vectorized loops into calls of glibc's SIMD variants instead of scalarizing them.
  const llvm::Triple triple(m.getTargetTriple());
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (load_libmvec()) tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  // glibc 2.35 added vector erf, tanh, inverse and hyperbolic trigonometry; without them a loop calling erf
  // (Black-Scholes' normal CDF) stayed scalar.
  if (libmvec_235_loaded()) tlii.addVectorizableFunctions(kLibmvec235);
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });

  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.registerVectorizerStartEPCallback(
      [](llvm::FunctionPassManager& fpm, llvm::OptimizationLevel) { fpm.addPass(NoUselessRuntimeUnrolling()); });

  // Only if LLVM's command line (KILN_LLVM_OPTIONS) has not named -disable-lsr since.
  const bool strength_reduce = g_strength_reduction_here && opt_level >= 1 && [] {
    auto& options = llvm::cl::getRegisteredOptions();
    auto it = options.find("disable-lsr");
    return it != options.end() && it->second->getNumOccurrences() == 0;
  }();
  if (strength_reduce)
    pb.registerOptimizerLastEPCallback([](llvm::ModulePassManager& mpm, llvm::OptimizationLevel) {
      mpm.addPass(llvm::createModuleToFunctionPassAdaptor(llvm::createFunctionToLoopPassAdaptor(StrengthReduceIndexArithmetic())));
    });

  llvm::OptimizationLevel level = llvm::OptimizationLevel::O3;
  if (opt_level == 1) level = llvm::OptimizationLevel::O1;
  else if (opt_level == 2) level = llvm::OptimizationLevel::O2;
  llvm::ModulePassManager mpm =
      opt_level <= 0 ? pb.buildO0DefaultPipeline(llvm::OptimizationLevel::O0) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

void drop_hinted_loop_reports(llvm::LLVMContext& context) {
  struct Handler : llvm::DiagnosticHandler {
    bool handleDiagnostics(const llvm::DiagnosticInfo& d) override {
      // The "loop not vectorized" analyses of a loop with a width hint (always printed) and the warning that
      // the hinted transformation did not happen; false leaves everything else to LLVM's printing.
      if (d.getKind() == llvm::DK_OptimizationFailure) return true;
      if (const auto* r = llvm::dyn_cast<llvm::DiagnosticInfoOptimizationBase>(&d))
        return r->getPassName() == llvm::OptimizationRemarkAnalysis::AlwaysPrint;
      return false;
    }
  };
  context.setDiagnosticHandler(std::make_unique<Handler>());
}

}  // namespace kiln::codegen::cpu::detail
