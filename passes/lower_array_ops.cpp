// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "passes/lower_array_ops.hpp"

#include <unordered_map>
#include <unordered_set>

#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "ir/substitute.hpp"
#include "ir/visitor.hpp"
#include "passes/product_tiles.hpp"
#include "passes/statement_lists.hpp"

namespace kiln::passes {
namespace {

using namespace kiln::ir;

/// Elements of the last dimension per parfor iteration in the blocked axis reduction: 1024 accumulators
/// (8 KiB of doubles) stay in a 32 KiB L1 beside the row of the other operand streaming through, and each
/// pass of the reduced axis runs a long unit-stride loop: with 256 (2 KiB) the loop was entered four times as
/// often for as many elements, and a matrix product ran 1.27-1.57x a plain C++ i-k-j loop (kiln-suite gemm,
/// 2mm at 2 threads), 1.05-1.20x with 1024. Rows times blocks still gives every thread work (kMinBlocks).
constexpr std::int64_t kBlock = 1024;
/// Below this many blocks the blocked schedule leaves threads idle (2..16 cores, a few blocks each).
constexpr std::int64_t kMinBlocks = 32;
/// Results up to this many elements are cheap to copy per thread for an array reduction (512 KiB of doubles).
constexpr std::int64_t kMaxPrivateElements = 65536;
/// Device targets: the fewest elements of the axis a chunk sums (fewer would make the partials' pass the work).
constexpr std::int64_t kMinChunk = 64;

Expr i64c(std::int64_t v) { return make_i64(v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return make_binary(op, std::move(a), std::move(b)); }

std::vector<Expr> zeros(size_t n) { return std::vector<Expr>(n, i64c(0)); }

std::vector<Expr> refs(const std::vector<Var>& vars) {
  std::vector<Expr> out;
  for (const auto& v : vars) out.push_back(make_ref(v));
  return out;
}

Var local(const std::string& name, DType t) { return make_var(name, Type::scalar(t), VarKind::Local); }

/// The row-major flat index of `idx` in `shape`.
Expr flat_index(const std::vector<Var>& idx, const std::vector<Expr>& shape) {
  Expr k = make_ref(idx[0]);
  for (size_t d = 1; d < idx.size(); ++d) k = bin(BinaryOp::Add, bin(BinaryOp::Mul, k, shape[d]), make_ref(idx[d]));
  return k;
}

/// `if (pos < 0) || (x < best) || (isnan(x) && !isnan(best)) { best = x; pos = k }` (> for ArgMax): the
/// update ir/reductions.hpp matches, with x a variable so that the value is computed once.
Stmt arg_update(ReduceOp op, const Var& best, const Var& pos, const Var& x, const Expr& k) {
  const Expr xv = make_ref(x), bv = make_ref(best);
  Expr cond = bin(BinaryOp::Or, bin(BinaryOp::Lt, make_ref(pos), i64c(0)),
                  bin(op == ReduceOp::ArgMin ? BinaryOp::Lt : BinaryOp::Gt, xv, bv));
  if (is_float(x->type.elem))
    cond = bin(BinaryOp::Or, cond,
               bin(BinaryOp::And, make_call(Intrinsic::IsNan, {xv}),
                   make_unary(UnaryOp::Not, make_call(Intrinsic::IsNan, {bv}))));
  return make_if(cond, make_block({make_assign(best, xv), make_assign(pos, k)}));
}

class Lowering : public SplicingMutator {
 public:
  explicit Lowering(PassContext& ctx) : ctx_(ctx) {}

 protected:
  using SplicingMutator::visit;

  // Array statements hold only expressions: nothing inside them needs lowering. Each is lowered to
  // statements spliced into its block: what they declare (the target array, the result variable) must stay
  // visible to the statements after them.
  Stmt visit(const MapStmt& x, const Stmt&) override {
    std::vector<Stmt> out;
    if (x.allocate) out.push_back(make_allocate(x.target, x.shape));
    out.push_back(make_parfor(x.indices, zeros(x.shape.size()), x.shape,
                              make_block({make_store(x.target, x.target_index, x.value)}), {}, x.origin));
    note(x.origin, x.allocate ? "map -> allocation + parfor" : "map into " + x.target->name + " -> parfor");
    return splice(std::move(out));
  }

  Stmt visit(const ReduceStmt& x, const Stmt&) override {
    const DType t = x.value->type;
    std::vector<Stmt> out;
    if (is_arg_reduction(x.op)) {
      const Var best = local(x.result->name + "_value", t);
      const Var value = local(x.result->name + "_x", t);
      out.push_back(make_let(best, identity_of(x.op, t)));
      out.push_back(make_let(x.result, i64c(-1)));  // NumPy's answer for nothing found; the frontend checks
      const Stmt body = make_block({make_let(value, x.value), arg_update(x.op, best, x.result, value,
                                                                         flat_index(x.indices, x.shape))});
      out.push_back(make_parfor(x.indices, zeros(x.shape.size()), x.shape, body, {{best, x.op, x.result}}, {},
                                x.origin));
    } else {
      out.push_back(make_let(x.result, identity_of(x.op, t)));
      const Stmt body = make_block({make_assign(x.result, bin(combiner(x.op), make_ref(x.result), x.value))});
      out.push_back(make_parfor(x.indices, zeros(x.shape.size()), x.shape, body, {{x.result, x.op, nullptr}}, {},
                                x.origin));
    }
    note(x.origin, "reduce -> parfor with a " + std::string(name_of(x.op)) + " reduction");
    return splice(std::move(out));
  }

  Stmt visit(const ReduceAxisStmt& x, const Stmt&) override {
    const int rank = static_cast<int>(x.shape.size());
    std::vector<Expr> out_shape;
    for (int d = 0; d < rank; ++d)
      if (d != x.axis) out_shape.push_back(x.shape[static_cast<size_t>(d)]);
      else if (x.keepdims) out_shape.push_back(i64c(1));
    std::vector<Stmt> out = {make_allocate(x.target, out_shape)};
    if (ctx_.device && x.axis < rank - 1 && !is_arg_reduction(x.op)) {
      // On a GPU the last axis is spread over a warp's lanes: a thread per output element reads coalesced
      // lines while it walks the axis, with no block of the last axis to keep in a cache (the CPU's blocked
      // schedule would leave a thread per 1024 outputs: 14 threads for a 14000-column matrix).
      out.push_back(on_device(x, ctx_.device_threads));
      note(x.origin, "reduce along axis " + std::to_string(x.axis) + " on a device -> a thread per output element walking the axis, " +
                         "the axis split into chunks summed in order when there are fewer than " + std::to_string(ctx_.device_threads) +
                         " outputs (at least " + std::to_string(kMinChunk) + " elements a chunk)");
    } else if (x.axis < rank - 1 && !is_arg_reduction(x.op)) {
      // Blocks of the last axis give unit-stride loops but only as many parallel iterations as blocks; with
      // few of them (a 10^6 x 10 matrix summed over its rows) the whole space runs in parallel instead,
      // accumulating into per-thread copies of the (small) result.
      const size_t last = x.shape.size() - 1;
      Expr blocks = bin(BinaryOp::Div, bin(BinaryOp::Add, x.shape[last], i64c(kBlock - 1)), i64c(kBlock));
      Expr elements = x.shape[last];
      for (size_t d = 0; d < last; ++d)
        if (static_cast<int>(d) != x.axis) {
          blocks = bin(BinaryOp::Mul, blocks, x.shape[d]);
          elements = bin(BinaryOp::Mul, elements, x.shape[d]);
        }
      const Expr use_blocks = bin(BinaryOp::Or, bin(BinaryOp::Ge, blocks, i64c(kMinBlocks)),
                                  bin(BinaryOp::Gt, elements, i64c(kMaxPrivateElements)));
      std::string why;
      if (auto tiles = product_tiles(x, why)) {
        // The tiles take the place of the blocks, every output in registers along the whole axis; row tiles
        // times column blocks give every thread work, so no other schedule is compiled beside them.
        out.push_back(tiles->stmt);
        note(x.origin, "reduce along axis " + std::to_string(x.axis) + " is a product (" + tiles->text + ") -> register tiles of " +
                           std::to_string(kRowTile) + " rows by vectors of columns, each output summed in order along the axis " +
                           "(parfor over blocks of " + std::to_string(kColumnBlock) + " columns x row tiles, the columns in lanes)");
      } else {
        out.push_back(make_if(use_blocks, make_block({blocked(x)}), whole_space(x, out_shape)));
        note(x.origin, "reduce along axis " + std::to_string(x.axis) + " -> parfor over blocks of " +
                           std::to_string(kBlock) + " along the last axis (unit-stride inner loop), or with fewer than " +
                           std::to_string(kMinBlocks) + " blocks a parfor over the whole space with an array reduction" +
                           (why.empty() ? std::string() : " (not tiled as a product: " + why + ")"));
      }
    } else {
      out.push_back(by_rows(x));
      note(x.origin, "reduce along axis " + std::to_string(x.axis) +
                         (is_arg_reduction(x.op) ? " -> parfor with a sequential loop along it"
                                                 : " -> parfor with a nested reduction parfor along it"));
    }
    return splice(std::move(out));
  }

 private:
  PassContext& ctx_;

  void note(const std::string& origin, const std::string& what) {
    ctx_.note("lower_array_ops: " + (origin.empty() ? std::string("array operation") : "`" + origin + "`") + ": " + what);
  }

  /// The target index for a space index (the reduced axis dropped, or 0 with keepdims).
  static std::vector<Expr> target_index(const ReduceAxisStmt& x, const std::vector<Expr>& idx) {
    std::vector<Expr> o;
    for (size_t d = 0; d < idx.size(); ++d)
      if (static_cast<int>(d) != x.axis) o.push_back(idx[d]);
      else if (x.keepdims) o.push_back(i64c(0));
    return o;
  }

  /// parfor over the kept dimensions { acc = identity; parfor k along the axis reduce(op acc) { acc = acc op
  /// value }; store }. (Only ArgMin/ArgMax come here for other axes than the last.) A sequential `for`
  /// accumulating into acc would pin the sum to one order, and LLVM cannot vectorize that chain without
  /// reassociating it; the nested parfor declares the accumulation a reduction, which the backend may
  /// reassociate (it runs inline in the enclosing chunk, with vector accumulators, the same way whatever the
  /// thread count, so results stay deterministic). ArgMin/ArgMax keep the sequential loop: their first-index
  /// rule is an order.
  static Stmt by_rows(const ReduceAxisStmt& x) {
    const DType t = x.value->type;
    const size_t axis = static_cast<size_t>(x.axis);
    std::vector<Var> kept;
    std::vector<Expr> kept_ext;
    for (size_t d = 0; d < x.indices.size(); ++d)
      if (d != axis) {
        kept.push_back(x.indices[d]);
        kept_ext.push_back(x.shape[d]);
      }
    const std::vector<Expr> at = target_index(x, refs(x.indices));
    const Var k = x.indices[axis];
    std::vector<Stmt> body;
    if (is_arg_reduction(x.op)) {
      const Var best = local(x.target->name + "_value", t), pos = local(x.target->name + "_pos", DType::I64);
      const Var value = local(x.target->name + "_x", t);
      body.push_back(make_let(best, identity_of(x.op, t)));
      body.push_back(make_let(pos, i64c(-1)));
      body.push_back(make_for(k, i64c(0), x.shape[axis],
                              make_block({make_let(value, x.value), arg_update(x.op, best, pos, value, make_ref(k))})));
      body.push_back(make_store(x.target, at, make_ref(pos)));
    } else {
      const Var acc = local(x.target->name + "_acc", t);
      body.push_back(make_let(acc, identity_of(x.op, t)));
      body.push_back(make_parfor({k}, {i64c(0)}, {x.shape[axis]},
                                 make_block({make_assign(acc, bin(combiner(x.op), make_ref(acc), x.value))}),
                                 {{acc, x.op, nullptr}}, x.origin));
      body.push_back(make_store(x.target, at, make_ref(acc)));
    }
    // A 1-d space with keepdims keeps no dimension: its one element is computed once, without a parfor.
    if (kept.empty()) return make_block(std::move(body));
    return make_parfor(kept, zeros(kept.size()), kept_ext, make_block(std::move(body)), {}, x.origin);
  }

  /// Device targets, a reduction along a leading axis: by_rows (a thread per output element, the kept last
  /// axis along the lanes) when the outputs fill the device; otherwise `chunks` = min(ceil(n / kMinChunk),
  /// ceil(threads / outputs)) chunks of the axis (threads: PassContext::device_threads): parfor (chunk, kept dims) { acc = identity; parfor k
  /// in the chunk reduce(op acc) { acc = acc op value }; part[chunk, kept] = acc }, then parfor (kept dims) {
  /// target = the chunks' partials folded in chunk order }. The chunk count is a pure function of the extents,
  /// so the sum's order, and its bits, are the same on every run.
  static Stmt on_device(const ReduceAxisStmt& x, std::int64_t threads) {
    const DType t = x.value->type;
    const size_t axis = static_cast<size_t>(x.axis);
    const Var k = x.indices[axis];
    const Expr n = x.shape[axis];
    Expr outputs = i64c(1);
    for (size_t d = 0; d < x.shape.size(); ++d)
      if (d != axis) outputs = bin(BinaryOp::Mul, outputs, x.shape[d]);
    auto ceil_div = [](Expr a, std::int64_t b) { return bin(BinaryOp::Div, bin(BinaryOp::Add, std::move(a), i64c(b - 1)), i64c(b)); };
    // threads / outputs rounded up (x / 0 is 0 in kiln's IR: no outputs, one chunk).
    const Expr wanted = bin(BinaryOp::Div, bin(BinaryOp::Add, i64c(threads - 1), outputs), outputs);
    const Var chunks = local(x.target->name + "_chunks", DType::I64), len = local(x.target->name + "_chunk_len", DType::I64);

    // Fresh index variables for the chunked form: the other branch keeps the statement's own.
    Replacements renamed;
    std::vector<Var> kept, kept2;
    std::vector<Expr> kept_ext;
    Var k1;
    for (size_t d = 0; d < x.indices.size(); ++d) {
      const Var& i = x.indices[d];
      const Var fresh = make_var(i->name, i->type, VarKind::Index);
      renamed[i.get()] = make_ref(fresh);
      if (d == axis) {
        k1 = fresh;
        continue;
      }
      kept.push_back(fresh);
      kept2.push_back(make_var(i->name + "_out", i->type, VarKind::Index));
      kept_ext.push_back(x.shape[d]);
    }
    const Var c = make_var(k->name + "_chunk", Type::scalar(DType::I64), VarKind::Index);
    const Var c2 = make_var(k->name + "_chunk_sum", Type::scalar(DType::I64), VarKind::Index);
    const Var part = make_var(x.target->name + "_part", Type::array(t, static_cast<int>(kept.size()) + 1, true), VarKind::Local);
    std::vector<Expr> part_shape = {make_ref(chunks)};
    part_shape.insert(part_shape.end(), kept_ext.begin(), kept_ext.end());
    std::vector<Var> first_idx = {c};
    first_idx.insert(first_idx.end(), kept.begin(), kept.end());
    std::vector<Expr> first_ext = {make_ref(chunks)};
    first_ext.insert(first_ext.end(), kept_ext.begin(), kept_ext.end());

    const Var lo = local(k->name + "_lo", DType::I64), hi = local(k->name + "_hi", DType::I64);
    const Var acc = local(x.target->name + "_acc", t), acc2 = local(x.target->name + "_total", t);
    const Stmt partials = make_parfor(
        first_idx, zeros(first_idx.size()), first_ext,
        make_block({make_let(lo, bin(BinaryOp::Mul, make_ref(c), make_ref(len))),
                    make_let(hi, bin(BinaryOp::Min, bin(BinaryOp::Add, make_ref(lo), make_ref(len)), n)),
                    make_let(acc, identity_of(x.op, t)),
                    make_parfor({k1}, {make_ref(lo)}, {make_ref(hi)},
                                make_block({make_assign(acc, bin(combiner(x.op), make_ref(acc), substitute(x.value, renamed)))}),
                                {{acc, x.op, nullptr}}, x.origin),
                    make_store(part, refs(first_idx), make_ref(acc))}),
        {}, x.origin);
    // The target's index for the kept indices kept2 (0 for a kept-dims axis).
    std::vector<Expr> at;
    for (size_t d = 0, e = 0; d < x.indices.size(); ++d)
      if (d != axis) at.push_back(make_ref(kept2[e++]));
      else if (x.keepdims) at.push_back(i64c(0));
    std::vector<Expr> part_at = {make_ref(c2)};
    for (const Var& v : kept2) part_at.push_back(make_ref(v));
    const Stmt fold = make_parfor(
        kept2, zeros(kept2.size()), kept_ext,
        make_block({make_let(acc2, identity_of(x.op, t)),
                    make_for(c2, i64c(0), make_ref(chunks),
                             make_block({make_assign(acc2, bin(combiner(x.op), make_ref(acc2), make_load(part, part_at)))})),
                    make_store(x.target, at, make_ref(acc2))}),
        {}, x.origin);
    const Stmt chunked = make_block({make_let(len, bin(BinaryOp::Div, bin(BinaryOp::Add, n, bin(BinaryOp::Sub, make_ref(chunks), i64c(1))),
                                                      make_ref(chunks))),
                                     make_allocate(part, part_shape), partials, fold});
    return make_block({make_let(chunks, bin(BinaryOp::Max, i64c(1), bin(BinaryOp::Min, ceil_div(n, kMinChunk), wanted))),
                       make_if(bin(BinaryOp::Gt, make_ref(chunks), i64c(1)), chunked, make_block({by_rows(x)}))});
  }

  /// parfor over the result { target = identity }; parfor over the whole space reduce(op target[*]) {
  /// target[...] = target[...] op value }. Each element folds its values in axis order here too (the
  /// interpreter's order); compiled, per-thread partial results are combined in a fixed order.
  static Stmt whole_space(const ReduceAxisStmt& x, const std::vector<Expr>& out_shape) {
    const DType t = x.value->type;
    // Fresh index variables: the blocked schedule in the other branch keeps the statement's own.
    std::vector<Var> idx;
    Replacements renamed;
    for (const Var& i : x.indices) {
      idx.push_back(make_var(i->name, i->type, VarKind::Index));
      renamed[i.get()] = make_ref(idx.back());
    }
    std::vector<Var> init_idx;
    for (size_t d = 0; d < out_shape.size(); ++d) init_idx.push_back(make_var(std::string(1, "ijkl"[d]) + "_init", Type::scalar(DType::I64), VarKind::Index));
    const Stmt init = make_parfor(init_idx, zeros(init_idx.size()), out_shape,
                                  make_block({make_store(x.target, refs(init_idx), identity_of(x.op, t))}), {}, x.origin);
    const std::vector<Expr> at = target_index(x, refs(idx));
    const Stmt update = make_store(x.target, at, bin(combiner(x.op), make_load(x.target, at), substitute(x.value, renamed)));
    const Stmt reduce = make_parfor(idx, zeros(idx.size()), x.shape, make_block({update}), {}, {{x.target, x.op}}, x.origin);
    return make_block({init, reduce});
  }

  /// parfor (other kept dims, jb over blocks of the last) { for j in block: target = identity;
  ///   for k along the axis { for j in block: target = target op value } }. Each element still folds its
  /// values in axis order, so results are those of by_rows bit for bit.
  static Stmt blocked(const ReduceAxisStmt& x) {
    const DType t = x.value->type;
    const size_t axis = static_cast<size_t>(x.axis), last = x.indices.size() - 1;
    const Var j = x.indices[last], k = x.indices[axis];
    const Var jb = make_var(j->name + "_block", Type::scalar(DType::I64), VarKind::Index);
    std::vector<Var> outer;
    std::vector<Expr> outer_ext;
    for (size_t d = 0; d < last; ++d)
      if (d != axis) {
        outer.push_back(x.indices[d]);
        outer_ext.push_back(x.shape[d]);
      }
    outer.push_back(jb);
    const Expr n = x.shape[last];
    outer_ext.push_back(bin(BinaryOp::Div, bin(BinaryOp::Add, n, i64c(kBlock - 1)), i64c(kBlock)));

    const Var lo = local(j->name + "_lo", DType::I64), hi = local(j->name + "_hi", DType::I64);
    const std::vector<Expr> at = target_index(x, refs(x.indices));
    // The initializing loop needs an index of its own: a variable is defined once.
    const Var j0 = make_var(j->name + "_init", Type::scalar(DType::I64), VarKind::Index);
    std::vector<Expr> at0 = at;
    at0.back() = make_ref(j0);
    const Stmt init = make_for(j0, make_ref(lo), make_ref(hi), make_block({make_store(x.target, at0, identity_of(x.op, t))}));
    const Stmt update = make_for(
        j, make_ref(lo), make_ref(hi),
        make_block({make_store(x.target, at, bin(combiner(x.op), make_load(x.target, at), x.value))}));
    const Stmt body = make_block({make_let(lo, bin(BinaryOp::Mul, make_ref(jb), i64c(kBlock))),
                                  make_let(hi, bin(BinaryOp::Min, bin(BinaryOp::Add, make_ref(lo), i64c(kBlock)), n)),
                                  init, make_for(k, i64c(0), x.shape[axis], make_block({update}))});
    return make_parfor(outer, zeros(outer.size()), outer_ext, body, {}, x.origin);
  }
};

}  // namespace

ir::Function lower_array_ops(const ir::Function& f, PassContext& ctx) {
  Lowering l(ctx);
  return l.mutate(f);
}

}  // namespace kiln::passes
