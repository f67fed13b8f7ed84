// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Bounds-checked mode (Options::boundscheck, KILN_BOUNDSCHECK=1): every out-of-range element access of a
// kernel throws kiln::IndexError naming the kernel, the array, the axis, the index and the extent, on the
// CPU as in the interpreter; in-range kernels give bitwise the same results with and without the mode; the
// mode is part of the cache key. (CUDA: tests/cuda_gpu_test.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "kiln/kiln.hpp"
#include "tests/error_test_util.hpp"

namespace kiln {
namespace {

using kiln_tests::exact_error_of;

Options mode(Target t, bool checked) {
  Options o;
  o.target = t;
  o.boundscheck = checked;
  return o;
}

/// The targets compiled code runs on here: the CPU when this kiln has LLVM, and the interpreter.
std::vector<Target> targets() {
  std::vector<Target> out;
  if (has_cpu_backend()) out.push_back(Target::cpu);
  out.push_back(Target::interpreter);
  return out;
}

/// Runs `call` with a kernel made by `make` for each target, in bounds-checked mode, and expects an
/// IndexError whose message is exactly `message`.
template <class Make, class Call>
void expect_index_error(Make make, Call call, const std::string& message) {
  for (const Target t : targets()) {
    SCOPED_TRACE(std::string("target ") + std::string(name_of(t)));
    auto k = make(mode(t, true));
    EXPECT_EQ(exact_error_of<IndexError>([&] { call(k); }), message);
  }
}

// ---- out-of-range accesses ------------------------------------------------------------------------------

auto make_scaled_copy(const Options& o) {
  return jit("scaled_copy", [](Array<double> x, Array<double> y, Int n) {
    prange(n, [&](Int i) { y[i] = 2.0 * x[i]; });
  }, o);
}

TEST(BoundsCheck, ReadPastTheEndInAPrange) {
  std::vector<double> x(10, 1.0), y(20, 0.0);
  expect_index_error(make_scaled_copy, [&](auto& k) { k(x, y, 11); },
                     "kernel 'scaled_copy': index 10 out of range for axis 0 of array 'x' with extent 10");
  // The same kernel in range is fine.
  auto k = make_scaled_copy(mode(targets().front(), true));
  k(x, y, 10);
  EXPECT_EQ(y[9], 2.0);
  EXPECT_EQ(y[10], 0.0);
}

TEST(BoundsCheck, WritePastTheEnd) {
  auto make = [](const Options& o) {
    return jit("widen", [](Array<double> x, Array<double> out) {
      prange(x.shape(0), [&](Int i) { out[i] = x[i] + 1.0; });
    }, o);
  };
  std::vector<double> x(8, 1.0), out(5, 0.0);
  expect_index_error(make, [&](auto& k) { k(x, out); },
                     "kernel 'widen': index 5 out of range for axis 0 of array 'out' with extent 5");
}

TEST(BoundsCheck, NegativeIndices) {
  auto shifted = [](const Options& o) {
    return jit("shifted", [](Array<double> x, Array<double> y) {
      prange(x.shape(0), [&](Int i) { y[i] = x[i - 1]; });
    }, o);
  };
  std::vector<double> x(8, 1.0), y(8, 0.0);
  expect_index_error(shifted, [&](auto& k) { k(x, y); },
                     "kernel 'shifted': index -1 out of range for axis 0 of array 'x' with extent 8");
  auto element = [](const Options& o) {
    return jit("element", [](Array<double> x, Int k) { return x[k]; }, o);
  };
  expect_index_error(element, [&](auto& k) { k(x, -3); },
                     "kernel 'element': index -3 out of range for axis 0 of array 'x' with extent 8");
  expect_index_error(element, [&](auto& k) { k(x, 8); },
                     "kernel 'element': index 8 out of range for axis 0 of array 'x' with extent 8");
}

TEST(BoundsCheck, TwoDimensionsNameTheAxis) {
  auto make = [](const Options& o) {
    return jit("right_neighbour", [](Array<double, 2> a, Array<double, 2> out) {
      prange(shape(a.shape(0), a.shape(1)), [&](Int i, Int j) { out(i, j) = a(i, j + 1); });
    }, o);
  };
  NDArray<double> a({3, 4}), out({3, 4});
  for (std::int64_t k = 0; k < 12; ++k) a.data()[k] = static_cast<double>(k);
  expect_index_error(make, [&](auto& k) { k(a, out); },
                     "kernel 'right_neighbour': index 4 out of range for axis 1 of array 'a' with extent 4");
  auto rows = [](const Options& o) {
    return jit("row_sum", [](Array<double, 2> a, Int r) {
      Double s = 0.0;
      range(a.shape(1), [&](Int j) { s += a(r, j); });
      return s;
    }, o);
  };
  expect_index_error(rows, [&](auto& k) { k(a, 3); },
                     "kernel 'row_sum': index 3 out of range for axis 0 of array 'a' with extent 3");
}

TEST(BoundsCheck, SequentialLoops) {
  auto total = [](const Options& o) {
    return jit("first_n", [](Array<double> x, Int n) {
      Double s = 0.0;
      range(n, [&](Int k) { s = s + x[k]; });
      return s;
    }, o);
  };
  std::vector<double> x(6, 1.0);
  expect_index_error(total, [&](auto& k) { k(x, 7); },
                     "kernel 'first_n': index 6 out of range for axis 0 of array 'x' with extent 6");
  // A data-dependent index is checked at each iteration.
  auto gather = [](const Options& o) {
    return jit("gather", [](Array<double> x, Array<std::int64_t> idx) {
      Double s = 0.0;
      range(idx.shape(0), [&](Int k) { s = s + x[idx[k]]; });
      return s;
    }, o);
  };
  std::vector<std::int64_t> idx = {0, 4, 7, 1};
  std::vector<double> five(5, 1.0);
  expect_index_error(gather, [&](auto& k) { k(five, idx); },
                     "kernel 'gather': index 7 out of range for axis 0 of array 'x' with extent 5");
}

TEST(BoundsCheck, Reductions) {
  auto dot = [](const Options& o) {
    return jit("dot_n", [](Array<double> x, Array<double> y, Int n) {
      Double s = 0.0;
      prange(n, [&](Int i) { s += x[i] * y[i]; });
      return s;
    }, o);
  };
  std::vector<double> x(100, 1.0), y(90, 1.0);
  expect_index_error(dot, [&](auto& k) { k(x, y, 100); },
                     "kernel 'dot_n': index 90 out of range for axis 0 of array 'y' with extent 90");
  // A histogram: data-dependent indices of an array reduction, checked inside the parallel loop.
  auto histogram = [](const Options& o) {
    return jit("histogram", [](Array<std::int64_t> bins, Array<std::int64_t> hist) {
      prange(bins.shape(0), [&](Int i) { hist[bins[i]] += 1; });
    }, o);
  };
  std::vector<std::int64_t> bins(10000, 3), hist(10, 0);
  bins[7777] = 12;
  expect_index_error(histogram, [&](auto& k) { k(bins, hist); },
                     "kernel 'histogram': index 12 out of range for axis 0 of array 'hist' with extent 10");
  bins[7777] = -2;
  expect_index_error(histogram, [&](auto& k) { k(bins, hist); },
                     "kernel 'histogram': index -2 out of range for axis 0 of array 'hist' with extent 10");
  // A branch holding an argmax update and other accesses: only the update itself keeps its shape (found by
  // kiln-fuzz --out-of-bounds, seed 1930: w[i] went unchecked).
  auto branch = [](const Options& o) {
    return jit("branch_argmax", [](Array<double> x, Array<double> w, Array<double> out, Double c) {
      Double best = -1e300;
      Int at = -1;
      prange(x.shape(0), [&](Int i) {
        if_(c > 0.0, [&] {
          if_(x[i] > best, [&] {
            best = x[i];
            at = i;
          });
          out[i] = w[i];
        });
      });
      return at;
    }, o);
  };
  std::vector<double> xs = {1, 5, 2, 4}, w3(3, 1.0), w4(4, 1.0), out(4, 0.0);
  expect_index_error(branch, [&](auto& k) { k(xs, w3, out, 1.0); },
                     "kernel 'branch_argmax': index 3 out of range for axis 0 of array 'w' with extent 3");
  for (const Target t : targets()) EXPECT_EQ(branch(mode(t, true))(xs, w4, out, 1.0), 1);
}

TEST(BoundsCheck, FixedIndexOfAnArrayOperation) {
  // out(all) = x(r, all) * 2: the row index r is the user's; the columns are the operation's own.
  auto make = [](const Options& o) {
    return jit("row_times_two", [](Array<double, 2> x, Array<double, 1> out, Int r) {
      out(all) = x(r, all) * 2.0;
    }, o);
  };
  NDArray<double> x({3, 4}), out({4});
  for (std::int64_t k = 0; k < 12; ++k) x.data()[k] = static_cast<double>(k);
  expect_index_error(make, [&](auto& k) { k(x, out, 5); },
                     "kernel 'row_times_two': index 5 out of range for axis 0 of array 'x' with extent 3");
  for (const Target t : targets()) {
    auto k = make(mode(t, true));
    k(x, out, 2);
    EXPECT_EQ(out.data()[3], 22.0);
  }
}

// ---- no false alarms -----------------------------------------------------------------------------------

TEST(BoundsCheck, ReadsTheProgramDoesNotMakeAreNotChecked) {
  // The guard keeps x[i] from being read past x's end: select, && and if_ evaluate only what they need.
  auto make = [](const Options& o) {
    return jit("guarded", [](Array<double> x, Array<double> y) {
      prange(y.shape(0), [&](Int i) {
        y[i] = select(i < x.shape(0), x[select(i < x.shape(0), i, Int(0))], -1.0);
        if_(i < x.shape(0) && x[i] > 1.5, [&] { y[i] = y[i] + 10.0; });
      });
    }, o);
  };
  std::vector<double> x = {1.0, 2.0, 3.0};
  for (const Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    std::vector<double> y(6, 0.0);
    make(mode(t, true))(x, y);
    EXPECT_EQ(y, (std::vector<double>{1.0, 12.0, 13.0, -1.0, -1.0, -1.0}));
  }
  // An empty loop reads nothing, whatever its index would be.
  auto empty = [](const Options& o) {
    return jit("empty_loop", [](Array<double> x, Int n) {
      Double s = 0.0;
      prange(n, [&](Int i) { s += x[i + 100]; });
      range(n, [&](Int i) { s += x[i - 100]; });
      return s;
    }, o);
  };
  for (const Target t : targets()) EXPECT_EQ(empty(mode(t, true))(x, 0), 0.0);
}

// ---- the mode raises exactly where the interpreter does -------------------------------------------------

/// Runs `call` and returns "IndexError" if it threw one, else the result as text.
template <class Call>
std::string outcome(Call call) {
  try {
    return call();
  } catch (const IndexError&) {
    return "IndexError";
  }
}

std::string text(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += std::to_string(x) + ",";
  return s;
}

TEST(BoundsCheck, FailsExactlyWhenTheInterpreterDoes) {
  // Each kernel reads and writes with the shapes of its arguments and a few integer parameters, swept over
  // values in and out of range. The interpreter checks every access it makes (without the mode); the mode
  // must raise IndexError for exactly the same arguments, and otherwise give the same answer.
  auto kernels = [](const Options& o) {
    return std::make_tuple(
        jit("offsets", [](Array<double> x, Array<double> y, Int lo, Int hi, Int d) {
          prange(lo, hi, [&](Int i) { y[i] = x[i + d] - x[i]; });
        }, o),
        jit("nested", [](Array<double, 2> a, Array<double> out, Int rows, Int cols) {
          prange(rows, [&](Int i) {
            Double s = 0.0;
            range(cols, [&](Int j) { s += a(i, j) * a(j, i); });
            out[i] = s;
          });
        }, o),
        jit("guarded", [](Array<double> x, Array<double> y, Int n, Int k) {
          prange(n, [&](Int i) {
            y[i] = select(i < k, x[i], 0.0);
            if_(i + 1 < k && x[i + 1] > 0.0, [&] { y[i] = y[i] + 1.0; });
          });
        }, o),
        jit("argmax_at", [](Array<double> x, Int n, Int d) {
          Double best = -1e300;
          Int at = -1;
          prange(n, [&](Int i) {
            if_(x[i + d] > best, [&] {
              best = x[i + d];
              at = i;
            });
          });
          return at;
        }, o),
        jit("sequential", [](Array<double> x, Array<double> y, Int n, Int k) {
          range(n, [&](Int i) {
            y[i] = x[i];
            range(k, [&](Int j) { y[i] = y[i] + x[j]; });
          });
        }, o),
        jit("row_view", [](Array<double, 2> a, Array<double, 1> out, Int r) { out(all) = a(r, all) + 1.0; }, o));
  };
  auto reference = kernels(mode(Target::interpreter, false));
  std::vector<decltype(kernels(mode(Target::interpreter, true)))> checked;
  for (const Target t : targets()) checked.push_back(kernels(mode(t, true)));
  const std::vector<std::int64_t> values = {-2, -1, 0, 1, 3, 5, 6, 7};
  std::vector<double> x = {0.5, -1.5, 2.5, 3.5, -4.5, 5.5};
  NDArray<double> a({5, 5});
  for (std::int64_t k = 0; k < 25; ++k) a.data()[k] = static_cast<double>(k % 7) - 3.0;
  int raised = 0, ran = 0;
  auto compare = [&](const std::string& what, auto run) {
    const std::string want = outcome([&] { return run(reference); });
    for (auto& ks : checked) EXPECT_EQ(outcome([&] { return run(ks); }), want) << what;
    (want == "IndexError" ? raised : ran)++;
  };
  for (const std::int64_t p : values)
    for (const std::int64_t q : values) {
      const std::string at = std::to_string(p) + ", " + std::to_string(q);
      for (const std::int64_t d : {-1, 0, 2})
        compare("offsets(" + at + ", " + std::to_string(d) + ")", [&](auto& ks) {
          std::vector<double> y(6, 0.0);
          std::get<0>(ks)(x, y, p, q, d);
          return text(y);
        });
      compare("nested(" + at + ")", [&](auto& ks) {
        std::vector<double> out(5, 0.0);
        std::get<1>(ks)(a, out, p, q);
        return text(out);
      });
      compare("guarded(" + at + ")", [&](auto& ks) {
        std::vector<double> y(6, 0.0);
        std::get<2>(ks)(x, y, p, q);
        return text(y);
      });
      compare("argmax_at(" + at + ")", [&](auto& ks) { return std::to_string(std::get<3>(ks)(x, p, q)); });
      compare("sequential(" + at + ")", [&](auto& ks) {
        std::vector<double> y(6, 0.0);
        std::get<4>(ks)(x, y, p, q);
        return text(y);
      });
    }
  for (const std::int64_t r : values)
    compare("row_view(" + std::to_string(r) + ")", [&](auto& ks) {
      NDArray<double> out({5});
      std::get<5>(ks)(a, out, r);
      return text(std::vector<double>(out.data(), out.data() + 5));
    });
  EXPECT_GT(raised, 50);
  EXPECT_GT(ran, 50);
}

// ---- same answers --------------------------------------------------------------------------------------

template <class T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

TEST(BoundsCheck, InRangeKernelsGiveBitwiseTheSameAnswers) {
  const std::int64_t n = 5003;
  std::vector<double> x(n), w(n);
  std::vector<std::int64_t> bins(n);
  for (std::int64_t i = 0; i < n; ++i) {
    x[static_cast<size_t>(i)] = 0.001 * static_cast<double>((i * 7919) % 1013) - 0.4;
    w[static_cast<size_t>(i)] = 1.0 / static_cast<double>(i + 1);
    bins[static_cast<size_t>(i)] = (i * 31) % 17;
  }
  auto run = [&](const Options& o) {
    // A shifted stencil by hand, a reduction, an argmin, a histogram and a sequential prefix sum.
    auto smooth = jit("smooth", [](Array<double> x, Array<double> y) {
      prange(1, x.shape(0) - 1, [&](Int i) { y[i] = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1]; });
    }, o);
    auto dot = jit("dot", [](Array<double> x, Array<double> w) {
      Double s = 0.0;
      prange(x.shape(0), [&](Int i) { s += x[i] * w[i]; });
      return s;
    }, o);
    auto argmin = jit("argmin", [](Array<double> x) {
      Double best = 1e300;
      Int at = -1;
      prange(x.shape(0), [&](Int i) {
        if_(x[i] < best, [&] {
          best = x[i];
          at = i;
        });
      });
      return at;
    }, o);
    auto histogram = jit("histogram", [](Array<std::int64_t> bins, Array<std::int64_t> hist) {
      prange(bins.shape(0), [&](Int i) { hist[bins[i]] += 1; });
    }, o);
    auto prefix = jit("prefix", [](Array<double> x, Array<double> y) {
      Double s = 0.0;
      range(x.shape(0), [&](Int k) {
        s = s + x[k];
        y[k] = s;
      });
    }, o);
    std::vector<double> smoothed(n, 0.0), sums(n, 0.0);
    std::vector<std::int64_t> hist(17, 0);
    smooth(x, smoothed);
    const double d = dot(x, w);
    const std::int64_t a = argmin(x);
    histogram(bins, hist);
    prefix(x, sums);
    smoothed.push_back(d);
    sums.push_back(static_cast<double>(a));
    smoothed.insert(smoothed.end(), sums.begin(), sums.end());
    return std::make_pair(smoothed, hist);
  };
  for (const Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    const auto plain = run(mode(t, false)), checked = run(mode(t, true));
    EXPECT_TRUE(bitwise_equal(plain.first, checked.first));
    EXPECT_TRUE(bitwise_equal(plain.second, checked.second));
  }
}

// ---- where the checks go -------------------------------------------------------------------------------

TEST(BoundsCheck, ProvenAccessesAreNotCheckedAndLoopChecksMoveBeforeTheLoop) {
  auto k = jit("placement", [](Array<double> x, Array<double> y) {
    prange(x.shape(0), [&](Int i) { y[i] = x[i]; });  // x[i] holds by construction; y[i] is one check
  }, mode(Target::interpreter, true));
  std::vector<double> x(4, 1.0), y(4);
  k(x, y);
  const std::string report = k.diagnostics();
  const std::string ir = report.substr(report.find("IR after passes:"));
  EXPECT_CONTAINS(report, "insert_bounds_checks:\n  1 index check(s) inserted, 1 of them made once before their loop; 3 bound(s) hold by construction");
  // The check comes before the parfor, and its body has none.
  const size_t check = ir.find("check "), loop = ir.find("parfor");
  ASSERT_NE(check, std::string::npos) << ir;
  ASSERT_NE(loop, std::string::npos) << ir;
  EXPECT_LT(check, loop) << ir;
  EXPECT_EQ(ir.find("check ", loop), std::string::npos) << ir;
  EXPECT_CONTAINS(ir, "for axis 0 of array 'y' with extent {}");

  // Nested pranges: the check of out's rows moves out of the inner loop and then out of the outer one, so
  // the nest still collapses into one 2-d parfor without checks.
  auto nested = jit("twice", [](Array<double, 2> a, Array<double, 2> out) {
    prange(a.shape(0), [&](Int i) { prange(a.shape(1), [&](Int j) { out(i, j) = a(i, j) * 2.0; }); });
  }, mode(Target::interpreter, true));
  NDArray<double> a({3, 4}), out({3, 4}), short_out({2, 4});
  nested(a, out);
  const std::string nested_ir = nested.lowered_ir();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(nested_ir, m, std::regex(R"(parfor \(i in 0 \.\. dim\(a, 0\), [\w.]+ in 0 \.\. dim\(a, 1\)\) \{)")))
      << nested_ir;
  const size_t nest = static_cast<size_t>(m.position(0));
  EXPECT_EQ(nested_ir.find("parfor"), nested_ir.rfind("parfor")) << nested_ir;
  EXPECT_EQ(nested_ir.find("check ", nest), std::string::npos) << nested_ir;
  EXPECT_EQ(exact_error_of<IndexError>([&] { nested(a, short_out); }),
            "kernel 'twice': index 2 out of range for axis 0 of array 'out' with extent 2");

