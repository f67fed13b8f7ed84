// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU backend's run-time checks, ArgMin/ArgMax reductions and array reductions (privatized and atomic),
// tested against the interpreter on random and edge-case inputs at every thread count from 1 to 8, plus
// the runtime entries behind them (pieces, private copies, failure reports).
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "ir/status.hpp"
#include "kiln/runtime.hpp"
#include "kiln/error.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln {
namespace {

using namespace llvm_test;  // NOLINT(google-build-using-namespace): the shared test vocabulary

const std::vector<int> kAllThreads = {1, 2, 3, 4, 5, 6, 7, 8};

/// Overrides kiln::runtime::private_copy_limit for a scope: 0 forces every array reduction of more than
/// one piece onto atomics.
class CopyLimit {
 public:
  explicit CopyLimit(std::int64_t bytes) { runtime::set_private_copy_limit(bytes); }
  ~CopyLimit() { runtime::set_private_copy_limit(-1); }
};

Expr logical_or(Expr a, Expr b) { return bin(BinaryOp::Or, std::move(a), std::move(b)); }
Expr logical_and(Expr a, Expr b) { return bin(BinaryOp::And, std::move(a), std::move(b)); }
Expr logical_not(Expr a) { return ir::make_unary(UnaryOp::Not, std::move(a)); }
Expr is_nan(Expr a) { return call(Intrinsic::IsNan, {std::move(a)}); }
Stmt when(Expr c, std::vector<Stmt> then_body) { return ir::make_if(std::move(c), block(std::move(then_body))); }
Stmt check_that(Expr cond, std::int32_t code, std::string message, std::vector<Expr> args) {
  return ir::make_check(std::move(cond), code, std::move(message), std::move(args));
}
/// A parfor over [begin, end) per dimension with scalar and array reductions.
Stmt parfor_over(std::vector<Var> idx, std::vector<Expr> begins, std::vector<Expr> ends, Stmt body,
                 std::vector<ir::Reduction> red, std::vector<ir::ArrayReduction> arrays) {
  return ir::make_parfor(std::move(idx), std::move(begins), std::move(ends), std::move(body), std::move(red),
                         std::move(arrays), "test");
}
Stmt reducing_parfor(std::vector<Var> idx, std::vector<Expr> ends, Stmt body, std::vector<ir::Reduction> red,
                     std::vector<ir::ArrayReduction> arrays) {
  std::vector<Expr> begins(idx.size(), i64c(0));
  return parfor_over(std::move(idx), std::move(begins), std::move(ends), std::move(body), std::move(red), std::move(arrays));
}

/// check_kernel() under both array-reduction strategies: private copies (the default limit) and atomics.
void check_both_ways(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs, Tolerance tol = {},
                     const std::vector<int>& threads = kAllThreads) {
  {
    SCOPED_TRACE("private copies");
    check_kernel(k, f, inputs, tol, threads);
  }
  SCOPED_TRACE("atomics");
  CopyLimit atomics(0);
  check_kernel(k, f, inputs, tol, threads);
}
void check_both_ways(const ir::Function& f, const Args& inputs, Tolerance tol = {}, const std::vector<int>& threads = kAllThreads) {
  check_both_ways(cpu::compile(f, {}), f, inputs, tol, threads);
}

/// The kernel must fail exactly as the interpreter does: same status code, and the interpreter's message
/// is "kernel '<name>': " followed by the kernel's (which is what kiln::jit reports). With several failing
/// iterations, which one a parallel run reports first is up to timing, so `exact_from` limits the exact
/// comparison to runs with that many threads or fewer.
void expect_same_failure(const ir::Function& f, const Args& inputs, std::int32_t code,
                         std::vector<int> threads = kAllThreads, int exact_up_to = 8,
                         const std::string& pattern = "") {
  SCOPED_TRACE("kernel " + f.name);
  std::string expected;
  try {
    run_interpreter(f, inputs);
    ADD_FAILURE() << "the interpreter did not fail";
  } catch (const Error& e) {
    expected = e.what();
  }
  const codegen::CompiledKernel k = cpu::compile(f, {});
  for (int t : threads) {
    SCOPED_TRACE("threads " + std::to_string(t));
    ThreadCount tc(t);
    auto got = run_kernel(k, f, inputs);
    EXPECT_EQ(got->status, code);
    const std::string message = "kernel '" + f.name + "': " + got->message;
    if (t <= exact_up_to) EXPECT_EQ(message, expected);
    else EXPECT_TRUE(std::regex_match(got->message, std::regex(pattern))) << got->message;
  }
}

// =====================================================================================================
// Runtime: pieces, private copies, failure reports
// =====================================================================================================

TEST(RuntimePieces, WidthFollowsThreadsGrainAndNesting) {
  ThreadCount tc(4);
  EXPECT_EQ(kiln_rt_parfor_width(5, 5, 1), 0);
  EXPECT_EQ(kiln_rt_parfor_width(5, 2, 1), 0);
  EXPECT_EQ(kiln_rt_parfor_width(0, 1, 1), 1);
  EXPECT_EQ(kiln_rt_parfor_width(0, 1000, 1), 4);
  EXPECT_EQ(kiln_rt_parfor_width(0, 1000, 300), 4);
  EXPECT_EQ(kiln_rt_parfor_width(0, 1000, 500), 2);
  EXPECT_EQ(kiln_rt_parfor_width(0, 1000, 5000), 1);
  EXPECT_EQ(kiln_rt_parfor_width(-10, 1000, 0), 4);
  // Inside a running parfor: one piece, on the calling thread.
  std::atomic<std::int64_t> nested{0};
  kiln_rt_parfor(
      +[](void* c, std::int64_t, std::int64_t, void*) {
        auto* widest = static_cast<std::atomic<std::int64_t>*>(c);
        const std::int64_t w = kiln_rt_parfor_width(0, 1000, 1);
        for (std::int64_t seen = widest->load(); seen < w && !widest->compare_exchange_weak(seen, w);) {
        }
      },
      &nested, 0, 4, 1);
  EXPECT_EQ(nested.load(), 1);
}

TEST(RuntimePieces, EveryPieceRunsOnceOverItsOwnRange) {
  struct Seen {
    std::vector<std::atomic<int>> calls;
    std::vector<std::int64_t> lo, hi;
    explicit Seen(std::int64_t pieces)
        : calls(static_cast<size_t>(pieces)), lo(static_cast<size_t>(pieces), -1), hi(static_cast<size_t>(pieces), -1) {}
  };
  for (int threads : {1, 2, 3, 8}) {
    ThreadCount tc(threads);
    for (std::int64_t n : {1, 2, 7, 100, 10007}) {
      for (std::int64_t pieces : {1, 2, 3, 5, 8, 13}) {
        if (pieces > n) continue;
        Seen seen(pieces);
        kiln_rt_parfor_pieces(
            +[](void* c, std::int64_t lo, std::int64_t hi, void* partial, std::int64_t piece) {
              auto* s = static_cast<Seen*>(c);
              EXPECT_EQ(partial, nullptr);
              s->calls[static_cast<size_t>(piece)]++;
              s->lo[static_cast<size_t>(piece)] = lo;
              s->hi[static_cast<size_t>(piece)] = hi;
            },
            &seen, 100, 100 + n, pieces);
        // Piece p is the p-th of `pieces` near-equal parts, in order: together they cover the range once.
        std::int64_t next = 100;
        for (std::int64_t p = 0; p < pieces; ++p) {
          ASSERT_EQ(seen.calls[static_cast<size_t>(p)].load(), 1) << n << " " << pieces << " " << p;
          EXPECT_EQ(seen.lo[static_cast<size_t>(p)], next);
          const std::int64_t len = seen.hi[static_cast<size_t>(p)] - seen.lo[static_cast<size_t>(p)];
          EXPECT_TRUE(len == n / pieces || len == n / pieces + 1) << len;
          next = seen.hi[static_cast<size_t>(p)];
        }
        EXPECT_EQ(next, 100 + n);
      }
    }
  }
  kiln_rt_parfor_pieces(+[](void*, std::int64_t, std::int64_t, void*, std::int64_t) { ADD_FAILURE(); }, nullptr, 3, 3, 4);
}

TEST(RuntimePieces, ReducePiecesDealsBlocksInOrder) {
  struct Ctx {
    std::vector<std::int64_t> piece_of, lo, hi;
    char* partials;
  };
  for (int threads : {1, 3, 8}) {
    ThreadCount tc(threads);
    for (std::int64_t n : {1, 5, 4096, 100001}) {
      for (std::int64_t pieces : {1, 2, 3, 6}) {
        const std::int64_t blocks = std::min<std::int64_t>(n, 7);
        std::vector<std::int64_t> partials(static_cast<size_t>(blocks), -1);
        Ctx ctx{std::vector<std::int64_t>(static_cast<size_t>(blocks), -1), std::vector<std::int64_t>(static_cast<size_t>(blocks), -1),
                std::vector<std::int64_t>(static_cast<size_t>(blocks), -1), reinterpret_cast<char*>(partials.data())};
        kiln_rt_parfor_reduce_pieces(
            +[](void* c, std::int64_t lo, std::int64_t hi, void* partial, std::int64_t piece) {
              auto* x = static_cast<Ctx*>(c);
              const auto b = static_cast<size_t>((static_cast<char*>(partial) - x->partials) / 8);
              EXPECT_EQ(x->piece_of[b], -1) << "block " << b << " ran twice";
              x->piece_of[b] = piece;
              x->lo[b] = lo;
              x->hi[b] = hi;
              *static_cast<std::int64_t*>(partial) = hi - lo;
            },
            &ctx, 10, 10 + n, blocks, partials.data(), 8, pieces);
        const std::int64_t len = (n + blocks - 1) / blocks;
        for (std::int64_t b = 0; b < blocks; ++b) {
          const auto k = static_cast<size_t>(b);
          EXPECT_EQ(ctx.lo[k], std::min(10 + n, 10 + b * len));
          EXPECT_EQ(ctx.hi[k], std::min(10 + n, 10 + (b + 1) * len));
          EXPECT_EQ(partials[k], ctx.hi[k] - ctx.lo[k]);
          // Pieces own contiguous runs of blocks, in order.
          if (b > 0) {
            EXPECT_GE(ctx.piece_of[k], ctx.piece_of[k - 1]);
          }
          EXPECT_LT(ctx.piece_of[k], pieces);
        }
      }
    }
  }
}

TEST(RuntimePieces, PrivateCopiesAreFilledAlignedAndBounded) {
  const double identity = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(kiln_rt_private_copies(1, 10, 8, &identity), nullptr);  // one piece works on the array itself
  EXPECT_EQ(kiln_rt_private_copies(0, 10, 8, &identity), nullptr);
  EXPECT_EQ(runtime::private_copy_limit(), std::int64_t{4} << 20);
  for (std::int64_t elements : {0, 1, 7, 8, 9, 100000}) {
    auto* p = static_cast<double*>(kiln_rt_private_copies(3, elements, 8, &identity));
    ASSERT_NE(p, nullptr) << elements;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    const std::int64_t stride = (elements * 8 + 63) / 64 * 8;  // in elements
    for (std::int64_t c = 0; c < 3; ++c)
      for (std::int64_t e = 0; e < elements; ++e) ASSERT_EQ(p[c * stride + e], identity) << c << " " << e;
    kiln_rt_free(p);
  }
  const std::int32_t one = 1;
  // 4 MiB in all is allowed; a byte more is not (the caller then uses atomics).
  void* at_limit = kiln_rt_private_copies(4, (std::int64_t{1} << 20) / 4, 4, &one);
  EXPECT_NE(at_limit, nullptr);
  kiln_rt_free(at_limit);
  EXPECT_EQ(kiln_rt_private_copies(4, (std::int64_t{1} << 20) / 4 + 1, 4, &one), nullptr);
  {
    CopyLimit none(0);
    EXPECT_EQ(kiln_rt_private_copies(2, 1, 4, &one), nullptr);
  }
  {
    CopyLimit big(std::int64_t{1} << 40);
    EXPECT_EQ(kiln_rt_private_copies(2, std::numeric_limits<std::int64_t>::max() / 2, 8, &one), nullptr);  // overflow
    EXPECT_EQ(kiln_rt_private_copies(2, -1, 8, &one), nullptr);
  }
  EXPECT_EQ(runtime::private_copy_limit(), std::int64_t{4} << 20);
}

// A block of copies given back is kept for the next parfor's copies (no fresh pages each call), filled again
// with the new identity, and counted as in use only while a parfor holds it.
TEST(RuntimePieces, CopiesGivenBackAreReusedAndFilledAgain) {
  for (int threads : {1, 3, 16}) {
    ThreadCount tc(threads);
    const double minus_inf = -std::numeric_limits<double>::infinity(), zero = 0.0;
    const std::int64_t in_use = allocation_stats().in_use_bytes;
    // 16 copies of 5800 doubles (bicg's columns at 16 threads), filled by their pieces' threads.
    auto* a = static_cast<double*>(kiln_rt_private_copies(16, 5800, 8, &minus_inf));
    ASSERT_NE(a, nullptr);
    EXPECT_GT(allocation_stats().in_use_bytes, in_use);
    for (std::int64_t e = 0; e < 16 * 5800; ++e) a[e] = 42.0;  // what a parfor leaves in them
    kiln_rt_copies_done(a);
    EXPECT_EQ(allocation_stats().in_use_bytes, in_use);
    // The same size, or a smaller one, gets the same block back, every element the new identity.
    auto* b = static_cast<double*>(kiln_rt_private_copies(8, 100, 8, &zero));
    EXPECT_EQ(b, a);
    for (std::int64_t c = 0; c < 8; ++c)
      for (std::int64_t e = 0; e < 100; ++e) ASSERT_EQ(std::bit_cast<std::uint64_t>(b[c * 104 + e]), 0u) << c << " " << e;
    // While it is held, another parfor gets a block of its own.
    auto* other = static_cast<double*>(kiln_rt_private_copies(2, 10, 8, &zero));
    EXPECT_NE(other, b);
    kiln_rt_copies_done(other);
    kiln_rt_copies_done(b);
    kiln_rt_copies_done(nullptr);
    EXPECT_EQ(allocation_stats().in_use_bytes, in_use);
  }
}

TEST(RuntimeFail, FormatsLikeTheInterpreterAndTheFirstFailureWins) {
  const std::int64_t values[] = {3, -7, std::numeric_limits<std::int64_t>::min()};
  for (const char* message : {"plain", "a {} b {} c {}", "{}{}{}{}", "{ } {", "extent {} of {}: too big {}}", "", "{}"}) {
    for (std::int32_t n : {0, 1, 3}) {
      KernelStatus st;
      kiln_rt_fail(&st, kShapeMismatch, message, values, n);
      EXPECT_EQ(st.code, kShapeMismatch);
      EXPECT_EQ(std::string(st.message), ir::format_message(message, values, static_cast<size_t>(n))) << message << " " << n;
    }
  }
  KernelStatus st;
  kiln_rt_fail(&st, kIndexOutOfRange, "first {}", values, 1);
  kiln_rt_fail(&st, kValueError, "second", nullptr, 0);
  EXPECT_EQ(st.code, kIndexOutOfRange);
  EXPECT_EQ(std::string(st.message), "first 3");
  // Longer than the buffer: truncated, still terminated.
  const std::string long_message(2000, 'x');
  KernelStatus big;
  kiln_rt_fail(&big, kValueError, (long_message + "{}").c_str(), values, 1);
  EXPECT_EQ(std::string(big.message), long_message.substr(0, sizeof big.message - 1));
  kiln_rt_fail(nullptr, kValueError, "nowhere", nullptr, 0);  // no status: nothing to do, no crash
}

// =====================================================================================================
// Run-time checks
// =====================================================================================================

TEST(Checks, PassOrFailAtTopLevelAndFreeTheAllocations) {
  Var n = param("n", DType::I64), tmp = local_array("tmp", DType::F64, 1), out = local_array("out", DType::F64, 1);
  Var i = index("i");
  const ir::Function f = function(
      "limits", {n},
      {ir::make_allocate(tmp, {i64c(16)}),
       check_that(bin(BinaryOp::Lt, val(n), i64c(10)), kValueError, "n is {} but must be below {} {not a placeholder}",
                  {val(n), i64c(10)}),
       ir::make_allocate(out, {val(n)}), parfor({i}, {val(n)}, store(out, {val(i)}, cast(DType::F64, val(i))))},
      nullptr, out);
  for (std::int64_t v : {0, 1, 9}) check(f, {scalar_arg(v)});
  for (std::int64_t v : {std::int64_t{10}, std::int64_t{12}, std::numeric_limits<std::int64_t>::max()}) expect_same_failure(f, {scalar_arg(v)}, kValueError, {1});
  const codegen::CompiledKernel k = cpu::compile(f, {});
  std::int64_t v = 12;
  void* args[] = {&v};
  ArrayDesc result;
  KernelStatus st;
  EXPECT_EQ(k(args, &result, &st), kValueError);
  EXPECT_EQ(std::string(st.message), "n is 12 but must be below 10 {not a placeholder}");
  // A condition and values computed from loads (guarded by the && before them).
  Var x = array_param("x", DType::I32);
  const ir::Function g = function(
      "first_positive", {x},
      {check_that(logical_and(bin(BinaryOp::Gt, dim(x), i64c(0)), bin(BinaryOp::Gt, at(x, {i64c(0)}), num(DType::I32, 0))),
                  kIndexOutOfRange, "x[0] = {} of {}", {cast(DType::I64, at(x, {i64c(0)})), dim(x)})},
      at(x, {i64c(0)}));
  check(g, {array_arg(array_of<std::int32_t>({5, -1}))}, {}, {1});
  expect_same_failure(g, {array_arg(array_of<std::int32_t>({-5, 1}))}, kIndexOutOfRange, {1});
  expect_same_failure(g, {array_arg(array_of<std::int32_t>({std::numeric_limits<std::int32_t>::min()}))}, kIndexOutOfRange, {1});
}

/// out[i] = sqrt(x[i]) after checking x[i] >= 0, with a scratch allocation per iteration that the chunk's
/// failure path must free; `tail` adds reductions to the same parfor.
ir::Function checked_sqrt(DType t) {
  Var x = array_param("x", t), out = array_param("out", t), tmp = local_array("tmp", t, 1);
  Var i = index("i");
  Expr xi = at(x, {val(i)});
  return function("checked_sqrt", {x, out},
                  {parfor({i}, {dim(x)},
                          block({ir::make_allocate(tmp, {i64c(4)}), store(tmp, {i64c(1)}, xi),
                                 check_that(bin(BinaryOp::Ge, xi, num(t, 0)), kValueError, "x[{}] = {} is negative",
                                            {val(i), cast(DType::I64, xi)}),
                                 store(out, {val(i)}, call(Intrinsic::Sqrt, {at(tmp, {i64c(1)})}))}))});
}

TEST(Checks, InsideAParforTheChunkStopsAndTheKernelFails) {
  for (DType t : {DType::F32, DType::F64}) {
    const ir::Function f = checked_sqrt(t);
    for (std::int64_t n : {1, 2, 1009, 100003}) {
      SCOPED_TRACE(n);
      TestArray x = random_array(t, {n}, Layout::RowMajor, 0, 100);
      check(f, {array_arg(x), array_arg(random_array(t, {n}))}, {}, kAllThreads);
      // One failing iteration: every thread count reports exactly it.
      const std::int64_t bad = uniform_int(0, n - 1);
      set_number(x, bad, -3.5);
      expect_same_failure(f, {array_arg(x), array_arg(random_array(t, {n}))}, kValueError);
      // Several: one thread reports the first, as the interpreter; more threads report one of them.
      if (n > 10) {
        set_number(x, n - 1, -1);
        set_number(x, n / 2, -2);
        expect_same_failure(f, {array_arg(x), array_arg(random_array(t, {n}))}, kValueError, kAllThreads, 1,
                            R"(x\[\d+\] = -[123] is negative)");
      }
    }
  }
}

TEST(Checks, InsideReducingParforsTheFoldIsSkipped) {
  // A sum, an argmax and a histogram in one parfor whose body checks its input: on failure nothing of the
  // partials or the private copies is used (and the copies are freed); on success the results match.
  const DType t = DType::F64;
  Var x = array_param("x", t), h = array_param("h", DType::I64), s = local("s", t), best = local("best", t), bi = local("bi", DType::I64);
  Var i = index("i");
  Expr xi = at(x, {val(i)});
  // (An update's index may not mention the array at all, not even its extent: 17 is h's length.)
  Expr bin_of = bin(BinaryOp::Mod, cast(DType::I64, call(Intrinsic::Abs, {xi})), i64c(17));
  const ir::Function f = function(
      "checked_reductions", {x, h},
      {let(s, num(t, 0)), let(best, num(t, -kInf)), let(bi, i64c(-1)),
       reducing_parfor({i}, {dim(x)},
                       block({check_that(call(Intrinsic::IsFinite, {xi}), kValueError, "x[{}] is not finite", {val(i)}),
                              assign(s, val(s) + xi), when(bin(BinaryOp::Gt, xi, val(best)), {assign(best, xi), assign(bi, val(i))}),
                              store(h, {bin_of}, at(h, {bin_of}) + i64c(1))}),
                       {{s, ReduceOp::Add}, {best, ReduceOp::ArgMax, bi}}, {{h, ReduceOp::Add}})},
      val(s) + cast(t, val(bi)) * num(t, 1e6) + val(best));
  for (std::int64_t n : {1, 5000, 100003}) {
    SCOPED_TRACE(n);
    TestArray xs = random_array(t, {n}, Layout::RowMajor, -1000, 1000);
    TestArray hs(DType::I64, {17});
    hs.fill<std::int64_t>([](std::int64_t) { return 0; });
    check_both_ways(f, {array_arg(xs), array_arg(hs)}, {0, 1e-9 * static_cast<double>(n)});
    set_number(xs, n / 3, kNaN);
    {
      SCOPED_TRACE("private copies");
      expect_same_failure(f, {array_arg(xs), array_arg(hs)}, kValueError);
    }
    CopyLimit atomics(0);
    expect_same_failure(f, {array_arg(xs), array_arg(hs)}, kValueError);
  }
}

TEST(Checks, InNestedParforsAndSequentialLoops) {
  const DType t = DType::I32;
  Var a = array_param("a", t, 2), out = array_param("out", t, 2);
  Var i = index("i"), j = index("j"), k = index("k");
  Expr aij = at(a, {val(i), val(j)});
  const ir::Function f = function(
      "nested_checks", {a, out},
      {parfor({i}, {dim(a, 0)},
              block({parfor({j}, {dim(a, 1)},
                            block({check_that(bin(BinaryOp::Ne, aij, num(t, 0)), kValueError, "zero at ({}, {})", {val(i), val(j)}),
                                   store(out, {val(i), val(j)}, num(t, 1000) / aij)})),
                     for_loop(k, i64c(0), dim(a, 1),
                              check_that(bin(BinaryOp::Lt, at(a, {val(i), val(k)}), num(t, 100)), kIndexOutOfRange,
                                         "row {} column {} too big", {val(i), val(k)}))}))});
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 1000}, {1000, 3}, {200, 200}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m));
    TestArray as = random_array(t, {n, m}, Layout::Padded, 1, 50);
    check(f, {array_arg(as), array_arg(random_array(t, {n, m}))});
    TestArray zero = as;
    set_number(zero, uniform_int(0, n * m - 1), 0);
    expect_same_failure(f, {array_arg(zero), array_arg(random_array(t, {n, m}))}, kValueError);
    TestArray big = as;
    set_number(big, uniform_int(0, n * m - 1), 500);
    expect_same_failure(f, {array_arg(big), array_arg(random_array(t, {n, m}))}, kIndexOutOfRange);
  }
}

