// Immutable statement nodes and the Function that holds them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.hpp"

namespace kiln::ir {

enum class StmtKind : std::uint8_t { Block, Let, Assign, Store, For, Parfor, If, Allocate };

struct StmtNode {
  const StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  StmtNode(const StmtNode&) = delete;
  StmtNode& operator=(const StmtNode&) = delete;
  template <class T>
  const T& as() const {
    return static_cast<const T&>(*this);
  }
};
using Stmt = std::shared_ptr<const StmtNode>;

struct BlockStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  std::vector<Stmt> stmts;
  explicit BlockStmt(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
};

/// Declares the mutable local scalar `var`, visible to the rest of the enclosing block.
struct LetStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Let;
  Var var;
  Expr init;
  LetStmt(Var v, Expr e) : StmtNode(kKind), var(std::move(v)), init(std::move(e)) {}
};

struct AssignStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Assign;
  Var var;
  Expr value;
  AssignStmt(Var v, Expr e) : StmtNode(kKind), var(std::move(v)), value(std::move(e)) {}
};

struct StoreStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  Var array;
  std::vector<Expr> indices;
  Expr value;
  StoreStmt(Var a, std::vector<Expr> idx, Expr v)
      : StmtNode(kKind), array(std::move(a)), indices(std::move(idx)), value(std::move(v)) {}
};

/// Sequential loop: for index in [begin, end) step 1.
struct ForStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  Var index;
  Expr begin, end;
  Stmt body;
  ForStmt(Var i, Expr b, Expr e, Stmt s)
      : StmtNode(kKind), index(std::move(i)), begin(std::move(b)), end(std::move(e)), body(std::move(s)) {}
};

/// A scalar reduction carried by a parfor. Inside the body the variable is only updated as
/// `var = var (op) e`; each worker starts from the identity and partials are combined in a fixed order.
struct Reduction {
  Var var;
  ReduceOp op;
  friend bool operator==(const Reduction&, const Reduction&) = default;
};

/// A parallel loop over the n-d index space [begins, ends). Iterations may run in any order and
/// concurrently; the only cross-iteration communication allowed is through `reductions`.
struct ParforStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Parfor;
  std::vector<Var> indices;
  std::vector<Expr> begins, ends;
  Stmt body;
  std::vector<Reduction> reductions;
  std::string origin;  ///< where it came from (source location or array op), for diagnostics
  ParforStmt(std::vector<Var> idx, std::vector<Expr> b, std::vector<Expr> e, Stmt s, std::vector<Reduction> r,
             std::string o)
      : StmtNode(kKind),
        indices(std::move(idx)),
        begins(std::move(b)),
        ends(std::move(e)),
        body(std::move(s)),
        reductions(std::move(r)),
        origin(std::move(o)) {}
};

struct IfStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::If;
  Expr cond;
  Stmt then_body;
  Stmt else_body;  ///< may be null
  IfStmt(Expr c, Stmt t, Stmt e) : StmtNode(kKind), cond(std::move(c)), then_body(std::move(t)), else_body(std::move(e)) {}
};

/// Declares a new array of the given shape (contents undefined until written), visible to the rest of
/// the enclosing block. Its memory lives until the function returns, or is handed to the caller as the result.
struct AllocateStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  Var array;
  std::vector<Expr> shape;
  AllocateStmt(Var a, std::vector<Expr> s) : StmtNode(kKind), array(std::move(a)), shape(std::move(s)) {}
};

template <class T>
const T* dyn(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

/// A traced kernel: parameters, a body, and an optional result (a scalar expression evaluated after the
/// body, or an array allocated by the body).
struct Function {
  std::string name;
  std::vector<Var> params;
  Stmt body;
  Expr result;       ///< scalar result, or null
  Var result_array;  ///< array result, or null

  bool returns_array() const { return result_array != nullptr; }
  bool returns_scalar() const { return result != nullptr; }
};

}  // namespace kiln::ir
