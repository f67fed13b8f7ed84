// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The LLVM CPU backend, tested differentially against the IR interpreter (the definition of kiln's
// semantics) on random and edge-case inputs, plus the runtime's scheduling and allocation contracts.
#include <gtest/gtest.h>
#include <omp.h>
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "codegen/llvm/cpu_backend.hpp"
#include "codegen/llvm/host_target.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/printer.hpp"
#include "ir/semantics.hpp"
#include "kiln/error.hpp"
#include "runtime/parallel.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

// =====================================================================================================
// Runtime
// =====================================================================================================

TEST(Runtime, ReduceBlocksDependOnlyOnTheExtent) {
  EXPECT_EQ(kiln_rt_reduce_blocks(-5), 0);
  EXPECT_EQ(kiln_rt_reduce_blocks(0), 0);
  EXPECT_EQ(kiln_rt_reduce_blocks(1), 1);
  EXPECT_EQ(kiln_rt_reduce_blocks(2048), 1);
  EXPECT_EQ(kiln_rt_reduce_blocks(2049), 2);
  EXPECT_EQ(kiln_rt_reduce_blocks(std::numeric_limits<std::int64_t>::max()), kiln_rt_max_reduce_blocks);
  for (std::int64_t extent : {1, 5000, 1000000, 123456789}) {
    std::vector<std::int64_t> seen;
    for (int t : {1, 2, 3, 8}) {
      ThreadCount tc(t);
      seen.push_back(kiln_rt_reduce_blocks(extent));
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [&](auto b) { return b == seen[0]; })) << extent;
  }
}

TEST(Runtime, NumThreadsOverride) {
  const int def = runtime::num_threads();
  EXPECT_GE(def, 1);
  runtime::set_num_threads(3);
  EXPECT_EQ(runtime::num_threads(), 3);
  runtime::set_num_threads(0);
  EXPECT_EQ(runtime::num_threads(), def);
}

struct Coverage {
  std::vector<std::atomic<int>> hits;
  std::atomic<int> chunks{0};
  std::int64_t begin;
  explicit Coverage(std::int64_t b, std::int64_t n) : hits(static_cast<size_t>(n)), begin(b) {}
  static void chunk(void* ctx, std::int64_t lo, std::int64_t hi, void* partial) {
    auto* c = static_cast<Coverage*>(ctx);
    EXPECT_EQ(partial, nullptr);
    c->chunks++;
    for (std::int64_t i = lo; i < hi; ++i) c->hits[static_cast<size_t>(i - c->begin)]++;
  }
};

TEST(Runtime, ParforRunsEveryIterationOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadCount tc(threads);
    for (std::int64_t n : {0, 1, 2, 7, 100, 10007}) {
      for (std::int64_t grain : {1, 16, 100000}) {
        Coverage c(-3, n);
        kiln_rt_parfor(&Coverage::chunk, &c, -3, -3 + n, grain);
        for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(c.hits[static_cast<size_t>(i)].load(), 1) << n << " " << i;
        const std::int64_t most = std::min<std::int64_t>(threads, (n + grain - 1) / grain);
        EXPECT_LE(c.chunks.load(), most);
        if (n > 0) {
          EXPECT_GE(c.chunks.load(), 1);
        }
      }
    }
  }
}

TEST(Runtime, NestedParforRunsOnTheCallingThread) {
  ThreadCount tc(4);
  std::atomic<int> inner_chunks{0};
  auto inner = [](void* c, std::int64_t, std::int64_t, void*) { (*static_cast<std::atomic<int>*>(c))++; };
  auto outer = [](void* c, std::int64_t lo, std::int64_t hi, void*) {
    for (std::int64_t i = lo; i < hi; ++i)
      kiln_rt_parfor(+[](void* x, std::int64_t, std::int64_t, void*) { (*static_cast<std::atomic<int>*>(x))++; }, c, 0, 1000, 1);
  };
  kiln_rt_parfor(+outer, &inner_chunks, 0, 8, 1);
  EXPECT_EQ(inner_chunks.load(), 8);  // each of the 8 inner parfors ran as one piece
  inner_chunks = 0;
  kiln_rt_parfor(+inner, &inner_chunks, 0, 1000, 1);
  EXPECT_EQ(inner_chunks.load(), 4);  // at top level: one piece per thread
}

TEST(Runtime, ParforReduceCallsEveryBlockWithItsPartial) {
  struct Ctx {
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    char* partials;
  };
  for (int threads : {1, 3, 8}) {
    ThreadCount tc(threads);
    for (std::int64_t n : {1, 5, 4096, 100001}) {
      const std::int64_t blocks = std::min<std::int64_t>(n, 7);
      std::vector<std::int64_t> partials(static_cast<size_t>(blocks) * 2, -1);
      Ctx ctx{std::vector<std::pair<std::int64_t, std::int64_t>>(static_cast<size_t>(blocks), {-1, -1}),
              reinterpret_cast<char*>(partials.data())};
      kiln_rt_parfor_reduce(
          +[](void* c, std::int64_t lo, std::int64_t hi, void* partial) {
            auto* x = static_cast<Ctx*>(c);
            const auto b = (static_cast<char*>(partial) - x->partials) / 16;
            x->ranges[static_cast<size_t>(b)] = {lo, hi};
            static_cast<std::int64_t*>(partial)[0] = hi - lo;
          },
          &ctx, 10, 10 + n, blocks, partials.data(), 16, 1);
      const std::int64_t len = (n + blocks - 1) / blocks;
      std::int64_t total = 0;
      for (std::int64_t b = 0; b < blocks; ++b) {
        EXPECT_EQ(ctx.ranges[static_cast<size_t>(b)].first, std::min(10 + n, 10 + b * len));
        EXPECT_EQ(ctx.ranges[static_cast<size_t>(b)].second, std::min(10 + n, 10 + (b + 1) * len));
        total += partials[static_cast<size_t>(b) * 2];
      }
      EXPECT_EQ(total, n);
    }
  }
}

TEST(Runtime, AllocChecksShapes) {
  KernelStatus st;
  const std::int64_t good[2] = {3, 5};
  void* p = kiln_rt_alloc(&st, good, 2, 8, "good");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(st.code, 0);
  kiln_rt_free(p);

  const std::int64_t empty[1] = {0};
  p = kiln_rt_alloc(&st, empty, 1, 4, "empty");
  EXPECT_NE(p, nullptr);
  kiln_rt_free(p);

  const std::int64_t negative[2] = {3, -1};
  EXPECT_EQ(kiln_rt_alloc(&st, negative, 2, 8, "w"), nullptr);
  EXPECT_EQ(st.code, kShapeMismatch);
  EXPECT_NE(std::string(st.message).find("array 'w' of shape (3, -1)"), std::string::npos) << st.message;

  // The first failure of a call is the one reported.
  const std::int64_t huge[2] = {std::int64_t(1) << 40, std::int64_t(1) << 40};
  EXPECT_EQ(kiln_rt_alloc(&st, huge, 2, 8, "huge"), nullptr);
  EXPECT_EQ(st.code, kShapeMismatch);
  EXPECT_NE(std::string(st.message).find("'w'"), std::string::npos) << st.message;

  // Sizes beyond kMaxArrayBytes are shape errors, whatever the order of the axes and even with a zero extent.
  for (const auto& shape : {std::array<std::int64_t, 3>{std::int64_t(1) << 40, std::int64_t(1) << 40, 1},
                            std::array<std::int64_t, 3>{std::int64_t(1) << 62, 4, 1},
                            std::array<std::int64_t, 3>{0, std::int64_t(1) << 62, 4},
                            std::array<std::int64_t, 3>{std::int64_t(1) << 60, 1, 8}}) {
    KernelStatus s2;
    EXPECT_EQ(kiln_rt_alloc(&s2, shape.data(), 3, 8, "big"), nullptr);
    EXPECT_EQ(s2.code, kShapeMismatch) << s2.message;
    EXPECT_NE(std::string(s2.message).find("array 'big'"), std::string::npos) << s2.message;
  }
  // A size within the rule that no address space holds (2^60 bytes) is out of memory, named.
  KernelStatus st3;
  const std::int64_t vast[1] = {std::int64_t(1) << 57};
  EXPECT_EQ(kiln_rt_alloc(&st3, vast, 1, 8, "vast"), nullptr);
  EXPECT_EQ(st3.code, kOutOfMemory);
  EXPECT_NE(std::string(st3.message).find("array 'vast' of shape (144115188075855872,)"), std::string::npos) << st3.message;
}

