// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// serialize(): one walk over the function, writing the encoding ir/serialize.hpp describes.
#include "ir/serialize.hpp"

#include <bit>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "ir/builder.hpp"

namespace kiln::ir {
namespace {

// ---- encoding ----------------------------------------------------------------------------------------------

class Writer {
 public:
  std::string function(const Function& f) {
    str(f.name);
    vars(f.params);
    stmt(f.body);
    optional(f.result, &Writer::expr);
    optional(f.result_array, &Writer::var);
    u32(f.tuple.size());
    for (const auto& m : f.tuple) {
      optional(m.scalar, &Writer::expr);
      optional(m.array, &Writer::var);
    }
    u32(f.locations.size());
    for (const auto& l : f.locations) str(l);
    // The variable table goes first, so that the decoder has every variable before the tree refers to it; it
    // is only complete once the tree has been written, hence the second buffer.
    std::string tree = std::move(out_);
    out_.clear();
    u32(kSerialFormatVersion);
    u32(table_.size());
    for (const VarNode* v : table_) {
      str(v->name);
      str(v->where);
      u8(static_cast<std::uint8_t>(v->kind));
      u8(static_cast<std::uint8_t>(v->type.elem));
      u8(v->type.rank);
      u8(v->type.unit_stride);
      u8(v->type.unit_dims);
    }
    return out_ + tree;
  }

 private:
  std::string out_;
  std::vector<const VarNode*> table_;  ///< in order of first reference: this, not the map, fixes the numbering
  std::unordered_map<const VarNode*, std::uint32_t> numbers_;
  int depth_ = 0;