// =====================================================================================================
// ArgMin / ArgMax
// =====================================================================================================

/// Which optional clauses the update's condition has besides `x < best` (`x > best` for ArgMax).
enum class ArgRule {
  Strict,     ///< x < best: NaN never wins; a value equal to the start is never taken
  NanWins,    ///< || isnan(x) && !isnan(best): NumPy's rule, the first NaN wins
  FirstWins,  ///< || bi < 0 as well: the first element is always taken (NumPy's argmin from scratch)
};

Expr arg_condition(ReduceOp op, ArgRule rule, const Expr& x, const Var& best, const Var& bi) {
  Expr c = bin(op == ReduceOp::ArgMin ? BinaryOp::Lt : BinaryOp::Gt, x, val(best));
  if (rule != ArgRule::Strict && is_float(x->type)) c = logical_or(c, logical_and(is_nan(x), logical_not(is_nan(val(best)))));
  if (rule == ArgRule::FirstWins) c = logical_or(bin(BinaryOp::Lt, val(bi), i64c(0)), c);
  return c;
}

/// best = start; bi = -1; parfor i: if cond(x[i]) { best = x[i]; bi = i }; out[0] = best; return bi.
ir::Function arg_kernel(ReduceOp op, DType t, ArgRule rule, Expr start) {
  Var x = array_param("x", t), out = array_param("out", t), best = local("best", t), bi = local("bi", DType::I64);
  Var i = index("i");
  Expr xi = at(x, {val(i)});
  return function(std::string(ir::name_of(op)) + "_" + std::string(name_of(t)), {x, out},
                  {let(best, std::move(start)), let(bi, i64c(-1)),
                   reducing_parfor({i}, {dim(x)}, when(arg_condition(op, rule, xi, best, bi), {assign(best, xi), assign(bi, val(i))}),
                                   {{best, op, bi}}, {}),
                   store(out, {i64c(0)}, val(best))},
                  val(bi));
}