// =====================================================================================================
// Code generation: element-wise kernels
// =====================================================================================================

ir::Function saxpy(DType t, bool unit_stride) {
  Var a = param("a", t), x = array_param("x", t, 1, unit_stride), y = array_param("y", t, 1, unit_stride);
  Var i = index("i");
  return function("saxpy", {a, x, y},
                  {parfor({i}, {dim(x)}, store(y, {val(i)}, val(a) * at(x, {val(i)}) + at(y, {val(i)})))});
}

TEST(Codegen, SaxpyMatchesInterpreter) {
  for (DType t : {DType::F32, DType::F64}) {
    for (bool unit : {true, false}) {
      const ir::Function f = saxpy(t, unit);
      const codegen::CompiledKernel k = cpu::compile(f, {});
      for (std::int64_t n : kSizes) {
        SCOPED_TRACE(std::string(name_of(t)) + " n=" + std::to_string(n) + (unit ? " unit" : " strided"));
        const Layout layout = unit ? Layout::RowMajor : Layout::Padded;
        Args in = {t == DType::F32 ? scalar_arg(2.5f) : scalar_arg(-1.25), array_arg(random_array(t, {n}, layout)),
                   array_arg(random_array(t, {n}, layout))};
        auto ref = run_interpreter(f, in);
        const std::vector<int> threads = n >= 1000 ? std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8} : std::vector<int>{1, 3};
        for (int th : threads) {
          ThreadCount tc(th);
          auto got = run_kernel(k, f, in);
          expect_same(f, *ref, *got, {});
        }
      }
    }
  }
}

TEST(Codegen, SaxpyIsVectorized) {
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(saxpy(DType::F64, true), {}, keep_ir);
  EXPECT_TRUE(std::regex_search(k.llvm_ir, std::regex("<[0-9]+ x double>"))) << k.llvm_ir;
  // parfor iterations are independent: the vectorizer needs no runtime alias checks.
  EXPECT_EQ(k.llvm_ir.find("vector.memcheck"), std::string::npos) << k.llvm_ir;
  EXPECT_GT(k.codegen_ms, 0);
  const cpu::ObjectCode obj = cpu::compile_to_object(saxpy(DType::F64, true), {});
  EXPECT_TRUE(obj.llvm_ir.empty());  // only kept on request
  EXPECT_EQ(obj.object.substr(0, 4), "\x7f" "ELF");
}

/// How many times `pattern` matches in `text`.
std::ptrdiff_t count_matches(const std::string& text, const char* pattern) {
  const std::regex re(pattern);
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
}

TEST(Codegen, StreamingLoopsRunOneVectorAnIterationReductionsSeveral) {
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  // A stream (no value carried between iterations): one vector store in the main loop and at most one in
  // its vector remainder; LLVM's interleaving would put two or four in the main loop.
  const codegen::CompiledKernel stream = cpu::compile(saxpy(DType::F64, true), {}, keep_ir);
  const std::ptrdiff_t stores = count_matches(stream.llvm_ir, "store <[0-9]+ x double>");
  EXPECT_GE(stores, 1) << stream.llvm_ir;
  EXPECT_LE(stores, 2) << stream.llvm_ir;
  // A reduction keeps several partial sums (an add each in the loop, then adds that combine them).
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), s = local("s", t);
  Var i = index("i");
  const ir::Function dot = function(
      "dot", {x, y},
      {let(s, num(t, -0.0)), parfor({i}, {dim(x)}, assign(s, val(s) + at(x, {val(i)}) * at(y, {val(i)})), {{s, ReduceOp::Add}})},
      val(s));
  const codegen::CompiledKernel reduction = cpu::compile(dot, {}, keep_ir);
  EXPECT_GE(count_matches(reduction.llvm_ir, "fadd reassoc <[0-9]+ x double>"), 3) << reduction.llvm_ir;
}

TEST(Codegen, ErfTanhAndAtan2LoopsCallLibmvec) {
  // glibc 2.35's vector erf, tanh and atan2, which LLVM 19's libmvec table lacks: without them such a loop
  // (Black-Scholes' normal CDF) is not vectorized at all.
  if (!cpu::detail::libmvec_235_available()) GTEST_SKIP() << "libmvec without the glibc 2.35 functions";
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), out = array_param("out", t, 1, true);
  Var i = index("i");
  Expr xi = at(x, {val(i)}), yi = at(y, {val(i)});
  const ir::Function f = function(
      "erf_tanh_atan2", {x, y, out},
      {parfor({i}, {dim(x)},
              store(out, {val(i)}, call(Intrinsic::Erf, {xi}) + call(Intrinsic::Tanh, {yi}) + call(Intrinsic::Atan2, {xi, yi})))});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  for (const char* variant : {"@_ZGV[bd]N[24]v_erf\\(", "@_ZGV[bd]N[24]v_tanh\\(", "@_ZGV[bd]N[24]vv_atan2\\("})
    EXPECT_TRUE(std::regex_search(k.llvm_ir, std::regex(variant))) << variant << "\n" << k.llvm_ir;
  check_kernel(k, f, {array_arg(random_array(t, {1001}, Layout::RowMajor, -3, 3)), array_arg(random_array(t, {1001}, Layout::RowMajor, -3, 3)),
                      array_arg(random_array(t, {1001}))},
               {.ulps = 8, .abs = 1e-14});  // terms of size 1 that may cancel: a few ulp of each, absolute
}

TEST(Codegen, Strided2D) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), b = array_param("b", t, 2, true), out = array_param("out", t, 2);
  Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "strided2d", {a, b, out},
      {parfor({i, j}, {dim(out, 0), dim(out, 1)},
              store(out, {val(i), val(j)},
                    at(a, {val(i), val(j)}) * at(b, {val(i), val(j)}) + cast(t, val(i) * i64c(10) + val(j)) /
                                                                           cast(t, dim(a, 1) + i64c(1))))});
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {5, 0}, {1, 1}, {3, 7}, {37, 129}, {1000, 1000}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m));
    check(f, {array_arg(random_array(t, {n, m}, Layout::ColumnMajor)), array_arg(random_array(t, {n, m}, Layout::RowGaps)),
              array_arg(random_array(t, {n, m}, Layout::Reversed))});
  }
}

TEST(Codegen, Strided3D) {
  const DType t = DType::F32;
  Var a = array_param("a", t, 3), b = array_param("b", t, 3), out = array_param("out", t, 3);
  Var i = index("i"), j = index("j"), k = index("k");
  // b is read transposed: b[k, j, i].
  const ir::Function f = function(
      "strided3d", {a, b, out},
      {parfor({i, j, k}, {dim(out, 0), dim(out, 1), dim(out, 2)},
              store(out, {val(i), val(j), val(k)},
                    at(a, {val(i), val(j), val(k)}) - num(t, 2) * at(b, {val(k), val(j), val(i)})))});
  for (std::vector<std::int64_t> s : {std::vector<std::int64_t>{2, 3, 4}, {7, 1, 9}, {31, 17, 63}, {0, 4, 4}}) {
    check(f, {array_arg(random_array(t, s, Layout::Padded)), array_arg(random_array(t, {s[2], s[1], s[0]}, Layout::ColumnMajor)),
              array_arg(random_array(t, s, Layout::Reversed))});
  }
}

