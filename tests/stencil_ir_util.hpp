// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stencil IR built directly with ir/builder.hpp (no frontend), and the three-way comparison the stencil
// tests use: the interpreter on the traced IR (the definition), the interpreter after the whole pipeline,
// and the CPU JIT on the pipeline's output.
#pragma once

#include "ir/visitor.hpp"
#include "passes/pipeline.hpp"
#include "tests/codegen_llvm_support.hpp"

namespace kiln::stencil_test {

using namespace kiln::llvm_test;

/// A stencil kernel: `out = sum_k c_k * w0[i + o_k] (+ 0.5 * w1[i + o_last])` over every offset o_k of the
/// neighbourhood box [lo, hi], each coefficient distinct, so a read from a wrong position shows.
struct StencilSpec {
  std::vector<std::int64_t> lo, hi;
  Border border = Border::constant;
  DType elem = DType::F64;
  bool allocate = true;     ///< new target (the result) or an existing one (the last parameter)
  bool two_windows = false;
  bool unit_stride = true;  ///< parameters of unit innermost stride (else padded views)
  double cval = 0.5;
  int rank() const { return static_cast<int>(lo.size()); }
};

/// i + c written the ways a frontend would: i, i + c, i - |c|.
inline Expr shifted(const Var& i, std::int64_t c) {
  if (c == 0) return val(i);
  return c > 0 ? val(i) + i64c(c) : val(i) - i64c(-c);
}

inline std::vector<std::vector<std::int64_t>> box(const std::vector<std::int64_t>& lo, const std::vector<std::int64_t>& hi) {
  std::vector<std::vector<std::int64_t>> out{{}};
  for (size_t d = 0; d < lo.size(); ++d) {
    std::vector<std::vector<std::int64_t>> next;
    for (const auto& o : out)
      for (std::int64_t c = lo[d]; c <= hi[d]; ++c) {
        auto x = o;
        x.push_back(c);
        next.push_back(std::move(x));
      }
    out = std::move(next);
  }
  return out;
}

inline ir::Function stencil_function(const StencilSpec& s, const std::string& name = "stencil") {
  const int rank = s.rank();
  const ir::Type type = ir::Type::array(s.elem, rank, s.unit_stride);
  const Var w0 = ir::make_var("a", type, ir::VarKind::Param);
  const Var w1 = ir::make_var("b", type, ir::VarKind::Param);
  const Var out = s.allocate ? local_array("out", s.elem, rank) : ir::make_var("out", type, ir::VarKind::Param);
  std::vector<Var> idx;
  std::vector<Expr> shape;
  for (int d = 0; d < rank; ++d) {
    idx.push_back(index(std::string(1, static_cast<char>('i' + d))));
    shape.push_back(dim(w0, d));
  }
  auto read = [&](const Var& w, const std::vector<std::int64_t>& o) {
    std::vector<Expr> q;
    for (int d = 0; d < rank; ++d) q.push_back(shifted(idx[static_cast<size_t>(d)], o[static_cast<size_t>(d)]));
    return at(w, std::move(q));
  };
  const auto offsets = box(s.lo, s.hi);
  Expr value;
  for (size_t k = 0; k < offsets.size(); ++k) {
    const Expr term = num(s.elem, static_cast<double>(k % 7 + 1) * 0.125) * read(w0, offsets[k]);
    value = value ? value + term : term;
  }
  if (s.two_windows) value = value + num(s.elem, 0.5) * read(w1, offsets.back());
  std::vector<Var> windows{w0};
  if (s.two_windows) windows.push_back(w1);
  std::vector<Expr> ti;
  if (!s.allocate)
    for (const auto& i : idx) ti.push_back(val(i));
  const Expr cval = s.border == Border::constant ? num(s.elem, s.cval) : nullptr;
  Stmt st = ir::make_stencil(out, s.allocate, idx, shape, ti, value, windows, s.lo, s.hi, s.border, cval, name);
  std::vector<Var> params{w0};
  if (s.two_windows) params.push_back(w1);
  if (!s.allocate) params.push_back(out);
  return function(name, params, {st}, nullptr, s.allocate ? out : nullptr);
}

inline Args stencil_args(const StencilSpec& s, const std::vector<std::int64_t>& shape) {
  const Layout layout = s.unit_stride ? Layout::RowMajor : Layout::Padded;
  Args args{array_arg(random_array(s.elem, shape, layout))};
  if (s.two_windows) args.push_back(array_arg(random_array(s.elem, shape, layout)));
  if (!s.allocate) args.push_back(array_arg(random_array(s.elem, shape, layout)));
  return args;
}

inline codegen::CompiledKernel compile(const ir::Function& f) { return cpu::compile(f, codegen::CodegenOptions{}); }

/// (a) the interpreter on `f`, (b) the interpreter on the pipeline's output, (c) the JIT on it: all equal,
/// bit for bit (nothing reassociates). `lowered` and `kernel` are compiled once by the caller.
inline void expect_three_way(const ir::Function& f, const ir::Function& lowered, const codegen::CompiledKernel& kernel,
                             const Args& inputs, const std::vector<int>& threads = {1, 3}) {
  auto ref = run_interpreter(f, inputs);
  auto low = run_interpreter(lowered, inputs);
  {
    SCOPED_TRACE("interpreter after the pipeline");
    expect_same(f, *ref, *low, {});
  }
  for (int t : threads) {
    SCOPED_TRACE("JIT, threads " + std::to_string(t));
    ThreadCount tc(t);
    auto got = run_kernel(kernel, lowered, inputs);
    expect_same(f, *ref, *got, {});
  }
}

/// Parfors anywhere in `s`.
inline int count_parfors(const Stmt& s) {
  struct Counter : ir::IRVisitor {
    int n = 0;
    void visit(const ir::ParforStmt& p) override {
      ++n;
      ir::IRVisitor::visit(p);
    }
  } c;
  c.walk(s);
  return c.n;
}

/// Stencil statements anywhere in `s`.
inline int count_stencils(const Stmt& s) {
  struct Counter : ir::IRVisitor {
    int n = 0;
    void visit(const ir::StencilStmt& st) override {
      ++n;
      ir::IRVisitor::visit(st);
    }
  } c;
  c.walk(s);
  return c.n;
}

}  // namespace kiln::stencil_test
