// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The blocks are the parallel dimension, with the other axes: rows of an axis scan run side by side, and an
// axis other than the last keeps unit-stride rows innermost, which the CPU backend runs in vector lanes. A
// block starts from its first element, not from the identity, so that -0.0 survives (-0 + 0 is +0), and
// block 0 takes no carry for the same reason.
#include "ir/scan.hpp"

#include "ir/builder.hpp"
#include "ir/ops.hpp"
#include "ir/semantics.hpp"

namespace kiln::ir {
namespace {

constexpr std::int64_t kB = sem::kScanBlock;
/// From this many rows (the other axes' extents multiplied) up, an axis scan runs a row per parfor iteration in
/// one pass; below, the blocks of each row are the parallel dimension too (three passes). Either gives the
/// defined order's bits; 64 rows keep 2..16 threads busy.
constexpr std::int64_t kMinRows = 64;

Expr i64(std::int64_t v) { return make_i64(v); }
Expr add(const Expr& a, const Expr& b) { return make_binary(BinaryOp::Add, a, b); }
Expr sub(const Expr& a, const Expr& b) { return make_binary(BinaryOp::Sub, a, b); }
Expr mul(const Expr& a, const Expr& b) { return make_binary(BinaryOp::Mul, a, b); }

class Builder {
 public:
  explicit Builder(const ScanSpec& s) : s_(s) {}

  std::vector<Stmt> build() {
    const Expr n = s_.shape[s_.axis];
    const Expr blocks = make_binary(BinaryOp::Div, add(n, i64(kB - 1)), i64(kB));
    const auto* known = dyn<ConstExpr>(n);
    if (known && known->i <= kB) return {scan_pass(blocks, nullptr, nullptr)};  // one block: no carries
    // Carries of blocks 1..blocks-1: the totals of every block but the last, all full, folded in groups of kB;
    // each group's fold goes on into `group`, which the groups' chain then carries. A 1-d scan's carries are
    // one row of a 2-d array, which the carry passes index (see carry_elem).
    const Expr carried = make_binary(BinaryOp::Max, sub(blocks, i64(1)), i64(0));
    const Expr groups = make_binary(BinaryOp::Div, add(carried, i64(kB - 1)), i64(kB));
    const Var carry = carry_array("_carry"), group = carry_array("_group");
    std::vector<Stmt> passes = {make_allocate(carry, carry_shape(carried)), make_allocate(group, carry_shape(groups)),
                                totals_pass(carry, carried), group_fold_pass(carry, group, carried, groups)};
    // The chain of the groups' folds has something to do only past one group (an axis of more than kB + 1
    // blocks): below, no launch of its own on a device.
    const Stmt chain = chain_pass(group, groups);
    if (!known) {
      passes.push_back(make_if(make_binary(BinaryOp::Gt, groups, i64(1)), make_block({chain})));
    } else if (known->i > kB * (kB + 1)) {
      passes.push_back(chain);
    }
    passes.push_back(scan_pass(blocks, carry, group));
    if (s_.shape.size() == 1 || (s_.lockstep_rows && s_.axis + 1 == s_.shape.size())) return passes;
    // With enough rows to share among the threads, and an axis whose carries are one group (so that carrying
    // from block to block is the definition's fold), each row runs the same order in one pass: the same bits,
    // one read of the input instead of two. Longer rows (over 2^20 elements, 64 of them or more) have blocks
    // enough to keep every thread busy in the passes.
    if (known && known->i > kB * (kB + 1)) return passes;
    Expr rows = i64(1);
    for (size_t d = 0; d < s_.shape.size(); ++d)
      if (d != s_.axis) rows = mul(rows, s_.shape[d]);
    const Expr one_group = make_binary(BinaryOp::Le, n, i64(kB * (kB + 1)));
    return {make_if(make_binary(BinaryOp::And, make_binary(BinaryOp::Ge, rows, i64(kMinRows)), one_group),
                    make_block({rows_pass(blocks)}), make_block(std::move(passes)))};
  }

