// Shared by the CUDA tests: IR shorthands, host arrays of any layout, and comparison against the
// interpreter (the definition of kiln's semantics).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codegen/backend.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/semantics.hpp"
#include "ir/status.hpp"
#include "kiln/abi.hpp"
#include "kiln/error.hpp"

namespace kiln::cudatest {

using ir::Expr;
using ir::Stmt;
using ir::Var;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- IR construction shorthands ------------------------------------------------------------------------

inline Var param(const std::string& name, DType t) { return ir::make_var(name, ir::Type::scalar(t), ir::VarKind::Param); }
inline Var array_param(const std::string& name, DType t, int rank = 1, bool unit_stride = false) {
  return ir::make_var(name, ir::Type::array(t, rank, unit_stride), ir::VarKind::Param);
}
inline Var local(const std::string& name, DType t) { return ir::make_var(name, ir::Type::scalar(t), ir::VarKind::Local); }
inline Var local_array(const std::string& name, DType t, int rank) {
  return ir::make_var(name, ir::Type::array(t, rank, true), ir::VarKind::Local);
}
inline Var index(const std::string& name) { return ir::make_var(name, ir::Type::scalar(DType::I64), ir::VarKind::Index); }

inline Expr val(const Var& v) { return ir::make_ref(v); }
inline Expr i64c(std::int64_t v) { return ir::make_i64(v); }
inline Expr num(DType t, double v) { return ir::make_const(t, v); }
inline Expr dim(const Var& a, int axis = 0) { return ir::make_dim(a, axis); }
inline Expr at(const Var& a, std::vector<Expr> idx) { return ir::make_load(a, std::move(idx)); }
inline Expr bin(BinaryOp op, Expr a, Expr b) { return ir::make_binary(op, std::move(a), std::move(b)); }
inline Expr operator+(Expr a, Expr b) { return bin(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr operator-(Expr a, Expr b) { return bin(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr operator*(Expr a, Expr b) { return bin(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr operator/(Expr a, Expr b) { return bin(BinaryOp::Div, std::move(a), std::move(b)); }
inline Expr cast(DType t, Expr e) { return ir::make_cast(t, std::move(e)); }
inline Expr call(Intrinsic fn, std::vector<Expr> args) { return ir::make_call(fn, std::move(args)); }

inline Stmt store(const Var& a, std::vector<Expr> idx, Expr v) { return ir::make_store(a, std::move(idx), std::move(v)); }
inline Stmt let(const Var& v, Expr e) { return ir::make_let(v, std::move(e)); }
inline Stmt assign(const Var& v, Expr e) { return ir::make_assign(v, std::move(e)); }
inline Stmt block(std::vector<Stmt> s) { return ir::make_block(std::move(s)); }
/// parfor over [0, ends...).
inline Stmt parfor(std::vector<Var> idx, std::vector<Expr> ends, Stmt body, std::vector<ir::Reduction> red = {}) {
  std::vector<Expr> begins(idx.size(), i64c(0));
  return ir::make_parfor(std::move(idx), std::move(begins), std::move(ends), std::move(body), std::move(red), "test");
}
inline Stmt for_loop(const Var& i, Expr begin, Expr end, Stmt body) {
  return ir::make_for(i, std::move(begin), std::move(end), std::move(body));
}

inline ir::Function function(std::string name, std::vector<Var> params, std::vector<Stmt> body, Expr result = nullptr,
                             Var result_array = nullptr) {
  ir::Function f;
  f.name = std::move(name);
  f.params = std::move(params);
  f.body = block(std::move(body));
  f.result = std::move(result);
  f.result_array = std::move(result_array);
  return f;
}

// ---- host arrays with arbitrary layouts ------------------------------------------------------------------

enum class Layout {
  RowMajor,
  ColumnMajor,  ///< the first axis has stride 1
  Padded,       ///< stride 2 along the last axis and a gap after every row
  Reversed,     ///< a negative stride on the first axis
  RowGaps,      ///< unit stride along the last axis, a gap after every row
};

/// An array of any element type in storage larger than its elements (gaps hold a pattern that must survive).
class TestArray {
 public:
  TestArray(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor);
  TestArray(const TestArray& o);
  TestArray& operator=(const TestArray& o);

  DType elem() const { return elem_; }
  ArrayDesc& desc() { return desc_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t size() const;
  void* element(std::int64_t linear) const;  ///< the element with row-major number `linear`
  template <class T>
  T get(std::int64_t linear) const {
    T v;
    std::memcpy(&v, element(linear), sizeof v);
    return v;
  }
  template <class T>
  void set(std::int64_t linear, T v) {
    std::memcpy(element(linear), &v, sizeof v);
  }
  /// Sets element i to v converted to the element type.
  void set_number(std::int64_t i, double v);
  /// The storage outside the elements, which must come back as it went in.
  std::vector<unsigned char> gap_bytes() const;

 private:
  DType elem_;
  std::vector<std::int64_t> shape_;
  ArrayDesc desc_;
  std::vector<std::uint64_t> storage_;
  std::int64_t offset_ = 0;
};

/// One kernel argument: a scalar of some type, or an array.
struct Arg {
  DType type;
  ScalarSlot scalar{};
  std::optional<TestArray> array;
};
using Args = std::vector<Arg>;

template <class T>
Arg scalar_arg(T v) {
  Arg a{dtype_of<T>(), {}, std::nullopt};
  std::memcpy(&a.scalar, &v, sizeof v);
  return a;
}
inline Arg array_arg(TestArray a) { return Arg{a.elem(), {}, std::move(a)}; }

std::mt19937_64& rng();
double uniform(double lo, double hi);
std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);
TestArray random_array(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor, double lo = -10, double hi = 10);
template <class T>
TestArray array_of(const std::vector<T>& values) {
  TestArray a(dtype_of<T>(), {static_cast<std::int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) a.set<T>(static_cast<std::int64_t>(i), values[i]);
  return a;
}

/// What one run left behind: the arguments (possibly written), the result, and the status of a failed run.
struct Outcome {
  Args args;
  ScalarSlot result{};
  ArrayDesc result_array{};
  std::int32_t status = 0;
  std::string message;
  Outcome() = default;
  Outcome(const Outcome&) = delete;
  ~Outcome() { std::free(result_array.data); }
};

/// The interpreter's run; an error it throws becomes status (via the code of its class) and message.
std::unique_ptr<Outcome> run_interpreter(const ir::Function& f, const Args& inputs);
/// A compiled kernel's run with host arrays (argv[nparams] = `extra`, for backends that read it).
std::unique_ptr<Outcome> run_kernel(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs, void* extra = nullptr);

/// How far a float may be from the reference: `ulps`, or `abs` absolute (reassociated sums).
struct Tolerance {
  double ulps = 0;
  double abs = 0;
};

/// Compares every array argument (elements and untouched gaps), the result and the status.
void expect_same(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol);

/// Edge values of each type, for cross products of operands.
template <class T>
std::vector<T> edge_values() {
  using L = std::numeric_limits<T>;
  if constexpr (std::is_floating_point_v<T>) {
    return {T(kNaN), -T(kNaN), T(kInf), -T(kInf), T(0), -T(0), T(1), T(-1), T(0.5), T(-0.5), T(1.5), T(-2.5),
            T(3), T(-3), T(7.25), L::max(), L::lowest(), L::min(), L::denorm_min(), T(1e-30)};
  } else {
    return {T(0), T(1), T(-1), T(2), T(-2), T(7), T(-7), T(31), T(32), T(33), T(63), T(64), T(65), L::max(), L::min(),
            T(L::min() + 1), T(1000), T(-1000)};
  }
}

}  // namespace kiln::cudatest