/// Inputs that stress the tie and NaN rules: few distinct values, NaNs and infinities near block
/// boundaries (blocks are 2048 iterations long), or all one value.
std::vector<TestArray> arg_inputs(DType t, std::int64_t n) {
  std::vector<TestArray> v;
  v.push_back(random_array(t, {n}, Layout::RowMajor, -1e6, 1e6));
  v.push_back(random_array(t, {n}, Layout::RowMajor, -3, 3));
  if (is_float(t)) {
    // Integer-valued floats: many exact ties.
    TestArray ints(t, {n});
    for (std::int64_t k = 0; k < n; ++k) set_number(ints, k, static_cast<double>(uniform_int(-3, 3)));
    v.push_back(ints);
    TestArray special = random_array(t, {n}, Layout::RowMajor, -5, 5);
    for (std::int64_t k : {std::int64_t{0}, n / 2, n - 1, std::int64_t{2047}, std::int64_t{2048}, std::int64_t{4095}})
      if (k >= 0 && k < n) set_number(special, k, uniform_int(0, 2) == 0 ? kNaN : (uniform_int(0, 1) ? kInf : -kInf));
    v.push_back(special);
    TestArray nans(t, {n});
    for (std::int64_t k = 0; k < n; ++k) set_number(nans, k, kNaN);
    v.push_back(nans);
    TestArray zeros(t, {n});
    for (std::int64_t k = 0; k < n; ++k) set_number(zeros, k, k % 3 ? 0.0 : -0.0);
    v.push_back(zeros);
    TestArray infs(t, {n});
    for (std::int64_t k = 0; k < n; ++k) set_number(infs, k, k % 2 ? kInf : -kInf);
    v.push_back(infs);
  } else {
    TestArray extremes = random_array(t, {n}, Layout::RowMajor, -1e9, 1e9);
    const double lo = t == DType::I32 ? std::numeric_limits<std::int32_t>::min() : -9.2e18;
    const double hi = t == DType::I32 ? std::numeric_limits<std::int32_t>::max() : 9.2e18;
    for (std::int64_t k : {n / 3, n - 1, std::int64_t{2048}})
      if (k >= 0 && k < n) set_number(extremes, k, uniform_int(0, 1) ? lo : hi);
    v.push_back(extremes);
  }
  return v;
}