 private:
  const ScanSpec& s_;

  Var local(const std::string& suffix, DType t) const { return make_var(s_.name + suffix, Type::scalar(t), VarKind::Local); }
  static Var index(const std::string& n) { return make_var(n, Type::scalar(DType::I64), VarKind::Index); }
  Expr combine(const Expr& a, const Expr& b) const { return make_binary(combiner(s_.op), a, b); }

  /// Fresh parfor indices for the space with the axis replaced by a block index.
  std::vector<Var> block_indices() const {
    std::vector<Var> idx;
    for (size_t d = 0; d < s_.shape.size(); ++d) idx.push_back(index(d == s_.axis ? "b" : std::string(1, "ijlm"[d % 4])));
    return idx;
  }
  std::vector<Expr> at(const std::vector<Var>& idx, const Expr& k) const {
    std::vector<Expr> out;
    for (const Var& v : idx) out.push_back(make_ref(v));
    out[s_.axis] = k;
    return out;
  }
  /// carry's element for the block `b` of a space index: the index itself, after a row 0 for a 1-d scan.
  std::vector<Expr> carry_index(const std::vector<Var>& idx, const Expr& b) const {
    std::vector<Expr> i = at(idx, b);
    if (s_.shape.size() == 1) i.insert(i.begin(), i64(0));
    return i;
  }
  Stmt parfor(const std::vector<Var>& idx, std::vector<Expr> ext, Stmt body, const char* what) const {
    return make_parfor(idx, std::vector<Expr>(idx.size(), i64(0)), std::move(ext), std::move(body), {},
                       s_.origin + ": " + what);
  }

  /// Pass 1: the in-order total of each of the first `carried` blocks (all full) into carry.
  Stmt totals_pass(const Var& carry, const Expr& carried) const {
    const std::vector<Var> idx = block_indices();
    std::vector<Expr> ext = s_.shape;
    ext[s_.axis] = carried;
    const Var lo = local("_lo", DType::I64), acc = local("_total", s_.type), k = index("k");
    const Expr lov = make_ref(lo);
    std::vector<Stmt> body = {make_let(lo, mul(make_ref(idx[s_.axis]), i64(kB)))};
    if (s_.lockstep_rows) {
      body.push_back(make_let(acc, identity()));
      body.push_back(make_for(k, i64(0), i64(kB), make_block(fold_from_zero(acc, make_ref(k), at(idx, add(lov, make_ref(k)))))));
    } else {
      body.push_back(make_let(acc, s_.value(at(idx, lov))));
      body.push_back(make_for(k, i64(1), i64(kB),
                              make_block({make_assign(acc, combine(make_ref(acc), s_.value(at(idx, add(lov, make_ref(k))))))})));
    }
    body.push_back(make_store(carry, carry_index(idx, make_ref(idx[s_.axis])), make_ref(acc)));
    return parfor(idx, ext, make_block(std::move(body)), "block totals");
  }

  /// A block's step k on a lockstep target (a GPU), whose passes run each block's loop from offset 0: the element
  /// at `pos` itself at k == 0 (a select), `acc op element` after. The same operations in the same order as a
  /// loop from offset 1 after the block's first element, so the same bits; but a staged walk's runs then start
  /// where the blocks do, at 8 KiB boundaries (from offset 1 each chunk of a run touched a 32-byte sector more,
  /// and the rescan's stores wrote part sectors).
  std::vector<Stmt> fold_from_zero(const Var& acc, const Expr& k, const std::vector<Expr>& pos) const {
    const Var v = local("_v", s_.type);
    return {make_let(v, s_.value(pos)),
            make_assign(acc, make_select(make_binary(BinaryOp::Eq, k, i64(0)), make_ref(v), combine(make_ref(acc), make_ref(v))))};
  }

