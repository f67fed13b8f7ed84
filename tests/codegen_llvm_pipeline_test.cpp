// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The LLVM pipeline kernels go through (codegen/llvm/host_target.cpp, optimize.cpp): choices made for compile
// latency (issue #15) that must not come back unnoticed.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "codegen/llvm/cpu_backend.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

/// out[i, j] = flag ? 2 a[i, j] : a[i, j] + 1: a condition invariant in the whole loop nest.
ir::Function branchy() {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 2, true), flag = param("flag", DType::Bool);
  Var i = index("i"), j = index("j");
  Stmt body = ir::make_if(val(flag), store(out, {val(i), val(j)}, at(a, {val(i), val(j)}) * num(t, 2)),
                          store(out, {val(i), val(j)}, at(a, {val(i), val(j)}) + num(t, 1)));
  return function("branchy", {a, out, flag}, {parfor({i, j}, {dim(a, 0), dim(a, 1)}, body)});
}

// LLVM's O3 non-trivial unswitching would copy the loop nest for each value of `flag` (two vector loops, about
// 60 % more IR to generate code for); kiln turns it off, and the vectorizer turns the branch into a select.
TEST(Pipeline, AnInvariantConditionDoesNotCopyTheLoopNest) {
  const ir::Function f = branchy();
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  const std::ptrdiff_t loops = count_matches(k.llvm_ir, std::regex("(^|\n)vector\\.body[0-9]*:"));
  EXPECT_EQ(loops, 1) << k.llvm_ir;
  for (bool flag : {false, true})
    for (std::int64_t n : {1, 7, 100})
      check_kernel(k, f, {array_arg(random_array(DType::F64, {3, n})), array_arg(random_array(DType::F64, {3, n})),
                          scalar_arg(flag)});
}

// A loop around another loop is not unrolled by a trip count known only at run time (optimize.cpp,
// NoUselessRuntimeUnrolling): on hosts whose loop buffer invites runtime unrolling (znver4) LLVM copied the
// j loop of a 3-d parfor, and with it the vectorized k loop and its remainders, to save one branch per row.
TEST(Pipeline, LoopNestsAreNotUnrolledAtRunTime) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 3, true), out = array_param("out", t, 3, true);
  Var i = index("i"), j = index("j"), k = index("k");
  const std::vector<Expr> ijk = {val(i), val(j), val(k)};
  const ir::Function f = function("copy3", {a, out},
                                  {parfor({i, j, k}, {dim(a, 0), dim(a, 1), dim(a, 2)}, store(out, ijk, at(a, ijk) + num(t, 1)))});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel kernel = cpu::compile(f, {}, keep_ir);
  // One vector loop: not a copy per unrolled row ("vector.body.1") nor one in the rows' remainder (".epil");
  // its preheader block is no copy.
  EXPECT_EQ(count_matches(kernel.llvm_ir, std::regex("(^|\n)vector\\.body(?!\\.preheader:)[0-9.a-z]*:")), 1) << kernel.llvm_ir;
  EXPECT_NE(kernel.llvm_ir.find("llvm.loop.unroll.runtime.disable"), std::string::npos) << kernel.llvm_ir;
  for (std::int64_t n : {1, 5, 33})
    check_kernel(kernel, f, {array_arg(random_array(t, {2, 3, n})), array_arg(random_array(t, {2, 3, n}))});
}

// Nor is a loop of atomic updates: they wait for one another, so copies of the body cannot overlap. The
// atomic variant of a parfor with an array reduction keeps one update per iteration.
TEST(Pipeline, AtomicUpdatesAreNotUnrolledAtRunTime) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), key = array_param("key", DType::I64, 1, true), hist = array_param("hist", t, 1, true);
  Var i = index("i");
  const std::vector<Expr> slot = {at(key, {val(i)})};
  const Stmt body = store(hist, slot, at(hist, slot) + at(x, {val(i)}));
  const ir::Function f =
      function("scatter", {x, key, hist}, {ir::make_parfor({i}, {i64c(0)}, {dim(x)}, body, {}, {{hist, ReduceOp::Add}}, "test")});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel kernel = cpu::compile(f, {}, keep_ir);
  EXPECT_EQ(count_matches(kernel.llvm_ir, std::regex("atomicrmw fadd")), 1) << kernel.llvm_ir;
  // Small integers: every order of the sums gives the interpreter's result exactly.
  TestArray values(t, {1000}), keys(DType::I64, {1000}), bins(t, {13});
  for (std::int64_t n = 0; n < 1000; ++n) {
    values.set_number(n, static_cast<double>(n % 5));
    keys.set_number(n, static_cast<double>((n * 7) % 13));
  }
  for (std::int64_t b = 0; b < 13; ++b) bins.set_number(b, static_cast<double>(b));
  check_kernel(kernel, f, {array_arg(values), array_arg(keys), array_arg(bins)});
}

