// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// deserialize(): one walk over hostile bytes, refusing anything serialize() would not have written.
#include "ir/serialize.hpp"

#include <bit>
#include <cmath>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "ir/semantics.hpp"
#include "ir/verifier.hpp"

namespace kiln::ir {
namespace {

// The last enumerator of each enum the format carries: a decoded byte above it is refused.
constexpr auto kLastDType = DType::BF16;
constexpr auto kLastVarKind = VarKind::Binding;
constexpr auto kLastExprKind = ExprKind::Call;
constexpr auto kLastStmtKind = StmtKind::Scan;
constexpr auto kLastUnaryOp = UnaryOp::BitNot;
constexpr auto kLastBinaryOp = BinaryOp::Ge;
constexpr auto kLastIntrinsic = Intrinsic::RandomPackedNormalF64;
constexpr auto kLastReduceOp = ReduceOp::ArgMax;
constexpr auto kLastBorder = Border::skip;
constexpr auto kLastAtomicOp = AtomicOp::CompareExchange;

// ---- decoding ----------------------------------------------------------------------------------------------

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  Function function() {
    const std::uint32_t version = u32("the format version");
    if (version != kSerialFormatVersion)
      fail(0, "format version {}, but this build reads version {}", version, kSerialFormatVersion);
    const std::uint32_t n = count("variable table");
    table_.reserve(n);
    for (std::uint32_t k = 0; k < n; ++k) table_.push_back(table_entry());
    Function f;
    f.name = str("the kernel name");
    f.params = vars();
    f.body = stmt();
    if (flag("a scalar result")) f.result = expr();
    if (flag("an array result")) f.result_array = array_var("the array result");
    f.tuple.resize(count("tuple result"));
    for (auto& m : f.tuple) {
      if (flag("a tuple member's scalar")) m.scalar = expr();
      if (flag("a tuple member's array")) m.array = array_var("a tuple member's array");
    }
    f.locations.resize(count("source location list"));
    for (auto& l : f.locations) l = str("a source location");
    if (pos_ != in_.size()) fail(pos_, "{} bytes after the end of the function", in_.size() - pos_);
    if (referenced_ != table_.size())
      fail(pos_, "the variable table has {} entries but the function refers to {}", table_.size(), referenced_);
    return f;
  }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
  std::vector<Var> table_;
  std::size_t referenced_ = 0;  ///< variables referred to so far: the next new reference must be this one
  int depth_ = 0;

  /// Rejects the input: `what` and its arguments, formatted with fmt, say why.
  template <class... Args>
  [[noreturn]] static void fail(std::size_t at, fmt::format_string<Args...> what, Args&&... args) {
    throw IRError(
        fmt::format("serialized IR rejected at byte {}: {}", at, fmt::format(what, std::forward<Args>(args)...)));
  }

  /// Runs a checked constructor of ir/builder.hpp, naming the offset of the node it was building if it refuses.
  template <class Make>
  static auto build(std::size_t at, Make&& make) {
    try {
      return make();
    } catch (const IRError& e) {
      fail(at, "{}", e.what());
    }
  }