TEST(ArgReductions, MatchTheInterpreterForEveryRuleTypeAndThreadCount) {
  for (DType t : {DType::F64, DType::F32, DType::I64, DType::I32}) {
    for (ReduceOp op : {ReduceOp::ArgMin, ReduceOp::ArgMax}) {
      for (ArgRule rule : {ArgRule::Strict, ArgRule::NanWins, ArgRule::FirstWins}) {
        if (rule == ArgRule::NanWins && !is_float(t)) continue;
        // From the identity (±inf, or the integer limits), and from 0, which some elements do not beat.
        for (bool from_identity : {true, false}) {
          const ir::Function f = arg_kernel(op, t, rule, from_identity ? ir::identity_of(op, t) : num(t, 0));
          const codegen::CompiledKernel kernel = cpu::compile(f, {});
          for (std::int64_t n : {0, 1, 2, 1009, 4099, 1000003}) {
            std::vector<TestArray> inputs = arg_inputs(t, n);
            if (n == 1000003) {  // the big size on ties (and NaN/inf for floats) from the identity only
              if (!from_identity) continue;
              std::vector<TestArray> big{inputs[1]};
              if (is_float(t)) big.push_back(inputs[3]);
              inputs = big;
            }
            for (size_t k = 0; k < inputs.size(); ++k) {
              SCOPED_TRACE(f.name + " rule " + std::to_string(static_cast<int>(rule)) + (from_identity ? " from identity" : " from 0") +
                           " n " + std::to_string(n) + " input " + std::to_string(k));
              check_kernel(kernel, f, {array_arg(inputs[k]), array_arg(random_array(t, {1}))}, {},
                           n == 1000003 ? std::vector<int>{1, 2, 3, 8} : kAllThreads);
            }
          }
        }
      }
    }
  }
}

