// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A kernel's module compiled in parts at the same time (codegen/llvm/partition.hpp, issue #15 compile
// latency): when it is split, into how many parts, and that the linked parts compute what one object does,
// also when they come back from the disk cache's entry.
#include <gtest/gtest.h>

#include <sched.h>

#include <string>
#include <vector>

#include "codegen/backend.hpp"
#include "codegen/llvm/cpu_backend.hpp"
#include "codegen/llvm/host_target.hpp"
#include "codegen/target_options.hpp"
#include "runtime/cache/entry.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

/// Four parfors of different arithmetic over 2-d arrays, each its own outlined function with a loop nest.
ir::Function four_stages() {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), b = array_param("b", t, 2, true), c = array_param("c", t, 2, true),
      d = array_param("d", t, 2, true), s = param("s", t);
  Var i = index("i"), j = index("j");
  const std::vector<Expr> ij = {val(i), val(j)};
  auto stage = [&](const Var& out, Expr value) {
    return parfor({i, j}, {dim(a, 0), dim(a, 1)}, store(out, ij, std::move(value)));
  };
  return function("four_stages", {a, b, c, d, s},
                  {stage(b, at(a, ij) * val(s) + num(t, 1)),
                   stage(c, call(Intrinsic::Sqrt, {at(b, ij) * at(b, ij) + at(a, ij) * at(a, ij)})),
                   stage(d, at(c, ij) / (at(b, ij) + num(t, 3)) - at(a, ij)),
                   stage(a, at(d, ij) * at(c, ij) + at(b, ij) * val(s))});
}

Args four_stage_inputs(std::int64_t rows, std::int64_t cols) {
  return {array_arg(random_array(DType::F64, {rows, cols}, Layout::RowMajor, 0, 10)),
          array_arg(random_array(DType::F64, {rows, cols})), array_arg(random_array(DType::F64, {rows, cols})),
          array_arg(random_array(DType::F64, {rows, cols})), scalar_arg(1.5)};
}

cpu::CpuOptions with_threads(int threads) {
  cpu::CpuOptions o;
  o.compile_threads = threads;
  o.keep_llvm_ir = true;
  return o;
}

// With two threads the kernel's four bodies and its entry are dealt into two parts, each compiled on its own
// thread, and the linked objects give the interpreter's results (bitwise: each part is the same code).
TEST(Partition, AKernelWithSeveralBodiesCompilesInParts) {
  const ir::Function f = four_stages();
  const cpu::ObjectCode two = cpu::compile_to_object(f, {}, with_threads(2));
  ASSERT_EQ(two.more_objects.size(), 1u);
  // CPU times (KILN_LOG=compile's codegen_cpu and longest_part_cpu): all threads', and the longest part's.
  EXPECT_GT(two.codegen_cpu_longest_ms, 0);
  EXPECT_LE(two.codegen_cpu_longest_ms, two.codegen_cpu_ms);
  EXPECT_NE(two.llvm_ir.find("; kiln: part 1 of 2"), std::string::npos) << two.llvm_ir;
  // kiln_entry is part 0's; the other part defines parfor bodies only.
  const std::string part1 = two.llvm_ir.substr(two.llvm_ir.find("; kiln: part 1 of 2"));
  EXPECT_EQ(part1.find("define noundef i32 @kiln_entry"), std::string::npos);
  EXPECT_NE(part1.find("four_stages.parfor"), std::string::npos);
  const codegen::CompiledKernel k = cpu::load_object(two.object, f.name, two.more_objects);
  for (std::int64_t cols : {1, 9, 130}) check_kernel(k, f, four_stage_inputs(5, cols), Tolerance{});
}

// One thread, or a kernel too small to win back a thread's start and the bitcode round trip: one object.
TEST(Partition, OneThreadOrASmallKernelCompilesWhole) {
  const ir::Function f = four_stages();
  const cpu::ObjectCode one = cpu::compile_to_object(f, {}, with_threads(1));
  EXPECT_TRUE(one.more_objects.empty());
  EXPECT_GT(one.codegen_cpu_ms, 0);
  EXPECT_EQ(one.codegen_cpu_longest_ms, 0);
  EXPECT_EQ(one.llvm_ir.find("; kiln: part"), std::string::npos);
  check_kernel(cpu::load_object(one.object, f.name), f, four_stage_inputs(4, 17), Tolerance{});

  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true);
  Var i = index("i");
  const ir::Function small = function("small", {x, y}, {parfor1(i, dim(x), store(y, {val(i)}, at(x, {val(i)}) * num(t, 2)))});
  EXPECT_TRUE(cpu::compile_to_object(small, {}, with_threads(8)).more_objects.empty());
}