  std::uint64_t fixed(int bytes, const char* what) {
    if (in_.size() - pos_ < static_cast<std::size_t>(bytes))
      fail(pos_, "input ends inside {}", what);
    std::uint64_t v = 0;
    for (int k = 0; k < bytes; ++k) v |= std::uint64_t{static_cast<unsigned char>(in_[pos_ + k])} << (8 * k);
    pos_ += bytes;
    return v;
  }
  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(fixed(1, what)); }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(fixed(4, what)); }
  std::int32_t i32(const char* what) { return static_cast<std::int32_t>(u32(what)); }
  std::int64_t i64(const char* what) { return static_cast<std::int64_t>(fixed(8, what)); }

  bool flag(const char* what) {
    const std::size_t at = pos_;
    const std::uint8_t b = u8(what);
    if (b > 1) fail(at, "{}: flag byte {} (0 or 1)", what, b);
    return b == 1;
  }

  template <class E>
  E enumerator(E last, const char* what) {
    const std::size_t at = pos_;
    const std::uint8_t b = u8(what);
    if (b > static_cast<std::uint8_t>(last))
      fail(at, "unknown {} {}", what, b);
    return static_cast<E>(b);
  }

  /// A count of items that follow: each takes at least one byte, so more than remain is malformed (and
  /// would otherwise let a few bytes ask for gigabytes).
  std::uint32_t count(const char* what) {
    const std::size_t at = pos_;
    const std::uint32_t n = u32(what);
    if (n > in_.size() - pos_)
      fail(at, "{} claims {} items but {} bytes remain", what, n, in_.size() - pos_);
    return n;
  }

  std::string str(const char* what) {
    const std::uint32_t n = count(what);
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }

  Var table_entry() {
    const std::size_t at = pos_;
    std::string name = str("a variable name");
    std::string where = str("a variable's source position");
    const VarKind kind = enumerator(kLastVarKind, "variable kind");
    Type t;
    t.elem = enumerator(kLastDType, "element type");
    t.rank = u8("a variable's rank");
    t.unit_stride = flag("a variable's unit stride");
    t.unit_dims = u8("a variable's unit dimensions");
    if (t.rank > kMaxRank) fail(at, "variable {} has rank {}", name, t.rank);
    if (t.unit_dims >> t.rank || (t.is_scalar() && t.unit_stride))
      fail(at, "variable {} has layout facts about dimensions it lacks", name);
    return make_var(std::move(name), t, kind, std::move(where));
  }

  Var var() {
    const std::size_t at = pos_;
    const std::uint32_t k = u32("a variable number");
    if (k >= table_.size())
      fail(at, "variable number {} out of range (the table has {})", k, table_.size());
    if (k > referenced_)
      fail(at, "variable number {} before variable {} (variables are numbered in order of first reference)", k,
           referenced_);
    if (k == referenced_) ++referenced_;
    return table_[k];
  }
  Var array_var(const char* what) {
    const std::size_t at = pos_;
    Var v = var();
    if (!v->type.is_array()) fail(at, "{} {} is not an array", what, v->name);
    return v;
  }
  std::vector<Var> vars() {
    std::vector<Var> vs(count("variable list"));
    for (auto& v : vs) v = var();
    return vs;
  }
  std::vector<Expr> exprs() {
    std::vector<Expr> es(count("expression list"));
    for (auto& e : es) e = expr();
    return es;
  }
  std::vector<std::int64_t> i64s() {
    std::vector<std::int64_t> xs(count("integer list"));
    for (auto& x : xs) x = i64("an integer list");
    return xs;
  }

  /// Counts one level of nesting; a hostile input could otherwise choose how deep the decoder recurses.
  struct Level {
    int& depth;
    Level(int& d, std::size_t at) : depth(d) {
      if (++depth > kMaxSerialDepth) fail(at, "nested deeper than {} levels", kMaxSerialDepth);
    }
    ~Level() { --depth; }
  };

  Expr constant(std::size_t at) {
    const DType t = enumerator(kLastDType, "constant type");
    switch (t) {
      case DType::Bool: return make_bool(flag("a bool constant"));
      case DType::I32: return make_int(t, i32("an i32 constant"));
      case DType::I64: return make_i64(i64("an i64 constant"));
      case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::I8: case DType::I16: {
        const std::int64_t v = i64("an integer constant");
        // The builders hold the value wrapped to the type; anything else would not come back bit for bit.
        if (sem::wrap_int(t, v) != v) fail(at, "{} constant {} outside its type", name_of(t), v);
        return make_int(t, v);
      }
      case DType::F32: case DType::F64: case DType::F16: case DType::BF16: break;
    }
    const double v = std::bit_cast<double>(fixed(8, "a float constant"));
    // A narrower float's constant holds one of its values widened to double; anything else would not come
    // back bit for bit. (NaN payloads of f16/bf16 are canonical: a NaN is accepted as it reads.)
    if (t != DType::F64) {
      const auto e = make_float(t, v);
      const double held = e->as<ConstExpr>().f;
      if (std::bit_cast<std::uint64_t>(held) != std::bit_cast<std::uint64_t>(v) && !(is_half(t) && std::isnan(v)))
        fail(at, "{} constant that is not a {} value", name_of(t), name_of(t));
      return e;
    }
    return make_float(t, v);
  }

  Expr expr() {
    const std::size_t at = pos_;
    const Level level(depth_, at);
    switch (enumerator(kLastExprKind, "expression kind")) {
      case ExprKind::Const: return constant(at);
      case ExprKind::VarRef: {
        Var v = var();
        return build(at, [&] { return make_ref(std::move(v)); });
      }
      case ExprKind::Load: {
        Var a = var();
        auto idx = exprs();
        return build(at, [&] { return make_load(std::move(a), std::move(idx)); });
      }
      case ExprKind::Dim: {
        Var a = var();
        const int axis = i32("an axis");
        return build(at, [&] { return make_dim(std::move(a), axis); });
      }
      case ExprKind::Unary: {
        const UnaryOp op = enumerator(kLastUnaryOp, "unary operator");
        Expr a = expr();
        return build(at, [&] { return make_unary(op, std::move(a)); });
      }
      case ExprKind::Binary: {
        const BinaryOp op = enumerator(kLastBinaryOp, "binary operator");
        Expr a = expr();
        Expr b = expr();
        return build(at, [&] { return make_binary(op, std::move(a), std::move(b)); });
      }
      case ExprKind::Select: {
        Expr c = expr();
        Expr a = expr();
        Expr b = expr();
        return build(at, [&] { return make_select(std::move(c), std::move(a), std::move(b)); });
      }
      case ExprKind::Cast: {
        const DType t = enumerator(kLastDType, "cast type");
        Expr a = expr();
        // make_cast drops a cast to the operand's own type; serialize never writes one.
        if (a->type == t) fail(at, "cast of a {} value to its own type", name_of(t));
        return make_cast(t, std::move(a));
      }
      case ExprKind::Call: {
        const Intrinsic fn = enumerator(kLastIntrinsic, "intrinsic");
        auto args = exprs();
        return build(at, [&] { return make_call(fn, std::move(args)); });
      }
    }
    fail(at, "unreachable expression kind");  // enumerator() refused every other byte
  }

  Stmt stmt() {
    const std::size_t at = pos_;
    const Level level(depth_, at);
    switch (enumerator(kLastStmtKind, "statement kind")) {
      case StmtKind::Block: {
        std::vector<Stmt> stmts(count("block"));
        for (auto& s : stmts) s = stmt();
        return make_block(std::move(stmts));
      }
      case StmtKind::Let: {
        Var v = var();
        Expr e = expr();
        return build(at, [&] { return make_let(std::move(v), std::move(e)); });
      }
      case StmtKind::Assign: {
        Var v = var();
        Expr e = expr();
        return build(at, [&] { return make_assign(std::move(v), std::move(e)); });
      }
      case StmtKind::Store: {
        Var a = var();
        auto idx = exprs();
        Expr value = expr();
        return build(at, [&] { return make_store(std::move(a), std::move(idx), std::move(value)); });
      }
      case StmtKind::For: {
        Var i = var();
        Expr begin = expr();
        Expr end = expr();
        Stmt body = stmt();
        return build(at, [&] { return make_for(std::move(i), std::move(begin), std::move(end), std::move(body)); });
      }
      case StmtKind::Parfor: return parfor(at);
      case StmtKind::If: {
        Expr cond = expr();
        Stmt then_body = stmt();
        Stmt else_body = flag("an else branch") ? stmt() : nullptr;
        return build(at, [&] { return make_if(std::move(cond), std::move(then_body), std::move(else_body)); });
      }
      case StmtKind::Allocate: {
        Var a = var();
        auto shape = exprs();
        return build(at, [&] { return make_allocate(std::move(a), std::move(shape)); });
      }
      case StmtKind::Check: {
        Expr cond = expr();
        const std::int32_t code = i32("a status code");
        std::string message = str("a check message");
        auto args = exprs();
        return build(at, [&] { return make_check(std::move(cond), code, std::move(message), std::move(args)); });
      }
      case StmtKind::Map: {
        Var target = var();
        const bool allocate = flag("a map's allocate flag");
        auto indices = vars();
        auto shape = exprs();
        std::vector<Expr> target_index = allocate ? std::vector<Expr>{} : exprs();
        Expr value = expr();
        std::string origin = str("an origin");
        return build(at, [&] {
          return allocate ? make_map(std::move(target), std::move(indices), std::move(shape), std::move(value),
                                     std::move(origin))
                          : make_map_into(std::move(target), std::move(indices), std::move(shape),
                                          std::move(target_index), std::move(value), std::move(origin));
        });
      }
      case StmtKind::Reduce: {
        Var result = var();
        const ReduceOp op = enumerator(kLastReduceOp, "reduction");
        auto indices = vars();
        auto shape = exprs();
        Expr value = expr();
        std::string origin = str("an origin");
        return build(at, [&] {
          return make_reduce(std::move(result), op, std::move(indices), std::move(shape), std::move(value),
                             std::move(origin));
        });
      }
      case StmtKind::ReduceAxis: {
        Var target = var();
        const ReduceOp op = enumerator(kLastReduceOp, "reduction");
        const int axis = i32("an axis");
        const bool keepdims = flag("a keepdims flag");
        auto indices = vars();
        auto shape = exprs();
        Expr value = expr();
        std::string origin = str("an origin");
        return build(at, [&] {
          return make_reduce_axis(std::move(target), op, axis, keepdims, std::move(indices), std::move(shape),
                                  std::move(value), std::move(origin));
        });
      }
      case StmtKind::Bind: {
        Var target = var();
        Var source = var();
        const bool declare = flag("a bind's declare flag");
        return build(at, [&] { return make_bind(std::move(target), std::move(source), declare); });
      }
      case StmtKind::Stencil: return stencil(at);
      case StmtKind::Sort: {
        Var keys = array_var("a sort's keys");
        Var positions = flag("a sort's positions") ? array_var("a sort's positions") : nullptr;
        std::string origin = str("a sort's origin");
        return build(at, [&] { return make_sort(std::move(keys), std::move(positions), std::move(origin)); });
      }
      case StmtKind::Scan: {
        Var source = array_var("a scan's source");
        Var out = array_var("a scan's result");
        const ReduceOp op = enumerator(kLastReduceOp, "scan operator");
        const DType type = enumerator(kLastDType, "scan type");
        const bool exclusive = flag("a scan's exclusive flag");
        std::string origin = str("a scan's origin");
        return build(at, [&] { return make_scan(std::move(source), std::move(out), op, type, exclusive, std::move(origin)); });
      }
      case StmtKind::Launch: {
        const int kernel = i32("a kernel number");
        Stmt body = stmt();
        return build(at, [&] { return make_launch(kernel, std::move(body)); });
      }
      case StmtKind::Atomic: {
        Var result = var();
        const AtomicOp op = enumerator(kLastAtomicOp, "atomic operation");
        Var a = var();
        auto idx = exprs();
        Expr value = expr();
        Expr expected = flag("an atomic's expected value") ? expr() : nullptr;
        return build(at, [&] {
          return make_atomic(std::move(result), op, std::move(a), std::move(idx), std::move(value), std::move(expected));
        });
      }
    }
    fail(at, "unreachable statement kind");
  }

  Stmt parfor(std::size_t at) {
    auto indices = vars();
    auto begins = exprs();
    auto ends = exprs();
    Stmt body = stmt();
    std::vector<Reduction> reductions(count("reduction list"));
    for (auto& r : reductions) {
      r.var = var();
      r.op = enumerator(kLastReduceOp, "reduction");
      if (flag("a reduction's index variable")) r.index = var();
    }
    std::vector<ArrayReduction> array_reductions(count("array reduction list"));
    for (auto& r : array_reductions) {
      r.array = var();
      r.op = enumerator(kLastReduceOp, "reduction");
    }
    std::string origin = str("an origin");
    return build(at, [&] {
      return make_parfor(std::move(indices), std::move(begins), std::move(ends), std::move(body), std::move(reductions),
                         std::move(array_reductions), std::move(origin));
    });
  }

  Stmt stencil(std::size_t at) {
    Var target = var();
    const bool allocate = flag("a stencil's allocate flag");
    auto indices = vars();
    auto shape = exprs();
    std::vector<Expr> target_index = allocate ? std::vector<Expr>{} : exprs();
    Expr value = expr();
    auto windows = vars();
    auto lo = i64s();
    auto hi = i64s();
    const Border border = enumerator(kLastBorder, "border");
    Expr cval = flag("a border value") ? expr() : nullptr;
    std::string origin = str("an origin");
    return build(at, [&] {
      return make_stencil(std::move(target), allocate, std::move(indices), std::move(shape), std::move(target_index),
                          std::move(value), std::move(windows), std::move(lo), std::move(hi), border, std::move(cval),
                          std::move(origin));
    });
  }
};

}  // namespace

Function deserialize(std::string_view bytes) {
  Function f = Reader(bytes).function();
  // Each node is well typed, but scoping, mutability and parallel safety span nodes: the verifier's part.
  verify_or_throw(f, "deserialize");
  return f;
}

}  // namespace kiln::ir