TEST(ArgReductions, SameIndexForEveryThreadCount) {
  // Ties everywhere: the first index of the minimum, whatever the thread count; and NaN's first position.
  const DType t = DType::F64;
  const ir::Function f = arg_kernel(ReduceOp::ArgMin, t, ArgRule::NanWins, num(t, kInf));
  const codegen::CompiledKernel k = cpu::compile(f, {});
  TestArray x(t, {1000003});
  for (std::int64_t i = 0; i < x.size(); ++i) set_number(x, i, static_cast<double>(i % 7));
  for (const std::int64_t planted : {std::int64_t{-1}, std::int64_t{777777}}) {
    if (planted >= 0) {
      set_number(x, planted, kNaN);
      set_number(x, planted + 9999, kNaN);
    }
    for (int threads : kAllThreads) {
      ThreadCount tc(threads);
      TestArray out(t, {1});
      void* args[] = {&x.desc(), &out.desc()};
      std::int64_t index = -2;
      KernelStatus st;
      ASSERT_EQ(k(args, &index, &st), 0);
      EXPECT_EQ(index, planted >= 0 ? planted : 0) << threads;
    }
  }
}

TEST(ArgReductions, TwoDimensionalExpressionsAndNesting) {
  const DType t = DType::F32;
  Var x = array_param("x", t, 2), out = array_param("out", t), best = local("best", t), bi = local("bi", DType::I64);
  Var i = index("i"), j = index("j");
  // argmin |x[i, j] - 0.25| over a 2-d space, the index flattened row-major.
  Expr v = call(Intrinsic::Abs, {at(x, {val(i), val(j)}) - num(t, 0.25)});
  Expr flat = val(i) * dim(x, 1) + val(j);
  const ir::Function flat2d = function(
      "argmin2d", {x, out},
      {let(best, num(t, kInf)), let(bi, i64c(-1)),
       reducing_parfor({i, j}, {dim(x, 0), dim(x, 1)},
                       when(arg_condition(ReduceOp::ArgMin, ArgRule::NanWins, v, best, bi), {assign(best, v), assign(bi, flat)}),
                       {{best, ReduceOp::ArgMin, bi}}, {}),
       store(out, {i64c(0)}, val(best))},
      val(bi));
  // The same with a parfor per row inside a parfor over rows, both carrying the pair.
  const ir::Function nested = function(
      "argmin_nested", {x, out},
      {let(best, num(t, kInf)), let(bi, i64c(-1)),
       reducing_parfor({i}, {dim(x, 0)},
                       reducing_parfor({j}, {dim(x, 1)},
                                       when(arg_condition(ReduceOp::ArgMin, ArgRule::NanWins, v, best, bi),
                                            {assign(best, v), assign(bi, flat)}),
                                       {{best, ReduceOp::ArgMin, bi}}, {}),
                       {{best, ReduceOp::ArgMin, bi}}, {}),
       store(out, {i64c(0)}, val(best))},
      val(bi));
  const codegen::CompiledKernel flat2d_kernel = cpu::compile(flat2d, {}), nested_kernel = cpu::compile(nested, {});
  for (auto [n, m] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 4}, {4, 0}, {1, 1}, {3, 5000}, {5000, 3}, {700, 700}}) {
    SCOPED_TRACE(std::to_string(n) + "x" + std::to_string(m));
    TestArray xs(t, {n, m}, Layout::ColumnMajor);
    for (std::int64_t k = 0; k < xs.size(); ++k) set_number(xs, k, 0.25 + 0.125 * static_cast<double>(uniform_int(-4, 4)));
    for (bool with_nan : {false, true}) {
      if (with_nan && xs.size() > 10) set_number(xs, xs.size() - 3, kNaN);
      check_kernel(flat2d_kernel, flat2d, {array_arg(xs), array_arg(random_array(t, {1}))}, {}, kAllThreads);
      check_kernel(nested_kernel, nested, {array_arg(xs), array_arg(random_array(t, {1}))}, {}, kAllThreads);
    }
  }
}

TEST(ArgReductions, WithSumsAndHistogramsInOneParfor) {
  // Scalar partials (a sum and an argmax pair) and private copies in the same parfor: pieces own runs of
  // reduction blocks (kiln_rt_parfor_reduce_pieces).
  const DType t = DType::I64;
  Var x = array_param("x", t), h = array_param("h", t), s = local("s", t), best = local("best", t), bi = local("bi", DType::I64);
  Var i = index("i");
  Expr xi = at(x, {val(i)});
  Expr slot = bin(BinaryOp::Mod, xi, i64c(31));  // h's length
  const ir::Function f = function(
      "everything", {x, h},
      {let(s, i64c(0)), let(best, i64c(std::numeric_limits<std::int64_t>::min())), let(bi, i64c(-1)),
       reducing_parfor({i}, {dim(x)},
                       block({when(bin(BinaryOp::Gt, xi, val(best)), {assign(best, xi), assign(bi, val(i))}),
                              assign(s, val(s) + xi * xi), store(h, {slot}, at(h, {slot}) + val(i))}),
                       {{s, ReduceOp::Add}, {best, ReduceOp::ArgMax, bi}}, {{h, ReduceOp::Add}})},
      val(s) + val(bi) * val(best));
  const codegen::CompiledKernel k = cpu::compile(f, {});
  for (std::int64_t n : {0, 1, 2047, 2049, 1000003}) {
    SCOPED_TRACE(n);
    TestArray hs = random_array(t, {31});
    check_both_ways(k, f, {array_arg(random_array(t, {n}, Layout::RowMajor, 0, 1000)), array_arg(hs)});
  }
}

// =====================================================================================================
// Array reductions
// =====================================================================================================

/// How the update is written: `a[k] op e`, `e op a[k]`, or the inverse operator (`a[k] - e`, `a[k] / e`).
enum class Form { Left, Right, Inverse };

Expr update_value(ReduceOp op, Form form, const Expr& old, const Expr& e) {
  const BinaryOp c = ir::combiner(op);
  if (form == Form::Inverse) return bin(op == ReduceOp::Add ? BinaryOp::Sub : BinaryOp::Div, old, e);
  return form == Form::Left ? bin(c, old, e) : bin(c, e, old);
}

/// parfor i: a[key(i)] = a[key(i)] op x[i], with key = k[i] (data-dependent); for a 2-d `a` the key is
/// split into (key / cols, key % cols) by the scalar parameter `cols` (an update's index may not mention
/// the array, not even its extents).
ir::Function scatter_kernel(ReduceOp op, DType t, Form form, int rank, bool unit_stride = false) {
  Var x = array_param("x", t), keys = array_param("k", DType::I64), a = array_param("a", t, rank, unit_stride);
  Var cols = param("cols", DType::I64);
  Var i = index("i");
  Expr key = at(keys, {val(i)});
  std::vector<Expr> target = {key};
  std::vector<Var> params = {x, keys, a};
  if (rank == 2) {
    target = {bin(BinaryOp::Div, key, val(cols)), bin(BinaryOp::Mod, key, val(cols))};
    params.push_back(cols);
  }
  return function("scatter_" + std::string(ir::name_of(op)) + "_" + std::string(name_of(t)), params,
                  {reducing_parfor({i}, {dim(x)}, store(a, target, update_value(op, form, at(a, target), at(x, {val(i)}))), {},
                                   {{a, op}})});
}

