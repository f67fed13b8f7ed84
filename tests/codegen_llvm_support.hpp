// Shared by the CPU backend's tests: IR construction shorthands, host arrays of any layout, running a
// function through the interpreter and a compiled kernel, and comparing the outcomes with tolerances.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codegen/llvm/cpu_backend.hpp"
#include "ir/builder.hpp"
#include "ir/interpreter.hpp"
#include "ir/semantics.hpp"
#include "runtime/parallel.hpp"

namespace kiln::llvm_test {

using ir::Expr;
using ir::Stmt;
using ir::Var;
namespace cpu = codegen::cpu;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
inline const std::vector<std::int64_t> kSizes = {0, 1, 2, 3, 7, 1023, 1000000};

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

// ---- host-side arrays with arbitrary layouts ------------------------------------------------------------

enum class Layout {
  RowMajor,
  ColumnMajor,  ///< transposed: the first axis has stride 1
  Padded,       ///< row-major with stride 2 along the last axis and a gap after every row
  Reversed,     ///< row-major with a negative stride on the first axis
  RowGaps,      ///< unit stride along the last axis, a gap after every row (a unit_stride view)
};

/// An array of any element type in storage that may be larger than its elements (the gaps must never be
/// written). Copies are deep, so every run gets its own inputs.
class TestArray {
 public:
  TestArray(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor)
      : elem_(t), shape_(std::move(shape)) {
    const int rank = static_cast<int>(shape_.size());
    std::int64_t dense = 1, padded = layout == Layout::Padded ? 2 : 1;
    for (int k = rank; k-- > 0;) {
      desc_.shape[k] = shape_[k];
      if (layout == Layout::Padded || layout == Layout::RowGaps) {
        desc_.strides[k] = padded;
        padded *= shape_[k] + 1;
      } else {
        desc_.strides[k] = dense;
      }
      dense *= shape_[k];
    }
    if (layout == Layout::ColumnMajor) {
      std::int64_t s = 1;
      for (int k = 0; k < rank; ++k) desc_.strides[k] = s, s *= shape_[k];
    }
    if (layout == Layout::Reversed && rank > 0) desc_.strides[0] = -desc_.strides[0];
    // The extreme offsets decide the storage size and where element 0 sits in it.
    std::int64_t lo = 0, hi = 0;
    for (int k = 0; k < rank; ++k) {
      const std::int64_t reach = (std::max<std::int64_t>(shape_[k], 1) - 1) * desc_.strides[k];
      (reach < 0 ? lo : hi) += reach;
    }
    const std::size_t bytes = static_cast<std::size_t>(hi - lo + 2) * static_cast<std::size_t>(size_of(t));
    storage_.assign((bytes + 7) / 8, 0xA5A5A5A5A5A5A5A5ULL);  // a known pattern in the gaps
    offset_ = -lo * size_of(t);
    desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
  }
  TestArray(const TestArray& o) : elem_(o.elem_), shape_(o.shape_), desc_(o.desc_), storage_(o.storage_), offset_(o.offset_) {
    desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
  }
  TestArray& operator=(const TestArray& o) {
    elem_ = o.elem_;
    shape_ = o.shape_;
    desc_ = o.desc_;
    storage_ = o.storage_;
    offset_ = o.offset_;
    desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
    return *this;
  }

  DType elem() const { return elem_; }
  ArrayDesc& desc() { return desc_; }
  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto s : shape_) n *= s;
    return n;
  }
  /// The address of the element with row-major number `linear`.
  void* element(std::int64_t linear) const {
    std::int64_t offset = 0;
    for (size_t k = shape_.size(); k-- > 0;) {
      offset += (linear % shape_[k]) * desc_.strides[k];
      linear /= shape_[k];
    }
    return static_cast<char*>(desc_.data) + offset * size_of(elem_);
  }
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
  template <class T>
  void fill(const std::function<T(std::int64_t)>& f) {
    for (std::int64_t i = 0; i < size(); ++i) set<T>(i, f(i));
  }
  /// The storage bytes outside the elements: they must come back as they went in.
  std::vector<unsigned char> gap_bytes() const {
    std::vector<unsigned char> bytes(reinterpret_cast<const unsigned char*>(storage_.data()),
                                     reinterpret_cast<const unsigned char*>(storage_.data() + storage_.size()));
    for (std::int64_t i = 0; i < size(); ++i) {
      const auto off = static_cast<const char*>(element(i)) - reinterpret_cast<const char*>(storage_.data());
      std::memset(bytes.data() + off, 0, static_cast<size_t>(size_of(elem_)));
    }
    return bytes;
  }

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

inline std::vector<void*> pointers(Args& args) {
  std::vector<void*> p;
  for (auto& a : args) p.push_back(a.array ? static_cast<void*>(&a.array->desc()) : static_cast<void*>(&a.scalar));
  return p;
}

/// What one run left behind: the (possibly written) arguments and the result.
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

inline std::unique_ptr<Outcome> run_interpreter(const ir::Function& f, const Args& inputs) {
  auto out = std::make_unique<Outcome>();
  out->args = inputs;
  auto p = pointers(out->args);
  void* result = f.returns_array() ? static_cast<void*>(&out->result_array) : static_cast<void*>(&out->result);
  ir::interpret(f, p.data(), result);
  return out;
}

inline std::unique_ptr<Outcome> run_kernel(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs) {
  auto out = std::make_unique<Outcome>();
  out->args = inputs;
  auto p = pointers(out->args);
  void* result = f.returns_array() ? static_cast<void*>(&out->result_array) : static_cast<void*>(&out->result);
  KernelStatus status;
  out->status = k(p.data(), result, &status);
  EXPECT_EQ(out->status, status.code);
  out->message = status.message;
  return out;
}

