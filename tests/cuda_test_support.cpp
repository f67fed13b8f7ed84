#include "cuda_test_support.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace kiln::cudatest {

TestArray::TestArray(DType t, std::vector<std::int64_t> shape, Layout layout) : elem_(t), shape_(std::move(shape)) {
  const int rank = static_cast<int>(shape_.size());
  std::int64_t dense = 1, padded = layout == Layout::Padded ? 2 : 1;
  for (int k = rank; k-- > 0;) {
    desc_.shape[k] = shape_[static_cast<std::size_t>(k)];
    if (layout == Layout::Padded || layout == Layout::RowGaps) {
      desc_.strides[k] = padded;
      padded *= shape_[static_cast<std::size_t>(k)] + 1;
    } else {
      desc_.strides[k] = dense;
    }
    dense *= shape_[static_cast<std::size_t>(k)];
  }
  if (layout == Layout::ColumnMajor) {
    std::int64_t s = 1;
    for (int k = 0; k < rank; ++k) desc_.strides[k] = s, s *= shape_[static_cast<std::size_t>(k)];
  }
  if (layout == Layout::Reversed && rank > 0) desc_.strides[0] = -desc_.strides[0];
  std::int64_t lo = 0, hi = 0;
  for (int k = 0; k < rank; ++k) {
    const std::int64_t reach = (std::max<std::int64_t>(shape_[static_cast<std::size_t>(k)], 1) - 1) * desc_.strides[k];
    (reach < 0 ? lo : hi) += reach;
  }
  const std::size_t bytes = static_cast<std::size_t>(hi - lo + 2) * static_cast<std::size_t>(size_of(t));
  storage_.assign((bytes + 7) / 8, 0xA5A5A5A5A5A5A5A5ULL);
  offset_ = -lo * size_of(t);
  desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
}

TestArray::TestArray(const TestArray& o) : elem_(o.elem_), shape_(o.shape_), desc_(o.desc_), storage_(o.storage_), offset_(o.offset_) {
  desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
}

TestArray& TestArray::operator=(const TestArray& o) {
  elem_ = o.elem_;
  shape_ = o.shape_;
  desc_ = o.desc_;
  storage_ = o.storage_;
  offset_ = o.offset_;
  desc_.data = reinterpret_cast<char*>(storage_.data()) + offset_;
  return *this;
}

std::int64_t TestArray::size() const {
  std::int64_t n = 1;
  for (auto s : shape_) n *= s;
  return n;
}

void* TestArray::element(std::int64_t linear) const {
  std::int64_t offset = 0;
  for (std::size_t k = shape_.size(); k-- > 0;) {
    offset += (linear % shape_[k]) * desc_.strides[k];
    linear /= shape_[k];
  }
  return static_cast<char*>(desc_.data) + offset * size_of(elem_);
}

void TestArray::set_number(std::int64_t i, double v) {
  ir::sem::with_type(elem_, [&](auto t) { set<decltype(t)>(i, static_cast<decltype(t)>(v)); });
}

std::vector<unsigned char> TestArray::gap_bytes() const {
  const auto* base = reinterpret_cast<const unsigned char*>(storage_.data());
  std::vector<unsigned char> bytes(base, base + storage_.size() * 8);
  for (std::int64_t i = 0; i < size(); ++i) {
    const auto off = static_cast<const unsigned char*>(element(i)) - base;
    std::memset(bytes.data() + off, 0, static_cast<std::size_t>(size_of(elem_)));
  }
  return bytes;
}

std::mt19937_64& rng() {
  static std::mt19937_64 g(20250611);
  return g;
}
double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng()); }
std::int64_t uniform_int(std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng()); }

