// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Top-level statements and whole programs: parameters of every type and layout, lets, assignments, loops, ifs,
// table stores, parfors (gen_parfor.cpp) and array-level statements (gen_array.cpp), and the result.
#include "tools/kiln_fuzz/generator.hpp"

namespace kiln::fuzz::detail {
namespace {

int type_number(DType t) { return static_cast<int>(t); }

}  // namespace

Generator::Generator(std::uint64_t seed, const GeneratorOptions& options)
    : rng_(seed), draw_rng_(seed ^ 0x52414E444F4D5EEDull), prim_rng_(seed ^ 0x534F5254415443ull), options_(options) {}

std::int64_t Generator::extent() {
  static constexpr std::int64_t kSmall[] = {0, 1, 2, 3, 5, 7, 13, 17, 31, 64, 101, 257};
  static constexpr std::int64_t kLarge[] = {2049, 4099, 5003};  // past one reduction block (2048 iterations)
  if (shape_.empty() && options_.large_sizes && chance(0.03)) return kLarge[uniform(0, 2)];
  // Later axes stay small, and tiny behind a large first axis (at most ~45 000 elements in all).
  const int most = shape_.empty() ? 11 : shape_[0] > 1000 ? 3 : 6;
  return kSmall[uniform(0, most)];
}

Var Generator::add_param(const std::string& n, ir::Type type, ParamSpec spec) {
  Var v = ir::make_var(n, type, ir::VarKind::Param);
  program_.function.params.push_back(v);
  program_.params.push_back(std::move(spec));
  return v;
}

Stmt Generator::sink_store(Expr value) {
  const int t = type_number(value->type);
  if (!sinks_[t]) {
    sinks_[t] = add_param("sink_" + std::string(name_of(value->type)), ir::Type::array(value->type, 1, false), {});
    sink_params_[t] = program_.params.size() - 1;
  }
  auto& shape = program_.params[sink_params_[t]].shape;
  if (shape.empty()) shape.push_back(0);
  return ir::make_store(sinks_[t], {ir::make_i64(shape[0]++)}, std::move(value));
}

void Generator::top_statements(std::vector<Stmt>& out, int count, int depth) {
  for (int k = 0; k < count; ++k) top_statement(out, depth);
}

void Generator::top_statement(std::vector<Stmt>& out, int depth) {
  if (options_.array_operations && prim_chance(0.08)) return sort(out);
  if (prim_chance(0.05)) {
    const std::size_t before = out.size();
    top_atomic(out);
    if (out.size() > before) return;
  }
  switch (uniform(0, 10)) {
    case 9:
    case 10:
      if (options_.array_operations) {
        array_statement(out);
        return;
      }
      break;
    case 0: {
      const DType t = any_type();
      Var v = ir::make_var(name("y"), ir::Type::scalar(t), ir::VarKind::Local);
      out.push_back(ir::make_let(v, expr(t, 3)));
      scalars_.push_back({v, true, false});
      return;
    }
    case 1: {
      std::vector<Var> vs;
      for (const auto& s : scalars_)
        if (s.assignable) vs.push_back(s.var);
      if (vs.empty()) break;
      const Var& v = vs[std::uniform_int_distribution<std::size_t>(0, vs.size() - 1)(rng_)];
      out.push_back(ir::make_assign(v, expr(v->type.elem, 3)));
      return;
    }
    case 2:
      if (depth > 0) {
        Var t = ir::make_var(name("t"), ir::Type::scalar(DType::I64), ir::VarKind::Index);
        std::vector<Stmt> body;
        {
          Scope scope(*this);
          scalars_.push_back({t, false, false});
          top_statements(body, uniform(1, 3), depth - 1);
        }
        out.push_back(ir::make_for(t, ir::make_i64(0), ir::make_i64(uniform(0, 3)), ir::make_block(std::move(body))));
        return;
      }
      break;
    case 3:
      if (depth > 0) {
        Expr c = expr(DType::Bool, 3);
        std::vector<Stmt> then_body, else_body;
        {
          Scope scope(*this);
          top_statements(then_body, uniform(1, 2), depth - 1);
        }
        if (chance(0.5)) {
          Scope scope(*this);
          top_statements(else_body, uniform(1, 2), depth - 1);
        }
        out.push_back(ir::make_if(std::move(c), ir::make_block(std::move(then_body)),
                                  else_body.empty() ? nullptr : ir::make_block(std::move(else_body))));
        return;
      }
      break;
    case 4: {  // a table element at a wrapped index (histograms keep small integers: not here)
      std::vector<const ArrayInfo*> tables;
      for (const auto& a : arrays_)
        if (a.table && !a.hist) tables.push_back(&a);
      if (tables.empty()) break;
      const ArrayInfo& a = *tables[std::uniform_int_distribution<std::size_t>(0, tables.size() - 1)(rng_)];
      out.push_back(ir::make_store(a.var, {wrap_index(index_expr(2), ir::make_dim(a.var, 0))}, expr(a.var->type.elem, 3)));
      return;
    }
    default:
      parfor(out);
      return;
  }
  parfor(out);
}

Program Generator::run() {
  const int rank = chance(0.5) ? 1 : chance(0.6) ? 2 : 3;
  for (int d = 0; d < rank; ++d) shape_.push_back(extent());  // extent() looks at the axes before
  auto layout = [&](bool unit_stride, int r) {
    if (unit_stride) return chance(0.5) ? Layout::RowMajor : Layout::RowGaps;
    constexpr Layout any[] = {Layout::RowMajor, Layout::RowGaps, Layout::Padded, Layout::Reversed, Layout::ColumnMajor};
    return r == 1 && chance(0.5) ? Layout::RowMajor : any[uniform(0, 4)];
  };
  auto shaped_param = [&](const char* prefix, DType t, bool output) {
    const bool unit = chance(0.5);
    Var v = add_param(name(prefix), ir::Type::array(t, rank, unit), {shape_, layout(unit, rank)});
    arrays_.push_back({v, true, true, false, output, false, false});
  };
  shaped_param("in", any_type(), false);
  for (int k = uniform(0, 2); k > 0; --k) shaped_param("in", any_type(), false);
  for (int k = uniform(1, 3); k > 0; --k) shaped_param("out", any_type(), true);
  for (int k = uniform(0, 2); k > 0; --k) {
    static constexpr std::int64_t kExtents[] = {1, 2, 3, 7, 16};
    Var v = add_param(name("table"), ir::Type::array(any_type(), 1, false), {{kExtents[uniform(0, 4)]}, layout(false, 1)});
    arrays_.push_back({v, false, true, false, true, true, false});
  }
  if (chance(0.5)) {
    static constexpr std::int64_t kExtents[] = {1, 2, 5, 16};
    ParamSpec spec{{kExtents[uniform(0, 3)]}, layout(false, 1)};
    spec.integral = true;
    Var v = add_param(name("hist"), ir::Type::array(numeric_type(), 1, false), spec);
    arrays_.push_back({v, false, true, false, true, true, true});
  }
  for (int k = uniform(0, 3); k > 0; --k) {
    const DType t = any_type();
    Var v = add_param(name("p"), ir::Type::scalar(t), {});
    scalars_.push_back({v, false, false});
  }

  std::vector<Stmt> body;
  top_statements(body, uniform(1, 4), 2);
  // The result: a scalar expression, or a new array the body defined at its top level.
  std::vector<const ArrayInfo*> locals;
  for (const auto& a : arrays_)
    if (a.var->kind == ir::VarKind::Local && a.defined) locals.push_back(&a);
  if (!locals.empty() && chance(0.3)) {
    const ArrayInfo& a = *locals[std::uniform_int_distribution<std::size_t>(0, locals.size() - 1)(rng_)];
    program_.function.result_array = a.var;
    if (a.tainted) program_.result_precision = Precision::Approx;
  } else if (chance(0.7)) {
    program_.function.result = expr(any_type(), 3);
  }
  program_.function.name = "fuzz";
  program_.function.body = ir::make_block(std::move(body));
  const int level = uniform(0, 9);
  program_.opt_level = level == 0 ? 0 : level <= 5 ? 1 : level <= 8 ? 2 : 3;
  program_.threads = uniform(2, 4);
  return std::move(program_);
}

}  // namespace kiln::fuzz::detail

namespace kiln::fuzz {

Program generate(std::uint64_t seed, const GeneratorOptions& options) { return detail::Generator(seed, options).run(); }

}  // namespace kiln::fuzz

