// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Parfors: their index spaces (all of S, or its first axes with sequential loops inside), the arrays they write
// and define, their scalar, argmin/argmax and array reductions, and random bodies (the rules that keep them well
// defined are in generator.hpp).
#include <algorithm>

#include "tools/kiln_fuzz/generator.hpp"

namespace kiln::fuzz::detail {
namespace {

Expr bin(BinaryOp op, Expr a, Expr b) { return ir::make_binary(op, std::move(a), std::move(b)); }

}  // namespace

Expr Generator::flat_own_index() {
  Expr flat = own_[0];
  for (std::size_t d = 1; d < own_.size(); ++d)
    flat = bin(BinaryOp::Add, bin(BinaryOp::Mul, flat, ir::make_dim(arrays_[0].var, static_cast<int>(d))), own_[d]);
  return flat;
}

Stmt Generator::store_own(const ArrayInfo& a, bool libm_ok) {
  const DType t = a.var->type.elem;
  Expr v = libm_ok && is_float(t) && !is_half(t) && chance(0.5) ? approximate(t) : expr(t, 3);
  return ir::make_store(a.var, own_, std::move(v));
}

Stmt Generator::reduction_update(ReductionInfo& info) {
  info.updated = true;
  const Var& s = info.r.var;
  const DType t = info.type;
  if (ir::is_arg_reduction(info.r.op)) {
    Expr x = expr(t, 3);
    const BinaryOp better = info.r.op == ReduceOp::ArgMin ? BinaryOp::Lt : BinaryOp::Gt;
    Expr cond = bin(better, x, ir::make_ref(s));
    if (is_float(t) && info.rule >= 1) {
      Expr nan_wins = bin(BinaryOp::And, ir::make_call(Intrinsic::IsNan, {x}),
                          ir::make_unary(UnaryOp::Not, ir::make_call(Intrinsic::IsNan, {ir::make_ref(s)})));
      cond = bin(BinaryOp::Or, std::move(cond), std::move(nan_wins));
    }
    if (info.rule == 2) cond = bin(BinaryOp::Or, bin(BinaryOp::Lt, ir::make_ref(info.r.index), ir::make_i64(0)), std::move(cond));
    return ir::make_if(std::move(cond), ir::make_block({ir::make_assign(s, x), ir::make_assign(info.r.index, flat_own_index())}));
  }
  Expr e;
  if (is_float(t) && info.r.op == ReduceOp::Add) e = exact_sum_term(t);
  else if (is_float(t) && info.r.op == ReduceOp::Mul) e = exact_product_term(t);
  else e = expr(t, 3);
  BinaryOp op = info.r.op == ReduceOp::Add ? (chance(0.2) ? BinaryOp::Sub : BinaryOp::Add)
                : info.r.op == ReduceOp::Mul ? BinaryOp::Mul
                : info.r.op == ReduceOp::Min ? BinaryOp::Min
                                             : BinaryOp::Max;
  Expr value = op != BinaryOp::Sub && chance(0.5) ? bin(op, std::move(e), ir::make_ref(s)) : bin(op, ir::make_ref(s), std::move(e));
  return ir::make_assign(s, std::move(value));
}

Stmt Generator::array_update(const Var& hist, ReduceOp op) {
  const DType t = hist->type.elem;
  Expr k = wrap_index(index_expr(2), ir::make_dim(hist, 0));
  Expr e = is_float(t) && op == ReduceOp::Add   ? exact_sum_term(t)
           : is_float(t) && op == ReduceOp::Mul ? exact_product_term(t)
                                                : expr(t, 3);
  const BinaryOp b = op == ReduceOp::Add ? BinaryOp::Add : op == ReduceOp::Mul ? BinaryOp::Mul : op == ReduceOp::Min ? BinaryOp::Min : BinaryOp::Max;
  return ir::make_store(hist, {k}, bin(b, ir::make_load(hist, {k}), std::move(e)));
}

void Generator::body_statements(std::vector<Stmt>& out, int count, int depth) {
  for (int k = 0; k < count; ++k) body_statement(out, depth);
}

void Generator::body_statement(std::vector<Stmt>& out, int depth) {
  if (atomic_table_ && prim_chance(0.3)) {
    out.push_back(shared_atomic());
    return;
  }
  if (atomic_own_ && prim_chance(0.3)) {
    out.push_back(own_atomic());
    return;
  }
  switch (uniform(0, 9)) {
    case 0:
    case 1: {
      const DType t = any_type();
      Var v = ir::make_var(name("x"), ir::Type::scalar(t), ir::VarKind::Local);
      out.push_back(ir::make_let(v, expr(t, 3)));
      scalars_.push_back({v, true, true});
      return;
    }
    case 2: {
      std::vector<Var> vs;
      for (const auto& s : scalars_)
        if (s.assignable && s.in_parfor) vs.push_back(s.var);
      if (vs.empty()) break;
      const Var& v = vs[std::uniform_int_distribution<std::size_t>(0, vs.size() - 1)(rng_)];
      out.push_back(ir::make_assign(v, expr(v->type.elem, 3)));
      return;
    }
    case 3:
    case 4: {
      std::vector<const ArrayInfo*> targets;
      for (const auto& a : arrays_)
        if (written_.count(a.var.get())) targets.push_back(&a);
      if (targets.empty()) break;
      const ArrayInfo& a = *targets[std::uniform_int_distribution<std::size_t>(0, targets.size() - 1)(rng_)];
      out.push_back(store_own(a, approx_ok_.count(a.var.get()) > 0));
      return;
    }
    case 5:
      if (depth > 0) {
        Expr c = expr(DType::Bool, 3);
        std::vector<Stmt> then_body, else_body;
        {
          Scope scope(*this);
          body_statements(then_body, uniform(1, 2), depth - 1);
        }
        if (chance(0.5)) {
          Scope scope(*this);
          body_statements(else_body, uniform(1, 2), depth - 1);
        }
        out.push_back(ir::make_if(std::move(c), ir::make_block(std::move(then_body)),
                                  else_body.empty() ? nullptr : ir::make_block(std::move(else_body))));
        return;
      }
      break;
    case 6:
      if (depth > 0) {  // at most 3 trips, so exact float sums stay far below 2^24
        // Half the loops have the same bounds in every iteration of the parfor and half of those carry a
        // float local in order (`v = v + e`): the bodies the CPU backend runs in vector lanes (ir/lanes.hpp).
        const bool fixed = chance(0.5);
        Expr end = fixed ? ir::make_i64(uniform(0, 3)) : bin(BinaryOp::Min, index_expr(1), ir::make_i64(3));
        std::vector<Var> carried;
        for (const auto& x : scalars_)
          if (x.assignable && x.in_parfor && is_float(x.var->type.elem)) carried.push_back(x.var);
        Var t = ir::make_var(name("t"), ir::Type::scalar(DType::I64), ir::VarKind::Index);
        std::vector<Stmt> body;
        {
          Scope scope(*this);
          scalars_.push_back({t, false, true});
          if (fixed && !carried.empty() && chance(0.5)) {
            const Var& v = carried[std::uniform_int_distribution<std::size_t>(0, carried.size() - 1)(rng_)];
            body.push_back(ir::make_assign(v, bin(BinaryOp::Add, ir::make_ref(v), expr(v->type.elem, 2))));
          }
          body_statements(body, uniform(1, 3), depth - 1);
        }
        out.push_back(ir::make_for(t, ir::make_i64(chance(0.8) ? 0 : -1), std::move(end), ir::make_block(std::move(body))));
        return;
      }
      break;
    case 7:
    case 8:
      if (!reductions_.empty()) {
        out.push_back(reduction_update(reductions_[uniform(0, static_cast<int>(reductions_.size()) - 1)]));
        return;
      }
      break;
    default:
      if (!array_reductions_.empty()) {
        out.push_back(array_update(array_reductions_[0].array, array_reductions_[0].op));
        return;
      }
      break;
  }
  // The chosen kind did not apply here: a new local always does.
  const DType t = any_type();
  Var v = ir::make_var(name("x"), ir::Type::scalar(t), ir::VarKind::Local);
  out.push_back(ir::make_let(v, expr(t, 2)));
  scalars_.push_back({v, true, true});
}

void Generator::parfor(std::vector<Stmt>& out) {
  const int rank = static_cast<int>(shape_.size());
  const int dims = uniform(1, rank);
  // The arrays it writes: up to two outputs, and perhaps a new local array it defines.
  std::vector<std::size_t> outputs;
  for (std::size_t k = 0; k < arrays_.size(); ++k)
    if (arrays_[k].output && arrays_[k].shaped && !arrays_[k].tainted && chance(0.4)) outputs.push_back(k);
  while (outputs.size() > 2) outputs.erase(outputs.begin() + uniform(0, static_cast<int>(outputs.size()) - 1));
  const bool define = chance(0.35);
  if (define) {
    const DType t = any_type();
    Var a = ir::make_var(name("tmp"), ir::Type::array(t, rank, true), ir::VarKind::Local);
    std::vector<Expr> shape;
    for (int d = 0; d < rank; ++d) shape.push_back(ir::make_dim(arrays_[0].var, d));
    out.push_back(ir::make_allocate(a, std::move(shape)));
    arrays_.push_back({a, true, false, false, false, false, false});
  }
  for (std::size_t k : outputs) {
    written_.insert(arrays_[k].var.get());
    if (options_.approximate_functions && is_float(arrays_[k].var->type.elem) && chance(0.25)) {
      approx_ok_.insert(arrays_[k].var.get());
      arrays_[k].tainted = true;
      program_.params[std::find(program_.function.params.begin(), program_.function.params.end(), arrays_[k].var) -
                      program_.function.params.begin()]
          .precision = Precision::Approx;
    }
  }
  if (define) written_.insert(arrays_.back().var.get());

  // Scalar reductions, declared before the loop.
  const int nred = chance(0.6) ? uniform(1, 3) : 0;
  for (int k = 0; k < nred; ++k) {
    ReductionInfo info;
    info.type = numeric_type();
    info.r.op = static_cast<ReduceOp>(uniform(0, 5));
    info.r.var = ir::make_var(name("s"), ir::Type::scalar(info.type), ir::VarKind::Local);
    Expr init = ir::identity_of(info.r.op, info.type);
    if (chance(0.5)) {
      if (is_float(info.type) && info.r.op == ReduceOp::Add) init = ir::make_float(info.type, uniform(-20, 20));
      else if (is_float(info.type) && info.r.op == ReduceOp::Mul) init = ir::make_float(info.type, chance(0.5) ? -1.0 : 2.0);
      else init = constant(info.type);
    }
    out.push_back(ir::make_let(info.r.var, std::move(init)));
    if (ir::is_arg_reduction(info.r.op)) {
      info.r.index = ir::make_var(name("at"), ir::Type::scalar(DType::I64), ir::VarKind::Local);
      out.push_back(ir::make_let(info.r.index, ir::make_i64(-1)));
      info.rule = uniform(is_float(info.type) ? 0 : 1, 2);
      if (!is_float(info.type) && info.rule == 1) info.rule = 0;
      hidden_.insert(info.r.index.get());
    }
    hidden_.insert(info.r.var.get());
    reductions_.push_back(info);
  }
  // An array reduction into a histogram parameter.
  for (const auto& a : arrays_)
    if (a.hist && chance(0.5)) {
      array_reductions_.push_back({a.var, static_cast<ReduceOp>(uniform(0, 3))});
      hidden_.insert(a.var.get());
      break;
    }
  choose_atomic_table();
  choose_atomic_own();

  std::vector<Var> indices;
  std::vector<Expr> begins, ends;
  for (int d = 0; d < dims; ++d) {
    indices.push_back(ir::make_var(name("i"), ir::Type::scalar(DType::I64), ir::VarKind::Index));
    // Partial ranges leave elements unwritten, which only parameters (already holding values) may afford.
    const bool partial = !define && chance(0.15);
    begins.push_back(ir::make_i64(partial && chance(0.5) ? 1 : 0));
    std::vector<Var> shaped;  // any array of shape S gives the extent (they are all equal at run time)
    for (const auto& a : arrays_)
      if (a.shaped) shaped.push_back(a.var);
    Expr end = ir::make_dim(shaped[std::uniform_int_distribution<std::size_t>(0, shaped.size() - 1)(rng_)], d);
    ends.push_back(partial ? bin(BinaryOp::Sub, end, ir::make_i64(1)) : end);
    own_.push_back(ir::make_ref(indices.back()));
  }
  std::vector<Var> inner;
  for (int d = dims; d < rank; ++d) {
    inner.push_back(ir::make_var(name("j"), ir::Type::scalar(DType::I64), ir::VarKind::Index));
    own_.push_back(ir::make_ref(inner.back()));
  }
  in_parfor_ = true;
  std::vector<Stmt> body;
  {
    Scope scope(*this);
    if (define) body.push_back(store_own(arrays_.back(), false));
    body_statements(body, uniform(1, 4), 2);
    for (auto& r : reductions_)
      if (!r.updated) body.push_back(reduction_update(r));
    if (!array_reductions_.empty() && chance(0.7)) body.push_back(array_update(array_reductions_[0].array, array_reductions_[0].op));
    if (atomic_table_ && !atomic_table_updated_) body.push_back(shared_atomic());
    if (atomic_own_ && !atomic_own_updated_) body.push_back(own_atomic());
  }
  Stmt nest = ir::make_block(std::move(body));
  for (int d = rank; d-- > dims;) nest = ir::make_for(inner[d - dims], ir::make_i64(0), ir::make_dim(arrays_[0].var, d), nest);
  std::vector<ir::Reduction> reductions;
  for (const auto& r : reductions_) reductions.push_back(r.r);
  out.push_back(ir::make_parfor(std::move(indices), std::move(begins), std::move(ends), nest, std::move(reductions),
                                array_reductions_, "fuzz"));
  in_parfor_ = false;
  if (define) arrays_.back().defined = true;
  for (const auto& r : reductions_) {
    scalars_.push_back({r.r.var, true, false});
    if (chance(0.7)) out.push_back(sink_store(ir::make_ref(r.r.var)));
    if (r.r.index) {
      scalars_.push_back({r.r.index, true, false});
      out.push_back(sink_store(ir::make_ref(r.r.index)));
    }
  }
  own_.clear();
  written_.clear();
  hidden_.clear();
  approx_ok_.clear();
  reductions_.clear();
  array_reductions_.clear();
  atomic_table_ = nullptr;
  atomic_table_updated_ = false;
  atomic_own_ = nullptr;
  atomic_own_updated_ = false;
}


}  // namespace kiln::fuzz::detail