  /// A carry array: the space with the axis replaced by `along` (see carry_shape), of the combining type.
  Var carry_array(const std::string& suffix) const {
    const int rank = static_cast<int>(s_.shape.size()) + (s_.shape.size() == 1 ? 1 : 0);
    return make_var(s_.name + suffix, Type::array(s_.type, rank, true), VarKind::Local);
  }
  /// The shape of a carry array with `along` elements along the axis: a 1-d scan's is one row of a 2-d array,
  /// which the carry passes' one iteration indexes (a parfor of one iteration keeps a sequential loop off the
  /// host of a device target, where an element access is a copy).
  std::vector<Expr> carry_shape(const Expr& along) const {
    std::vector<Expr> shape = s_.shape;
    shape[s_.axis] = along;
    if (s_.shape.size() == 1) shape.insert(shape.begin(), i64(1));
    return shape;
  }

  /// Pass 2a: the carries folded in groups of kB, in place: a parfor over the other axes and the groups, each
  /// folding its group in order from its first total (carry[j] becomes total(lo) op ... op total(j)), and the
  /// group's fold (its last carry) going on into group[g]. Each step reads and writes only its own element, so
  /// a GPU stages the walk through shared memory (codegen/cuda/emit_staged.cpp).
  Stmt group_fold_pass(const Var& carry, const Var& group, const Expr& carried, const Expr& groups) const {
    auto [rows, ext] = other_axes();
    const Var g = index("g"), k = index("k"), lo = local("_glo", DType::I64), acc = local("_gacc", s_.type);
    std::vector<Var> idx = rows;
    idx.push_back(g);
    ext.push_back(groups);
    const Expr lov = make_ref(lo), accv = make_ref(acc);
    const Expr len = make_binary(BinaryOp::Min, i64(kB), sub(carried, lov));
    const Stmt body = make_block(
        {make_let(lo, mul(make_ref(g), i64(kB))), make_let(acc, make_load(carry, carry_elem(rows, lov))),
         make_for(k, i64(1), len,
                  make_block({make_assign(acc, combine(accv, make_load(carry, carry_elem(rows, add(lov, make_ref(k)))))),
                              make_store(carry, carry_elem(rows, add(lov, make_ref(k))), accv)})),
         make_store(group, carry_elem(rows, make_ref(g)), accv)});
    return parfor(idx, ext, body, "block carries in groups");
  }

  /// Pass 2b: the groups' folds chained in order along the axis, in place (group[g] becomes the carry after
  /// group g: group[g - 1] op fold(g)). A 1-d scan's is one iteration, a chain of n / 2^20 operations.
  Stmt chain_pass(const Var& group, const Expr& groups) const {
    const auto [idx, ext] = other_axes();
    const Var g = index("g"), acc = local("_chain", s_.type);
    auto at = [&](const Expr& e) { return carry_elem(idx, e); };
    // The chain runs through a local, from group[0] as it is: each step reads and writes only its own element,
    // so a GPU can fetch the folds ahead of the chain (codegen/cuda/emit_staged.cpp). Only past one group.
    const Expr gv = make_ref(g), accv = make_ref(acc);
    const Stmt loop = make_for(g, i64(1), groups,
                               make_block({make_assign(acc, combine(accv, make_load(group, at(gv)))),
                                           make_store(group, at(gv), accv)}));
    return parfor(idx, ext, make_block({make_let(acc, make_load(group, at(i64(0)))), loop}), "group carries");
  }

