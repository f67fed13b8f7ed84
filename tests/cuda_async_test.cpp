// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CUDA execution model (kiln/device.hpp): asynchronous calls on streams with device-resident results,
// failures deferred to the stream's synchronization, events, graphs, the stream-ordered pool and its
// statistics. Every test needs a GPU and skips without one; the reference is the interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"

namespace {

class Async : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kiln::cuda::available()) GTEST_SKIP() << "no CUDA driver/GPU here: " << kiln::cuda::unavailable_reason();
  }
};

std::vector<double> ramp(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7919) % 1009) * 0.125 - 40.0;
  return v;
}

// An array expression made of several parfors, returning a new array.
auto normalize(kiln::Target t) {
  return kiln::jit("normalize", [](kiln::Array<double> x, kiln::Double lo, kiln::Double hi) {
    return kiln::clip((x - lo) / (hi - lo), 0.0, 1.0) * 2.0 - 1.0;
  }, kiln::Options().on(t));
}

auto step_kernel(kiln::Target t) {
  return kiln::jit("smooth_step", [](kiln::Array<double> u, kiln::Array<double> v) {
    kiln::prange(1, u.shape(0) - 1, [&](kiln::Int i) { v[i] = 0.25 * u[i - 1] + 0.5 * u[i] + 0.25 * u[i + 1]; });
  }, kiln::Options().on(t));
}

kiln::Options checked_on_gpu() {
  kiln::Options o;
  o.target = kiln::Target::cuda;
  o.boundscheck = true;
  return o;
}

TEST_F(Async, PipelineStaysOnTheDevice) {
  const std::vector<double> x = ramp(1000003);
  auto gpu = normalize(kiln::Target::cuda);
  auto ref = normalize(kiln::Target::interpreter);
  kiln::cuda::Stream s;
  const kiln::DeviceArray<double> dx = kiln::to_device(x);
  // Each result feeds the next call without a copy; nothing waits until synchronize().
  kiln::DeviceArray<double> y = gpu.async(s)(dx, -40.0, 86.0);
  kiln::DeviceArray<double> z = gpu.async(s)(y, -1.0, 1.0);
  static_assert(std::is_same_v<decltype(y), kiln::DeviceArray<double>>);
  s.synchronize();
  const kiln::NDArray<double> want = ref(ref(x, -40.0, 86.0), -1.0, 1.0);
  EXPECT_EQ(z.to_vector(), want.to_vector());
  EXPECT_EQ(y.shape(), (std::vector<std::int64_t>{1000003}));
}

TEST_F(Async, ResultsComeFromThePoolAndAreCounted) {
  auto gpu = normalize(kiln::Target::cuda);
  kiln::cuda::Stream s;
  const kiln::DeviceArray<double> dx = kiln::to_device(ramp(1 << 20));
  const kiln::cuda::MemoryStats before = kiln::cuda::memory_stats();
  {
    kiln::DeviceArray<double> y = gpu.async(s)(dx, -40.0, 86.0);
    s.synchronize();
    const kiln::cuda::MemoryStats during = kiln::cuda::memory_stats();
    EXPECT_EQ(during.in_use_bytes - before.in_use_bytes, static_cast<std::int64_t>(y.bytes()));
    EXPECT_GE(kiln::allocation_stats().device_in_use_bytes, during.in_use_bytes);
    EXPECT_GE(during.peak_bytes, during.in_use_bytes);
    EXPECT_GT(during.allocations, before.allocations);
  }
  s.synchronize();
  const kiln::cuda::MemoryStats after = kiln::cuda::memory_stats();
  EXPECT_EQ(after.in_use_bytes, before.in_use_bytes);
  // Freed memory stays in the pool for the next call instead of going back to the driver.
  EXPECT_GE(after.pool_reserved_bytes, static_cast<std::int64_t>(dx.bytes()));
}

TEST_F(Async, HostArraysAndOtherDevicesAreRejected) {
  auto gpu = normalize(kiln::Target::cuda);
  kiln::cuda::Stream s;
  std::vector<double> host = ramp(10);
  try {
    (void)gpu.async(s)(host, 0.0, 1.0);
    FAIL() << "an asynchronous call took host memory";
  } catch (const kiln::TypeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("normalize"), std::string::npos) << m;
    EXPECT_NE(m.find("to_device"), std::string::npos) << m;
  }
}