// Loop strength reduction runs where a loop does arithmetic on its index that LSR takes out of the loop
// (optimize.cpp, StrengthReduceIndexArithmetic) and nowhere else; it used to run in the code generator on
// every loop, where the optimized IR did not show it. A column sum walks a's rows with a stride known only at run time: the
// product j * stride becomes a pointer advanced by the stride (LSR's "lsr.iv" values).
TEST(Pipeline, StrengthReductionWhereALoopMultipliesByItsIndex) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 1, true);
  Var i = index("i"), j = index("j");
  const Stmt body = for_loop(j, i64c(0), dim(a, 0), store(out, {val(i)}, at(out, {val(i)}) + at(a, {val(j), val(i)})));
  const ir::Function f = function("column_sums", {a, out}, {parfor({i}, {dim(a, 1)}, body)});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  EXPECT_NE(k.llvm_ir.find("lsr.iv"), std::string::npos) << k.llvm_ir;
  for (std::int64_t rows : {0, 1, 9, 200})
    check_kernel(k, f, {array_arg(random_array(t, {rows, 5})), array_arg(random_array(t, {5}))});
}

// Loops whose addresses are a row's base plus their index (one x86 addressing mode; here the vector body
// and its vector and scalar remainders, all starting at 0 or where the one before stopped) have nothing to
// reduce and are left as they are.
TEST(Pipeline, NoStrengthReductionWhereAddressesAreBasePlusIndex) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 2, true);
  Var i = index("i"), j = index("j");
  const std::vector<Expr> ij = {val(i), val(j)};
  const ir::Function f = function("scale2", {a, out}, {parfor({i, j}, {dim(a, 0), dim(a, 1)}, store(out, ij, at(a, ij) * num(t, 3)))});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  EXPECT_EQ(k.llvm_ir.find("lsr.iv"), std::string::npos) << k.llvm_ir;
  for (std::int64_t n : {1, 7, 100})
    check_kernel(k, f, {array_arg(random_array(t, {3, n})), array_arg(random_array(t, {3, n}))});
}

/// The block of `ir` labelled `label` (up to the blank line that ends it), or "" if there is none.
std::string llvm_block(const std::string& ir, const std::string& label) {
  const std::size_t at = ir.find("\n" + label + ":");
  if (at == std::string::npos) return "";
  return ir.substr(at + 1, ir.find("\n\n", at + 1) - at);
}

// A run-time offset added to the index (a row segment lo .. hi; the main vector loop counts from 0) goes into
// the base pointers before the loop (index_offsets.hpp): no `lo + index` per iteration, and no loop strength
// reduction, which kiln ran for that add before (its "lsr.iv" values), neither there nor in the vector
// epilogue and the scalar remainder (optimize.cpp, StrengthReduceIndexArithmetic::is_remainder).
TEST(Pipeline, ARunTimeOffsetOfTheIndexGoesIntoTheBasePointers) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 2, true), lo = param("lo", DType::I64);
  Var i = index("i"), k = index("k");
  const std::vector<Expr> ik = {val(i), val(k)};
  const Stmt body = for_loop(k, val(lo), dim(a, 1), store(out, ik, at(a, ik) * num(t, 2)));
  const ir::Function f = function("segment", {a, out, lo}, {parfor({i}, {dim(a, 0)}, body)});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel kernel = cpu::compile(f, {}, keep_ir);
  const std::string main_loop = llvm_block(kernel.llvm_ir, "vector.body");
  const std::string epilogue = llvm_block(kernel.llvm_ir, "vec.epilog.vector.body");
  ASSERT_FALSE(main_loop.empty()) << kernel.llvm_ir;
  // A vector epilogue only where the main loop is wide enough for one (epilogue-vectorization-minimum-VF:
  // AVX-512 hosts, not AVX2 ones).
  EXPECT_EQ(main_loop.find("offset.idx"), std::string::npos) << main_loop;
  EXPECT_NE(main_loop.find(".base"), std::string::npos) << main_loop;
  EXPECT_EQ(main_loop.find("lsr.iv"), std::string::npos) << main_loop;
  EXPECT_EQ(epilogue.find("lsr.iv"), std::string::npos) << epilogue;
  EXPECT_EQ(llvm_block(kernel.llvm_ir, "k.body").find("lsr.iv"), std::string::npos) << kernel.llvm_ir;
  for (std::int64_t from : {0, 3})
    for (std::int64_t n : {4, 13, 101})
      check_kernel(kernel, f, {array_arg(random_array(t, {3, n})), array_arg(random_array(t, {3, n})), scalar_arg(from)});
}