/// Values whose sums and products stay exact, so that any grouping gives the interpreter's result
/// bitwise: small integers for sums; for float products ±1 with a few 2 and 1/2 (few enough per bin, given
/// `bins` bins, that no partial product leaves the exponent range); odd integers for integer products
/// (which wrap, exactly); anything for min/max, with a NaN among the floats.
TestArray scatter_values(ReduceOp op, DType t, std::vector<std::int64_t> shape, std::int64_t bins = 1,
                         Layout layout = Layout::RowMajor) {
  TestArray x(t, std::move(shape), layout);
  const std::int64_t n = x.size();
  const double scaling = std::min(0.2, 40.0 * static_cast<double>(bins) / static_cast<double>(std::max<std::int64_t>(n, 1)));
  for (std::int64_t k = 0; k < n; ++k) {
    double v = 0;
    switch (op) {
      case ReduceOp::Add: v = static_cast<double>(uniform_int(-10, 10)); break;
      case ReduceOp::Mul:
        if (is_float(t)) {
          const double r = uniform(0, 1);
          v = r < scaling / 2 ? 2.0 : r < scaling ? 0.5 : (uniform_int(0, 1) ? 1.0 : -1.0);
        } else {
          v = static_cast<double>(2 * uniform_int(-1000, 1000) + 1);
        }
        break;
      default: v = is_float(t) ? uniform(-1e3, 1e3) : static_cast<double>(uniform_int(-1000000, 1000000)); break;
    }
    set_number(x, k, v);
  }
  if (is_float(t) && (op == ReduceOp::Min || op == ReduceOp::Max) && n > 100) set_number(x, uniform_int(0, n - 1), kNaN);
  return x;
}

TestArray random_keys(std::int64_t n, std::int64_t bins) {
  TestArray k(DType::I64, {n});
  k.fill<std::int64_t>([&](std::int64_t) { return uniform_int(0, bins - 1); });
  return k;
}

TEST(ArrayReductions, EveryOperatorTypeAndFormMatchesTheInterpreter) {
  for (DType t : {DType::I32, DType::I64, DType::F32, DType::F64}) {
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Mul, ReduceOp::Min, ReduceOp::Max}) {
      for (Form form : {Form::Left, Form::Right, Form::Inverse}) {
        if (form == Form::Inverse && (op == ReduceOp::Min || op == ReduceOp::Max)) continue;
        if (form == Form::Inverse && op == ReduceOp::Mul && !is_float(t)) continue;  // integer division is no product
        const ir::Function f = scatter_kernel(op, t, form, 1);
        const codegen::CompiledKernel k = cpu::compile(f, {});
        for (std::int64_t n : {0, 1, 1009, 100003}) {
          for (std::int64_t bins : {1, 7, 256}) {
            SCOPED_TRACE(f.name + " form " + std::to_string(static_cast<int>(form)) + " n " + std::to_string(n) +
                         " bins " + std::to_string(bins));
            check_both_ways(k, f, {array_arg(scatter_values(op, t, {n}, bins)), array_arg(random_keys(n, bins)),
                                   array_arg(scatter_values(op, t, {bins}, 1, Layout::Padded))},
                            {}, n > 10000 ? std::vector<int>{1, 2, 3, 8} : kAllThreads);
          }
        }
      }
    }
  }
}

TEST(ArrayReductions, FractionalFloatSumsWithinTolerance) {
  // Sums of arbitrary floats are regrouped by the pieces: within n * eps * max|x| of the sequential sum,
  // and bitwise the same on every run with the same thread count (private copies are combined in piece
  // order). One thread runs the iterations in order: bitwise the interpreter's result.
  for (DType t : {DType::F32, DType::F64}) {
    const ir::Function f = scatter_kernel(ReduceOp::Add, t, Form::Left, 1);
    const double eps = t == DType::F32 ? 6e-8 : 1.2e-16;
    for (std::int64_t n : {1009, 1000003}) {
      SCOPED_TRACE(std::string(name_of(t)) + " n " + std::to_string(n));
      const Args in = {array_arg(random_array(t, {n}, Layout::RowMajor, -10, 10)), array_arg(random_keys(n, 64)),
                       array_arg(random_array(t, {64}))};
      check_both_ways(f, in, {0, 4 * eps * 10 * static_cast<double>(n)});
      check(f, in, {}, {1});
      const codegen::CompiledKernel k = cpu::compile(f, {});
      for (int threads : {2, 3, 8}) {
        ThreadCount tc(threads);
        auto first = run_kernel(k, f, in);
        auto second = run_kernel(k, f, in);
        expect_arrays_close(*first->args[2].array, *second->args[2].array, {}, "run to run, " + std::to_string(threads) + " threads");
      }
    }
  }
}

TEST(ArrayReductions, LargeArraysUseAtomicsAndStayExact) {
  // 2^20 elements: more than 4 MiB of copies for two or more pieces, so the atomic chunk runs unforced.
  for (DType t : {DType::I32, DType::F64}) {
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Max, ReduceOp::Mul}) {
      const ir::Function f = scatter_kernel(op, t, Form::Left, 1);
      const std::int64_t bins = std::int64_t{1} << 20, n = 1000003;
      SCOPED_TRACE(f.name);
      check(f, {array_arg(scatter_values(op, t, {n}, bins)), array_arg(random_keys(n, bins)), array_arg(scatter_values(op, t, {bins}))},
            {}, {1, 2, 8});
    }
  }
  // Maximal contention: every update hits one element.
  for (DType t : {DType::I32, DType::I64, DType::F32, DType::F64}) {
    for (ReduceOp op : {ReduceOp::Add, ReduceOp::Min, ReduceOp::Mul}) {
      const ir::Function f = scatter_kernel(op, t, Form::Right, 1);
      SCOPED_TRACE(f.name + " contended");
      CopyLimit atomics(0);
      check(f, {array_arg(scatter_values(op, t, {300007})), array_arg(random_keys(300007, 1)), array_arg(scatter_values(op, t, {1}))},
            {}, {8});
    }
  }
}

TEST(ArrayReductions, TwoDimensionalTargetsOfAnyLayout) {
  for (DType t : {DType::I64, DType::F32}) {
    for (bool unit : {false, true}) {
      const ir::Function f = scatter_kernel(ReduceOp::Add, t, Form::Left, 2, unit);
      const codegen::CompiledKernel k = cpu::compile(f, {});
      for (Layout layout : unit ? std::vector<Layout>{Layout::RowMajor, Layout::RowGaps}
                                : std::vector<Layout>{Layout::RowMajor, Layout::ColumnMajor, Layout::Padded, Layout::Reversed}) {
        for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {3, 5}, {16, 16}, {1, 300}, {500, 700}}) {
          SCOPED_TRACE(f.name + " layout " + std::to_string(static_cast<int>(layout)) + " " + std::to_string(rows) + "x" +
                       std::to_string(cols));
          const std::int64_t n = 100003;
          check_both_ways(k, f, {array_arg(scatter_values(ReduceOp::Add, t, {n})), array_arg(random_keys(n, rows * cols)),
                              array_arg(scatter_values(ReduceOp::Add, t, {rows, cols}, 1, layout)), scalar_arg(cols)},
                          {}, {1, 2, 3, 8});
        }
      }
    }
  }
}