TEST_F(Async, CallsRepeatedByLaunchPlansComputeWhatTheExecutorsCallsDo) {
  // Each call after the first with the same shapes is run by its launch plan (codegen/cuda/launch_plan.hpp); the
  // interpreter is the reference, for every size, both forms of result, one array passed twice, and 2-d arrays.
  const auto on = [](kiln::Target t) { return kiln::Options().on(t); };
  const auto into_body = [](kiln::Array<double> x, kiln::Array<double> y, kiln::Double a) { y(kiln::all) = x * a + 1.0; };
  const auto make_body = [](kiln::Array<double> x, kiln::Double a) { return x * a - x; };
  auto into = kiln::jit("plan_into", into_body, on(kiln::Target::cuda));
  auto make = kiln::jit("plan_make", make_body, on(kiln::Target::cuda));
  auto ref_into = kiln::jit("plan_into", into_body, on(kiln::Target::interpreter));
  auto ref_make = kiln::jit("plan_make", make_body, on(kiln::Target::interpreter));
  kiln::cuda::Stream s;
  for (int round = 0; round < 3; ++round) {
    for (const std::int64_t n : {1LL, 97LL, 4099LL, 1LL << 20}) {
      const std::vector<double> hx = ramp(static_cast<std::size_t>(n));
      const kiln::DeviceArray<double> dx = kiln::to_device(hx);
      kiln::DeviceArray<double> dy({n}, s);
      const double a = 0.5 + round;
      into.async(s)(dx, dy, a);
      const kiln::DeviceArray<double> r = make.async(s)(dy, a);
      std::vector<double> want(static_cast<std::size_t>(n));
      ref_into(hx, want, a);
      const std::vector<double> want_r = ref_make(want, a).to_vector();
      // In and out (the executor's path, the __restrict__-free kernel). Not at n = 1: an extent of 1 is traced
      // as a broadcast read of x[0], which the overlap check refuses for one array passed twice.
      if (n > 1) {
        into.async(s)(dy, dy, a);
        ref_into(want, want, a);
      }
      s.synchronize();
      EXPECT_EQ(r.to_vector(), want_r) << "n = " << n << ", round " << round;
      EXPECT_EQ(dy.to_vector(), want) << "n = " << n << ", round " << round;
    }
  }
  kiln::NDArray<double> hm({97, 5});
  const std::vector<double> values = ramp(97 * 5);
  std::copy(values.begin(), values.end(), hm.data());
  const kiln::DeviceArray<double> dm = kiln::to_device(hm);
  kiln::DeviceArray<double> got;
  for (int i = 0; i < 3; ++i) got = make.async(s)(dm, 1.5);
  s.synchronize();
  EXPECT_EQ(got.shape(), (std::vector<std::int64_t>{97, 5}));
  EXPECT_EQ(got.to_vector(), ref_make(hm, 1.5).to_vector());
  EXPECT_NE(into.diagnostics().find("launch plans"), std::string::npos) << into.diagnostics();
  EXPECT_EQ(into.diagnostics().find(", 0 call(s) run by them"), std::string::npos) << into.diagnostics();
  EXPECT_EQ(make.diagnostics().find(", 0 call(s) run by them"), std::string::npos) << make.diagnostics();
}

TEST_F(Async, AReturnedTotalIsAFutureThatTheCallDoesNotWaitFor) {
  auto dot = kiln::jit("dot", [](kiln::Array<double> x, kiln::Array<double> y) {
    kiln::Double acc = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { acc += x[i] * y[i]; });
    return acc;
  });
  // Work queued before the call keeps the stream busy for a while: the call must return all the same, with
  // its total still on its way.
  auto busy = kiln::jit("busy", [](kiln::Array<double> v) {
    kiln::prange(v.shape(0), [&](kiln::Int i) {
      kiln::Double a = v[i];
      kiln::range(0, 20000000, [&](kiln::Int) { a = a * 0.999999 + 1e-9; });
      v[i] = a;
    });
  }, kiln::Options().on(kiln::Target::cuda));
  kiln::cuda::Stream s;
  const std::vector<double> x(100000, 0.5), y(100000, 4.0);
  const kiln::DeviceArray<double> dx = kiln::to_device(x), dy = kiln::to_device(y);
  EXPECT_EQ(dot.async(s)(dx, dy).get(), 200000.0);  // compiled, and the plain case
  kiln::DeviceArray<double> v = kiln::to_device(std::vector<double>(64, 1.0));
  busy.async(s)(v);
  kiln::cuda::Future<double> total = dot.async(s)(dx, dy);
  EXPECT_FALSE(total.ready()) << "the call waited for its total";
  EXPECT_EQ(total.get(), 200000.0);
  EXPECT_TRUE(total.ready());
  const double again = total;  // a Future converts to its value
  EXPECT_EQ(again, 200000.0);
  s.synchronize();
}