// Loop load elimination runs only where an innermost loop loads at a nonzero distance from a store to the same
// base (codegen/llvm/pass_gates.hpp): a recurrence, whose load of x[i - 1] it replaces by the value stored one
// iteration before. The gate must let this loop through.
TEST(Pipeline, ARecurrenceStillHasItsLoadForwarded) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), a = param("a", t);
  Var i = index("i");
  const ir::Function f =
      function("recurrence", {x, y, a},
               {for_loop(i, i64c(1), dim(x), store(x, {val(i)}, at(x, {val(i) - i64c(1)}) * val(a) + at(y, {val(i)})))});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  EXPECT_NE(k.llvm_ir.find("store_forwarded"), std::string::npos) << k.llvm_ir;
  for (std::int64_t n : {1, 2, 9, 100})
    check_kernel(k, f, {array_arg(random_array(t, {n})), array_arg(random_array(t, {n})), scalar_arg(0.5)});
}

/// The attributes of the LLVM function `name` in `module` (its `define` line's attribute group).
std::string function_attributes(const std::string& module, const std::string& name) {
  std::smatch m;
  const std::regex define("define [^\\n]*@" + name + "\\([^\\n]*#([0-9]+) \\{");
  if (!std::regex_search(module, m, define)) return {};
  const std::regex group("attributes #" + m[1].str() + " = \\{([^\\n]*)\\}");
  std::smatch g;
  return std::regex_search(module, g, group) ? g[1].str() : std::string();
}

// An entry whose loops all launch parfors runs a bounded amount of code per call and per launch: it is
// compiled unoptimized (codegen/llvm/entry_level.hpp), which the kernel's notes say. An entry with a loop of
// its own work (no parfor inside) is optimized like a parfor body: its loop is vectorized.
TEST(Pipeline, AnEntryThatOnlyLaunchesParforsIsNotOptimized) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), steps = param("steps", DType::I64);
  Var i = index("i"), s = index("s"), j = index("j");
  const ir::Function launches =
      function("launches", {x, y, steps},
               {for_loop(s, i64c(0), val(steps), parfor1(i, dim(x), store(y, {val(i)}, at(y, {val(i)}) * num(t, 0.5) + at(x, {val(i)}))))});
  const ir::Function own = function("own_loop", {x, y}, {for_loop(j, i64c(0), dim(x), store(y, {val(j)}, at(x, {val(j)}) * num(t, 2)))});
  cpu::CpuOptions keep;
  keep.keep_llvm_ir = true;
  keep.compile_threads = 1;

  const cpu::ObjectCode a = cpu::compile_to_object(launches, {}, keep);
  EXPECT_NE(a.notes.find("kiln_entry compiled unoptimized"), std::string::npos) << a.notes;
  EXPECT_NE(function_attributes(a.llvm_ir, "kiln_entry").find("optnone"), std::string::npos) << a.llvm_ir;
  EXPECT_EQ(function_attributes(a.llvm_ir, "launches.parfor0").find("optnone"), std::string::npos) << a.llvm_ir;
  const codegen::CompiledKernel ka = cpu::load_object(a.object, launches.name);
  for (std::int64_t n : {0, 1, 7, 1000})
    for (std::int64_t k : {0, 1, 3})
      check_kernel(ka, launches, {array_arg(random_array(t, {n})), array_arg(random_array(t, {n})), scalar_arg(k)});

  const cpu::ObjectCode b = cpu::compile_to_object(own, {}, keep);
  EXPECT_NE(b.notes.find("kiln_entry optimized: the loop over j runs no parfor"), std::string::npos) << b.notes;
  EXPECT_EQ(function_attributes(b.llvm_ir, "kiln_entry").find("optnone"), std::string::npos) << b.llvm_ir;
  EXPECT_NE(llvm_function(b.llvm_ir, "@kiln_entry").find("vector.body"), std::string::npos) << b.llvm_ir;
  const codegen::CompiledKernel kb = cpu::load_object(b.object, own.name);
  for (std::int64_t n : {0, 1, 7, 1000}) check_kernel(kb, own, {array_arg(random_array(t, {n})), array_arg(random_array(t, {n}))});
}

}  // namespace
}  // namespace kiln