TEST(Codegen, SequentialLoopsInsideParfor) {
  // out[i, j] = sum_r sum_k (a[i, k] + r) * b[k, j] with sequential r and k loops (exact: no reassociation
  // outside reductions).
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), b = array_param("b", t, 2, true), out = array_param("out", t, 2, true);
  Var i = index("i"), j = index("j"), k = index("k"), r = index("r"), acc = local("acc", t);
  const ir::Function f = function(
      "matmul", {a, b, out},
      {parfor({i, j}, {dim(out, 0), dim(out, 1)},
              block({let(acc, num(t, 0)),
                     for_loop(r, i64c(0), i64c(3),
                              for_loop(k, i64c(0), dim(a, 1),
                                       assign(acc, val(acc) + (at(a, {val(i), val(k)}) + cast(t, val(r))) * at(b, {val(k), val(j)})))),
                     store(out, {val(i), val(j)}, val(acc))}))});
  for (auto [n, m, p] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{{1, 1, 1}, {3, 7, 2}, {64, 33, 65}, {5, 0, 3}}) {
    check(f, {array_arg(random_array(t, {n, m}, Layout::ColumnMajor)), array_arg(random_array(t, {m, p})),
              array_arg(random_array(t, {n, p}))});
  }
}

TEST(Codegen, ParforInsideParfor) {
  const DType t = DType::F64;
  Var a = array_param("a", t, 2), out = array_param("out", t, 2), rows = array_param("rows", t, 1);
  Var i = index("i"), j = index("j"), j2 = index("j2"), s = local("s", t), total = local("total", t);
  Var i3 = index("i3"), j3 = index("j3");
  // Integer-valued data, so sums are exact in any order.
  const ir::Function f = function(
      "nested", {a, out, rows},
      {parfor({i}, {dim(a, 0)},
              block({parfor({j}, {dim(a, 1)}, store(out, {val(i), val(j)}, at(a, {val(i), val(j)}) * cast(t, val(i) + val(j)))),
                     let(s, num(t, 0)),
                     parfor({j2}, {dim(a, 1)}, assign(s, val(s) + at(a, {val(i), val(j2)})), {{s, ReduceOp::Add}}),
                     store(rows, {val(i)}, val(s))})),
       let(total, num(t, 0)),
       // An outer reduction whose updates happen in an inner parfor reducing the same variable.
       parfor({i3}, {dim(a, 0)}, parfor({j3}, {dim(a, 1)}, assign(total, val(total) + at(a, {val(i3), val(j3)})), {{total, ReduceOp::Add}}),
              {{total, ReduceOp::Add}})},
      val(total));
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 5}, {40, 3000}, {3000, 3}}) {
    TestArray a_in(t, {n, m}, Layout::Padded);
    a_in.fill<double>([](std::int64_t) { return static_cast<double>(uniform_int(-100, 100)); });
    check(f, {array_arg(a_in), array_arg(random_array(t, {n, m})), array_arg(random_array(t, {n}))});
  }
}

TEST(Codegen, NestedReductionParforRunsInlineAndVectorized) {
  // Row sums as lower_array_ops writes them: a reduction parfor per row inside the parfor over rows. The
  // inner parfor runs inline in the chunk (no runtime call, context or partials per row) and its sum is
  // vectorized with several accumulators; being the same code for any thread count, it gives bitwise the
  // same sums whatever the number of threads.
  const DType t = DType::F64;
  Var x = array_param("x", t, 2, true), out = array_param("out", t), s = local("s", t);
  Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "row_sums", {x, out},
      {parfor({i}, {dim(x, 0)},
              block({let(s, num(t, -0.0)), parfor({j}, {dim(x, 1)}, assign(s, val(s) + at(x, {val(i), val(j)})), {{s, ReduceOp::Add}}),
                     store(out, {val(i)}, val(s))}))});
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  const codegen::CompiledKernel k = cpu::compile(f, {}, keep_ir);
  EXPECT_TRUE(std::regex_search(k.llvm_ir, std::regex("fadd reassoc <[0-9]+ x double>"))) << k.llvm_ir;
  EXPECT_EQ(k.llvm_ir.find("kiln_rt_parfor_reduce"), std::string::npos) << k.llvm_ir;
  std::ptrdiff_t parfor_calls = 0;
  for (size_t at = k.llvm_ir.find("call void @kiln_rt_parfor("); at != std::string::npos;
       at = k.llvm_ir.find("call void @kiln_rt_parfor(", at + 1))
    ++parfor_calls;
  EXPECT_EQ(parfor_calls, 1) << k.llvm_ir;
  // Reassociated sums: within a few ulp of the interpreter's sequential ones (positive terms, no cancellation).
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {3, 0}, {1, 1}, {5, 1001}, {1000, 7}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m));
    check_kernel(k, f, {array_arg(random_array(t, {n, m}, Layout::RowGaps, 1, 2)), array_arg(random_array(t, {n}))},
                 {.ulps = 1024});
  }
  TestArray xs = random_array(t, {64, 4099}, Layout::RowMajor, -1e3, 1e3);
  std::vector<std::uint64_t> first;
  for (int threads : {1, 2, 3, 8}) {
    ThreadCount tc(threads);
    TestArray o = random_array(t, {64});
    void* args[] = {&xs.desc(), &o.desc()};
    KernelStatus st;
    ASSERT_EQ(k(args, nullptr, &st), 0);
    std::vector<std::uint64_t> bits;
    for (std::int64_t r = 0; r < 64; ++r) bits.push_back(std::bit_cast<std::uint64_t>(o.get<double>(r)));
    if (first.empty()) first = bits;
    EXPECT_EQ(bits, first) << threads << " threads";
  }
}

TEST(Codegen, ParforBoundsOffsetFromZero) {
  // A stencil over [1, n-1) x [|lo|, m + |lo|) and a reduction over [lo, hi) inside a sequential loop, with bounds
  // that may be negative or empty.
  const DType t = DType::F64;
  Var a = array_param("a", t, 2, true), out = array_param("out", t, 2), lo = param("lo", DType::I64), hi = param("hi", DType::I64);
  Var x = array_param("x", t, 1, true), s = local("s", t), acc = local("acc", t);
  Var i = index("i"), j = index("j"), k = index("k"), r = index("r");
  const ir::Function f = function(
      "offsets", {a, out, lo, hi, x},
      {ir::make_parfor({i, j}, {i64c(1), call(Intrinsic::Abs, {val(lo)})}, {dim(a, 0) - i64c(1), dim(a, 1)},
                       store(out, {val(i), val(j)},
                             at(a, {val(i) - i64c(1), val(j)}) +
                                 at(a, {val(i) + i64c(1), val(j) - call(Intrinsic::Abs, {val(lo)})}) * cast(t, val(j))),
                       {}, "stencil"),
       let(acc, num(t, 0)),
       for_loop(r, i64c(0), i64c(3),
                block({let(s, num(t, 0)),
                       ir::make_parfor({k}, {val(lo)}, {val(hi)}, assign(s, val(s) + (at(x, {val(k) - val(lo)}) * cast(t, val(r)))),
                                       {{s, ReduceOp::Add}}, "sum"),
                       assign(acc, val(acc) + val(s))}))},
      val(acc));
  for (auto [n, m, l, h] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t>>{
           {5, 6, 2, 9}, {1, 3, 0, 0}, {40, 50, 3, -4}, {300, 20, -5, 5000}, {3, 3, 1, 4100}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m) + " [" + std::to_string(l) + ", " + std::to_string(h) + ")");
    // Integer values: every order of summation gives the same result.
    TestArray xs(t, {std::max<std::int64_t>(h - l, 0)});
    xs.fill<double>([](std::int64_t) { return static_cast<double>(uniform_int(-50, 50)); });
    check(f, {array_arg(random_array(t, {n, m + std::abs(l)}, Layout::RowGaps)),
              array_arg(random_array(t, {n, m + std::abs(l)}, Layout::Padded)), scalar_arg(l), scalar_arg(h),
              array_arg(xs)});
  }
}