TEST(ArrayReductions, IndicesDerivedFromTheLoopIndex) {
  // y[i % 4] += x[i]; y[(i / 3) % 5] = max(y[(i / 3) % 5], x[i]).
  const DType t = DType::F64;
  Var x = array_param("x", t), y = array_param("y", t), z = array_param("z", t);
  Var i = index("i");
  Expr yi = bin(BinaryOp::Mod, val(i), i64c(4));
  Expr zi = bin(BinaryOp::Mod, bin(BinaryOp::Div, val(i), i64c(3)), i64c(5));
  const ir::Function f = function(
      "modulo", {x, y, z},
      {reducing_parfor({i}, {dim(x)},
                       block({store(y, {yi}, at(y, {yi}) + at(x, {val(i)})),
                              store(z, {zi}, bin(BinaryOp::Max, at(z, {zi}), at(x, {val(i)})))}),
                       {}, {{y, ReduceOp::Add}, {z, ReduceOp::Max}})});
  const codegen::CompiledKernel k = cpu::compile(f, {});
  for (std::int64_t n : {0, 1, 3, 1009, 1000003}) {
    SCOPED_TRACE(n);
    check_both_ways(k, f, {array_arg(scatter_values(ReduceOp::Add, t, {n})), array_arg(scatter_values(ReduceOp::Add, t, {4})),
                        array_arg(random_array(t, {5}))});
  }
}

TEST(ArrayReductions, MapIntoAnOuterArrayAsANestedParfor) {
  // acc[:] += X[i, :] inside a prange over rows: the outer parfor reduces acc, the inner one writes each
  // column once per row. Small acc: private copies; large: atomics.
  for (DType t : {DType::F64, DType::I32}) {
    Var xm = array_param("X", t, 2), acc = array_param("acc", t, 1, true);
    Var i = index("i"), j = index("j");
    const ir::Function f = function(
        "column_sums", {xm, acc},
        {reducing_parfor({i}, {dim(xm, 0)},
                         parfor({j}, {dim(xm, 1)}, store(acc, {val(j)}, at(acc, {val(j)}) + at(xm, {val(i), val(j)}))), {},
                         {{acc, ReduceOp::Add}})});
    const codegen::CompiledKernel k = cpu::compile(f, {});
    // The last is big enough for atomics once there are two or more pieces (f64) or four (i32).
    for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 3}, {1, 1}, {1000, 5}, {5, 1000}, {300, 300},
                                                                                  {8, 300000}}) {
      SCOPED_TRACE(std::string(name_of(t)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      TestArray xs(t, {rows, cols}, Layout::Padded);
      for (std::int64_t k = 0; k < xs.size(); ++k) set_number(xs, k, static_cast<double>(uniform_int(-50, 50)));
      check_both_ways(k, f, {array_arg(xs), array_arg(scatter_values(ReduceOp::Add, t, {cols}))}, {}, {1, 2, 3, 8});
    }
  }
}

TEST(ArrayReductions, NestedParforsBothReducingTheArray) {
  // prange i: prange j: h[k[i, j]] += 1, with the pair (h, Add) on both parfors; and a min over a local
  // array allocated by the kernel and returned.
  const DType t = DType::I32;
  Var keys = array_param("k", DType::I64, 2), h = array_param("h", t), m = local_array("m", t, 1), x = array_param("x", t, 2);
  Var i = index("i"), j = index("j"), c = index("c");
  Expr key = at(keys, {val(i), val(j)});
  const ir::Function f = function(
      "nested_hist", {keys, h, x},
      {ir::make_allocate(m, {dim(h)}), parfor({c}, {dim(m)}, store(m, {val(c)}, num(t, 1000000))),
       reducing_parfor({i}, {dim(keys, 0)},
                       reducing_parfor({j}, {dim(keys, 1)},
                                       block({store(h, {key}, at(h, {key}) + num(t, 1)),
                                              store(m, {key}, bin(BinaryOp::Min, at(m, {key}), at(x, {val(i), val(j)})))}),
                                       {}, {{h, ReduceOp::Add}, {m, ReduceOp::Min}}),
                       {}, {{h, ReduceOp::Add}, {m, ReduceOp::Min}})},
      nullptr, m);
  const codegen::CompiledKernel k = cpu::compile(f, {});
  for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {2, 5000}, {5000, 2}, {300, 300}}) {
    for (std::int64_t bins : {3, 1000}) {
      SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " bins " + std::to_string(bins));
      TestArray ks(DType::I64, {rows, cols});
      ks.fill<std::int64_t>([&](std::int64_t) { return uniform_int(0, bins - 1); });
      check_both_ways(k, f, {array_arg(ks), array_arg(random_array(t, {bins})), array_arg(random_array(t, {rows, cols}, Layout::RowMajor, -1e6, 1e6))},
                      {}, {1, 2, 3, 8});
    }
  }
}

TEST(ArrayReductions, InsideSequentialLoopsCopiesComeAndGo) {
  // Each round's parfor gets fresh copies and frees them; rounds see the previous rounds' results.
  const DType t = DType::I64;
  Var keys = array_param("k", DType::I64), h = array_param("h", t);
  Var r = index("r"), i = index("i");
  Expr key = bin(BinaryOp::Mod, at(keys, {val(i)}) + val(r), i64c(97));  // h's length
  const ir::Function g = function(
      "rounds", {keys, h},
      {for_loop(r, i64c(0), i64c(5),
                reducing_parfor({i}, {dim(keys)}, store(h, {key}, at(h, {key}) + (val(r) + i64c(1))), {}, {{h, ReduceOp::Add}}))});
  for (std::int64_t n : {0, 1, 100003})
    check_both_ways(g, {array_arg(random_keys(n, 1 << 30)), array_arg(random_array(t, {97}))});
}

TEST(ArrayReductions, ConversionsInScatterLoopsSaturate) {
  // Loops that update an array reduction cannot vectorize, so float-to-int conversions there use the
  // scalar conversion instruction with a fix-up for what it cannot convert: the results must still
  // saturate exactly as everywhere else (NaN -> 0, beyond the range -> the limit).
  for (DType from : {DType::F64, DType::F32}) {
    for (DType to : {DType::I64, DType::I32}) {
      Var x = array_param("x", from), out = array_param("out", to), h = array_param("h", DType::I64);
      Var i = index("i");
      Expr k = cast(to, at(x, {val(i)}));
      Expr slot = bin(BinaryOp::Mod, bin(BinaryOp::Mod, cast(DType::I64, k), i64c(7)) + i64c(7), i64c(7));
      const ir::Function f = function(
          "convert_" + std::string(name_of(from)) + "_" + std::string(name_of(to)), {x, out, h},
          {reducing_parfor({i}, {dim(x)}, block({store(out, {val(i)}, k), store(h, {slot}, at(h, {slot}) + i64c(1))}), {},
                           {{h, ReduceOp::Add}})});
      const std::vector<double> edges = {kNaN, -kNaN, kInf, -kInf, 0.0, -0.0, 0.5, -0.5, 1e300, -1e300, 3e9, -3e9,
                                         2147483647.0, 2147483648.0, -2147483648.0, -2147483649.0, 2147483520.0,
                                         9223372036854775807.0, -9223372036854775808.0, 9.2233720368547748e18,
                                         -9.2233720368547748e18, 1.8446744073709552e19, 123456.75, -7.0};
      TestArray xs(from, {static_cast<std::int64_t>(edges.size()) * 100});
      for (std::int64_t e = 0; e < xs.size(); ++e) set_number(xs, e, edges[static_cast<size_t>(e) % edges.size()]);
      TestArray hs(DType::I64, {7});
      hs.fill<std::int64_t>([](std::int64_t) { return 0; });
      check_both_ways(f, {array_arg(xs), array_arg(random_array(to, {xs.size()})), array_arg(hs)});
    }
  }
}