  void u8(std::uint8_t v) { out_ += static_cast<char>(v); }
  void fixed(std::uint64_t v, int bytes) {
    for (int k = 0; k < bytes; ++k) u8(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  void u32(std::size_t v) {
    if (v > UINT32_MAX) throw IRError(fmt::format("cannot serialize IR: a count or length of {} exceeds 32 bits", v));
    fixed(v, 4);
  }
  void i32(std::int32_t v) { fixed(static_cast<std::uint32_t>(v), 4); }
  void i64(std::int64_t v) { fixed(static_cast<std::uint64_t>(v), 8); }
  void str(const std::string& s) {
    u32(s.size());
    out_ += s;
  }

  void var(const Var& v) {
    if (!v) throw IRError("cannot serialize IR: a required variable is null");
    const auto [it, added] = numbers_.try_emplace(v.get(), static_cast<std::uint32_t>(table_.size()));
    if (added) table_.push_back(v.get());
    u32(it->second);
  }
  void vars(const std::vector<Var>& vs) {
    u32(vs.size());
    for (const auto& v : vs) var(v);
  }
  void exprs(const std::vector<Expr>& es) {
    u32(es.size());
    for (const auto& e : es) expr(e);
  }
  template <class T>
  void optional(const T& x, void (Writer::*write)(const T&)) {
    u8(x != nullptr);
    if (x) (this->*write)(x);
  }

  /// Counts one level of nesting for the node it guards; refuses what deserialize would refuse.
  struct Level {
    int& depth;
    explicit Level(int& d) : depth(d) {
      if (++depth > kMaxSerialDepth)
        throw IRError(fmt::format("cannot serialize IR nested deeper than {} levels", kMaxSerialDepth));
    }
    ~Level() { --depth; }
  };

  void expr(const Expr& e) {
    if (!e) throw IRError("cannot serialize IR: a required expression is null");
    const Level level(depth_);
    u8(static_cast<std::uint8_t>(e->kind));
    switch (e->kind) {  // no default: a new kind is a compiler warning here until the format covers it
      case ExprKind::Const: {
        const auto& c = e->as<ConstExpr>();
        u8(static_cast<std::uint8_t>(c.type));
        // Only the field the type uses: the builders keep the other one zero.
        switch (c.type) {
          case DType::Bool: u8(c.i != 0); break;
          case DType::I32: i32(static_cast<std::int32_t>(c.i)); break;
          case DType::I64: case DType::U8: case DType::U16: case DType::U32: case DType::U64: case DType::I8:
          case DType::I16: i64(c.i); break;
          case DType::F32: case DType::F64: case DType::F16: case DType::BF16:
            fixed(std::bit_cast<std::uint64_t>(c.f), 8);  // bits: NaN payloads, -0
            break;
        }
        break;
      }
      case ExprKind::VarRef: var(e->as<VarRefExpr>().var); break;
      case ExprKind::Load: {
        const auto& l = e->as<LoadExpr>();
        var(l.array);
        exprs(l.indices);
        break;
      }
      case ExprKind::Dim: {
        const auto& d = e->as<DimExpr>();
        var(d.array);
        i32(d.axis);
        break;
      }
      case ExprKind::Unary: {
        const auto& u = e->as<UnaryExpr>();
        u8(static_cast<std::uint8_t>(u.op));
        expr(u.a);
        break;
      }
      case ExprKind::Binary: {
        const auto& b = e->as<BinaryExpr>();
        u8(static_cast<std::uint8_t>(b.op));
        expr(b.a);
        expr(b.b);
        break;
      }
      case ExprKind::Select: {
        const auto& s = e->as<SelectExpr>();
        expr(s.cond);
        expr(s.a);
        expr(s.b);
        break;
      }
      case ExprKind::Cast: {
        const auto& c = e->as<CastExpr>();
        u8(static_cast<std::uint8_t>(c.type));
        expr(c.a);
        break;
      }
      case ExprKind::Call: {
        const auto& c = e->as<CallExpr>();
        u8(static_cast<std::uint8_t>(c.fn));
        exprs(c.args);
        break;
      }
    }
  }

  void stmt(const Stmt& s) {
    if (!s) throw IRError("cannot serialize IR: a required statement is null");
    const Level level(depth_);
    u8(static_cast<std::uint8_t>(s->kind));
    switch (s->kind) {  // no default, as in expr
      case StmtKind::Block: {
        const auto& b = s->as<BlockStmt>();
        u32(b.stmts.size());
        for (const auto& x : b.stmts) stmt(x);
        break;
      }
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        var(l.var);
        expr(l.init);
        break;
      }
      case StmtKind::Assign: {
        const auto& a = s->as<AssignStmt>();
        var(a.var);
        expr(a.value);
        break;
      }
      case StmtKind::Store: {
        const auto& st = s->as<StoreStmt>();
        var(st.array);
        exprs(st.indices);
        expr(st.value);
        break;
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        var(f.index);
        expr(f.begin);
        expr(f.end);
        stmt(f.body);
        break;
      }
      case StmtKind::Parfor: {
        const auto& p = s->as<ParforStmt>();
        vars(p.indices);
        exprs(p.begins);
        exprs(p.ends);
        stmt(p.body);
        u32(p.reductions.size());
        for (const auto& r : p.reductions) {
          var(r.var);
          u8(static_cast<std::uint8_t>(r.op));
          optional(r.index, &Writer::var);
        }
        u32(p.array_reductions.size());
        for (const auto& r : p.array_reductions) {
          var(r.array);
          u8(static_cast<std::uint8_t>(r.op));
        }
        str(p.origin);
        break;
      }
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        expr(i.cond);
        stmt(i.then_body);
        optional(i.else_body, &Writer::stmt);
        break;
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        var(a.array);
        exprs(a.shape);
        break;
      }
      case StmtKind::Check: {
        const auto& c = s->as<CheckStmt>();
        expr(c.cond);
        i32(c.code);
        str(c.message);
        exprs(c.args);
        break;
      }
      case StmtKind::Map: {
        const auto& m = s->as<MapStmt>();
        var(m.target);
        u8(m.allocate);
        vars(m.indices);
        exprs(m.shape);
        if (!m.allocate) exprs(m.target_index);  // an allocating map's is its own index (make_map)
        expr(m.value);
        str(m.origin);
        break;
      }
      case StmtKind::Reduce: {
        const auto& r = s->as<ReduceStmt>();
        var(r.result);
        u8(static_cast<std::uint8_t>(r.op));
        vars(r.indices);
        exprs(r.shape);
        expr(r.value);
        str(r.origin);
        break;
      }
      case StmtKind::ReduceAxis: {
        const auto& r = s->as<ReduceAxisStmt>();
        var(r.target);
        u8(static_cast<std::uint8_t>(r.op));
        i32(r.axis);
        u8(r.keepdims);
        vars(r.indices);
        exprs(r.shape);
        expr(r.value);
        str(r.origin);
        break;
      }
      case StmtKind::Bind: {
        const auto& b = s->as<BindStmt>();
        var(b.target);
        var(b.source);
        u8(b.declare);
        break;
      }
      case StmtKind::Stencil: {
        const auto& st = s->as<StencilStmt>();
        var(st.target);
        u8(st.allocate);
        vars(st.indices);
        exprs(st.shape);
        if (!st.allocate) exprs(st.target_index);  // as for Map
        expr(st.value);
        vars(st.windows);
        u32(st.lo.size());
        for (auto x : st.lo) i64(x);
        u32(st.hi.size());
        for (auto x : st.hi) i64(x);
        u8(static_cast<std::uint8_t>(st.border));
        optional(st.cval, &Writer::expr);
        str(st.origin);
        break;
      }
      case StmtKind::Sort: {
        const auto& x = s->as<SortStmt>();
        var(x.keys);
        optional(x.positions, &Writer::var);
        str(x.origin);
        break;
      }
      case StmtKind::Scan: {
        const auto& x = s->as<ScanStmt>();
        var(x.source);
        var(x.out);
        u8(static_cast<std::uint8_t>(x.op));
        u8(static_cast<std::uint8_t>(x.type));
        u8(x.exclusive ? 1 : 0);
        str(x.origin);
        break;
      }
      case StmtKind::Atomic: {
        const auto& a = s->as<AtomicStmt>();
        var(a.result);
        u8(static_cast<std::uint8_t>(a.op));
        var(a.array);
        exprs(a.indices);
        expr(a.value);
        optional(a.expected, &Writer::expr);
        break;
      }
      case StmtKind::Launch: {
        const auto& l = s->as<LaunchStmt>();
        i32(l.kernel);
        stmt(l.body);
        break;
      }
    }
  }
};

}  // namespace

std::string serialize(const Function& f) { return Writer().function(f); }

}  // namespace kiln::ir