TEST(Codegen, IfElseAndSelect) {
  const DType t = DType::I32;
  Var x = array_param("x", t), out = array_param("out", t), lim = param("lim", t);
  Var i = index("i");
  const ir::Function f = function(
      "ifelse", {x, out, lim},
      {parfor({i}, {dim(x)},
              ir::make_if(bin(BinaryOp::Lt, at(x, {val(i)}), val(lim)), store(out, {val(i)}, at(x, {val(i)}) * num(t, 3)),
                          ir::make_if(bin(BinaryOp::Eq, bin(BinaryOp::Mod, at(x, {val(i)}), num(t, 2)), num(t, 0)),
                                      store(out, {val(i)}, ir::make_select(bin(BinaryOp::Gt, at(x, {val(i)}), num(t, 50)),
                                                                           num(t, -1), at(x, {val(i)}) - val(lim))))))});
  for (std::int64_t n : {0, 1, 7, 1023, 100000})
    check(f, {array_arg(random_array(t, {n}, Layout::RowMajor, -100, 100)), array_arg(random_array(t, {n})), scalar_arg(std::int32_t{10})});
}

TEST(Codegen, ShortCircuitGuardsOutOfRangeLoads) {
  // For i >= 1 the index i * 10^9 is far outside x: the loads must only run when the guard allows.
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), out_and = array_param("out_and", DType::Bool), out_or = array_param("out_or", DType::Bool),
      out_sel = array_param("out_sel", t);
  Var i = index("i");
  Expr far = at(x, {val(i) * i64c(1000000000)});
  Expr first = bin(BinaryOp::Eq, val(i), i64c(0));
  const ir::Function f = function(
      "guards", {x, out_and, out_or, out_sel},
      {parfor({i}, {dim(out_and)},
              block({store(out_and, {val(i)}, bin(BinaryOp::And, first, bin(BinaryOp::Gt, far, num(t, 0)))),
                     store(out_or, {val(i)}, bin(BinaryOp::Or, bin(BinaryOp::Ne, val(i), i64c(0)), bin(BinaryOp::Lt, far, num(t, 0)))),
                     store(out_sel, {val(i)}, ir::make_select(first, far, num(t, -1)))}))});
  for (std::int64_t n : {1, 2, 1023, 100000}) {
    for (double x0 : {1.0, -1.0})
      check(f, {array_arg(array_of<double>({x0})), array_arg(random_array(DType::Bool, {n})), array_arg(random_array(DType::Bool, {n})),
                array_arg(random_array(t, {n}))});
  }
}

TEST(Codegen, BoolArrays) {
  Var a = array_param("a", DType::Bool), b = array_param("b", DType::Bool, 1, true), out = array_param("out", DType::Bool);
  Var lt = array_param("lt", DType::Bool), count = local("count", DType::I64);
  Var i = index("i");
  Expr ai = at(a, {val(i)}), bi = at(b, {val(i)});
  const ir::Function f = function(
      "bools", {a, b, out, lt},
      {let(count, i64c(0)),
       parfor({i}, {dim(a)},
              block({store(out, {val(i)}, bin(BinaryOp::Or, bin(BinaryOp::And, ai, ir::make_unary(UnaryOp::Not, bi)),
                                              bin(BinaryOp::BitXor, ai, bin(BinaryOp::BitAnd, bi, ai)))),
                     store(lt, {val(i)}, bin(BinaryOp::BitOr, bin(BinaryOp::Lt, ai, bi), bin(BinaryOp::Ge, bi, ai))),
                     assign(count, val(count) + cast(DType::I64, ai))}),
              {{count, ReduceOp::Add}})},
      val(count));
  for (std::int64_t n : {0, 1, 3, 1023, 100000})
    check(f, {array_arg(random_array(DType::Bool, {n}, Layout::Padded)), array_arg(random_array(DType::Bool, {n})),
              array_arg(random_array(DType::Bool, {n})), array_arg(random_array(DType::Bool, {n}, Layout::Reversed))});
}

// =====================================================================================================
// Arithmetic, casts and intrinsics on edge values
// =====================================================================================================

/// out_k[i] = a[i] op_k b[i] for every binary operator defined on t, plus the unary ones.
template <class T>
void check_operators() {
  constexpr DType t = dtype_of<T>();
  std::vector<BinaryOp> ops;
  if constexpr (std::is_same_v<T, bool>)
    ops = {BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::And, BinaryOp::Or};
  else if constexpr (std::is_integral_v<T>)
    ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod, BinaryOp::Min, BinaryOp::Max,
           BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor, BinaryOp::Shl, BinaryOp::Shr};
  else
    ops = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div, BinaryOp::Mod, BinaryOp::Min, BinaryOp::Max};
  for (BinaryOp c : {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge}) ops.push_back(c);
  std::vector<UnaryOp> unary;
  if constexpr (std::is_same_v<T, bool>) unary = {UnaryOp::Not};
  else if constexpr (std::is_integral_v<T>) unary = {UnaryOp::Neg, UnaryOp::BitNot};
  else unary = {UnaryOp::Neg};

  Var a = array_param("a", t), b = array_param("b", t, 1, true);
  Var i = index("i");
  std::vector<Var> params = {a, b};
  std::vector<Stmt> body;
  for (BinaryOp op : ops) {
    Var out = array_param("out_" + std::string(ir::name_of(op)), ir::is_comparison(op) ? DType::Bool : t);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, bin(op, at(a, {val(i)}), at(b, {val(i)}))));
  }
  for (UnaryOp op : unary) {
    Var out = array_param("out_u" + std::string(ir::name_of(op)), t);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, ir::make_unary(op, at(a, {val(i)}))));
  }
  if constexpr (!std::is_same_v<T, bool>) {
    Var out = array_param("out_abs", t);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, call(Intrinsic::Abs, {at(a, {val(i)})})));
  }
  const ir::Function f = function("operators", params, {parfor({i}, {dim(a)}, block(body))});

  std::vector<T> xs, ys;
  if constexpr (std::is_same_v<T, bool>) {
    for (bool x : {false, true})
      for (bool y : {false, true}) xs.push_back(x), ys.push_back(y);
  } else {
    for (T x : edge_values<T>())
      for (T y : edge_values<T>()) xs.push_back(x), ys.push_back(y);
    for (int k = 0; k < 700; ++k) {  // and random operands, so the vector loop body sees them too
      if constexpr (std::is_integral_v<T>) {
        xs.push_back(static_cast<T>(uniform_int(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())));
        ys.push_back(static_cast<T>(k % 3 == 0 ? uniform_int(-70, 70) : uniform_int(std::numeric_limits<T>::min(), std::numeric_limits<T>::max())));
      } else {
        xs.push_back(static_cast<T>(uniform(-1e3, 1e3)));
        ys.push_back(static_cast<T>(uniform(-10, 10)));
      }
    }
  }
  Args in = {array_arg(array_of(xs)), array_arg(array_of(ys))};
  for (size_t k = 2; k < params.size(); ++k) in.push_back(array_arg(random_array(params[k]->type.elem, {static_cast<std::int64_t>(xs.size())})));
  check(f, in, {}, {1, 2});
}

TEST(Codegen, OperatorsI32) { check_operators<std::int32_t>(); }
TEST(Codegen, OperatorsI64) { check_operators<std::int64_t>(); }
TEST(Codegen, OperatorsF32) { check_operators<float>(); }
TEST(Codegen, OperatorsF64) { check_operators<double>(); }
TEST(Codegen, OperatorsBool) { check_operators<bool>(); }

