// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Elementwise array operations and assignments into arrays, each traced as one MapStmt.
#include "frontend/broadcast.hpp"

#include <fmt/format.h>

#include "frontend/source_names.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/ops.hpp"
#include "ir/visitor.hpp"
#include "kiln/array_ops.hpp"

namespace kiln::detail {
namespace {

/// The IR name of a unary operator's result.
const char* unary_word_of(const std::string& op) {
  if (op == "-") return "neg";
  if (op == "+") return "copy";
  if (op == "!") return "not";
  if (op == "~") return "inv";
  return nullptr;
}

/// The IR name of a binary operator's result: `add` for +, ...
const char* word_of(const std::string& op) {
  static const std::pair<const char*, const char*> words[] = {
      {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"%", "mod"}, {"&", "and"},  {"|", "or"},
      {"^", "xor"}, {"<<", "shl"}, {">>", "shr"}, {"==", "eq"}, {"!=", "ne"}, {"<", "lt"}, {"<=", "le"},
      {">", "gt"},  {">=", "ge"}, {"!", "not"}, {"~", "inv"}};
  for (const auto& [sym, word] : words)
    if (op == sym) return word;
  return nullptr;
}

/// `a + b` as an operand of another operator is `(a + b)`; `exp(a + b)` and `a[1:-1]` need no parentheses.
std::string parenthesized(const std::string& label) {
  if (label == "(...)") return label;
  int depth = 0;
  for (char c : label) {
    if (c == '(' || c == '[') ++depth;
    else if (c == ')' || c == ']') --depth;
    else if (c == ' ' && depth == 0) return "(" + label + ")";
  }
  return label;
}

/// `a + b`, `-a`, `exp(a)`, `where(c, a, b)`, `cast<f32>(a)`.
std::string describe(const ElemOp& op, const char* name, const std::vector<Input>& in) {
  const std::string n = name;
  if (word_of(n) && in.size() == 2) return parenthesized(in[0].label) + " " + n + " " + parenthesized(in[1].label);
  if (word_of(n) && in.size() == 1) return n + parenthesized(in[0].label);
  std::string s = n == "cast" ? "cast<" + std::string(name_of(op.result)) + ">(" : n + "(";
  for (size_t k = 0; k < in.size(); ++k) s += (k ? ", " : "") + in[k].label;
  return s + ")";
}

/// The value of the operation at `index`.
ir::Expr element(const ElemOp& op, const std::vector<Input>& in, const std::vector<ir::Expr>& index) {
  std::vector<ir::Expr> x;
  for (size_t k = 0; k < in.size(); ++k)
    x.push_back(read(in[k], index, op.kind == ElemKind::Select && k == 0 ? DType::Bool : op.operand));
  switch (op.kind) {
    case ElemKind::Unary: return ir::make_unary(static_cast<UnaryOp>(op.code), x[0]);
    case ElemKind::Binary: return ir::make_binary(static_cast<BinaryOp>(op.code), x[0], x[1]);
    case ElemKind::Call: return ir::make_call(static_cast<Intrinsic>(op.code), x);
    case ElemKind::Select: return ir::make_select(x[0], x[1], x[2]);
    case ElemKind::Cast: return ir::make_cast(op.result, x[0]);
    case ElemKind::Clip:
      return ir::make_binary(BinaryOp::Min, ir::make_binary(BinaryOp::Max, x[0], x[1]), x[2]);
    case ElemKind::Square: return ir::make_binary(BinaryOp::Mul, x[0], x[0]);
    case ElemKind::Sign: {
      const DType t = op.operand;
      auto k = [t](double v) { return ir::make_const(t, v); };
      // x itself where it is neither above, below nor equal to 0: a NaN stays NaN.
      const ir::Expr rest = is_float(t) ? ir::make_select(ir::make_binary(BinaryOp::Eq, x[0], k(0)), k(0), x[0]) : k(0);
      return ir::make_select(ir::make_binary(BinaryOp::Gt, x[0], k(0)), k(1),
                             ir::make_select(ir::make_binary(BinaryOp::Lt, x[0], k(0)), k(-1), rest));
    }
  }
  throw ir::IRError("unknown elementwise operation");
}

/// True if `value` loads `array` anywhere but at `index`.
bool reads_elsewhere(const ir::Expr& value, const ir::Var& array, const std::vector<ir::Expr>& index) {
  struct Finder : ir::IRVisitor {
    const ir::Var& a;
    const std::vector<ir::Expr>& at;
    bool found = false;
    Finder(const ir::Var& array, const std::vector<ir::Expr>& idx) : a(array), at(idx) {}
    void visit(const ir::LoadExpr& l) override {
      if (l.array == a)
        for (size_t d = 0; d < l.indices.size(); ++d) found |= !ir::equal(l.indices[d], at[d]);
      ir::IRVisitor::visit(l);
    }
  } f(array, index);
  f.walk(value);
  return f.found;
}

template <class F>
auto checked(TraceContext& ctx, F&& f) {
  try {
    return f();
  } catch (const ir::IRError& e) {
    ctx.fail(e.what());
  }
}

}  // namespace

ArrayHandle elementwise(const ElemOp& op, const OpArg* args, int n, const char* name, Where w) {
  TraceContext& ctx = TraceContext::active("an array operation");
  ctx.begin_statement();
  std::vector<Input> in;
  for (int k = 0; k < n; ++k) in.push_back(prepare(ctx, args[k]));
  const std::string what = describe(op, name, in);
  const std::vector<ir::Expr> shape = broadcast(ctx, in, what, w);
  const std::vector<ir::Var> idx = space_indices(ctx, static_cast<int>(shape.size()));
  const ir::Expr value = checked(ctx, [&] { return element(op, in, refs(idx)); });
  const char* word = n == 1 && unary_word_of(name) ? unary_word_of(name) : word_of(name);
  std::string var_name = word ? "" : declared_name(w);
  if (var_name.empty()) var_name = word ? word : name;
  const ir::Var var = ctx.new_array(op.result, static_cast<int>(shape.size()), var_name, w);
  ctx.emit(ir::make_map(var, idx, shape, value, what + at(w)));
  return new_handle(ctx, var, shape, what);
}

ArrayHandle outer(const ArrayHandle& a, const ArrayHandle& b, DType t, Where w) {
  TraceContext& ctx = TraceContext::active("kiln::outer");
  for (const ArrayHandle* x : {&a, &b})
    if (x->rank != 1)
      ctx.fail(fmt::format("kiln::outer takes two 1-d arrays; '{}' has rank {} (NumPy flattens it: pass a 1-d view)",
                           label_of(*x), x->rank),
               w);
  // u as a column: u[:, None] broadcasts against v's row.
  const ViewIndex column[] = {ViewIndex{}, ViewIndex{nullptr, nullptr, true}};
  const ArrayHandle col = make_view(a, column, 2, w);
  const OpArg args[] = {OpArg{&col, nullptr}, OpArg{&b, nullptr}};
  return elementwise(ElemOp{ElemKind::Binary, static_cast<std::uint8_t>(BinaryOp::Mul), t, t}, args, 2, "*", w);
}

void assign_into(const ArrayHandle& target, OpArg arg, const BinaryOp* combine, DType operand, const char* what,
                 Where w) {
  TraceContext& ctx = TraceContext::active("assignment into an array");
  ctx.check_array(target, "assignment into");
  ctx.begin_statement();
  const Input value = prepare(ctx, arg);
  const std::string text = label_of(target) + " " + what + " " + value.label;
  const std::vector<ir::Expr> shape = extents_of(target);
  if (value.array) check_broadcast_to(ctx, value, shape, text, w);
  const DType t = elem_of(target);
  const int rank = static_cast<int>(shape.size());

  // The new element at `index` of the target.
  auto element_at = [&](const std::vector<ir::Expr>& index) {
    return checked(ctx, [&] {
      ir::Expr v = read(value, index, operand);
      if (combine) {
        const ir::Expr old = ir::make_cast(operand, ir::make_load(target.var, base_indices(target, index)));
        v = ir::make_binary(*combine, old, v);
      }
      return ir::make_cast(t, v);
    });
  };

  std::vector<ir::Var> idx = space_indices(ctx, rank);
  std::vector<ir::Expr> at_target = base_indices(target, refs(idx));
  ir::Expr v = element_at(refs(idx));
  if (reads_elsewhere(v, target.var, at_target)) {
    // The value reads elements the assignment overwrites: evaluate all of it first (NumPy's semantics).
    const ir::Var tmp = ctx.new_array(t, rank, "tmp", w);
    ctx.emit(ir::make_map(tmp, idx, shape, v, text + " (value)" + at(w)));
    idx = space_indices(ctx, rank);
    at_target = base_indices(target, refs(idx));
    v = ir::make_load(tmp, refs(idx));
  }
  ctx.snapshot_memory_readers();  // values that read the old elements keep them
  note_write(ctx, target.var.get());
  ctx.emit(ir::make_map_into(target.var, idx, shape, at_target, v, text + at(w)));
}

}  // namespace kiln::detail