TEST(ArrayReductions, TheChosenStrategyIsInTheCode) {
  // Both chunk variants exist: plain stores into private copies, and atomic updates (atomicrmw for sums and
  // integer min/max, compare-exchange loops for products and float min/max).
  cpu::CpuOptions keep_ir;
  keep_ir.keep_llvm_ir = true;
  auto ir_of = [&](ReduceOp op, DType t) { return cpu::compile(scatter_kernel(op, t, Form::Left, 1), {}, keep_ir).llvm_ir; };
  const std::string add_i64 = ir_of(ReduceOp::Add, DType::I64);
  EXPECT_NE(add_i64.find("kiln_rt_private_copies"), std::string::npos);
  EXPECT_NE(add_i64.find("atomicrmw add"), std::string::npos);
  EXPECT_NE(ir_of(ReduceOp::Add, DType::F64).find("atomicrmw fadd"), std::string::npos);
  EXPECT_NE(ir_of(ReduceOp::Min, DType::I32).find("atomicrmw min"), std::string::npos);
  EXPECT_NE(ir_of(ReduceOp::Max, DType::F32).find("cmpxchg"), std::string::npos);
  EXPECT_NE(ir_of(ReduceOp::Mul, DType::I64).find("cmpxchg"), std::string::npos);
  // Sums combine their copies in the runtime's precompiled loops; other operators in a function of their own.
  EXPECT_NE(add_i64.find("call void @kiln_rt_combine_sums"), std::string::npos) << add_i64;
  const std::regex combine_function("define [^\n]*\\.combine[0-9]+\"?\\(");
  EXPECT_FALSE(std::regex_search(add_i64, combine_function)) << add_i64;
  EXPECT_TRUE(std::regex_search(ir_of(ReduceOp::Max, DType::F64), combine_function));
}

// The 4-byte sums: f32 in f32 (1e8 + 1 is 1e8 there, so piece order shows) and i32 wrapping in 32 bits.
TEST(RuntimePieces, CombinedFourByteSumsKeepTheirType) {
  constexpr std::int64_t kPieces = 3, kElements = 15;
  const std::vector<std::int64_t> shape = {5, 3}, stride = {3, 1};
  const std::int64_t copy_bytes = 64;  // 15 elements of 4 bytes, rounded up to a line
  std::vector<float> target(kElements, 7.0f), copies(kPieces * copy_bytes / 4);
  std::vector<std::int32_t> target_i(kElements, std::numeric_limits<std::int32_t>::max()), copies_i(copies.size());
  const float order[kPieces] = {1e8f, 1.0f, -1e8f};
  for (std::int64_t p = 0; p < kPieces; ++p)
    for (std::int64_t e = 0; e < kElements; ++e) {
      copies[static_cast<std::size_t>(p * copy_bytes / 4 + e)] = order[p];
      copies_i[static_cast<std::size_t>(p * copy_bytes / 4 + e)] = static_cast<std::int32_t>(p + 1);
    }
  kiln_rt_combine_sums(target.data(), copies.data(), copy_bytes, kPieces, shape.data(), stride.data(), 2, kiln_sum_f32);
  kiln_rt_combine_sums(target_i.data(), copies_i.data(), copy_bytes, kPieces, shape.data(), stride.data(), 2, kiln_sum_i32);
  float want = 7.0f;
  for (float x : order) want = want + x;
  for (std::int64_t e = 0; e < kElements; ++e) {
    EXPECT_EQ(target[static_cast<std::size_t>(e)], want) << "element " << e;
    EXPECT_EQ(target_i[static_cast<std::size_t>(e)], std::numeric_limits<std::int32_t>::min() + 5) << "element " << e;
  }
}

// kiln_rt_combine_sums adds the copies in piece order, element by element, into a target of any layout:
// 1e16 + 1 - 1e16 is 0 in that order (1 in another), and integer sums wrap.
TEST(RuntimePieces, CombinedSumsFollowPieceOrderInAnyLayout) {
  constexpr std::int64_t kPieces = 3;
  for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{{1}, {37}, {5, 3}, {2, 3, 4}, {4, 0}}) {
    const int rank = static_cast<int>(shape.size());
    std::int64_t elements = 1;
    for (std::int64_t e : shape) elements *= e;
    // The target: every axis strided (a padded innermost row, every other element of it).
    std::vector<std::int64_t> stride(shape.size());
    std::int64_t span = 2;
    for (int k = rank; k-- > 0;) {
      stride[static_cast<std::size_t>(k)] = k + 1 == rank ? 2 : span;
      span = stride[static_cast<std::size_t>(k)] * (shape[static_cast<std::size_t>(k)] + 1);
    }
    const std::int64_t copy_bytes = (elements * 8 + 63) / 64 * 64;
    std::vector<double> target(static_cast<std::size_t>(span), 7.0), copies(static_cast<std::size_t>(kPieces * copy_bytes / 8));
    std::vector<std::int64_t> target_i(static_cast<std::size_t>(span), std::numeric_limits<std::int64_t>::max()),
        copies_i(copies.size());
    const double order[kPieces] = {1e16, 1, -1e16};
    for (std::int64_t p = 0; p < kPieces; ++p)
      for (std::int64_t e = 0; e < elements; ++e) {
        copies[static_cast<std::size_t>(p * copy_bytes / 8 + e)] = order[p] + static_cast<double>(e % 2);
        copies_i[static_cast<std::size_t>(p * copy_bytes / 8 + e)] = p + 1;
      }
    kiln_rt_combine_sums(target.data(), copies.data(), copy_bytes, kPieces, shape.data(), stride.data(), rank, kiln_sum_f64);
    kiln_rt_combine_sums(target_i.data(), copies_i.data(), copy_bytes, kPieces, shape.data(), stride.data(), rank, kiln_sum_i64);
    std::vector<bool> covered(target.size(), false);
    for (std::int64_t e = 0; e < elements; ++e) {
      std::int64_t offset = 0, rest = e;
      for (int k = rank; k-- > 0;) {
        offset += rest % shape[static_cast<std::size_t>(k)] * stride[static_cast<std::size_t>(k)];
        rest /= shape[static_cast<std::size_t>(k)];
      }
      covered[static_cast<std::size_t>(offset)] = true;
      double want = 7.0;
      for (double x : order) want = want + (x + static_cast<double>(e % 2));
      EXPECT_EQ(target[static_cast<std::size_t>(offset)], want) << "element " << e;
      EXPECT_EQ(target_i[static_cast<std::size_t>(offset)], std::numeric_limits<std::int64_t>::min() + 5) << "element " << e;
    }
    for (std::size_t k = 0; k < target.size(); ++k)
      if (!covered[k]) {
        EXPECT_EQ(target[k], 7.0) << "outside the array, at " << k;
        EXPECT_EQ(target_i[k], std::numeric_limits<std::int64_t>::max()) << "outside the array, at " << k;
      }
  }
}

}  // namespace
}  // namespace kiln