  /// The other axes' indices and extents (a 1-d scan's carries: one row, of extent 1), and carry's element at
  /// position `e` along the axis for them.
  std::pair<std::vector<Var>, std::vector<Expr>> other_axes() const {
    std::vector<Var> idx;
    std::vector<Expr> ext;
    for (size_t d = 0; d < s_.shape.size(); ++d)
      if (d != s_.axis) {
        idx.push_back(index(std::string(1, "ijlm"[d % 4])));
        ext.push_back(s_.shape[d]);
      }
    if (idx.empty()) {
      idx.push_back(index("row"));
      ext.push_back(i64(1));
    }
    return {idx, ext};
  }
  std::vector<Expr> carry_elem(const std::vector<Var>& rows, const Expr& e) const {
    if (s_.shape.size() == 1) return {make_ref(rows[0]), e};
    std::vector<Expr> i;
    size_t o = 0;
    for (size_t d = 0; d < s_.shape.size(); ++d) i.push_back(d == s_.axis ? e : make_ref(rows[o++]));
    return i;
  }

  /// One block's scan of `len` elements from lo into out, each value passed through `with` (the carry) before
  /// it is stored; `with(nullptr)` is an exclusive scan's first element. The loop runs over offsets in the
  /// block, so that its index is the same for every block (the CPU backend runs blocks in vector lanes).
  Stmt block_scan(const std::vector<Var>& idx, const Expr& lo, const Expr& len,
                  const std::function<Expr(const Expr&)>& with,
                  const std::function<Stmt(const Expr&)>& then = {}, bool from_zero = false) const {
    const Var acc = local("_acc", s_.type), k = index("k");
    const Expr kv = add(lo, make_ref(k)), accv = make_ref(acc);
    auto store = [&](const Expr& pos, const Expr& v) { return make_store(s_.out, at(idx, pos), make_cast(s_.result, v)); };
    if (from_zero) {  // see fold_from_zero; an exclusive scan's element 0 is with(nullptr), chosen the same way
      const Expr first = make_binary(BinaryOp::Eq, make_ref(k), i64(0));
      std::vector<Stmt> step = fold_from_zero(acc, make_ref(k), at(idx, kv));
      if (s_.exclusive) {
        step.insert(step.begin(), store(kv, make_select(first, with(nullptr), with(accv))));
      } else {
        step.push_back(store(kv, with(accv)));
      }
      std::vector<Stmt> body = {make_let(acc, identity()), make_for(k, i64(0), len, make_block(std::move(step)))};
      if (then) body.push_back(then(accv));
      return make_block(std::move(body));
    }
    const Stmt step = make_assign(acc, combine(accv, s_.value(at(idx, kv))));
    std::vector<Stmt> body = {make_let(acc, s_.value(at(idx, lo)))};
    if (s_.exclusive) {
      body.push_back(store(lo, with(nullptr)));
      body.push_back(make_for(k, i64(1), len, make_block({store(kv, with(accv)), step})));
    } else {
      body.push_back(store(lo, with(accv)));
      body.push_back(make_for(k, i64(1), len, make_block({step, store(kv, with(accv))})));
    }
    if (then) body.push_back(then(accv));  // the block's total in acc
    return make_block(std::move(body));
  }

  /// The identity an exclusive scan starts from: +0 for sums (np.sum of nothing), not the -0 reductions start
  /// from (where it is never seen on its own).
  Expr identity() const { return s_.op == ReduceOp::Add ? make_const(s_.type, 0) : identity_of(s_.op, s_.type); }

