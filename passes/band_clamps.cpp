// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/band_clamps.hpp"

#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/interior.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"
#include "passes/index_clamps.hpp"
#include "passes/loop_analysis.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

class Banding final : public IRMutator {
 public:
  explicit Banding(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using IRMutator::visit;

  // Parfors nested in this one run inside its kernel: only the outermost is rewritten.
  Stmt visit(const ParforStmt& p, const Stmt& self) override {
    if (!p.reductions.empty() || !p.array_reductions.empty()) return self;
    const VarSet variant = loops::variant_in(p.body);
    auto invariant = [&](const Expr& e) { return loops::invariant_in(e, p.indices, variant); };
    // A body that tests where its element lies already has an interior (lower_stencils' bands, whose border
    // arms clamp): only clamps inside it call for a test of their own.
    std::vector<Expr> tests;
    const Stmt interior = split_interior(p.body, tests, invariant, p.indices);
    bool any = false;
    for (const Var& i : p.indices) any = any || find_index_clamps(interior, i, invariant).plain;
    if (!any) return self;
    Stmt plain = p.body;
    Expr inside;
    std::string clamped;
    auto both = [&](const Expr& t) { inside = inside ? make_binary(BinaryOp::And, inside, t) : t; };
    for (std::size_t d = 0; d < p.indices.size(); ++d) {
      IndexClamps c = find_index_clamps(plain, p.indices[d], invariant);
      if (!c.plain) continue;
      // A constant lower bound that the range's constant start meets tests nothing (`min(k - 1, hi)` from 0).
      if (const auto* start = dyn<ConstExpr>(p.begins[d]))
        std::erase_if(c.lower, [&](const Expr& x) {
          const auto* k = dyn<ConstExpr>(x);
          return k && k->i <= start->i;
        });
      const Expr k = make_ref(p.indices[d]);
      for (const Expr& x : c.lower) both(make_binary(BinaryOp::Le, x, k));
      for (const Expr& y : c.upper) both(make_binary(BinaryOp::Lt, k, y));
      plain = c.plain;
      clamped += (clamped.empty() ? "" : ", ") + p.indices[d]->name;
    }
    if (clamped.empty()) return self;
    // The two arms are one body twice: each defines its own variables.
    const Stmt body = inside ? make_block({make_if(inside, fresh_copy(plain), p.body)}) : plain;
    ctx_.note("band_clamps: the parfor " + loops::space_text(p) + " from " + loops::origin_text(p) + " clamps " + clamped +
              (inside ? " -> each element tests `" + to_string(inside) +
                            "` once: inside, the reads are the index plus offsets (the clamps are inactive there), a stencil the "
                            "device tiles; outside, the body as written"
                      : " -> the clamps are never active in its range: the reads are the index plus offsets"));
    return make_parfor(p.indices, p.begins, p.ends, body, {}, p.origin);
  }

 private:
  PassContext& ctx_;
};

}  // namespace

ir::Function band_clamps(const ir::Function& f, PassContext& ctx) {
  Banding b(ctx);
  return b.mutate(f);
}

}  // namespace kiln::passes