TEST(Codegen, IntegerDivisionEdgeCasesByValue) {
  // Spelled-out expectations, independent of the interpreter: x/0 == 0, x%0 == x, MIN/-1 == MIN, MIN%-1 == 0,
  // shift counts modulo the width (so -1 means 31 / 63), arithmetic right shift.
  Var a = param("a", DType::I32), b = param("b", DType::I32), out = array_param("out", DType::I32);
  const ir::Function f = function(
      "divmod", {a, b, out},
      {store(out, {i64c(0)}, val(a) / val(b)), store(out, {i64c(1)}, bin(BinaryOp::Mod, val(a), val(b))),
       store(out, {i64c(2)}, bin(BinaryOp::Shl, val(a), val(b))), store(out, {i64c(3)}, bin(BinaryOp::Shr, val(a), val(b)))});
  const codegen::CompiledKernel k = cpu::compile(f, {});
  auto run = [&](std::int32_t x, std::int32_t y) {
    std::vector<std::int32_t> r(4);
    ArrayDesc d;
    d.data = r.data();
    d.shape[0] = 4;
    d.strides[0] = 1;
    void* args[] = {&x, &y, &d};
    KernelStatus st;
    EXPECT_EQ(k(args, nullptr, &st), 0);
    return r;
  };
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  EXPECT_EQ(run(7, 0), (std::vector<std::int32_t>{0, 7, 7, 7}));
  EXPECT_EQ(run(kMin, -1), (std::vector<std::int32_t>{kMin, 0, 0, -1}));
  EXPECT_EQ(run(-7, 2), (std::vector<std::int32_t>{-3, -1, -28, -2}));
  EXPECT_EQ(run(1, 33), (std::vector<std::int32_t>{0, 1, 2, 0}));
  EXPECT_EQ(run(-8, 32), (std::vector<std::int32_t>{0, -8, -8, -8}));
}

template <class From>
void check_casts() {
  constexpr DType from = dtype_of<From>();
  Var in = array_param("in", from);
  Var i = index("i");
  std::vector<Var> params = {in};
  std::vector<Stmt> body;
  for (DType to : {DType::Bool, DType::I32, DType::I64, DType::F32, DType::F64}) {
    if (to == from) continue;
    Var out = array_param(std::string("to_") + std::string(name_of(to)), to);
    params.push_back(out);
    body.push_back(store(out, {val(i)}, cast(to, at(in, {val(i)}))));
  }
  const ir::Function f = function("casts", params, {parfor({i}, {dim(in)}, block(body))});
  std::vector<From> values;
  if constexpr (std::is_same_v<From, bool>) {
    values = {false, true, true, false};
  } else if constexpr (std::is_floating_point_v<From>) {
    const double two31 = 2147483648.0, two63 = 9223372036854775808.0;
    for (double v : {kNaN, -kNaN, kInf, -kInf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, two31, -two31,
                     two31 - 1, two31 - 0.5, two31 + 0.5, -two31 - 1, -two31 + 0.5, 3e9, -3e9, two63, -two63,
                     9.3e18, -9.3e18, 1e300, -1e300, 4294967296.0 + 7, 1e-310, 16777217.0, 9007199254740993.0})
      values.push_back(static_cast<From>(v));
  } else {
    for (std::int64_t v : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, std::int64_t{2147483647}, std::int64_t{-2147483647 - 1},
                           std::int64_t{2147483648}, std::int64_t{4294967296 + 5}, std::int64_t{-4294967296 - 7},
                           std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min(),
                           std::int64_t{16777217}, std::int64_t{9007199254740993}, std::int64_t{-9007199254740993}})
      values.push_back(static_cast<From>(v));
  }
  for (int k = 0; k < 300; ++k) {
    if constexpr (std::is_same_v<From, bool>) values.push_back(k % 3 == 0);
    else if constexpr (std::is_floating_point_v<From>) values.push_back(static_cast<From>(uniform(-1e10, 1e10) * std::pow(10.0, uniform(-12, 10))));
    else values.push_back(static_cast<From>(uniform_int(std::numeric_limits<From>::min(), std::numeric_limits<From>::max())));
  }
  Args args = {array_arg(array_of(values))};
  for (size_t k = 1; k < params.size(); ++k) args.push_back(array_arg(random_array(params[k]->type.elem, {static_cast<std::int64_t>(values.size())})));
  check(f, args, {}, {1, 2});
}

TEST(Codegen, CastsFromBool) { check_casts<bool>(); }
TEST(Codegen, CastsFromI32) { check_casts<std::int32_t>(); }
TEST(Codegen, CastsFromI64) { check_casts<std::int64_t>(); }
TEST(Codegen, CastsFromF32) { check_casts<float>(); }
TEST(Codegen, CastsFromF64) { check_casts<double>(); }

TEST(Codegen, CastEdgeCasesByValue) {
  Var x = param("x", DType::F64), out = array_param("out", DType::I64);
  const ir::Function f = function("sat", {x, out},
                                  {store(out, {i64c(0)}, cast(DType::I64, cast(DType::I32, val(x)))),
                                   store(out, {i64c(1)}, cast(DType::I64, val(x))),
                                   store(out, {i64c(2)}, cast(DType::I64, cast(DType::Bool, val(x))))});
  const codegen::CompiledKernel k = cpu::compile(f, {});
  auto run = [&](double v) {
    std::vector<std::int64_t> r(3);
    ArrayDesc d;
    d.data = r.data();
    d.shape[0] = 3;
    d.strides[0] = 1;
    void* args[] = {&v, &d};
    KernelStatus st;
    EXPECT_EQ(k(args, nullptr, &st), 0);
    return r;
  };
  using L64 = std::numeric_limits<std::int64_t>;
  EXPECT_EQ(run(kNaN), (std::vector<std::int64_t>{0, 0, 1}));  // NaN -> 0, but NaN != 0 is true
  EXPECT_EQ(run(kInf), (std::vector<std::int64_t>{2147483647, L64::max(), 1}));
  EXPECT_EQ(run(-kInf), (std::vector<std::int64_t>{-2147483648LL, L64::min(), 1}));
  EXPECT_EQ(run(-0.0), (std::vector<std::int64_t>{0, 0, 0}));
  EXPECT_EQ(run(-2.9), (std::vector<std::int64_t>{-2, -2, 1}));
  EXPECT_EQ(run(1e19), (std::vector<std::int64_t>{2147483647, L64::max(), 1}));
}

/// Largest difference, in ulps, accepted between a kernel's intrinsic and the interpreter's (glibc libm).
/// Exact operations must match bit for bit; the transcendental ones may go through glibc's vector
/// library (libmvec) once vectorized, whose documented error bound is 4 ulps, against libm's <= 1-2.
double intrinsic_tolerance_ulps(Intrinsic fn) {
  switch (fn) {
    case Intrinsic::Sqrt: case Intrinsic::Abs: case Intrinsic::Floor: case Intrinsic::Ceil: case Intrinsic::Round:
    case Intrinsic::Trunc: case Intrinsic::Fma: case Intrinsic::Copysign: case Intrinsic::IsNan: case Intrinsic::IsInf:
    case Intrinsic::IsFinite:
      return 0;
    default:
      return 6;
  }
}

template <class T>
void check_intrinsics() {
  constexpr DType t = dtype_of<T>();
  // Operands: every pair of edge values, then random values of every magnitude.
  std::vector<T> xs, ys, zs;
  for (T x : edge_values<T>())
    for (T y : edge_values<T>()) xs.push_back(x), ys.push_back(y), zs.push_back(y == y ? T(-1.5) : y);
  for (int k = 0; k < 1500; ++k) {
    const double mag = std::pow(10.0, uniform(-8, 3));
    xs.push_back(static_cast<T>(uniform(-1, 1) * (k % 2 ? mag : 4)));
    ys.push_back(static_cast<T>(uniform(-4, 4)));
    zs.push_back(static_cast<T>(uniform(-100, 100)));
  }
  const auto n = static_cast<std::int64_t>(xs.size());
  for (int code = 0; code <= static_cast<int>(Intrinsic::IsFinite); ++code) {
    const auto fn = static_cast<Intrinsic>(code);
    SCOPED_TRACE(std::string(ir::name_of(fn)) + " on " + std::string(name_of(t)));
    Var x = array_param("x", t, 1, true), y = array_param("y", t, 1, true), z = array_param("z", t, 1, true);
    Var out = array_param("out", ir::returns_bool(fn) ? DType::Bool : t, 1, true);
    Var i = index("i");
    std::vector<Expr> args = {at(x, {val(i)}), at(y, {val(i)}), at(z, {val(i)})};
    args.resize(static_cast<size_t>(ir::arity(fn)));
    const ir::Function f = function(std::string(ir::name_of(fn)), {x, y, z, out}, {parfor({i}, {dim(x)}, store(out, {val(i)}, call(fn, args)))});
    check(f, {array_arg(array_of(xs)), array_arg(array_of(ys)), array_arg(array_of(zs)), array_arg(random_array(out->type.elem, {n}))},
          {intrinsic_tolerance_ulps(fn), 0}, {2});
  }
}