TEST_F(Async, ResultsComputedFromTotalsAreFuturesToo) {
  // mean = total / n, the index of a maximum, and an array with a total beside it: each computed from the
  // totals once they arrive, equal to the synchronous call's results.
  auto stats = kiln::jit("stats", [](kiln::Array<double> x) {
    kiln::Double sum = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { sum += x[i]; });
    return std::make_tuple(x * 2.0, sum / kiln::cast<double>(x.shape(0)), kiln::argmax(x));
  });
  const std::vector<double> x = ramp(4099);
  const auto [twice_h, mean_h, at_h] = stats.on(kiln::Target::cuda)(x);
  kiln::cuda::Stream s;
  auto [twice, mean, at] = stats.async(s)(kiln::to_device(x));
  EXPECT_EQ(mean.get(), mean_h);
  EXPECT_EQ(at.get(), at_h);
  EXPECT_EQ(kiln::to_host(twice).to_vector(), twice_h.to_vector());
}

TEST_F(Async, AHostPartThatUsesATotalWaitsForItAndItsFutureIsReady) {
  // The total scales the array: the host must know it before the second launch, so the call waits for it.
  auto share = kiln::jit("share", [](kiln::Array<double> x) {
    kiln::Double sum = 0.0;
    kiln::prange(x.shape(0), [&](kiln::Int i) { sum += x[i]; });
    return std::make_tuple(x / sum, sum);
  });
  const std::vector<double> x(1000, 0.25);
  kiln::cuda::Stream s;
  auto [parts, sum] = share.async(s)(kiln::to_device(x));
  EXPECT_TRUE(sum.ready());
  EXPECT_EQ(sum.get(), 250.0);
  EXPECT_EQ(kiln::to_host(parts).to_vector(), std::vector<double>(1000, 0.001));
}

TEST_F(Async, AFutureThrowsTheFailureOfItsCall) {
  auto gather_sum = kiln::jit("gather_sum", [](kiln::Array<double> x, kiln::Array<std::int64_t> idx) {
    kiln::Double acc = 0.0;
    kiln::prange(idx.shape(0), [&](kiln::Int i) { acc += x[idx[i]]; });
    return acc;
  }, checked_on_gpu());
  std::vector<std::int64_t> idx(1000, 3);
  idx[500] = 1 << 20;  // out of range
  kiln::cuda::Stream s;
  const kiln::DeviceArray<double> x = kiln::to_device(ramp(100));
  kiln::cuda::Future<double> bad = gather_sum.async(s)(x, kiln::to_device(idx));
  EXPECT_THROW(bad.get(), kiln::IndexError);
  EXPECT_THROW(bad.get(), kiln::IndexError);  // every read reports it
  EXPECT_THROW(s.synchronize(), kiln::IndexError);  // and the stream, as for any call
  idx[500] = 4;
  kiln::cuda::Future<double> good = gather_sum.async(s)(x, kiln::to_device(idx));
  EXPECT_EQ(good.get(), 999 * ramp(100)[3] + ramp(100)[4]);
  EXPECT_NO_THROW(s.synchronize());
}

TEST_F(Async, AKernelsFailureIsThrownAtSynchronization) {
  auto gather = kiln::jit("gather", [](kiln::Array<double> x, kiln::Array<std::int64_t> idx, kiln::Array<double> out) {
    kiln::prange(idx.shape(0), [&](kiln::Int i) { out[i] = x[idx[i]]; });
  }, checked_on_gpu());
  kiln::cuda::Stream s;
  std::vector<std::int64_t> idx(1000, 3);
  idx[777] = 5000;  // out of range
  const kiln::DeviceArray<double> x = kiln::to_device(ramp(100));
  const kiln::DeviceArray<std::int64_t> bad = kiln::to_device(idx);
  kiln::DeviceArray<double> out({1000}, s);
  gather.async(s)(x, bad, out);  // queued: returns without knowing
  try {
    s.synchronize();
    FAIL() << "the failed kernel was not reported";
  } catch (const kiln::IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("gather"), std::string::npos) << e.what();
  }
  // Reported once: the stream is usable again, and a good call succeeds.
  idx[777] = 4;
  const kiln::DeviceArray<std::int64_t> good = kiln::to_device(idx);
  gather.async(s)(x, good, out);
  EXPECT_NO_THROW(s.synchronize());
  EXPECT_EQ(out.to_vector()[777], ramp(100)[4]);
}

TEST_F(Async, EventsOrderStreamsAndTimeWork) {
  auto gpu = normalize(kiln::Target::cuda);
  kiln::cuda::Stream a, b;
  const kiln::DeviceArray<double> dx = kiln::to_device(ramp(1 << 22));
  kiln::cuda::Event start, made;
  start.record(a);
  kiln::DeviceArray<double> y = gpu.async(a)(dx, -40.0, 86.0);
  made.record(a);
  b.wait(made);  // b's copy reads y only after a made it
  kiln::DeviceArray<double> copy({1 << 22}, b);
  copy.copy_from(y, &b);  // on b: a copy without a stream goes to the device's own stream, which a does not order
  made.synchronize();
  EXPECT_TRUE(made.done());
  EXPECT_GT(kiln::cuda::Event::elapsed_ms(start, made), 0.0f);
  b.synchronize();
  EXPECT_EQ(copy.to_vector(), y.to_vector());
}

