// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Immutable statement nodes and the Function that holds them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/expr.hpp"

namespace kiln::ir {

enum class StmtKind : std::uint8_t {
  Block, Let, Assign, Store, For, Parfor, If, Allocate, Check, Bind,
  Map, Reduce, ReduceAxis,  // array-level operations, as traced; lower_array_ops turns them into parfors
  Stencil,                  // lower_stencils turns it into an interior parfor plus border parfors
  Launch,                   // a parfor that runs on a device as one kernel (passes/offload.cpp)
  Atomic,                   // an atomic read-modify-write of one array element (ir/atomics.hpp)
  Sort,                     // sorts the rows of an array in place; stays until codegen (ir/sort_keys.hpp)
  Scan,                     // scans the rows of an array into another in one pass; stays until codegen (ir/scan.hpp)
};

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
/// ArgMin/ArgMax carry the companion i64 variable `index`; their update is
/// `if better(x, var) { var = x; index = k }` where better is `x < var` (`>` for ArgMax), optionally
/// `|| (isnan(x) && !isnan(var))`, so each block keeps its first best and blocks combine in order.
struct Reduction {
  Var var;
  ReduceOp op;
  Var index = nullptr;
  friend bool operator==(const Reduction&, const Reduction&) = default;
};

/// An array updated by a parfor only as `a[k] = a[k] (op) e` at data-dependent indices k (a histogram):
/// the backend makes the updates race-free (per-thread copies or atomics). Op is Add, Mul, Min or Max.
struct ArrayReduction {
  Var array;
  ReduceOp op;
  friend bool operator==(const ArrayReduction&, const ArrayReduction&) = default;
};

/// A parallel loop over the n-d index space [begins, ends). Iterations may run in any order and
/// concurrently; the only cross-iteration communication allowed is through `reductions`.
struct ParforStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Parfor;
  std::vector<Var> indices;
  std::vector<Expr> begins, ends;
  Stmt body;
  std::vector<Reduction> reductions;
  std::vector<ArrayReduction> array_reductions;
  std::string origin;  ///< where it came from (source location or array op), for diagnostics
  ParforStmt(std::vector<Var> idx, std::vector<Expr> b, std::vector<Expr> e, Stmt s, std::vector<Reduction> r,
             std::vector<ArrayReduction> ar, std::string o)
      : StmtNode(kKind),
        indices(std::move(idx)),
        begins(std::move(b)),
        ends(std::move(e)),
        body(std::move(s)),
        reductions(std::move(r)),
        array_reductions(std::move(ar)),
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

/// A run-time requirement: when `cond` is false the kernel stops with status `code` (kiln/abi.hpp) and
/// `message`, whose `{}` placeholders are replaced by the i64 values of `args` (shapes, sizes, indices).
struct CheckStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Check;
  Expr cond;
  std::int32_t code;
  std::string message;
  std::vector<Expr> args;
  CheckStmt(Expr c, std::int32_t k, std::string m, std::vector<Expr> a)
      : StmtNode(kKind), cond(std::move(c)), code(k), message(std::move(m)), args(std::move(a)) {}
};

/// An elementwise array operation: for every index of the space [0, shape), in any order,
/// `target[target_index] = value`. With `allocate`, `target` is a new array of exactly `shape`, declared
/// here (visible to the rest of the block), and target_index is the index itself. Without, it writes an
/// existing array (a slice assignment or an in-place update); `value` may read `target` only at
/// target_index.
struct MapStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Map;
  Var target;
  bool allocate;
  std::vector<Var> indices;
  std::vector<Expr> shape;
  std::vector<Expr> target_index;
  Expr value;
  std::string origin;
  MapStmt(Var t, bool alloc, std::vector<Var> idx, std::vector<Expr> sh, std::vector<Expr> ti, Expr v, std::string o)
      : StmtNode(kKind),
        target(std::move(t)),
        allocate(alloc),
        indices(std::move(idx)),
        shape(std::move(sh)),
        target_index(std::move(ti)),
        value(std::move(v)),
        origin(std::move(o)) {}
};

/// A reduction of `value` over the space [0, shape) into the new scalar `result`, declared here. For
/// ArgMin/ArgMax the result is the i64 row-major flat index (NumPy's rules; -1 for an empty space).
struct ReduceStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Reduce;
  Var result;
  ReduceOp op;
  std::vector<Var> indices;
  std::vector<Expr> shape;
  Expr value;
  std::string origin;
  ReduceStmt(Var r, ReduceOp o, std::vector<Var> idx, std::vector<Expr> sh, Expr v, std::string org)
      : StmtNode(kKind),
        result(std::move(r)),
        op(o),
        indices(std::move(idx)),
        shape(std::move(sh)),
        value(std::move(v)),
        origin(std::move(org)) {}
};

