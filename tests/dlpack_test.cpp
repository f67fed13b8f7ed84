// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// kiln/dlpack.hpp: export shares memory and keeps it alive until the consumer's deleter, import shares memory and
// calls the producer's deleter exactly once, and every tensor kiln cannot take is refused (leaving it the
// caller's). The device half needs a GPU and skips without one.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/dlpack.hpp"
#include "kiln/kiln.hpp"

namespace {

/// A producer's tensor over a std::vector, counting its deleter's calls.
struct Produced {
  std::vector<double> storage;
  std::vector<std::int64_t> shape, strides;
  DLManagedTensor managed{};
  int deleted = 0;

  Produced(std::vector<std::int64_t> s, DLDataType dtype = {kDLFloat, 64, 1}, DLDevice device = {kDLCPU, 0})
      : shape(std::move(s)) {
    std::int64_t n = 1;
    strides.resize(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) strides[d] = n, n *= shape[d];
    storage.resize(static_cast<std::size_t>(n) + 1);
    for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<double>(i) * 0.5;
    DLTensor& t = managed.dl_tensor;
    t.data = storage.data();
    t.device = device;
    t.ndim = static_cast<int>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.data();
    t.byte_offset = sizeof(double);  // one element in: byte_offset is honoured
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* self) { ++static_cast<Produced*>(self->manager_ctx)->deleted; };
  }
};

TEST(DLPack, ExportSharesHostMemoryUntilTheConsumerIsDone) {
  DLManagedTensor* t = nullptr;
  double* data = nullptr;
  {
    kiln::NDArray<double> a({3, 4});
    for (int i = 0; i < 12; ++i) a[i] = i;
    data = a.data();
    t = kiln::dlpack::to_dlpack(a);
  }  // the kiln array is gone; the tensor keeps the memory
  const DLTensor& d = t->dl_tensor;
  EXPECT_EQ(d.data, data);
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.shape[0], 3);
  EXPECT_EQ(d.shape[1], 4);
  EXPECT_EQ(d.strides[0], 4);
  EXPECT_EQ(d.strides[1], 1);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 64);
  EXPECT_EQ(d.dtype.lanes, 1);
  EXPECT_EQ(static_cast<const double*>(d.data)[11], 11.0);
  t->deleter(t);
}

TEST(DLPack, ElementTypesMapToDLPackCodes) {
  EXPECT_EQ(kiln::dlpack::dtype_of<float>().code, kDLFloat);
  EXPECT_EQ(kiln::dlpack::dtype_of<float>().bits, 32);
  EXPECT_EQ(kiln::dlpack::dtype_of<std::int32_t>().code, kDLInt);
  EXPECT_EQ(kiln::dlpack::dtype_of<std::int64_t>().bits, 64);
  EXPECT_EQ(kiln::dlpack::dtype_of<bool>().code, kiln::dlpack::kBoolCode);
  EXPECT_EQ(kiln::dlpack::dtype_of<bool>().bits, 8);
}

TEST(DLPack, ImportSharesMemoryAndCallsTheDeleterOnce) {
  Produced p({5, 7});
  {
    kiln::NDArray<double> a = kiln::dlpack::from_dlpack<double>(&p.managed);
    EXPECT_EQ(a.data(), p.storage.data() + 1);
    EXPECT_EQ(a.shape(), (std::vector<std::int64_t>{5, 7}));
    EXPECT_EQ(a(4, 6), 0.5 * (1 + 34));
    // A kernel writes through the imported array into the producer's memory.
    auto twice = kiln::jit("twice", [](kiln::Array<double, 2> x) {
      kiln::prange(kiln::shape(x.shape(0), x.shape(1)), [&](kiln::Int i, kiln::Int j) { x(i, j) = x(i, j) * 2.0; });
    });
    twice(a);
    EXPECT_EQ(p.storage[35], 35.0);
    const kiln::NDArray<double> copy = a;  // shares, does not delete
    EXPECT_EQ(p.deleted, 0);
  }
  EXPECT_EQ(p.deleted, 1);
  EXPECT_EQ(p.storage[0], 0.0);  // before byte_offset: untouched
}

TEST(DLPack, ImportRefusesWhatKilnCannotTakeAndLeavesItTheCallers) {
  const auto refused = [](Produced& p, auto import, const std::string& says) {
    try {
      import(&p.managed);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const kiln::TypeError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
    EXPECT_EQ(p.deleted, 0);  // still the caller's
  };
  const auto as_double = [](DLManagedTensor* t) { (void)kiln::dlpack::from_dlpack<double>(t); };
  const auto as_float = [](DLManagedTensor* t) { (void)kiln::dlpack::from_dlpack<float>(t); };
  Produced p1({4});
  refused(p1, as_float, "float64");
  Produced p2({4}, {kDLFloat, 64, 2});
  refused(p2, as_double, "float64x2");
  Produced p3({4}, {kDLFloat, 64, 1}, {kDLCUDA, 0});
  refused(p3, as_double, "from_dlpack_device");
  Produced p4({3, 4});
  std::swap(p4.strides[0], p4.strides[1]);  // a transpose
  refused(p4, as_double, "not row-major contiguous");
  Produced p5({1, 2, 1, 2, 1});
  refused(p5, as_double, "rank 5");
  Produced p6({4}, {kDLUInt, 8, 1});
  refused(p6, as_double, "uint8");
  EXPECT_THROW((void)kiln::dlpack::from_dlpack<double>(nullptr), kiln::TypeError);
}

TEST(DLPack, UnitDimensionsMayHaveAnyStride) {
  Produced p({3, 1, 4});
  p.strides[1] = 12345;  // extent 1: never stepped over
  const kiln::NDArray<double> a = kiln::dlpack::from_dlpack<double>(&p.managed);
  EXPECT_EQ(a(2, 0, 3), 0.5 * (1 + 11));
}

TEST(DLPack, DeviceArraysRoundTripWithoutCopies) {
  if (!kiln::cuda::available()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  std::vector<float> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  const kiln::DeviceArray<float> d = kiln::to_device(v);
  DLManagedTensor* t = kiln::dlpack::to_dlpack(d);
  EXPECT_EQ(t->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(t->dl_tensor.device.device_id, d.device());
  EXPECT_THROW((void)kiln::dlpack::from_dlpack<float>(t), kiln::TypeError);  // not host memory
  kiln::DeviceArray<float> back = kiln::dlpack::from_dlpack_device<float>(t);
  EXPECT_EQ(back.data(), d.data());
  auto inc = kiln::jit("inc", [](kiln::Array<float> x) { kiln::prange(x.shape(0), [&](kiln::Int i) { x[i] = x[i] + 1.0f; }); },
                       kiln::Options().on(kiln::Target::cuda));
  inc(back);
  EXPECT_EQ(d.to_vector()[999], 1000.0f);
}

}  // namespace
