// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The random program generator's state (internal to kiln-fuzz): expressions in gen_expr.cpp, parfors and their
// bodies in gen_parfor.cpp, array-level statements in gen_array.cpp, top-level statements and the program in
// gen_stmt.cpp.
//
// Every generated program is well defined and deterministic, so the interpreter, the pass pipeline and the
// JIT must agree exactly (or within a few ulps where a value went through libm):
//  - array reads are in bounds by construction: an array of the common shape S is read at the parfor's own
//    index, or (when the parfor does not write it) at ((e % n) + n) % n per axis; 1-d tables have extent >= 1;
//  - a parfor writes arrays only at its own index, reads an array it writes only there, and never reads an
//    array it reduces into; a new local array is written everywhere before anything reads it;
//  - float Add/Mul reductions only combine values whose sums/products are exact in any order (small integers,
//    ±1, ±0, ±inf, NaN), because reassociation is allowed to round differently; spaces stay small enough
//    (about 45 000 elements at most) for the sums to stay exact;
//  - libm results (exp, sin, pow, ...) are stored straight into an output that is never read again;
//  - maps, reductions, scans and stencils run over S too (a scan may combine any values: its order is
//    defined); a stencil reads its windows only at offsets inside its neighbourhood and never writes one of
//    them;
//  - sorts (and argsorts) take any values of any type: their order is defined, and stable;
//  - an atomic on an element other iterations may update too (a table's, at a wrapped index) is of an
//    operation whose final contents do not depend on the order (integer add/sub/min/max, float min/max, float
//    add/sub of exact terms on a histogram); its old value is not read, and no plain access in that parfor
//    reads or writes the table. An atomic on the iteration's own element (of an array of S that the parfor
//    neither stores to nor reads otherwise) may be any operation, and its old value is read like any local;
//    a compare-exchange expects the element's own value or a value that is not a NaN (whose bits are
//    unspecified).
#pragma once

#include <cstdint>
#include <functional>
#include <random>
#include <set>
#include <vector>

#include "ir/builder.hpp"
#include "tools/kiln_fuzz/program.hpp"

namespace kiln::fuzz::detail {

using ir::Expr;
using ir::Stmt;
using ir::Var;

struct ArrayInfo {
  Var var;
  bool shaped;   ///< of the common shape S; otherwise a 1-d table of extent >= 1
  bool defined;  ///< every element holds a value (parameters; new arrays once their defining parfor ran)
  bool tainted;  ///< holds libm results: never read again
  bool output;   ///< a parameter the kernel may write (compared after the run)
  bool table;    ///< a 1-d table (read and written at wrapped indices)
  bool hist;     ///< a 1-d array reduction target
  int unit_axis = -1;  ///< an axis reduction's result (keepdims): S with extent 1 here, read at index 0 there
};

struct ScalarInfo {
  Var var;
  bool assignable;  ///< a local declared by a let (not a parameter or a loop index)
  bool in_parfor;   ///< declared inside a parfor body (outer locals are read-only there, reductions aside)
};

/// A reduction of the parfor being generated and the family of values its updates may combine.
struct ReductionInfo {
  ir::Reduction r;
  DType type;
  int rule = 0;      ///< ArgMin/ArgMax: 0 strict, 1 NaN wins, 2 first element wins as well
  bool updated = false;
};

class Generator {
 public:
  Generator(std::uint64_t seed, const GeneratorOptions& options);
  Program run();

  // ---- expressions (gen_expr.cpp) ----
  Expr expr(DType t, int depth);
  Expr leaf(DType t);
  Expr constant(DType t);
  Expr load(DType t);
  Expr wrap_index(Expr e, Expr extent);  ///< ((e % n) + n) % n, for n >= 1
  Expr index_expr(int depth);            ///< some i64 value (for wrapped indices and loop bounds)
  Expr exact_sum_term(DType t);          ///< a float whose sums are exact in any order
  Expr exact_product_term(DType t);      ///< a float whose products are exact in any order
  Expr approximate(DType t);             ///< a libm function of an exact value
  /// A kiln::random intrinsic of result type t (null for bool and i32), key and counter any i64 expressions.
  Expr random_draw(DType t, int depth);

  // ---- statements (gen_stmt.cpp) ----
  void top_statements(std::vector<Stmt>& out, int count, int depth);
  void top_statement(std::vector<Stmt>& out, int depth);
  void parfor(std::vector<Stmt>& out);
  void body_statements(std::vector<Stmt>& out, int count, int depth);
  void body_statement(std::vector<Stmt>& out, int depth);
  Stmt reduction_update(ReductionInfo& r);
  Stmt array_update(const Var& hist, ReduceOp op);
  Stmt store_own(const ArrayInfo& a, bool libm_ok);
  Stmt sink_store(Expr value);  ///< stores a reduction result into the next element of its type's sink

