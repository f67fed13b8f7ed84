// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// fuse_stencils: `relu(stencil(2 * a) + b)` as array code (maps around a stencil) becomes one stencil, so one
// pass over memory, for every border where that is exact; the refusals (constant border for a producer,
// skip border for a consumer, temporaries with other users) are explained in the diagnostics. Each kernel
// is compared three ways (tests/stencil_ir_util.hpp).
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "tests/stencil_ir_util.hpp"

namespace kiln::stencil_test {
namespace {

std::vector<Var> indices(int rank, const std::string& prefix) {
  std::vector<Var> out;
  for (int d = 0; d < rank; ++d) out.push_back(index(prefix + std::to_string(d)));
  return out;
}
std::vector<Expr> refs(const std::vector<Var>& v) {
  std::vector<Expr> out;
  for (const auto& x : v) out.push_back(val(x));
  return out;
}
std::vector<Expr> dims(const Var& a, int rank) {
  std::vector<Expr> out;
  for (int d = 0; d < rank; ++d) out.push_back(dim(a, d));
  return out;
}

struct Case {
  int rank = 2;
  Border border = Border::reflect;
  bool keep_t = false;  ///< t has a second user after the stencil: u = r + t is the result
};

/// t = 2 * a; s = stencil(t) (a cross of radius 1, weights per direction); r = max(s + b, 0) [+ t].
ir::Function relu_stencil(const Case& o) {
  const int rank = o.rank;
  const ir::Type type = ir::Type::array(DType::F64, rank, true);
  const Var a = ir::make_var("a", type, ir::VarKind::Param), b = ir::make_var("b", type, ir::VarKind::Param);
  const Var t = local_array("t", DType::F64, rank), s = local_array("s", DType::F64, rank),
            r = local_array("r", DType::F64, rank);
  std::vector<Stmt> body;
  Expr same;
  for (int d = 0; d < rank; ++d) {
    const Expr e = bin(BinaryOp::Eq, dim(b, d), dim(a, d));
    same = same ? bin(BinaryOp::And, same, e) : e;
  }
  body.push_back(ir::make_check(same, kShapeMismatch, "b's shape differs from a's"));
  const auto ti = indices(rank, "p");
  body.push_back(ir::make_map(t, ti, dims(a, rank), num(DType::F64, 2) * at(a, refs(ti)), "map t = 2 * a"));
  const auto si = indices(rank, "i");
  Expr value = num(DType::F64, 0.5) * at(t, refs(si));
  for (int d = 0; d < rank; ++d)
    for (std::int64_t c : {-1, 1}) {
      std::vector<Expr> q = refs(si);
      q[static_cast<size_t>(d)] = shifted(si[static_cast<size_t>(d)], c);
      value = value + num(DType::F64, 0.125 * (d + 1) * (c + 3)) * at(t, q);
    }
  const Expr cval = o.border == Border::constant ? num(DType::F64, 3.5) : nullptr;
  body.push_back(ir::make_stencil(s, true, si, dims(t, rank), {}, value, {t}, std::vector<std::int64_t>(static_cast<size_t>(rank), -1),
                                  std::vector<std::int64_t>(static_cast<size_t>(rank), 1), o.border, cval, "stencil s"));
  const auto ri = indices(rank, "q");
  const Expr g = bin(BinaryOp::Max, at(s, refs(ri)) + at(b, refs(ri)), num(DType::F64, 0));
  body.push_back(ir::make_map(r, ri, dims(s, rank), g, "map r = relu(s + b)"));
  if (!o.keep_t) return function("relu_stencil", {a, b}, body, nullptr, r);
  const Var u = local_array("u", DType::F64, rank);
  const auto ui = indices(rank, "u");
  body.push_back(ir::make_map(u, ui, dims(r, rank), at(r, refs(ui)) + at(t, refs(ui)), "map u = r + t"));
  return function("relu_stencil", {a, b}, body, nullptr, u);
}

struct Lowered {
  ir::Function f;
  std::vector<std::string> notes;
  std::string text;
};

/// The pipeline's output for `target`: for cuda, the shared form, which partition_loops (a host-only pass)
/// has not cut into loops per band.
Lowered lower(const ir::Function& f, Target target = Target::cpu) {
  passes::PipelineReport report;
  passes::PipelineOptions opts;
  opts.target = target;
  Lowered out{passes::run_pipeline(f, &report, opts), {}, ""};
  for (const auto& n : report.notes) out.notes.push_back(n.text);
  out.text = ir::to_string(out.f);
  return out;
}

bool has_note(const Lowered& l, const std::string& part) {
  for (const auto& n : l.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

void expect_exact(const ir::Function& f, const Lowered& l, int rank) {
  const auto kernel = compile(l.f);
  const std::vector<std::vector<std::int64_t>> shapes =
      rank == 1 ? std::vector<std::vector<std::int64_t>>{{2}, {3}, {17}, {1000}}
      : rank == 2 ? std::vector<std::vector<std::int64_t>>{{2, 2}, {3, 5}, {31, 7}}
                  : std::vector<std::vector<std::int64_t>>{{2, 2, 2}, {3, 5, 4}, {9, 7, 11}};
  for (const auto& shape : shapes)
    expect_three_way(f, l.f, kernel, {array_arg(random_array(DType::F64, shape)), array_arg(random_array(DType::F64, shape))});
}

TEST(StencilFusion, ReluOfStencilIsOnePassOverMemory) {
  for (Border border : {Border::nearest, Border::wrap, Border::reflect, Border::mirror})
    for (int rank : {1, 2, 3}) {
      SCOPED_TRACE(std::string(ir::name_of(border)) + " " + std::to_string(rank) + "-d");
      const ir::Function f = relu_stencil({rank, border});
      const Lowered l = lower(f);
      // One parfor over the whole space (lower_stencils tests the interior per axis inside it): every element
      // of r is written once, from a and b, with nothing in between.
      const Lowered shared = lower(f, Target::cuda);
      EXPECT_EQ(count_parfors(shared.f.body), 1) << shared.text;
      EXPECT_EQ(l.text.find("alloc t"), std::string::npos) << l.text;
      EXPECT_EQ(l.text.find("alloc s"), std::string::npos) << l.text;
      EXPECT_TRUE(has_note(l, "folded consumer map r = relu(s + b) into stencil s")) << l.text;
      EXPECT_TRUE(has_note(l, "recomputed producer map t = 2 * a into")) << l.text;
      expect_exact(f, l, rank);
    }
}

TEST(StencilFusion, ConstantBorderRefusesTheProducerAndSaysWhy) {
  for (int rank : {1, 2}) {
    const ir::Function f = relu_stencil({rank, Border::constant});
    const Lowered l = lower(f);
    EXPECT_TRUE(has_note(l, "did not recompute producer map t = 2 * a")) << l.text;
    EXPECT_TRUE(has_note(l, "f(cval), not cval")) << l.text;
    EXPECT_TRUE(has_note(l, "folded consumer")) << l.text;  // the consumer is still exact
    const Lowered shared = lower(f, Target::cuda);
    EXPECT_EQ(count_parfors(shared.f.body), 2) << shared.text;  // t's map stays
    expect_exact(f, l, rank);
  }
}

TEST(StencilFusion, SkipBorderKeepsBothNeighbours) {
  const ir::Function f = relu_stencil({2, Border::skip});
  const Lowered l = lower(f);
  EXPECT_TRUE(has_note(l, "did not fold consumer map r = relu(s + b) into stencil s: skipped border elements")) << l.text;
  EXPECT_TRUE(has_note(l, "did not recompute producer map t = 2 * a into stencil s: skipped border elements copy t")) << l.text;
  expect_exact(f, l, 2);
}

TEST(StencilFusion, TemporaryWithAnotherUserIsNotRecomputed) {
  const ir::Function f = relu_stencil({2, Border::nearest, true});
  const Lowered l = lower(f);
  EXPECT_TRUE(has_note(l, "t is used after the stencil")) << l.text;
  EXPECT_NE(l.text.find("alloc t"), std::string::npos) << l.text;
  expect_exact(f, l, 2);
}

TEST(StencilFusion, DiagnosticsNameTheDecisions) {
  // The notes go to kernel.diagnostics() under the fusion section, like fuse_parfors' (KILN_DIAGNOSTICS=1).
  passes::PipelineReport report;
  passes::run_pipeline(relu_stencil({2, Border::constant}), &report);
  bool found = false;
  for (const auto& e : report.notes)
    found |= e.pass == std::string("fuse_stencils") && e.topic == passes::Topic::fusion &&
             e.text.find("constant border") != std::string::npos;
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace kiln::stencil_test
