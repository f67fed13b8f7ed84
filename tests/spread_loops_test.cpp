// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// spread_loops (device targets): a launched parfor whose loop writes one element per step gets that loop as a
// dimension. Without a GPU: which loops the rule takes (a Gram product's inner loop under the loop that
// accumulates, a triangle's loop with its test) and which it leaves (a loop carrying a scalar, one reading the
// element the step before wrote, one whose enclosing lets read what it writes), the notes, and the lowered IR
// run by the interpreter on host memory against the traced IR, bit for bit (each element sees the same
// operations in the same order), at sizes 0, 1 and primes, through both of the forms the host chooses between.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cuda_rows.hpp"
#include "cuda_test_support.hpp"
#include "kiln/kiln.hpp"
#include "ir/printer.hpp"
#include "passes/pipeline.hpp"
#include "passes/report.hpp"

namespace kiln {
namespace {

using namespace cudatest;

using rows::gram;  // out += D^T D as users write it without a transpose (the suite's covariance)

/// The lower triangle of C = 1.2 C + 1.5 A A^T (the suite's syrk): the loop's end depends on the row.
const auto triangle = [](Array<double, 2> C, Array<double, 2> A) {
  prange(C.shape(0), [&](Int i) {
    range(i + 1, [&](Int j) {
      Double s = 0.0;
      range(A.shape(1), [&](Int k) { s += A(i, k) * A(j, k); });
      C(i, j) = 1.2 * C(i, j) + 1.5 * s;
    });
  });
};

/// Not spread: the loop accumulates into a scalar declared outside it.
const auto carried = [](Array<double, 2> x, Array<double, 2> out) {
  prange(x.shape(0), [&](Int i) {
    Double s = 0.0;
    range(x.shape(1), [&](Int j) {
      s += x(i, j);
      out(i, j) = s;
    });
  });
};

/// Not spread: each step reads the element the step before wrote (a running sum along the row).
const auto running = [](Array<double, 2> x, Array<double, 2> unused) {
  prange(x.shape(0), [&](Int i) {
    range(1, x.shape(1), [&](Int j) { x(i, j) = x(i, j) + x(i, j - 1) + 0.0 * unused(0, 0); });
  });
};

/// Not spread: the let around the loop reads an element the loop writes.
const auto reads_back = [](Array<double, 2> x, Array<double, 2> y) {
  prange(x.shape(0), [&](Int i) {
    range(y.shape(0), [&](Int k) {
      const Double first = x(i, 0) + y(k, 0);
      range(x.shape(1), [&](Int j) { x(i, j) = x(i, j) * 0.5 + first; });
    });
  });
};

std::string spread_notes(const passes::PipelineReport& r) {
  std::string s;
  for (const auto& n : r.notes)
    if (n.pass == "spread_loops") s += n.text + "\n";
  return s;
}

/// Two f64 matrices (the kernels' arguments), rows x cols each.
Args inputs(std::int64_t rows, std::int64_t cols, std::int64_t rows2, std::int64_t cols2) {
  return {array_arg(random_array(DType::F64, {rows, cols}, Layout::RowMajor, -2, 2)),
          array_arg(random_array(DType::F64, {rows2, cols2}, Layout::RowMajor, -2, 2))};
}

/// The host picks the spread form for a parfor of fewer iterations than the device's threads
/// (PipelineOptions::device_threads), else the parfor as written. The default (2^18) takes the spread form at
/// every test size; with 2, a parfor of one row takes it and every larger one the form as written, so both arms
/// run on the interpreter.
template <class F>
void check(const char* name, const F& fn, bool spread, const std::string& expected_note,
           const std::vector<std::vector<std::int64_t>>& shapes) {
  SCOPED_TRACE(name);
  const ir::Function traced = rows::trace_kernel(name, fn, {"a", "b"}, 2, /*lockstep_rows=*/true);
  for (const std::int64_t threads : {passes::kDefaultDeviceThreads, std::int64_t{2}}) {
    SCOPED_TRACE("device_threads " + std::to_string(threads));
    passes::PipelineReport report;
    passes::PipelineOptions o;
    o.target = Target::cuda;
    o.device_threads = threads;
    const ir::Function lowered = passes::run_pipeline(traced, &report, o);
    const std::string notes = spread_notes(report);
    EXPECT_EQ(!notes.empty(), spread) << notes;
    if (spread) {
      EXPECT_NE(notes.find(expected_note), std::string::npos) << notes;
      EXPECT_NE(notes.find("fewer than " + std::to_string(threads) + " iterations"), std::string::npos) << notes;
    }
    // With one loop around the spread one (the Gram product), its element lives in a variable across that loop.
    EXPECT_EQ(ir::to_string(lowered).find("_element") != std::string::npos, std::string(name) == "gram") << ir::to_string(lowered);
    for (const auto& s : shapes) {
      const Args args = inputs(s[0], s[1], s[2], s[3]);
      const auto want = run_interpreter(traced, args), got = run_interpreter(lowered, args);
      expect_same(lowered, *want, *got, Tolerance{});
    }
  }
}

TEST(SpreadLoops, AGramProductsInnerLoopUnderTheAccumulatingLoop) {
  // out is m x m, d n x m.
  check("gram", gram, true, "its loop over j (inside 1 loop(s)) writes one element per step",
        {{3, 3, 0, 3}, {1, 1, 1, 1}, {3, 3, 5, 3}, {7, 7, 13, 7}});
}

TEST(SpreadLoops, ATrianglesLoopWithItsTest) {
  check("triangle", triangle, true, "j in 0 .. dim(a, 0) with each step testing `(j < (i + 1))` (a triangle)",
        {{0, 0, 0, 4}, {1, 1, 1, 3}, {11, 11, 11, 5}, {17, 17, 17, 1}});
}

TEST(SpreadLoops, LoopsWhoseStepsDependOnEachOtherStay) {
  check("carried", carried, false, "", {{1, 1, 1, 1}, {7, 5, 7, 5}});
  check("running", running, false, "", {{1, 1, 1, 1}, {7, 5, 1, 1}});
  check("reads_back", reads_back, false, "", {{1, 1, 1, 1}, {7, 5, 3, 2}});
}

}  // namespace
}  // namespace kiln
