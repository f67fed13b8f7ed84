// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GoogleTest checks on kernel runs (for the test binaries only: kiln-fuzz reports differences in its own words).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/backend.hpp"
#include "ir/semantics.hpp"
#include "tools/test_support/buffers.hpp"
#include "tools/test_support/compare.hpp"

namespace kiln::test_support {

/// A compiled kernel's run on copies of `inputs` (argv[nparams] = `extra`, for backends that read it).
inline std::unique_ptr<Outcome> run_kernel(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs,
                                           void* extra = nullptr) {
  Run run = start_run(f, inputs, extra);
  KernelStatus status;
  run.outcome->status = k(run.argv.data(), run.result, &status);
  EXPECT_EQ(run.outcome->status, status.code);
  run.outcome->message = status.message;
  return std::move(run.outcome);
}

/// Compares element by element (reporting the first few differences only) and the bytes in the gaps.
inline void expect_arrays_close(const TestArray& ref, const TestArray& got, const Tolerance& tol, const std::string& what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  int failures = 0;
  ir::sem::with_type(ref.elem(), [&](auto t) {
    using T = decltype(t);
    for (std::int64_t i = 0; i < ref.size() && failures < 5; ++i) {
      const T r = ref.get<T>(i), g = got.get<T>(i);
      if (!close(r, g, tol)) {
        ++failures;
        ADD_FAILURE() << what << " element " << i << ": expected " << show(r) << ", got " << show(g);
      }
    }
  });
  EXPECT_TRUE(ref.gap_bytes() == got.gap_bytes()) << what << ": bytes outside the array's elements changed";
}

inline void expect_scalar_close(DType t, const ScalarSlot& ref, const ScalarSlot& got, const Tolerance& tol) {
  ir::sem::with_type(t, [&](auto x) {
    using T = decltype(x);
    T r, g;
    std::memcpy(&r, &ref, sizeof r);
    std::memcpy(&g, &got, sizeof g);
    EXPECT_TRUE(close(r, g, tol)) << "result: expected " << show(r) << ", got " << show(g);
  });
}

/// Compares what two successful runs of `f` left behind: every array argument (elements and untouched gaps), the
/// scalar result and the result array (its shape, strides, alignment and elements).
inline void expect_same_values(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol) {
  for (std::size_t i = 0; i < ref.args.size(); ++i)
    if (ref.args[i].array) expect_arrays_close(*ref.args[i].array, *got.args[i].array, tol, "argument " + f.params[i]->name);
  if (f.returns_scalar()) expect_scalar_close(f.result->type, ref.result, got.result, tol);
  if (f.returns_array()) {
    const int rank = f.result_array->type.rank;
    std::vector<std::int64_t> shape;
    for (int k = 0; k < rank; ++k) {
      EXPECT_EQ(ref.result_array.shape[k], got.result_array.shape[k]);
      EXPECT_EQ(ref.result_array.strides[k], got.result_array.strides[k]);
      shape.push_back(got.result_array.shape[k]);
    }
    for (int k = rank; k < kMaxRank; ++k) EXPECT_EQ(got.result_array.shape[k], 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(got.result_array.data) % 64, 0u);
    // Wrap both results (row-major, as every backend returns them) to compare them element by element.
    TestArray r(f.result_array->type.elem, shape), g(f.result_array->type.elem, shape);
    const std::int64_t bytes = r.size() * size_of(r.elem());
    if (bytes > 0) {  // an empty result may have no storage at all
      std::memcpy(r.desc().data, ref.result_array.data, static_cast<std::size_t>(bytes));
      std::memcpy(g.desc().data, got.result_array.data, static_cast<std::size_t>(bytes));
    }
    expect_arrays_close(r, g, tol, "the result array");
  }
}

}  // namespace kiln::test_support
