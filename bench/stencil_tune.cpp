// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A tuning harness for lowered stencils (the passes and CPU codegen half of issue 4), independent of the
// stencil frontend: jacobi2d (4096^2, reflect border), smooth1d (2*10^7, nearest border) and heat3d (256^3,
// nearest, as kiln-bench's row) built as IR (KILN_TUNE_LLVM=1 prints each optimized LLVM module),
// run through the pipeline and the CPU JIT, against hand-written C++/OpenMP of the same work in the same
// process. Both write into an existing array (no allocation in the timed region). Prints median times
// and the ratio kiln / C++. Build (from the repository root, with a configured build directory B):
//   c++ -O3 -march=native -fopenmp -std=c++20 -I. -Iinclude -I$B/generated bench/stencil_tune.cpp
//       -L$B -lkiln -Wl,-rpath,$B -o stencil_tune
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <vector>

#include "codegen/llvm/cpu_backend.hpp"
#include "frontend/settings.hpp"
#include "ir/builder.hpp"
#include "passes/pipeline.hpp"

namespace {

using namespace kiln;
using namespace kiln::ir;

Expr at(const Var& a, std::vector<Expr> i) { return make_load(a, std::move(i)); }
Expr add(Expr a, Expr b) { return make_binary(BinaryOp::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return make_binary(BinaryOp::Mul, std::move(a), std::move(b)); }
Expr off(const Var& i, std::int64_t c) {
  return c == 0 ? make_ref(i) : c > 0 ? add(make_ref(i), make_i64(c)) : make_binary(BinaryOp::Sub, make_ref(i), make_i64(-c));
}

Function jacobi2d() {
  const Type t = Type::array(DType::F64, 2, true);
  const Var a = make_var("a", t, VarKind::Param), out = make_var("out", t, VarKind::Param);
  const Var i = make_var("i", Type::scalar(DType::I64), VarKind::Index), j = make_var("j", Type::scalar(DType::I64), VarKind::Index);
  const Expr v = mul(make_float(DType::F64, 0.25), add(add(at(a, {off(i, -1), off(j, 0)}), at(a, {off(i, 1), off(j, 0)})),
                                         add(at(a, {off(i, 0), off(j, -1)}), at(a, {off(i, 0), off(j, 1)}))));
  Function f;
  f.name = "jacobi2d";
  f.params = {a, out};
  f.body = make_block({make_stencil(out, false, {i, j}, {make_dim(a, 0), make_dim(a, 1)}, {make_ref(i), make_ref(j)}, v, {a},
                                    {-1, -1}, {1, 1}, Border::reflect, nullptr, "jacobi2d")});
  return f;
}

Function smooth1d() {
  const Type t = Type::array(DType::F64, 1, true);
  const Var a = make_var("a", t, VarKind::Param), out = make_var("out", t, VarKind::Param);
  const Var i = make_var("i", Type::scalar(DType::I64), VarKind::Index);
  const Expr v = add(add(mul(make_float(DType::F64, 0.25), at(a, {off(i, -1)})), mul(make_float(DType::F64, 0.5), at(a, {off(i, 0)}))),
                     mul(make_float(DType::F64, 0.25), at(a, {off(i, 1)})));
  Function f;
  f.name = "smooth1d";
  f.params = {a, out};
  f.body = make_block({make_stencil(out, false, {i}, {make_dim(a, 0)}, {make_ref(i)}, v, {a}, {-1}, {1}, Border::nearest,
                                    nullptr, "smooth1d")});
  return f;
}

/// The kiln-bench row heat3d: a 7-point step, nearest border.
Function heat3d() {
  const Type t = Type::array(DType::F64, 3, true);
  const Var u = make_var("u", t, VarKind::Param), out = make_var("out", t, VarKind::Param);
  std::vector<Var> ix;
  for (const char* name : {"i", "j", "k"}) ix.push_back(make_var(name, Type::scalar(DType::I64), VarKind::Index));
  auto at3 = [&](std::int64_t a, std::int64_t b, std::int64_t c) { return at(u, {off(ix[0], a), off(ix[1], b), off(ix[2], c)}); };
  const Expr sum = add(add(add(add(add(at3(-1, 0, 0), at3(1, 0, 0)), at3(0, -1, 0)), at3(0, 1, 0)), at3(0, 0, -1)), at3(0, 0, 1));
  const Expr v = add(at3(0, 0, 0), mul(make_float(DType::F64, 0.125),
                                        make_binary(BinaryOp::Sub, sum, mul(make_float(DType::F64, 6.0), at3(0, 0, 0)))));
  Function f;
  f.name = "heat3d";
  f.params = {u, out};
  f.body = make_block({make_stencil(out, false, ix, {make_dim(u, 0), make_dim(u, 1), make_dim(u, 2)},
                                    {make_ref(ix[0]), make_ref(ix[1]), make_ref(ix[2])}, v, {u}, {-1, -1, -1}, {1, 1, 1},
                                    Border::nearest, nullptr, "heat3d")});
  return f;
}

void ref_heat(const double* u, double* out, long n) {
  const long plane = n * n;
  const double c = 0.125;
#pragma omp parallel for collapse(2) schedule(static)
  for (long i = 0; i < n; ++i)
    for (long j = 0; j < n; ++j) {
      const long im = std::max(i - 1, 0L), ip = std::min(i + 1, n - 1), jm = std::max(j - 1, 0L), jp = std::min(j + 1, n - 1);
      const double *x = u + i * plane + j * n, *xim = u + im * plane + j * n, *xip = u + ip * plane + j * n;
      const double *xjm = u + i * plane + jm * n, *xjp = u + i * plane + jp * n;
      double* o = out + i * plane + j * n;
      auto cell = [&](long k) {
        const long km = std::max(k - 1, 0L), kp = std::min(k + 1, n - 1);
        return x[k] + c * (xim[k] + xip[k] + xjm[k] + xjp[k] + x[km] + x[kp] - 6.0 * x[k]);
      };
      o[0] = cell(0);
#pragma omp simd
      for (long k = 1; k < n - 1; ++k) o[k] = x[k] + c * (xim[k] + xip[k] + xjm[k] + xjp[k] + x[k - 1] + x[k + 1] - 6.0 * x[k]);
      o[n - 1] = cell(n - 1);
    }
}

void ref_jacobi(const double* a, double* o, long n, long m) {
  auto r = [](long q, long e) { return q < 0 ? -q - 1 : q >= e ? 2 * e - q - 1 : q; };
  auto cell = [&](long i, long j) {
    return 0.25 * ((a[r(i - 1, n) * m + j] + a[r(i + 1, n) * m + j]) + (a[i * m + r(j - 1, m)] + a[i * m + r(j + 1, m)]));
  };
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    if (i == 0 || i == n - 1) {
      for (long j = 0; j < m; ++j) o[i * m + j] = cell(i, j);
      continue;
    }
    o[i * m] = cell(i, 0);
    const double* up = a + (i - 1) * m;
    const double* mid = a + i * m;
    const double* dn = a + (i + 1) * m;
    double* w = o + i * m;
#pragma omp simd
    for (long j = 1; j < m - 1; ++j) w[j] = 0.25 * ((up[j] + dn[j]) + (mid[j - 1] + mid[j + 1]));
    o[i * m + m - 1] = cell(i, m - 1);
  }
}

void ref_smooth(const double* a, double* o, long n) {
#pragma omp parallel for simd schedule(static)
  for (long i = 1; i < n - 1; ++i) o[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
  o[0] = 0.25 * a[0] + 0.5 * a[0] + 0.25 * a[1];
  o[n - 1] = 0.25 * a[n - 2] + 0.5 * a[n - 1] + 0.25 * a[n - 1];
}

double median_ms(const std::function<void()>& run, int reps) {
  run();  // warm: pages touched, threads started
  std::vector<double> t;
  for (int k = 0; k < reps; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

ArrayDesc desc(double* p, std::vector<std::int64_t> shape) {
  ArrayDesc d{};
  d.data = p;
  std::int64_t s = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    d.shape[k] = shape[k];
    d.strides[k] = s;
    s *= shape[k];
  }
  return d;
}

void row(const char* name, const Function& f, std::vector<std::int64_t> shape, const std::function<void(const double*, double*)>& ref,
         int reps) {
  codegen::cpu::CpuOptions cpu = kiln::detail::target_options(kiln::Options()).cpu;  // KILN_CPU_FEATURES, ...
  cpu.keep_llvm_ir = std::getenv("KILN_TUNE_LLVM") != nullptr;  // prints the optimized module
  const auto k = codegen::cpu::compile(passes::run_pipeline(f), {}, cpu);
  if (cpu.keep_llvm_ir) std::fprintf(stderr, "%s\n", k.llvm_ir.c_str());
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<double> a(static_cast<size_t>(n)), o1(a.size()), o2(a.size());
  for (std::int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] = std::sin(0.001 * static_cast<double>(i));
  ArrayDesc da = desc(a.data(), shape), dout = desc(o1.data(), shape);
  void* args[] = {&da, &dout};
  KernelStatus status;
  const double kiln_ms = median_ms([&] { k(args, nullptr, &status); }, reps);
  const double ref_ms = median_ms([&] { ref(a.data(), o2.data()); }, reps);
  const bool same = o1 == o2;
  std::printf("%-10s kiln %8.3f ms   C++/OpenMP %8.3f ms   ratio %.3f   %s\n", name, kiln_ms, ref_ms, kiln_ms / ref_ms,
              same ? "equal" : "RESULTS DIFFER");
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  std::printf("threads %d, median of %d\n", omp_get_max_threads(), reps);
  row("jacobi2d", jacobi2d(), {4096, 4096}, [](const double* a, double* o) { ref_jacobi(a, o, 4096, 4096); }, reps);
  row("smooth1d", smooth1d(), {20000000}, [](const double* a, double* o) { ref_smooth(a, o, 20000000); }, reps);
  row("heat3d", heat3d(), {256, 256, 256}, [](const double* a, double* o) { ref_heat(a, o, 256); }, reps);
  return 0;
}