  // Without the mode, no check at all.
  auto plain = jit("placement", [](Array<double> x, Array<double> y) {
    prange(x.shape(0), [&](Int i) { y[i] = x[i]; });
  }, mode(Target::interpreter, false));
  plain(x, y);
  EXPECT_EQ(plain.diagnostics().find("check "), std::string::npos);
}

// ---- the cache key -------------------------------------------------------------------------------------

TEST(BoundsCheck, TheModeIsPartOfTheCacheKey) {
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend: nothing is cached";
  auto body = [](Array<double> x, Array<double> y, Int n) { prange(n, [&](Int i) { y[i] = x[i] + 1.0; }); };
  auto named = [](Options o) {
    o.arg_names = {"x", "y", "n"};
    return o;
  };
  std::vector<double> x(4, 1.0), y(8, 0.0);
  auto plain = jit("keyed", body, named(mode(Target::cpu, false)));
  plain(x, y, 4);
  const CompileRecord first = compile_history().back();
  // A new kernel object with the same lambda, in bounds-checked mode: not the unchecked code.
  auto checked = jit("keyed", body, named(mode(Target::cpu, true)));
  EXPECT_CONTAINS(exact_error_of<IndexError>([&] { checked(x, y, 5); }),
                  "kernel 'keyed': index 4 out of range for axis 0 of array 'x' with extent 4");
  const CompileRecord second = compile_history().back();
  EXPECT_EQ(second.kernel, "keyed");
  if (first.cache != CacheSource::off) {
    EXPECT_NE(first.key, second.key);
    EXPECT_NE(second.cache, CacheSource::memory);
  }
  // And the other way round: the unchecked kernel is still unchecked (and fast): it reads x[4] of a
  // 5-element x.
  std::vector<double> x5(5, 1.0);
  plain(x5, y, 5);
  EXPECT_EQ(y[4], 2.0);
  // The same kernel object asked for the mode compiles a variant of its own.
  auto again = plain.with(named(mode(Target::cpu, true)));
  EXPECT_THROW(again(x, y, 5), IndexError);
}