TEST(Codegen, IntrinsicsF32) { check_intrinsics<float>(); }
TEST(Codegen, IntrinsicsF64) { check_intrinsics<double>(); }

// =====================================================================================================
// Reductions
// =====================================================================================================

/// r = init; parfor i: r = r op x[i]  (as `update`); return r.
ir::Function reduction_kernel(ReduceOp op, DType t, BinaryOp update, Expr init) {
  Var x = array_param("x", t, 1, true), r = local("r", t);
  Var i = index("i");
  return function(std::string("reduce_") + std::string(ir::name_of(op)), {x},
                  {let(r, std::move(init)), parfor({i}, {dim(x)}, assign(r, bin(update, val(r), at(x, {val(i)}))), {{r, op}})}, val(r));
}

TEST(Codegen, SumMatchesInterpreter) {
  for (DType t : {DType::F32, DType::F64}) {
    const ir::Function f = reduction_kernel(ReduceOp::Add, t, BinaryOp::Add, num(t, 0.5));
    for (std::int64_t n : kSizes) {
      SCOPED_TRACE(n);
      // Reassociation error is bounded by n * eps * sum|x| (here |x| <= 10).
      const double eps = t == DType::F32 ? 6e-8 : 1.2e-16;
      check(f, {array_arg(random_array(t, {n}))}, {0, 2 * eps * 10.0 * static_cast<double>(n) + 1e-300});
    }
  }
}

TEST(Codegen, DotProduct) {
  const DType t = DType::F64;
  Var x = array_param("x", t, 1, true), y = array_param("y", t, 1), s = local("s", t);
  Var i = index("i");
  const ir::Function f = function("dot", {x, y},
                                  {let(s, num(t, 0)), parfor({i}, {dim(x)}, assign(s, val(s) + at(x, {val(i)}) * at(y, {val(i)})), {{s, ReduceOp::Add}})},
                                  val(s));
  for (std::int64_t n : kSizes)
    check(f, {array_arg(random_array(t, {n}, Layout::RowMajor, -1, 1)), array_arg(random_array(t, {n}, Layout::Reversed, -1, 1))},
          {0, 3e-16 * static_cast<double>(n) + 1e-300});
}

ir::Function pi_kernel() {
  const DType t = DType::F64;
  Var n = param("n", DType::I64), step = local("step", t), sum = local("sum", t), x = local("x", t);
  Var i = index("i");
  return function(
      "pi", {n},
      {let(step, num(t, 1) / cast(t, val(n))), let(sum, num(t, 0)),
       parfor({i}, {val(n)},
              block({let(x, (cast(t, val(i)) + num(t, 0.5)) * val(step)),
                     assign(sum, val(sum) + num(t, 4) / (num(t, 1) + val(x) * val(x)))}),
              {{sum, ReduceOp::Add}})},
      val(sum) * val(step));
}

TEST(Codegen, Pi) {
  const ir::Function f = pi_kernel();
  check(f, {scalar_arg(std::int64_t{2000000})}, {0, 1e-11}, {1, 2, 8});
  const codegen::CompiledKernel k = cpu::compile(f, {});
  std::int64_t n = 2000000;
  void* args[] = {&n};
  double pi = 0;
  KernelStatus st;
  ASSERT_EQ(k(args, &pi, &st), 0);
  EXPECT_NEAR(pi, std::numbers::pi, 1e-12);
}

TEST(Codegen, FloatSumIsBitwiseIdenticalForAnyThreadCount) {
  const ir::Function f = reduction_kernel(ReduceOp::Add, DType::F64, BinaryOp::Add, num(DType::F64, 0));
  const codegen::CompiledKernel k = cpu::compile(f, {});
  TestArray x = random_array(DType::F64, {1000000}, Layout::RowMajor, -1e3, 1e3);
  std::vector<std::uint64_t> bits;
  for (int t : {1, 2, 3, 8}) {
    ThreadCount tc(t);
    void* args[] = {&x.desc()};
    double sum = 0;
    KernelStatus st;
    ASSERT_EQ(k(args, &sum, &st), 0);
    bits.push_back(std::bit_cast<std::uint64_t>(sum));
  }
  for (auto b : bits) EXPECT_EQ(b, bits[0]);
}

TEST(Codegen, MinMaxMulReductionsInt) {
  for (DType t : {DType::I32, DType::I64}) {
    for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max, ReduceOp::Mul, ReduceOp::Add}) {
      const ir::Function f = reduction_kernel(op, t, ir::combiner(op), ir::identity_of(op, t));
      const ir::Function g = reduction_kernel(op, t, ir::combiner(op), num(t, 3));
      for (std::int64_t n : kSizes) {
        SCOPED_TRACE(std::string(ir::name_of(op)) + " n=" + std::to_string(n));
        // Large values: sums and products wrap, which is associative, so results are exact. Odd factors
        // keep a product from collapsing to 0.
        TestArray x = random_array(t, {n}, Layout::RowMajor, -2e9, 2e9);
        if (op == ReduceOp::Mul)
          for (std::int64_t k = 0; k < n; ++k) set_number(x, k, static_cast<double>(uniform_int(-1000000, 1000000) * 2 + 1));
        Args in = {array_arg(x)};
        check(f, in);
        check(g, in, {}, {3});
      }
    }
  }
}

TEST(Codegen, IntegerDivisionIsNoProductReduction) {
  // r = r / x[i] does not regroup for integers (truncation), so it is no Mul reduction (the verifier and
  // detect_reductions reject it). Handed such IR anyway, the backend refuses it rather than combining
  // partials with a product.
  for (DType t : {DType::I32, DType::I64}) {
    const ir::Function f = reduction_kernel(ReduceOp::Mul, t, BinaryOp::Div, num(t, 2000000000));
    EXPECT_THROW(cpu::compile(f, {}), CompileError);
  }
  // Float division is a product by the reciprocal: accepted, and close to the sequential result.
  const ir::Function g = reduction_kernel(ReduceOp::Mul, DType::F64, BinaryOp::Div, num(DType::F64, 3));
  check(g, {array_arg(random_array(DType::F64, {100000}, Layout::RowMajor, 0.999, 1.001))}, {0, 1e-15 * 100000 * 3}, {1, 3});
}

TEST(Codegen, MinMaxMulReductionsFloat) {
  for (DType t : {DType::F32, DType::F64}) {
    for (ReduceOp op : {ReduceOp::Min, ReduceOp::Max, ReduceOp::Mul}) {
      const ir::Function f = reduction_kernel(op, t, ir::combiner(op), ir::identity_of(op, t));
      for (std::int64_t n : {1, 2, 3, 7, 1023, 1000000}) {
        for (int variant = 0; variant < 3; ++variant) {
          SCOPED_TRACE(std::string(ir::name_of(op)) + " " + std::string(name_of(t)) + " n=" + std::to_string(n) + " variant " +
                       std::to_string(variant));
          // Products of values near 1 stay finite; min/max see signed zeros; variant 1 plants a NaN.
          TestArray x = op == ReduceOp::Mul ? random_array(t, {n}, Layout::RowMajor, 0.999, 1.001) : random_array(t, {n});
          if (op != ReduceOp::Mul && n > 2) set_number(x, 0, 0.0), set_number(x, n - 1, -0.0);
          if (variant == 1) set_number(x, n / 2, kNaN);
          if (variant == 2 && op != ReduceOp::Mul) {  // only zeros: the sign decides
            for (std::int64_t k = 0; k < n; ++k) set_number(x, k, k % 2 ? -0.0 : 0.0);
          }
          // min/max are exact in any order; products are reassociated.
          const Tolerance tol = op == ReduceOp::Mul ? Tolerance{0, (t == DType::F32 ? 1e-7 : 1e-15) * static_cast<double>(n) * 3} : Tolerance{};
          check(f, {array_arg(x)}, tol, {1, 3});
        }
      }
    }
  }
}