  // ---- array-level statements (gen_array.cpp): maps, whole-space reductions, stencils ----
  void array_statement(std::vector<Stmt>& out);
  void map(std::vector<Stmt>& out);
  void reduce(std::vector<Stmt>& out);
  void reduce_axis(std::vector<Stmt>& out);
  void scan(std::vector<Stmt>& out);  ///< a prefix scan along a random axis into a new array
  void stencil(std::vector<Stmt>& out);
  void sort(std::vector<Stmt>& out);  ///< a sort or argsort along the last axis into new arrays

  // ---- atomics (gen_atomic.cpp) ----
  /// A visible array that `fits`, drawn from rng_; null when none does.
  const ArrayInfo* pick_array(const std::function<bool(const ArrayInfo&)>& fits);
  /// Picks the table that this parfor's iterations update concurrently through atomics (perhaps none).
  void choose_atomic_table();
  Stmt shared_atomic();             ///< an order-independent atomic on the chosen table at a wrapped index
  /// Picks an array whose element at its own index each iteration updates through atomics (perhaps none).
  void choose_atomic_own();
  Stmt own_atomic();  ///< any atomic on the chosen array at the iteration's own index
  void top_atomic(std::vector<Stmt>& out);  ///< any atomic on a table element in host code, if there is a table
  Var atomic_result(DType t) { return ir::make_var(name("old"), ir::Type::scalar(t), ir::VarKind::Local); }
  /// The chance decisions about sorts and atomics, from prim_rng_.
  bool prim_chance(double p) { return std::uniform_real_distribution<double>(0, 1)(prim_rng_) < p; }
  /// Enters an elementwise context over S: new index variables become the own index. Returns the indices.
  std::vector<Var> enter_space();
  void leave_space();
  std::vector<Expr> space_shape();
  Expr flat_own_index();

  // ---- randomness ----
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  DType any_type();
  DType numeric_type();
  std::int64_t extent();
  std::string name(const char* prefix) { return prefix + std::to_string(counter_++); }
  Var add_param(const std::string& name, ir::Type type, ParamSpec spec);

  std::mt19937_64 rng_;
  /// Decides where random_draw is used, apart from rng_, so that programs without one are what they were
  /// before it existed (tests pick seeds for what those programs hold).
  std::mt19937_64 draw_rng_;
  /// Decides where sorts and atomics go, likewise (their contents come from rng_).
  std::mt19937_64 prim_rng_;
  GeneratorOptions options_;
  Program program_;
  std::vector<std::int64_t> shape_;  ///< S
  int counter_ = 0;
  std::vector<ArrayInfo> arrays_;                ///< visible arrays (new ones leave with their block)
  std::vector<ScalarInfo> scalars_;              ///< visible scalars (same)
  /// Per DType: the output array that reduction results are stored into, and its parameter number.
  std::vector<Var> sinks_ = std::vector<Var>(static_cast<std::size_t>(DType::BF16) + 1);  ///< one sink array per element type
  std::vector<std::size_t> sink_params_ = std::vector<std::size_t>(static_cast<std::size_t>(DType::BF16) + 1);

  // The parfor being generated (in_parfor_).
  bool in_parfor_ = false;
  std::vector<Expr> own_;                   ///< the own index: parfor indices and inner loop indices
  std::set<const ir::VarNode*> written_;    ///< arrays it stores (readable at the own index only)
  std::set<const ir::VarNode*> hidden_;     ///< arrays and scalars it must not read at all
  std::set<const ir::VarNode*> approx_ok_;  ///< outputs whose stores may be libm results
  std::vector<ReductionInfo> reductions_;
  std::vector<ir::ArrayReduction> array_reductions_;
  const ArrayInfo* atomic_table_ = nullptr;  ///< updated by shared_atomic (hidden from plain accesses)
  bool atomic_table_updated_ = false;
  const ArrayInfo* atomic_own_ = nullptr;  ///< updated by own_atomic (hidden from plain accesses)
  bool atomic_own_updated_ = false;
};

/// Restores the visible arrays and scalars when a block ends.
struct Scope {
  Generator& g;
  std::size_t arrays, scalars;
  explicit Scope(Generator& gen) : g(gen), arrays(gen.arrays_.size()), scalars(gen.scalars_.size()) {}
  ~Scope() {
    g.arrays_.erase(g.arrays_.begin() + static_cast<std::ptrdiff_t>(arrays), g.arrays_.end());
    g.scalars_.erase(g.scalars_.begin() + static_cast<std::ptrdiff_t>(scalars), g.scalars_.end());
  }
};

}  // namespace kiln::fuzz::detail