// A checked kernel whose code came from the cache (a second kernel object) describes the checked code: its
// diagnostics run the passes again with the kernel's own options.
TEST(BoundsCheck, DiagnosticsOfCachedCheckedCodeShowTheChecks) {
  if (!has_cpu_backend()) GTEST_SKIP() << "no CPU backend: nothing is cached";
  auto make = [] {
    return jit("described", [](Array<double> x, Array<double> y, Array<std::int64_t> k) {
      prange(k.shape(0), [&](Int i) { y[i] = x[k[i]]; });
    }, mode(Target::cpu, true));
  };
  std::vector<double> x(4, 1.0), y(4);
  std::vector<std::int64_t> k{0, 1, 2, 3};
  auto first = make();
  first(x, y, k);
  auto second = make();
  second(x, y, k);
  ASSERT_NE(compile_history().back().cache, CacheSource::miss);
  EXPECT_CONTAINS(second.lowered_ir(), "out of range for axis 0 of array 'x'");
}

TEST(BoundsCheck, AnIndexReadFromAnArrayIsCheckedAfterTheArrayIsWritten) {
  // The check of x[idx[n - 1]] reads idx: no pass may move it above the loop that fills idx.
  auto make = [](const Options& o) {
    return jit("indirect", [](Array<double> x, Int n) {
      auto idx = empty<std::int64_t>(n);
      prange(n, [&](Int i) { idx[i] = 2 * i; });
      auto twice = empty<double>(n);
      prange(n, [&](Int i) { twice[i] = 2.0 * x[idx[i] / 2]; });
      return x[idx[n - 1]] + twice[n - 1];
    }, o);
  };
  std::vector<double> five = {0, 1, 2, 3, 4}, four = {0, 1, 2, 3};
  for (const Target t : targets())
    for (const bool checked : {false, true}) {
      SCOPED_TRACE(std::string(name_of(t)) + (checked ? ", checked" : ""));
      EXPECT_EQ(make(mode(t, checked))(five, 3), 4.0 + 4.0);
    }
  expect_index_error(make, [&](auto& k) { k(four, 3); },
                     "kernel 'indirect': index 4 out of range for axis 0 of array 'x' with extent 4");
  // The same with nothing else in the loop that fills idx.
  auto only = [](const Options& o) {
    return jit("indirect_only", [](Array<double> x, Int n) {
      auto idx = empty<std::int64_t>(n);
      prange(n, [&](Int i) { idx[i] = 2 * i; });
      return x[idx[n - 1]];
    }, o);
  };
  for (const Target t : targets()) {
    SCOPED_TRACE(std::string(name_of(t)));
    EXPECT_EQ(only(mode(t, true))(five, 3), 4.0);
    for (int rep = 0; rep < 20; ++rep) EXPECT_EQ(only(mode(t, true))(five, 1 + rep % 3), 2.0 * (rep % 3));
  }
  expect_index_error(only, [&](auto& k) { k(four, 3); },
                     "kernel 'indirect_only': index 4 out of range for axis 0 of array 'x' with extent 4");
}

TEST(BoundsCheck, KernelsDifferingOnlyInNamesShareNoMessages) {
  // The cache key leaves names out; the checks' messages do not. Each kernel must name its own arrays, also
  // when another kernel of the same structure was compiled (and cached) first.
  auto first = jit("same_shape", [](Array<double> alpha, Int n) { return alpha[n]; }, mode(targets().front(), true));
  auto second = jit("same_shape", [](Array<double> beta, Int n) { return beta[n]; }, mode(targets().front(), true));
  std::vector<double> x(3, 1.0);
  EXPECT_EQ(exact_error_of<IndexError>([&] { first(x, 3); }),
            "kernel 'same_shape': index 3 out of range for axis 0 of array 'alpha' with extent 3");
  EXPECT_EQ(exact_error_of<IndexError>([&] { second(x, 3); }),
            "kernel 'same_shape': index 3 out of range for axis 0 of array 'beta' with extent 3");
}

}  // namespace
}  // namespace kiln