TEST_F(Async, CapturedStepsReplayAsTheSameSteps) {
  auto gpu = step_kernel(kiln::Target::cuda);
  auto ref = step_kernel(kiln::Target::interpreter);
  const std::vector<double> init = ramp(4099);
  kiln::cuda::Stream s;
  kiln::DeviceArray<double> u = kiln::to_device(init), v = kiln::to_device(init);
  const kiln::cuda::Graph g = kiln::cuda::capture(s, [&] {
    for (int t = 0; t < 5; ++t) {
      gpu.async(s)(u, v);
      gpu.async(s)(v, u);
    }
  });
  EXPECT_GE(g.nodes(), 10u);
  for (int r = 0; r < 3; ++r) g.launch(s);
  s.synchronize();
  std::vector<double> hu = init, hv = init;
  for (int t = 0; t < 15; ++t) {
    ref(hu, hv);
    ref(hv, hu);
  }
  EXPECT_EQ(u.to_vector(), hu);
}

TEST_F(Async, AGraphKeepsItsArraysAlive) {
  // The arrays a captured call sees are the ones every replay uses: dropping the program's handles must not
  // free them under the graph (new arrays then could take their memory, and replays would read those).
  auto gpu = step_kernel(kiln::Target::cuda);
  auto ref = step_kernel(kiln::Target::interpreter);
  const std::vector<double> init = ramp(4099);
  kiln::cuda::Stream s;
  auto u = std::make_unique<kiln::DeviceArray<double>>(kiln::to_device(init));
  kiln::DeviceArray<double> v = kiln::to_device(init);
  const kiln::cuda::Graph g = kiln::cuda::capture(s, [&] {
    gpu.async(s)(*u, v);
    gpu.async(s)(v, *u);
  });
  u.reset();  // only the graph holds u now
  const std::vector<double> garbage(init.size(), 1e300);
  std::vector<kiln::DeviceArray<double>> others;
  for (int k = 0; k < 8; ++k) others.push_back(kiln::to_device(garbage));
  g.launch(s);
  s.synchronize();
  std::vector<double> hu = init, hv = init;
  ref(hu, hv);
  ref(hv, hu);
  EXPECT_EQ(v.to_vector(), hv);
}

TEST_F(Async, CaptureRefusesCallsThatMustWait) {
  auto total = kiln::jit("total", [](kiln::Array<double> x) { return kiln::sum(x); });
  auto gpu = normalize(kiln::Target::cuda);
  kiln::cuda::Stream s;
  const kiln::DeviceArray<double> dx = kiln::to_device(ramp(1000));
  try {
    (void)kiln::cuda::capture(s, [&] { (void)total.async(s)(dx); });
    FAIL() << "a reduction was captured";
  } catch (const kiln::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("total"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("capture"), std::string::npos) << e.what();
  }
  try {
    (void)kiln::cuda::capture(s, [&] { (void)gpu.async(s)(dx, 0.0, 1.0); });
    FAIL() << "a call returning a new array was captured";
  } catch (const kiln::DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("normalize"), std::string::npos) << e.what();
  }
  // The stream records nothing any more and works as before.
  EXPECT_EQ(total.async(s)(dx), total.on(kiln::Target::interpreter)(ramp(1000)));
}

TEST_F(Async, ACapturedFailureIsReportedAfterTheLaunch) {
  auto gather = kiln::jit("gather", [](kiln::Array<double> x, kiln::Array<std::int64_t> idx, kiln::Array<double> out) {
    kiln::prange(idx.shape(0), [&](kiln::Int i) { out[i] = x[idx[i]]; });
  }, checked_on_gpu());
  kiln::cuda::Stream s;
  std::vector<std::int64_t> idx(64, 1);
  kiln::DeviceArray<std::int64_t> d_idx = kiln::to_device(idx);
  const kiln::DeviceArray<double> x = kiln::to_device(ramp(16));
  kiln::DeviceArray<double> out({64}, s);
  const kiln::cuda::Graph g = kiln::cuda::capture(s, [&] { gather.async(s)(x, d_idx, out); });
  g.launch(s);
  EXPECT_NO_THROW(s.synchronize());
  idx[5] = 99;
  d_idx.copy_from(std::span<const std::int64_t>(idx));  // the graph reads the same array
  g.launch(s);
  EXPECT_THROW(s.synchronize(), kiln::IndexError);
  idx[5] = 2;
  d_idx.copy_from(std::span<const std::int64_t>(idx));
  g.launch(s);
  EXPECT_NO_THROW(s.synchronize());
}

}  // namespace
