// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program's __global__ functions compiled as several NVRTC programs at the same time (codegen/cuda/compile_parts.hpp),
// no GPU needed: the emitter's record of each function, the plan that deals them into parts, the same PTX for every
// function in parts as in one program, errors that still name the kernel, and disk-cache entries of several parts
// checked as one. On a GPU, cuda_suite_test's differential tests run the suite's programs compiled in parts.
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "bench/suite/kernels.hpp"
#include "codegen/backend.hpp"
#include "codegen/cuda/compile_parts.hpp"
#include "codegen/cuda/cuda_backend.hpp"
#include "codegen/cuda/emit_program.hpp"
#include "codegen/cuda/nvrtc.hpp"
#include "codegen/cuda/prelude.hpp"
#include "codegen/target_options.hpp"
#include "cuda_kernels.hpp"
#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "frontend/settings.hpp"
#include "ir/serialize.hpp"
#include "kiln/kiln.hpp"
#include "runtime/cache/entry.hpp"

namespace kiln {
namespace {

namespace cu = codegen::cuda;
namespace sk = suite::kiln_kernels;

void require_nvrtc() {
  std::string why;
  if (!cu::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
}

/// A suite kernel lowered for CUDA and offloaded, as kiln::jit compiles it.
struct Lowered {
  ir::Function f;
  cu::Program program;
};

template <class F>
Lowered lowered(const std::string& name, const F& fn, std::vector<std::string> params) {
  Lowered out;
  out.f = cudatest::offloaded(cudatest::rows::lower_for_cuda(name, fn, std::move(params)));
  out.program = cu::emit_program(out.f, kiln::detail::cuda_options().emit);
  return out;
}

const Lowered& covariance() {
  static const Lowered l = lowered("covariance", sk::covariance, {"data"});
  return l;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The PTX of entry `name` (".entry name(" to its closing brace), or "" if absent; its branch labels
/// ($L__BB<function>_<block>) without the function's index in its module, which depends on the module.
std::string entry_ptx(const std::string& ptx, const std::string& name) {
  const std::size_t at = ptx.find(".entry " + name + "(");
  if (at == std::string::npos) return {};
  const std::size_t end = ptx.find("\n}\n", at);
  return std::regex_replace(ptx.substr(at, end == std::string::npos ? std::string::npos : end + 3 - at), std::regex(R"(\$L__BB[0-9]+_)"),
                            "$$L__BB_");
}

std::string entry_ptx(const cu::Binary& b, const std::string& name) {
  std::string found = entry_ptx(b.ptx, name);
  for (const cu::Binary::Part& p : b.more)
    if (found.empty()) found = entry_ptx(p.ptx, name);
  return found;
}

TEST(CudaParts, EveryEntryIsAFunctionOfItsOwn) {
  const std::vector<Lowered> programs = {
      covariance(),
      lowered("row_stats", sk::row_stats, {"x"}),
      lowered("two_mm", sk::two_mm, {"D", "A", "B", "C", "alpha", "beta"}),
      lowered("jacobi_2d", sk::jacobi_2d, {"A", "B", "tsteps"}),
      lowered("stencil27", sk::stencil27, {"out", "in"}),
  };
  for (const Lowered& l : programs) {
    const cu::Program& p = l.program;
    ASSERT_EQ(p.functions.size(), p.entries().size()) << l.f.name;
    std::size_t last = 0;
    std::string outside;
    for (const auto& [begin, end] : p.functions) {
      ASSERT_LE(last, begin) << l.f.name << ": ranges overlap or go back";
      outside += p.kernels.substr(last, begin - last);
      const std::string text = p.kernels.substr(begin, end - begin);
      EXPECT_EQ(count(text, "extern \"C\" __global__"), 1u) << l.f.name << ":\n" << text;
      last = end;
    }
    outside += p.kernels.substr(last);
    // Outside the functions: the program's heading comment and blank lines only.
    EXPECT_EQ(count(outside, "extern \"C\" __global__"), 0u) << l.f.name;
    EXPECT_EQ(outside.find('{'), std::string::npos) << l.f.name << ": code outside every function:\n" << outside;
    for (const std::string& entry : p.entries()) {
      const std::size_t in = static_cast<std::size_t>(std::count_if(p.functions.begin(), p.functions.end(), [&](const auto& r) {
        return p.kernels.substr(r.first, r.second - r.first).find(" " + entry + "(") != std::string::npos;
      }));
      EXPECT_EQ(in, 1u) << l.f.name << ": entry " << entry;
    }
  }
}

TEST(CudaParts, EveryTestKernelSplitsIntoItsEntries) {
  // The whole catalogue of the GPU tests (every strategy and variant: alias, fold, tiles, stencil forms): a
  // launch's text that did not split one function per entry would still compile, as one coarser part.
  const std::vector<cudatest::KernelCase> catalogue = cudatest::kernel_catalogue();
  ASSERT_GT(catalogue.size(), 20u);
  for (const cudatest::KernelCase& c : catalogue) {
    const cu::Program p = cu::emit_program(cudatest::offloaded(c.f), kiln::detail::cuda_options().emit);
    EXPECT_EQ(p.functions.size(), p.entries().size()) << c.name;
  }
}

TEST(CudaParts, ThePlanDealsEveryFunctionOnce) {
  const cu::Program& p = covariance().program;
  ASSERT_GE(p.functions.size(), 4u);
  for (int threads = 1; threads <= 16; ++threads) {
    const cu::PartPlan plan = cu::plan_parts(p, threads);
    EXPECT_GE(plan.parts.size(), 1u);
    EXPECT_LE(plan.parts.size(), static_cast<std::size_t>(threads));
    std::multiset<std::size_t> seen;
    for (const auto& part : plan.parts) {
      EXPECT_FALSE(part.empty()) << threads << " threads: an empty part";
      EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
      seen.insert(part.begin(), part.end());
    }
    EXPECT_EQ(seen.size(), p.functions.size());
    EXPECT_EQ(std::set<std::size_t>(seen.begin(), seen.end()).size(), p.functions.size()) << "a function in two parts";
    EXPECT_LE(plan.longest, plan.whole);
    if (plan.parts.size() > 1) {
      EXPECT_LT(plan.longest, plan.whole);
    }
    // The same program and threads, the same parts.
    EXPECT_EQ(cu::plan_parts(p, threads).parts, plan.parts);
  }
  EXPECT_EQ(cu::plan_parts(p, 1).parts.size(), 1u);
  // Nine functions, one of them the contraction's tiles variant (13 KB of the 23): worth two parts at least.
  EXPECT_GE(cu::plan_parts(p, 8).parts.size(), 2u);
  // One function: nothing to split whatever the threads.
  const Lowered one = lowered("nbody", sk::nbody, {"ax", "ay", "az", "x", "y", "z", "m", "eps2"});
  ASSERT_EQ(one.program.functions.size(), 1u);
  EXPECT_EQ(cu::plan_parts(one.program, 16).parts.size(), 1u);
  EXPECT_EQ(cu::part_source(one.program, cu::plan_parts(one.program, 16), 0), one.program.source());
}

TEST(CudaParts, FunctionsCompiledInPartsAreTheSameCode) {
  require_nvrtc();
  const cu::Program& p = covariance().program;
  const cu::Binary one = cu::compile_program(p, "covariance", "sm_90", {}, false, 1);
  const cu::Binary parts = cu::compile_program(p, "covariance", "sm_90", {}, false, 4);
  // One part is the whole source, compiled as compile_source compiles it.
  EXPECT_TRUE(one.more.empty());
  EXPECT_EQ(one.ptx, cu::compile_source(p.source(), "covariance", "sm_90", {}).ptx);
  ASSERT_FALSE(parts.more.empty()) << parts.notes;
  EXPECT_EQ(parts.log, "");
  EXPECT_NE(parts.notes.find("programs compiled at the same time"), std::string::npos) << parts.notes;
  EXPECT_NE(parts.notes.find("KILN_COMPILE_THREADS=4"), std::string::npos) << parts.notes;
  EXPECT_GT(parts.cpu_longest_ms, 0);
  EXPECT_LE(parts.cpu_longest_ms, parts.cpu_ms);
  for (const cu::Binary::Part& part : parts.more) {
    EXPECT_NE(part.ptx.find(".target sm_90"), std::string::npos);
    EXPECT_EQ(part.cubin.substr(0, 4), std::string("\x7f" "ELF"));
  }
  for (const std::string& entry : p.entries()) {
    const std::string whole = entry_ptx(one, entry);
    ASSERT_FALSE(whole.empty()) << entry;
    std::size_t in = entry_ptx(parts.ptx, entry).empty() ? 0 : 1;
    for (const cu::Binary::Part& part : parts.more) in += entry_ptx(part.ptx, entry).empty() ? 0 : 1;
    EXPECT_EQ(in, 1u) << entry << " is in " << in << " parts";
    EXPECT_EQ(entry_ptx(parts, entry), whole) << entry;
  }
  // Compiled again: the same parts (a cache entry does not depend on the run that made it).
  const cu::Binary again = cu::compile_program(p, "covariance", "sm_90", {}, false, 4);
  ASSERT_EQ(again.more.size(), parts.more.size());
  EXPECT_EQ(again.ptx, parts.ptx);
  for (std::size_t i = 0; i < parts.more.size(); ++i) EXPECT_EQ(again.more[i].ptx, parts.more[i].ptx);
}

/// The machine code of each function in a CUBIN: its ".text.<name>" sections.
std::map<std::string, std::string> text_sections(const std::string& cubin) {
  std::map<std::string, std::string> out;
  if (cubin.size() < sizeof(Elf64_Ehdr)) return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, cubin.data(), sizeof eh);
  if (eh.e_shoff + static_cast<std::size_t>(eh.e_shnum) * sizeof(Elf64_Shdr) > cubin.size() || eh.e_shstrndx >= eh.e_shnum) return out;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), cubin.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const std::size_t names = sh[eh.e_shstrndx].sh_offset;
  for (const Elf64_Shdr& h : sh) {
    const std::string name = cubin.c_str() + names + h.sh_name;
    if (name.rfind(".text.", 0) == 0 && h.sh_type != SHT_NOBITS && h.sh_offset + h.sh_size <= cubin.size())
      out[name.substr(6)] = cubin.substr(h.sh_offset, h.sh_size);
  }
  return out;
}

TEST(CudaParts, PtxasGetsTheThreadsThePartsLeave) {
  // Each part's share of the threads, at most one a function, at least one.
  EXPECT_EQ(cu::ptxas_threads(9, 16, 1), 9);
  EXPECT_EQ(cu::ptxas_threads(9, 16, 2), 8);
  EXPECT_EQ(cu::ptxas_threads(5, 16, 3), 5);
  EXPECT_EQ(cu::ptxas_threads(1, 16, 1), 1);
  EXPECT_EQ(cu::ptxas_threads(9, 1, 1), 1);
  EXPECT_EQ(cu::ptxas_threads(9, 0, 1), 1);
  EXPECT_EQ(cu::ptxas_threads(9, 3, 4), 1);
  EXPECT_EQ(cu::ptxas_threads(0, 8, 1), 1);
}

TEST(CudaParts, PtxasOnThreadsMakesTheSameMachineCode) {
  require_nvrtc();
  const cu::Program& p = covariance().program;
  const cu::Binary one = cu::compile_source(p.source(), "covariance", "sm_90", {}, true, false, cu::program_flags(1, true, 0));
  const cu::Binary split = cu::compile_source(p.source(), "covariance", "sm_90", {}, true, false, cu::program_flags(4, true, 0));
  EXPECT_EQ(split.ptx, one.ptx);
  const auto a = text_sections(one.cubin), b = text_sections(split.cubin);
  ASSERT_GE(a.size(), p.entries().size());
  for (const std::string& entry : p.entries()) {
    ASSERT_TRUE(a.count(entry)) << entry;
    ASSERT_TRUE(b.count(entry)) << entry << " missing with ptxas on 4 threads";
    EXPECT_EQ(a.at(entry), b.at(entry)) << entry << ": other machine code with ptxas on 4 threads";
  }
  EXPECT_EQ(a.size(), b.size());
  // The diagnostics say how many threads ptxas had: one program (KILN_COMPILE_THREADS=1) gets one.
  const cu::Binary whole = cu::compile_program(p, "covariance", "sm_90", {}, false, 1);
  EXPECT_NE(whole.notes.find("in one program, ptxas on 1 thread(s)"), std::string::npos) << whole.notes;
  const cu::Binary parts = cu::compile_program(p, "covariance", "sm_90", {}, false, 8);
  EXPECT_NE(parts.notes.find("ptxas thread(s)"), std::string::npos) << parts.notes;
}

TEST(CudaParts, MinimalMakesTheSamePtxForEveryKernelKind) {
  require_nvrtc();
  // The whole catalogue of the GPU tests (every strategy and variant), one program of them all, with and without
  // --minimal: the declarations it leaves out are never used, so the PTX is the same.
  std::string source = cu::prelude();
  std::set<std::string> names;
  for (const cudatest::KernelCase& c : cudatest::kernel_catalogue()) {
    const cu::Program p = cu::emit_program(cudatest::offloaded(c.f), kiln::detail::cuda_options().emit);
    if (names.insert(p.function->name).second) source += p.kernels;
  }
  ASSERT_GT(names.size(), 20u);
  EXPECT_EQ(cu::program_flags(1, true, 0), std::vector<std::string>{"--minimal"});
  const cu::Binary minimal = cu::compile_source(source, "catalogue", "sm_90", {}, true, false, cu::program_flags(8, true, 0));
  const cu::Binary full = cu::compile_source(source, "catalogue", "sm_90", {}, true, false, cu::program_flags(8, false, 0));
  EXPECT_EQ(minimal.ptx, full.ptx);
  // What --minimal leaves out does not compile with it: a part that used it would be compiled again without.
  const std::string texture = "extern \"C\" __global__ void tex_k0(cudaTextureObject_t t, float* x) { x[0] = tex1Dfetch<float>(t, 0); }\n";
  EXPECT_THROW(cu::compile_source(texture, "tex", "sm_90", {}, true, false, cu::program_flags(1, true, 0)), CompileError);
  cu::Program p;
  ir::Function f;
  f.name = "tex";
  p.function = std::make_shared<const ir::Function>(f);
  p.prelude = cu::prelude();
  p.kernels = texture;
  p.functions = {{0, texture.size()}};
  const cu::Binary b = cu::compile_program(p, "tex", "sm_90", {}, false, 1);
  EXPECT_NE(b.ptx.find(".entry tex_k0("), std::string::npos);
  EXPECT_NE(b.notes.find("compiled again without --minimal"), std::string::npos) << b.notes;
}

TEST(CudaParts, FastCompileKeepsEveryEntryAndSaysSo) {
  require_nvrtc();
  // KILN_CUDA_FAST_COMPILE: NVRTC's -Ofast-compile levels; every __global__ function is still there (none is
  // left out as unused), and the notes name the level.
  const cu::Program& p = covariance().program;
  const cu::Binary full = cu::compile_program(p, "covariance", "sm_90", {}, false, 1);
  for (int level : {1, 2, 3}) {
    const cu::Binary b = cu::compile_program(p, "covariance", "sm_90", {}, false, 1, level);
    const char* name = level == 1 ? "min" : level == 2 ? "mid" : "max";
    EXPECT_NE(b.notes.find(std::string("-Ofast-compile=") + name), std::string::npos) << b.notes;
    for (const std::string& entry : p.entries()) EXPECT_NE(b.ptx.find(".entry " + entry + "("), std::string::npos) << name << ": " << entry;
    EXPECT_NE(text_sections(b.cubin), text_sections(full.cubin)) << name << ": the same machine code as without";
  }
}

TEST(CudaParts, AFailingPartNamesTheKernel) {
  require_nvrtc();
  cu::Program p;
  ir::Function f;
  f.name = "broken_parts";
  p.function = std::make_shared<const ir::Function>(f);
  p.prelude = cu::prelude();
  // Long comments make each function worth a part of its own (plan_parts counts bytes).
  const std::string pad = "// " + std::string(2 * cu::kPartFixedBytes, '.') + "\n";
  const std::string good = pad + "extern \"C\" __global__ void broken_parts_k0(float* x) {\n  x[threadIdx.x] = 1.0f;\n}\n";
  const std::string bad = pad + "extern \"C\" __global__ void broken_parts_k1(float* x) {\n  x[threadIdx.x] = undeclared_name;\n}\n";
  p.kernels = good + bad;
  p.functions = {{0, good.size()}, {good.size(), good.size() + bad.size()}};
  ASSERT_EQ(cu::plan_parts(p, 2).parts.size(), 2u);
  for (int threads : {1, 2}) {
    try {
      cu::compile_program(p, "broken_parts", "sm_90", {}, false, threads);
      FAIL() << threads << " thread(s): compiled";
    } catch (const CompileError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("kernel 'broken_parts'"), std::string::npos) << what;
      EXPECT_NE(what.find("undeclared_name"), std::string::npos) << what;
    }
  }
}

TEST(CudaParts, AFunctionThatNeedsAnotherCompilesInOneProgram) {
  require_nvrtc();
  // Emitters write only __global__ functions today; were one to use a helper written with another launch's
  // function, its part would not compile alone: the program then compiles whole, and says so.
  cu::Program p;
  ir::Function f;
  f.name = "shared_helper";
  p.function = std::make_shared<const ir::Function>(f);
  p.prelude = cu::prelude();
  const std::string pad = "// " + std::string(2 * cu::kPartFixedBytes, '.') + "\n";
  const std::string first = pad + "__device__ float helper(float v) { return v + 1.0f; }\n"
                                  "extern \"C\" __global__ void shared_helper_k0(float* x) {\n  x[threadIdx.x] = helper(1.0f);\n}\n";
  const std::string second = pad + "extern \"C\" __global__ void shared_helper_k1(float* x) {\n  x[threadIdx.x] = helper(2.0f);\n}\n";
  p.kernels = first + second;
  p.functions = {{0, first.size()}, {first.size(), first.size() + second.size()}};
  ASSERT_EQ(cu::plan_parts(p, 2).parts.size(), 2u);
  const cu::Binary b = cu::compile_program(p, "shared_helper", "sm_90", {}, false, 2);
  EXPECT_TRUE(b.more.empty());
  EXPECT_NE(b.notes.find("a part did not compile alone"), std::string::npos) << b.notes;
  EXPECT_NE(b.ptx.find(".entry shared_helper_k1("), std::string::npos);
}

TEST(CudaParts, ACacheEntryOfPartsIsCheckedAsOne) {
  require_nvrtc();
  const Lowered& l = covariance();
  const cu::CudaOptions cuda = kiln::detail::cuda_options();
  const cu::Binary parts = cu::compile_program(l.program, "covariance", cu::target_arch(cuda), {}, false, 4);
  ASSERT_FALSE(parts.more.empty());
  auto expect_cache_error = [&](cu::Binary b, const std::string& why) {
    try {
      cu::load_binary(l.f, std::move(b), {}, cuda);
      FAIL() << "accepted a binary with " << why;
    } catch (const CacheError& e) {
      SUCCEED() << e.what();
    } catch (const Error& e) {
      FAIL() << why << ": " << e.what();
    }
  };
  cu::Binary lost = parts;
  lost.more.pop_back();
  expect_cache_error(lost, "a part missing (its functions are in no PTX)");
  cu::Binary not_elf = parts;
  not_elf.more.back().cubin[0] = 'X';
  expect_cache_error(not_elf, "a part whose CUBIN is no ELF image");
  cu::Binary other_arch = parts;
  const std::size_t at = other_arch.more.back().ptx.find(".target sm_90");
  ASSERT_NE(at, std::string::npos);
  other_arch.more.back().ptx.replace(at, 13, ".target sm_80");
  expect_cache_error(other_arch, "a part for another architecture");
  // The payloads a compilation stores: "ptx.1", "cubin.1", ... beside "ptx" and "cubin".
  codegen::TargetOptions t;
  t.cuda = cuda;
  const codegen::Backend& backend = codegen::backend_for(Target::cuda);
  cache::Entry e;
  e.payloads = {{"host", ir::serialize(l.f)}, {"arch", parts.arch}, {"ptx", parts.ptx}, {"cubin", parts.cubin}};
  for (std::size_t p = 0; p < parts.more.size(); ++p) {
    e.payloads.push_back({"ptx." + std::to_string(p + 1), parts.more[p].ptx});
    e.payloads.push_back({"cubin." + std::to_string(p + 1), parts.more[p].cubin});
  }
  cache::Entry half = e;
  half.payloads.pop_back();  // the last part's CUBIN
  try {
    backend.load(half, "covariance", t);
    FAIL() << "loaded an entry with a part's PTX and no CUBIN";
  } catch (const CacheError& err) {
    EXPECT_NE(std::string(err.what()).find("cubin." + std::to_string(parts.more.size())), std::string::npos) << err.what();
  }
  // A whole entry passes every check: it loads where there is a device; without one the call fails as a
  // compilation would.
  if (!kiln::cuda::available()) {
    EXPECT_THROW(backend.load(e, "covariance", t), DeviceError);
    EXPECT_THROW(cu::load_binary(l.f, parts, {}, cuda), DeviceError);
  } else {
    const codegen::CompiledKernel k = backend.load(e, "covariance", t);
    EXPECT_TRUE(static_cast<bool>(k.call));
    EXPECT_NE(k.describe().find("loaded from the disk cache"), std::string::npos) << k.describe();
  }
}

}  // namespace
}  // namespace kiln