/// A reduction of `value` over the space [0, shape) along `axis` into the new array `target`, declared
/// here: its shape is `shape` without `axis` (with extent 1 there if keepdims). ArgMin/ArgMax give i64
/// positions along the axis.
struct ReduceAxisStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::ReduceAxis;
  Var target;
  ReduceOp op;
  int axis;
  bool keepdims;
  std::vector<Var> indices;
  std::vector<Expr> shape;
  Expr value;
  std::string origin;
  ReduceAxisStmt(Var t, ReduceOp o, int ax, bool keep, std::vector<Var> idx, std::vector<Expr> sh, Expr v,
                 std::string org)
      : StmtNode(kKind),
        target(std::move(t)),
        op(o),
        axis(ax),
        keepdims(keep),
        indices(std::move(idx)),
        shape(std::move(sh)),
        value(std::move(v)),
        origin(std::move(org)) {}
};

/// Makes the array variable `target` (kind Binding) name the array `source` names now — no data moves.
/// With `declare`, target is a new binding visible to the rest of the block; otherwise it is rebound (how a
/// time loop swaps its buffers).
struct BindStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Bind;
  Var target;
  Var source;
  bool declare;
  BindStmt(Var t, Var s, bool d) : StmtNode(kKind), target(std::move(t)), source(std::move(s)), declare(d) {}
};

/// A stencil: for every index of [0, shape), `target[target_index] = value`, where `value` reads the
/// `windows` arrays (all of `shape`) at the index plus offsets within the neighbourhood [lo, hi] per
/// dimension (lo <= 0 <= hi). A read outside its window is answered by `border` (kiln/ops.hpp), with `cval`
/// for Border::constant. With Border::skip, indices whose neighbourhood leaves the arrays are not computed:
/// a new target takes windows[0]'s element there, an existing one keeps its own. Other arrays in `value`
/// are read as written (absolute indices, e.g. weights).
struct StencilStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Stencil;
  Var target;
  bool allocate;
  std::vector<Var> indices;
  std::vector<Expr> shape;
  std::vector<Expr> target_index;
  Expr value;
  std::vector<Var> windows;
  std::vector<std::int64_t> lo, hi;
  Border border;
  Expr cval;  ///< null unless border is constant
  std::string origin;
  StencilStmt(Var t, bool alloc, std::vector<Var> idx, std::vector<Expr> sh, std::vector<Expr> ti, Expr v,
              std::vector<Var> w, std::vector<std::int64_t> l, std::vector<std::int64_t> h, Border b, Expr c,
              std::string o)
      : StmtNode(kKind),
        target(std::move(t)),
        allocate(alloc),
        indices(std::move(idx)),
        shape(std::move(sh)),
        target_index(std::move(ti)),
        value(std::move(v)),
        windows(std::move(w)),
        lo(std::move(l)),
        hi(std::move(h)),
        border(b),
        cval(std::move(c)),
        origin(std::move(o)) {}
};

/// Runs the parfor `body` on the device as kernel number `kernel` of the function (passes/offload.cpp makes
/// these for device targets). Its meaning is the parfor's: host code around it sees the arrays it wrote and
/// the reductions it combined, as after the parfor itself. Launches are not nested, in a parfor or another
/// launch; the kernels of a function are numbered 0, 1, ... in the order the body lists them.
struct LaunchStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Launch;
  int kernel;
  Stmt body;  ///< a ParforStmt
  LaunchStmt(int k, Stmt b) : StmtNode(kKind), kernel(k), body(std::move(b)) {}
  const ParforStmt& parfor() const { return body->as<ParforStmt>(); }
};

/// An atomic read-modify-write of one element: old = array[indices]; array[indices] = op(old, value) (for
/// CompareExchange: `value` if old has the bits of `expected`, else old) as one indivisible step against
/// every other atomic on the element. Declares `result` (a Local scalar of the element type, never assigned,
/// visible to the rest of the enclosing block) holding old. Iterations of a parfor may update one element
/// concurrently through atomics; the rules (order, types, determinism) are in ir/atomics.hpp.
struct AtomicStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Atomic;
  Var result;
  AtomicOp op;
  Var array;
  std::vector<Expr> indices;
  Expr value;
  Expr expected;  ///< CompareExchange only, else null
  AtomicStmt(Var r, AtomicOp o, Var a, std::vector<Expr> idx, Expr v, Expr e)
      : StmtNode(kKind),
        result(std::move(r)),
        op(o),
        array(std::move(a)),
        indices(std::move(idx)),
        value(std::move(v)),
        expected(std::move(e)) {}
};