TestArray random_array(DType t, std::vector<std::int64_t> shape, Layout layout, double lo, double hi) {
  TestArray a(t, std::move(shape), layout);
  const std::int64_t n = a.size();
  ir::sem::with_type(t, [&](auto x) {
    using T = decltype(x);
    for (std::int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<T, bool>) a.set<T>(i, uniform_int(0, 1) == 1);
      else if constexpr (std::is_integral_v<T>) a.set<T>(i, static_cast<T>(uniform_int(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi))));
      else a.set<T>(i, static_cast<T>(uniform(lo, hi)));
    }
  });
  return a;
}

namespace {

std::vector<void*> pointers(Args& args, void* extra) {
  std::vector<void*> p;
  for (auto& a : args) p.push_back(a.array ? static_cast<void*>(&a.array->desc()) : static_cast<void*>(&a.scalar));
  p.push_back(extra);
  return p;
}

std::int32_t code_of(const Error& e) {
  if (dynamic_cast<const ShapeError*>(&e)) return kShapeMismatch;
  if (dynamic_cast<const IndexError*>(&e)) return kIndexOutOfRange;
  if (dynamic_cast<const ValueError*>(&e)) return kValueError;
  return kOutOfMemory;
}

template <class T>
double ulp_distance(T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
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
    if (std::memcmp(&ref, &got, sizeof ref) == 0) return true;
    if (std::isinf(ref) || std::isinf(got)) return false;
    if (tol.abs > 0 && std::fabs(static_cast<double>(ref) - static_cast<double>(got)) <= tol.abs) return true;
    if (ref == 0 || got == 0) return tol.ulps > 0 && ref == got;
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

void expect_arrays_close(const TestArray& ref, const TestArray& got, const Tolerance& tol, const std::string& what) {
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

}  // namespace

std::unique_ptr<Outcome> run_interpreter(const ir::Function& f, const Args& inputs) {
  auto out = std::make_unique<Outcome>();
  out->args = inputs;
  auto p = pointers(out->args, nullptr);
  void* result = f.returns_array() ? static_cast<void*>(&out->result_array) : static_cast<void*>(&out->result);
  try {
    ir::interpret(f, p.data(), result);
  } catch (const Error& e) {
    out->status = code_of(e);
    out->message = e.what();
  }
  return out;
}

std::unique_ptr<Outcome> run_kernel(const codegen::CompiledKernel& k, const ir::Function& f, const Args& inputs, void* extra) {
  auto out = std::make_unique<Outcome>();
  out->args = inputs;
  auto p = pointers(out->args, extra);
  void* result = f.returns_array() ? static_cast<void*>(&out->result_array) : static_cast<void*>(&out->result);
  KernelStatus status;
  out->status = k(p.data(), result, &status);
  EXPECT_EQ(out->status, status.code);
  out->message = status.message;
  return out;
}

void expect_same(const ir::Function& f, const Outcome& ref, const Outcome& got, const Tolerance& tol) {
  EXPECT_EQ(got.status, ref.status) << "interpreter: " << ref.message << "\nkernel: " << got.message;
  if (ref.status != 0) return;  // after a failure the arguments' contents are unspecified
  for (std::size_t i = 0; i < ref.args.size(); ++i)
    if (ref.args[i].array) expect_arrays_close(*ref.args[i].array, *got.args[i].array, tol, "argument " + f.params[i]->name);
  if (f.returns_scalar()) {
    ir::sem::with_type(f.result->type, [&](auto x) {
      using T = decltype(x);
      T r, g;
      std::memcpy(&r, &ref.result, sizeof r);
      std::memcpy(&g, &got.result, sizeof g);
      EXPECT_TRUE(close(r, g, tol)) << "result: expected " << show(r) << ", got " << show(g);
    });
  }
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
    if (bytes > 0) {
      std::memcpy(r.desc().data, ref.result_array.data, static_cast<std::size_t>(bytes));
      std::memcpy(g.desc().data, got.result_array.data, static_cast<std::size_t>(bytes));
    }
    expect_arrays_close(r, g, tol, "the result array");
  }
}

}  // namespace kiln::cudatest
