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
  const std::regex vector_loop("(^|\n)vector\\.body[0-9]*:");
  const std::ptrdiff_t loops =
      std::distance(std::sregex_iterator(k.llvm_ir.begin(), k.llvm_ir.end(), vector_loop), std::sregex_iterator());
  EXPECT_EQ(loops, 1) << k.llvm_ir;
  for (bool flag : {false, true})
    for (std::int64_t n : {1, 7, 100})
      check_kernel(k, f, {array_arg(random_array(DType::F64, {3, n})), array_arg(random_array(DType::F64, {3, n})),
                          scalar_arg(flag)});
}

}  // namespace
}  // namespace kiln