class ThreadCount {
 public:
  explicit ThreadCount(int n) { runtime::set_num_threads(n); }
  ~ThreadCount() { runtime::set_num_threads(0); }
};

// ---- comparison ---------------------------------------------------------------------------------------

/// How far a float may be from the reference: `ulps` units in the last place, or `abs` absolute (for
/// reassociated sums, whose error scales with the sum of the magnitudes, not with the result).
struct Tolerance {
  double ulps = 0;
  double abs = 0;
};

template <class T>
double ulp_distance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  // Map the floats onto integers in the same order, so that adjacent floats are adjacent integers (±0 both
  // map to 0). 128-bit arithmetic keeps the difference exact.
  auto ordered = [](T x) {
    const Bits bits = std::bit_cast<Bits>(x);
    return bits < 0 ? static_cast<__int128>(std::numeric_limits<Bits>::min()) - bits : static_cast<__int128>(bits);
  };
  const __int128 d = ordered(a) - ordered(b);
  return static_cast<double>(d < 0 ? -d : d);
}

template <class T>
bool close(T ref, T got, const Tolerance& tol) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got);
    if (std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(ref) ==
        std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(got))
      return true;
    if (std::isinf(ref) || std::isinf(got)) return false;
    if (tol.abs > 0 && std::fabs(static_cast<double>(ref) - static_cast<double>(got)) <= tol.abs) return true;
    if (ref == 0 || got == 0) return tol.ulps > 0 && ref == got;  // ±0 mismatch needs the sign right
    return ulp_distance(ref, got) <= tol.ulps;
  } else {
    (void)tol;
    return ref == got;
  }
}

template <class T>
std::string show(T v) {
  if constexpr (std::is_same_v<T, bool>) return v ? "true" : "false";
  else if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(v));
    return buf;
  } else return std::to_string(v);
}

/// Compares element by element; reports the first few differences only.
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

inline void expect_same(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol) {
  EXPECT_EQ(got.status, 0) << got.message;
  for (size_t i = 0; i < ref.args.size(); ++i)
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
    TestArray r(f.result_array->type.elem, shape), g(f.result_array->type.elem, shape);
    const std::int64_t bytes = r.size() * size_of(r.elem());
    std::memcpy(r.desc().data, ref.result_array.data, static_cast<size_t>(bytes));
    std::memcpy(g.desc().data, got.result_array.data, static_cast<size_t>(bytes));
    expect_arrays_close(r, g, tol, "the result array");
  }
}

/// Checks the compiled `k` (of `f`) against the interpreter on `inputs` with each thread count.
inline void check_kernel(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs, Tolerance tol = {},
                         const std::vector<int>& threads = {1, 2, 3, 8}) {
  SCOPED_TRACE("kernel " + f.name);
  auto ref = run_interpreter(f, inputs);
  for (int t : threads) {
    SCOPED_TRACE("threads " + std::to_string(t));
    ThreadCount tc(t);
    auto got = run_kernel(k, f, inputs);
    expect_same(f, *ref, *got, tol);
  }
}

/// Compiles `f` once and checks it against the interpreter on `inputs` with each thread count.
inline void check(const ir::Function& f, const Args& inputs, Tolerance tol = {}, std::vector<int> threads = {1, 2, 3, 8},
                  codegen::CodegenOptions opts = {}) {
  check_kernel(cpu::compile(f, opts), f, inputs, tol, threads);
}

// ---- input generators ---------------------------------------------------------------------------------

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(20240611);
  return g;
}
inline double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng()); }
inline std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng()); }

inline TestArray random_array(DType t, std::vector<std::int64_t> shape, Layout layout = Layout::RowMajor, double lo = -10,
                       double hi = 10) {
  TestArray a(t, std::move(shape), layout);
  ir::sem::with_type(t, [&](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) a.fill<T>([](std::int64_t) { return uniform_int(0, 1) == 1; });
    else if constexpr (std::is_integral_v<T>)
      a.fill<T>([&](std::int64_t) { return static_cast<T>(uniform_int(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi))); });
    else a.fill<T>([&](std::int64_t) { return static_cast<T>(uniform(lo, hi)); });
  });
  return a;
}

/// Sets element i to v converted to the array's element type.
inline void set_number(TestArray& a, std::int64_t i, double v) {
  ir::sem::with_type(a.elem(), [&](auto t) { a.set<decltype(t)>(i, static_cast<decltype(t)>(v)); });
}

template <class T>
TestArray array_of(const std::vector<T>& values) {
  TestArray a(dtype_of<T>(), {static_cast<std::int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) a.set<T>(static_cast<std::int64_t>(i), values[i]);
  return a;
}

/// Edge values of each type, used for cross products of operands.
template <class T>
std::vector<T> edge_values() {
  if constexpr (std::is_floating_point_v<T>) {
    using L = std::numeric_limits<T>;
    return {T(kNaN), -T(kNaN), T(kInf), -T(kInf), T(0), -T(0), T(1), T(-1), T(0.5), T(-0.5), T(1.5), T(-2.5),
            T(3), T(-3), T(7.25), L::max(), L::lowest(), L::min(), L::denorm_min(), T(1e-30)};
  } else {
    using L = std::numeric_limits<T>;
    return {T(0), T(1), T(-1), T(2), T(-2), T(7), T(-7), T(31), T(32), T(33), T(63), T(64), T(65), L::max(), L::min(),
            T(L::min() + 1), T(1000), T(-1000)};
  }
}

}  // namespace kiln::llvm_test