  /// Every row in one pass: a parfor over the other axes, each iteration scanning its blocks in order and
  /// carrying carry(b + 1) = carry(b) op total(b) from one to the next (the value its last element got).
  Stmt rows_pass(const Expr& blocks) const {
    const std::vector<Var> idx = block_indices();  // the axis's entry is never read: block_scan replaces it
    std::vector<Var> rows;
    std::vector<Expr> ext;
    for (size_t d = 0; d < s_.shape.size(); ++d)
      if (d != s_.axis) {
        rows.push_back(idx[d]);
        ext.push_back(s_.shape[d]);
      }
    const Var b = index("b"), lo = local("_lo", DType::I64), len = local("_len", DType::I64);
    const Var carry = local("_carry_in", s_.type);
    const Expr bv = make_ref(b), lov = make_ref(lo), lenv = make_ref(len), cv = make_ref(carry);
    const Expr id = identity();
    // Block 0 takes no carry: a select on the block index, as in pass 3, not a branch around two copies of the
    // block's loop (that form ran 1.6x slower on the CPU than one loop, for the same operations). An exclusive
    // scan's first element is the carry, which is the identity in block 0.
    const Expr first = make_binary(BinaryOp::Eq, bv, i64(0));
    const Stmt scan = block_scan(idx, lov, lenv, [&](const Expr& v) { return v ? make_select(first, v, combine(cv, v)) : cv; },
                                 [&](const Expr& total) { return make_assign(carry, make_select(first, total, combine(cv, total))); });
    const Stmt loop = make_for(
        b, i64(0), blocks,
        make_block({make_let(lo, mul(bv, i64(kB))),
                    make_let(len, make_binary(BinaryOp::Min, i64(kB), sub(s_.shape[s_.axis], lov))), scan}));
    return parfor(rows, ext, make_block({make_let(carry, id), loop}), "rows, one pass each");
  }

  /// Pass 3: every block scanned again from its first element, combined with its carry: block b > 0's is
  /// carry[b - 1] (its group's fold up to total(b - 1)), after group 0 combined with the previous groups' carry
  /// as group[g - 1] op carry[b - 1].
  Stmt scan_pass(const Expr& blocks, const Var& carry, const Var& group) const {
    const std::vector<Var> idx = block_indices();
    std::vector<Expr> ext = s_.shape;
    ext[s_.axis] = blocks;
    const Var lo = local("_lo", DType::I64), len = local("_len", DType::I64);
    const Expr b = make_ref(idx[s_.axis]), lov = make_ref(lo), lenv = make_ref(len);
    const Expr id = identity();
    std::vector<Stmt> body = {make_let(lo, mul(b, i64(kB))),
                              make_let(len, make_binary(BinaryOp::Min, i64(kB), sub(s_.shape[s_.axis], lov)))};
    if (!carry) {
      body.push_back(block_scan(idx, lov, lenv, [&](const Expr& v) { return v ? v : id; }, {}, s_.lockstep_rows));
    } else {
      // Block 0 takes no carry: its values are stored as they are (the select), its exclusive first element is
      // the identity (c keeps it). No branch around the block's loop: every thread of a GPU block reaches it.
      const Var c = local("_carry_in", s_.type);
      const Expr cv = make_ref(c), first_block = make_binary(BinaryOp::Eq, b, i64(0));
      body.push_back(make_let(c, id));
      body.push_back(make_if(make_binary(BinaryOp::Gt, b, i64(0)),
                             make_block({make_assign(c, make_load(carry, carry_index(idx, sub(b, i64(1)))))})));
      const Expr g = sub(make_binary(BinaryOp::Div, sub(b, i64(1)), i64(kB)), i64(1));  // the previous group
      body.push_back(make_if(make_binary(BinaryOp::Gt, b, i64(kB)),
                             make_block({make_assign(c, combine(make_load(group, carry_index(idx, g)), cv))})));
      body.push_back(block_scan(idx, lov, lenv, [&](const Expr& v) { return v ? make_select(first_block, v, combine(cv, v)) : cv; }, {},
                                s_.lockstep_rows));
    }
    return parfor(idx, ext, make_block(std::move(body)), carry ? "blocks with their carries" : "one block");
  }
};

}  // namespace

std::vector<Stmt> scan_statements(const ScanSpec& s) { return Builder(s).build(); }

bool scan_stmt_types(DType source, DType type, DType out) {
  if (!is_int(type) && type != DType::F32 && type != DType::F64) return false;
  const bool exact = source == type || (source == DType::Bool && is_int(type)) ||
                     (is_int(source) && is_int(type) && size_of(type) > size_of(source) &&
                      (is_signed_int(type) || is_unsigned(source)));
  return exact && (out == type || (out == DType::Bool && type == DType::I32));
}

}  // namespace kiln::ir