TEST(Codegen, ReductionUpdateForms) {
  // v = v - e for Add, v = v / e for Mul, v = e op v, several reductions in one parfor, updates under an
  // if, a 2-d reduction, and an empty range that must leave -0.0 untouched.
  const DType t = DType::F64;
  Var x = array_param("x", t, 2), s = local("s", t), p = local("p", t), lo = local("lo", t), cnt = local("cnt", DType::I64);
  Var i = index("i"), j = index("j");
  Expr xij = at(x, {val(i), val(j)});
  const ir::Function f = function(
      "forms", {x},
      {let(s, num(t, -0.0)), let(p, num(t, 1)), let(lo, num(t, kInf)), let(cnt, i64c(0)),
       parfor({i, j}, {dim(x, 0), dim(x, 1)},
              block({assign(s, val(s) - xij), assign(p, val(p) / (num(t, 1) + xij * num(t, 1e-3))),
                     assign(lo, bin(BinaryOp::Min, xij, val(lo))),
                     ir::make_if(bin(BinaryOp::Gt, xij, num(t, 0)), assign(cnt, i64c(1) + val(cnt)))}),
              {{s, ReduceOp::Add}, {p, ReduceOp::Mul}, {lo, ReduceOp::Min}, {cnt, ReduceOp::Add}})},
      val(s) + val(p) * num(t, 1000) + val(lo) * num(t, 1e6) + cast(t, val(cnt)) * num(t, 1e9));
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 1000}, {1000, 3}, {300, 300}})
    check(f, {array_arg(random_array(t, {n, m}, Layout::ColumnMajor))}, {0, 1e-9 * static_cast<double>(n * m)});

  // Empty: every variable keeps its exact initial value, including the sign of -0.0.
  const ir::Function g = function("empty", {x}, {let(s, num(t, -0.0)),
                                                 parfor({i, j}, {dim(x, 0), dim(x, 1)}, assign(s, val(s) + xij), {{s, ReduceOp::Add}})},
                                  val(s));
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 5}, {5, 0}})
    check(g, {array_arg(random_array(t, {n, m}))});
}

// =====================================================================================================
// Allocation and array results
// =====================================================================================================

TEST(Codegen, ArrayResult) {
  const DType t = DType::F32;
  Var x = array_param("x", t, 2), out = local_array("out", t, 2);
  Var i = index("i"), j = index("j");
  const ir::Function f = function(
      "transpose", {x},
      {ir::make_allocate(out, {dim(x, 1), dim(x, 0)}),
       parfor({i, j}, {dim(x, 1), dim(x, 0)}, store(out, {val(i), val(j)}, at(x, {val(j), val(i)}) + num(t, 1)))},
      nullptr, out);
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {1, 1}, {2, 3}, {100, 37}})
    check(f, {array_arg(random_array(t, {n, m}, Layout::Padded))});
}

TEST(Codegen, AllocationsInLoops) {
  // A scratch array allocated per iteration of a sequential loop and per parfor iteration; each is freed
  // when its site runs again and at exit, and the results match.
  const DType t = DType::I64;
  Var n = param("n", DType::I64), out = array_param("out", t), tmp = local_array("tmp", t, 1), tmp2 = local_array("tmp2", t, 1);
  Var total = local("total", t);
  Var r = index("r"), k = index("k"), i = index("i"), k2 = index("k2");
  const ir::Function f = function(
      "scratch", {n, out},
      {let(total, i64c(0)),
       for_loop(r, i64c(0), i64c(20),
                block({ir::make_allocate(tmp, {val(n)}), for_loop(k, i64c(0), val(n), store(tmp, {val(k)}, val(k) * val(r))),
                       for_loop(k2, i64c(0), val(n), assign(total, val(total) + at(tmp, {val(k2)})))})),
       parfor({i}, {dim(out)},
              block({ir::make_allocate(tmp2, {val(i) + i64c(1)}), store(tmp2, {val(i)}, val(i) * val(i)),
                     store(out, {val(i)}, at(tmp2, {val(i)}) + val(total))}))},
      val(total));
  check(f, {scalar_arg(std::int64_t{50}), array_arg(random_array(t, {5000}))});
}

TEST(Codegen, NegativeExtentAllocationFails) {
  const DType t = DType::F64;
  Var n = param("n", DType::I64), a = local_array("a", t, 1), b = local_array("b", t, 2), c = local_array("c", t, 1);
  Var out = array_param("out", t);
  Var i = index("i");
  const ir::Function f = function("negative", {n},
                                  {ir::make_allocate(a, {i64c(10)}), ir::make_allocate(b, {i64c(3), val(n)})},
                                  nullptr, b);
  const codegen::CompiledKernel k = cpu::compile(f, {});
  std::int64_t extent = -1;
  void* args[] = {&extent};
  ArrayDesc result;
  KernelStatus st;
  EXPECT_EQ(k(args, &result, &st), kShapeMismatch);
  EXPECT_EQ(st.code, kShapeMismatch);
  EXPECT_NE(std::string(st.message).find("(3, -1)"), std::string::npos) << st.message;
  EXPECT_THROW(ir::interpret(f, args, &result), ShapeError);
  extent = 4;
  KernelStatus ok;
  ASSERT_EQ(k(args, &result, &ok), 0);
  EXPECT_EQ(result.shape[0], 3);
  EXPECT_EQ(result.shape[1], 4);
  EXPECT_EQ(result.strides[0], 4);
  std::free(result.data);

  // The same failure inside a parfor, in some iterations only: the kernel still reports it.
  const ir::Function g = function("negative_in_parfor", {out},
                                  {parfor({i}, {dim(out)}, block({ir::make_allocate(c, {i64c(100) - val(i)}), store(c, {i64c(0)}, num(t, 1)),
                                                                  store(out, {val(i)}, at(c, {i64c(0)}))}))});
  const codegen::CompiledKernel kg = cpu::compile(g, {});
  for (int threads : {1, 4}) {
    ThreadCount tc(threads);
    TestArray o = random_array(t, {1000});
    void* gargs[] = {&o.desc()};
    KernelStatus gst;
    EXPECT_EQ(kg(gargs, nullptr, &gst), kShapeMismatch);
    EXPECT_NE(std::string(gst.message).find("negative"), std::string::npos) << gst.message;
  }
}

// =====================================================================================================
// Options, scalars, compilation behaviour
// =====================================================================================================

TEST(Codegen, ScalarParamsAndResults) {
  Var flag = param("flag", DType::Bool), a = param("a", DType::I32), b = param("b", DType::F32), sum = local("sum", DType::I64);
  Var i = index("i");
  // Sequential code only: a For loop with a local accumulator, selects on a bool parameter.
  const ir::Function f = function(
      "scalars", {flag, a, b},
      {let(sum, i64c(0)), for_loop(i, i64c(0), cast(DType::I64, val(a)), assign(sum, val(sum) + val(i) * val(i)))},
      bin(BinaryOp::And, val(flag), bin(BinaryOp::Gt, cast(DType::F32, val(sum)), val(b))));
  for (bool fl : {false, true})
    for (std::int32_t n : {-5, 0, 10, 1000})
      check(f, {scalar_arg(fl), scalar_arg(n), scalar_arg(1000.0f)}, {}, {1});
  const ir::Function g = function("f32_result", {a, b}, {}, cast(DType::F32, val(a)) * val(b));
  check(g, {scalar_arg(std::int32_t{7}), scalar_arg(0.1f)}, {}, {1});
}