/// Sorts every row (along the last axis) of `keys` in place, ascending and stable in kiln's key order
/// (ir/sort_keys.hpp): NaN last, -0.0 equal to +0.0, equal keys in input order. With `positions` (else null),
/// applies the same permutation to each row of it: argsort fills it with the positions along the rows first.
/// Both are compact row-major arrays of one shape (ir/compact.hpp: allocated, or a 1-d stride-1 parameter);
/// positions are i64. The statement reads and writes every element of both. Host code: never in a parfor.
struct SortStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Sort;
  Var keys;
  Var positions;
  std::string origin;
  SortStmt(Var k, Var p, std::string o) : StmtNode(kKind), keys(std::move(k)), positions(std::move(p)), origin(std::move(o)) {}
};

/// Scans every row (along the last axis) of `source` into `out` in the order ir/semantics.hpp defines
/// (kScanBlock): `op` (Add, Mul, Min or Max) on the elements converted to out's combining type `type`, stored
/// converted to out's element type; exclusive: element i combines 0..i-1 (element 0 the identity). The same
/// bits as ir::scan_statements' passes, as one statement: a target may run it in a single pass over the
/// memory (the CUDA backend's tiles with look-back, codegen/cuda/scan_kernels.hpp). Both arrays are compact
/// row-major of one shape (ir/compact.hpp); `source` is `type` or an integer type that converts to it exactly.
/// The statement reads every element of source and writes every element of out. Host code: never in a parfor.
struct ScanStmt final : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Scan;
  Var source;
  Var out;
  ReduceOp op;
  DType type;
  bool exclusive;
  std::string origin;
  ScanStmt(Var s, Var o, ReduceOp p, DType t, bool e, std::string org)
      : StmtNode(kKind), source(std::move(s)), out(std::move(o)), op(p), type(t), exclusive(e), origin(std::move(org)) {}
};

template <class T>
const T* dyn(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

/// One member of a tuple result: a scalar expression evaluated after the body, or an array the body
/// allocated (exactly one of the two is set).
struct ResultMember {
  Expr scalar;
  Var array;
};

/// The most members a tuple result may have (kiln/kernel.hpp checks it when the lambda is compiled).
inline constexpr int kMaxResults = 8;

/// A traced kernel: parameters, a body, and an optional result: a scalar expression evaluated after the
/// body, an array allocated by the body, or a tuple of 2..kMaxResults such members. A tuple is returned
/// through `result` pointing to `void* outs[n]`: member i is written to outs[i] (a scalar of
/// its type, or an ArrayDesc the caller then owns), as a single result is written to `result` itself.
struct Function {
  std::string name;
  std::vector<Var> params;
  Stmt body;
  Expr result;       ///< scalar result, or null
  Var result_array;  ///< array result, or null
  std::vector<ResultMember> tuple;  ///< a tuple result (then result and result_array are null), or empty
  /// Source positions ("file.cpp:12") that check messages name as `{@k}` (k indexes this list). They stay out
  /// of the messages themselves, so that code compiled for a kernel serves the same kernel written on another
  /// line (the cache key ignores positions) and its errors still point at the caller's own source.
  std::vector<std::string> locations;

  bool returns_array() const { return result_array != nullptr; }
  bool returns_scalar() const { return result != nullptr; }
  bool returns_tuple() const { return !tuple.empty(); }
  /// Whether the caller receives the array `v`: the array result or an array member of the tuple.
  bool returns(const VarNode* v) const {
    if (v == result_array.get()) return v != nullptr;
    for (const auto& m : tuple)
      if (m.array.get() == v) return true;
    return false;
  }
  /// The scalar result expressions the body's values must reach: the scalar result, the tuple's scalars.
  std::vector<Expr> result_exprs() const {
    std::vector<Expr> out;
    if (result) out.push_back(result);
    for (const auto& m : tuple)
      if (m.scalar) out.push_back(m.scalar);
    return out;
  }
};

}  // namespace kiln::ir