// The disk cache stores the parts as "object", "object.1", ...; an entry holding them loads into one
// working kernel, and an entry missing a part is not silently half-linked (kiln_entry calls into it).
TEST(Partition, PartsGoThroughTheCacheEntry) {
  const ir::Function f = four_stages();
  const codegen::Backend& backend = codegen::backend_for(Target::cpu);
  codegen::TargetOptions opts;
  opts.cpu.compile_threads = 2;
  std::vector<cache::Blob> payloads;
  const codegen::CompiledKernel fresh = backend.compile(f, opts, payloads);
  ASSERT_EQ(payloads.size(), 3u);
  EXPECT_EQ(payloads[0].name, "object");
  EXPECT_EQ(payloads[1].name, "object.1");
  // What code generation decided (codegen/llvm/entry_level.hpp), for the diagnostics of a kernel from the cache.
  EXPECT_EQ(payloads[2].name, "notes");
  cache::Entry e;
  e.payloads = payloads;
  const codegen::CompiledKernel loaded = backend.load(e, f.name, opts);
  check_kernel(fresh, f, four_stage_inputs(3, 40), Tolerance{});
  check_kernel(loaded, f, four_stage_inputs(6, 11), Tolerance{});
  ASSERT_TRUE(fresh.describe && loaded.describe);
  EXPECT_EQ(loaded.describe(), fresh.describe());
  EXPECT_NE(loaded.describe().find("kiln_entry compiled unoptimized"), std::string::npos) << loaded.describe();

  cache::Entry missing;
  missing.payloads = {payloads[0]};
  EXPECT_THROW(backend.load(missing, f.name, opts), CompileError);
}

// The JIT links a kernel's objects together whatever their order (each object's symbols get their addresses
// before any object's external symbols are looked up), refuses two objects defining one symbol, and names a
// symbol that nothing defines; after a failed link it goes on linking.
TEST(Partition, PartsLinkInAnyOrderAndBadSetsAreRefused) {
  const ir::Function f = four_stages();
  const cpu::ObjectCode two = cpu::compile_to_object(f, {}, with_threads(2));
  ASSERT_EQ(two.more_objects.size(), 1u);
  check_kernel(cpu::load_object(two.more_objects[0], f.name, {two.object}), f, four_stage_inputs(4, 33), Tolerance{});

  try {
    (void)cpu::load_object(two.object, f.name, {two.more_objects[0], two.more_objects[0]});
    ADD_FAILURE() << "a part given twice was linked";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("two objects define four_stages.parfor"), std::string::npos) << e.what();
  }
  try {
    (void)cpu::load_object(two.object, f.name);
    ADD_FAILURE() << "kiln_entry was linked without the part it calls";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("symbols not found: four_stages.parfor"), std::string::npos) << e.what();
  }
  try {
    (void)cpu::load_object(two.more_objects[0], f.name);
    ADD_FAILURE() << "an object without kiln_entry was linked";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("no kiln_entry"), std::string::npos) << e.what();
  }
  check_kernel(cpu::load_object(two.object, f.name, two.more_objects), f, four_stage_inputs(2, 5), Tolerance{});
}

// By default a kernel gets as many parts as hardware threads are idle for this process: pinned to one CPU
// (taskset, a cpuset), a compile never splits, since its parts could only take turns.
TEST(Partition, ByDefaultOnlyIdleThreadsThisProcessMayUseCompileParts) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  const int idle = cpu::detail::idle_hardware_threads();
  EXPECT_GE(idle, 1);
  EXPECT_LE(idle, CPU_COUNT(&before));

  cpu_set_t one;
  CPU_ZERO(&one);
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &before)) {
      CPU_SET(c, &one);
      break;
    }
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const int pinned = cpu::detail::idle_hardware_threads();
  const cpu::ObjectCode obj = cpu::compile_to_object(four_stages(), {}, with_threads(0));
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(pinned, 1);
  EXPECT_TRUE(obj.more_objects.empty());
}

}  // namespace
}  // namespace kiln