TEST(Codegen, OptimizationLevelsAndFastMath) {
  Var x = array_param("x", DType::F64, 1, true), y = array_param("y", DType::F64), s = local("s", DType::F64);
  Var i = index("i");
  const ir::Function g = function(
      "mixed", {x, y},
      {let(s, num(DType::F64, 0)),
       parfor({i}, {dim(x)},
              block({store(y, {val(i)}, call(Intrinsic::Exp, {at(x, {val(i)})}) * num(DType::F64, 0.5) + at(y, {val(i)})),
                     assign(s, val(s) + call(Intrinsic::Sqrt, {call(Intrinsic::Abs, {at(x, {val(i)})})}))}),
              {{s, ReduceOp::Add}})},
      val(s));
  const Args in = {array_arg(random_array(DType::F64, {10007}, Layout::RowMajor, -3, 3)), array_arg(random_array(DType::F64, {10007}))};
  for (int level : {0, 1, 2, 3}) {
    SCOPED_TRACE("O" + std::to_string(level));
    codegen::CodegenOptions opts;
    opts.opt_level = level;
    check(g, in, {6, 1e-10}, {1, 3}, opts);
  }
  codegen::CodegenOptions fast;
  fast.fast_math = true;
  check(g, in, {64, 1e-9}, {2}, fast);
  // fast_math allows reassociation, not assuming NaN and infinity away: isnan and NaN-propagating min survive.
  Var b = array_param("b", DType::Bool), m = array_param("m", DType::F64);
  const ir::Function h = function(
      "fast_nan", {x, b, m},
      {parfor({i}, {dim(x)},
              block({store(b, {val(i)}, call(Intrinsic::IsNan, {at(x, {val(i)}) * num(DType::F64, 2)})),
                     store(m, {val(i)}, bin(BinaryOp::Min, at(x, {val(i)}), num(DType::F64, 0.5)))}))});
  check(h, {array_arg(array_of<double>({1, kNaN, -kInf, kInf, -0.0, 0.0, kNaN, 3})), array_arg(random_array(DType::Bool, {8})),
            array_arg(random_array(DType::F64, {8}))},
        {}, {1}, fast);
}

TEST(Codegen, ObjectsLoadIndependently) {
  const cpu::ObjectCode obj = cpu::compile_to_object(pi_kernel(), {});
  // With its other parts, if the module was compiled in parts (codegen/llvm/partition.hpp).
  const codegen::CompiledKernel k1 = cpu::load_object(obj.object, "pi", obj.more_objects);
  const codegen::CompiledKernel k2 = cpu::load_object(obj.object, "pi", obj.more_objects);  // same symbols, own memory
  EXPECT_NE(reinterpret_cast<void*>(k1.entry), reinterpret_cast<void*>(k2.entry));
  std::int64_t n = 1000;
  void* args[] = {&n};
  double r1 = 0, r2 = 0;
  KernelStatus st;
  EXPECT_EQ(k1(args, &r1, &st), 0);
  EXPECT_EQ(k2(args, &r2, &st), 0);
  EXPECT_EQ(r1, r2);
  EXPECT_THROW(cpu::load_object("not an object", "bad"), CompileError);
  EXPECT_FALSE(cpu::host_target_description().empty());
}

TEST(Codegen, CpuOptionsAreInTheHostDescription) {
  // KILN_CPU_FEATURES and KILN_LLVM_OPTIONS reach the backend as CpuOptions; both change the code, so both
  // are in the description that the cache key holds.
  const std::string& host_features = cpu::detail::host_target().features;
  cpu::CpuOptions o;
  EXPECT_EQ(cpu::detail::target_features(o), host_features);
  o.features = "-prefer-256-bit";
  EXPECT_EQ(cpu::detail::target_features(o), host_features + ",-prefer-256-bit");
  const std::string with_features = cpu::host_target_description(o);
  EXPECT_NE(with_features.find(";" + host_features + ",-prefer-256-bit"), std::string::npos) << with_features;
  EXPECT_NE(with_features, cpu::host_target_description());
  o.llvm_options = "-force-vector-interleave=1";
  EXPECT_EQ(cpu::host_target_description(o), with_features + ";llvm-options=-force-vector-interleave=1");
  // The features are the target machine's: a kernel compiled with them still runs.
  o.llvm_options.clear();  // process-wide in LLVM: not for a test to set
  const codegen::CompiledKernel k = cpu::compile(saxpy(DType::F64, true), {}, o);
  EXPECT_TRUE(k.entry);
}

TEST(Codegen, HostFeaturesKeepTheirOrder) {
  // The features are part of every cache key: listed as before, LLVM's "+name"/"-name" strings sorted (so
  // entries written before stay valid), whatever way the description builds them; -prefer-256-bit may follow.
  const std::string& host = cpu::detail::host_target().features;
  std::vector<std::string> listed;
  for (std::size_t b = 0, e; b < host.size(); b = e + 1) {
    e = std::min(host.find(',', b), host.size());
    listed.push_back(host.substr(b, e - b));
  }
  ASSERT_GT(listed.size(), 10u) << host;
  if (!std::is_sorted(listed.begin(), listed.end()) && listed.back() == "-prefer-256-bit") listed.pop_back();
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end())) << host;
  EXPECT_EQ(listed.front()[0], '+') << host;
  for (const std::string& f : listed) EXPECT_TRUE(f.size() > 1 && (f[0] == '+' || f[0] == '-')) << f;
#if defined(__GLIBC__)
  // glibc's version, read by hand for libmvec's 2.35 functions: what sscanf reads.
  int major = 0, minor = 0;
  if (cpu::detail::libmvec_available() && std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2) {
    EXPECT_EQ(cpu::detail::libmvec_235_available(), major > 2 || (major == 2 && minor >= 35)) << gnu_get_libc_version();
  }
#endif
}

TEST(Codegen, KernelsCanBeReleasedAndRecompiled) {
  for (int round = 0; round < 25; ++round) {
    const codegen::CompiledKernel k = cpu::compile(saxpy(DType::F64, true), {});
    TestArray x = random_array(DType::F64, {100}), y = random_array(DType::F64, {100});
    const double y0 = y.get<double>(5);
    double a = 2;
    void* args[] = {&a, &x.desc(), &y.desc()};
    KernelStatus st;
    ASSERT_EQ(k(args, nullptr, &st), 0);
    EXPECT_EQ(y.get<double>(5), 2 * x.get<double>(5) + y0);
  }  // each kernel's memory is freed here
}

TEST(Codegen, ConcurrentCompilation) {
  // Four host threads compile and run at once; each run forks its own OpenMP team.
  ThreadCount tc(2);
  std::vector<std::thread> workers;
  std::atomic<int> good{0};
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&, w] {
      for (int round = 0; round < 4; ++round) {
        const codegen::CompiledKernel k = cpu::compile(pi_kernel(), {});
        std::int64_t n = 200000 + w * 10 + round;
        void* args[] = {&n};
        double pi = 0;
        KernelStatus st;
        if (k(args, &pi, &st) == 0 && std::fabs(pi - std::numbers::pi) < 1e-6) good++;
      }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_EQ(good.load(), 16);
}

TEST(Codegen, CompileTimeOfSmallKernels) {
  // Cold compiles (a new kernel each time; the JIT is already up). Reported, and bounded loosely so that a
  // pathological pipeline shows up as a failure rather than as a slow test.
  Var x = array_param("x", DType::F64, 1, true), y = array_param("y", DType::F64, 1, true), s = local("s", DType::F64);
  Var i = index("i");
  const ir::Function dot = function(
      "dot", {x, y},
      {let(s, num(DType::F64, 0)), parfor({i}, {dim(x)}, assign(s, val(s) + at(x, {val(i)}) * at(y, {val(i)})), {{s, ReduceOp::Add}})},
      val(s));
  for (const ir::Function& f : {saxpy(DType::F32, true), dot, pi_kernel()}) {
    std::vector<double> ms;
    for (int r = 0; r < 5; ++r) ms.push_back(cpu::compile(f, {}).codegen_ms);
    std::sort(ms.begin(), ms.end());
    RecordProperty(f.name + "_compile_ms", std::to_string(ms[2]));
    std::printf("[ compile  ] %s: median %.1f ms at O3\n", f.name.c_str(), ms[2]);
    EXPECT_LT(ms[2], 1000.0);
  }
}

}  // namespace
}  // namespace kiln
