// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Views: slices, integer indices, new axes and transposes turn into an index map onto the base array (no IR
// node, no copy).
// Slice bounds follow Python exactly: negative bounds count from the end, bounds are clamped, the step may
// be negative. With constant bounds the lengths come out in the closed forms `max((n - 2), 0)` (a[1:-1],
// a[:-2] and a[2:] alike), which array_analysis relates to n; bounds known only at run time give selects.
#include <span>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "frontend/array_info.hpp"
#include "frontend/broadcast.hpp"
#include "frontend/index_math.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/printer.hpp"
#include "kiln/abi.hpp"

namespace kiln::detail {
namespace {

struct Resolved {
  ir::Expr start, step, length;
  std::string label;  ///< "1:-1", "lo:hi:2"
};

/// A bound as written, for labels.
std::string text(const ir::Expr& e) {
  if (auto v = ix::value(e)) return std::to_string(*v);
  return ir::to_string(e);
}

/// Names `e` with a variable when it is large, so that every use of the view does not repeat it.
ir::Expr bind(TraceContext& ctx, const ir::Expr& e, const char* name) {
  if (ir::node_count(e) <= 7) return e;
  const ir::Var v = ctx.new_local(DType::I64, name, {});
  ctx.emit(ir::make_let(v, e));
  return ir::make_ref(v);
}

/// The length of lo:hi:1 of an extent n (n >= 0) for constant or omitted bounds, in closed form.
ir::Expr unit_length(const ir::Expr& n, std::optional<std::int64_t> lo, std::optional<std::int64_t> hi) {
  const std::int64_t l = lo.value_or(0);
  if (!hi) {
    if (l == 0) return n;
    if (l > 0) return ix::max(ix::sub(n, ix::c(l)), ix::c(0));
    return ix::min(ix::c(-l), n);
  }
  const std::int64_t h = *hi;
  if (l >= 0 && h < 0) return ix::max(ix::add(n, ix::c(h - l)), ix::c(0));
  if (l >= 0) {
    if (h <= l) return ix::c(0);
    if (l == 0) return ix::min(n, ix::c(h));
    return ix::min(ix::max(ix::sub(n, ix::c(l)), ix::c(0)), ix::c(h - l));
  }
  if (h < 0) {
    if (h <= l) return ix::c(0);
    return ix::min(ix::c(h - l), ix::max(ix::add(n, ix::c(h)), ix::c(0)));
  }
  return ix::max(ix::sub(ix::min(ix::c(h), n), ix::max(ix::add(n, ix::c(l)), ix::c(0))), ix::c(0));
}

/// lo:hi:step of an extent n, as Python's slice.indices(n).
Resolved resolve(TraceContext& ctx, const ir::Expr& n, const SliceSpec& s, const std::string& what, const Where& w) {
  // A bound written as a C++ integer is that constant (slices are immutable), also where the traced value it
  // was made into has become a variable (read inside a loop deeper than the slice).
  auto bound = [&](const Int* b, std::optional<std::int64_t> k, const char* name) -> ir::Expr {
    if (!b) return nullptr;
    return k ? ix::c(*k) : stable(ctx, b->read(), name);
  };
  ir::Expr lo = bound(s.lo(), s.lo_constant(), "lo");
  ir::Expr hi = bound(s.hi(), s.hi_constant(), "hi");
  ir::Expr step = s.step() ? bound(s.step(), s.step_constant(), "step") : ix::c(1);
  std::string label = lo ? text(lo) : std::string();
  label += ':';
  if (hi) label += text(hi);
  if (s.step()) label += ':' + text(step);
  const auto k = ix::value(step);
  if (k && *k == 0) ctx.fail(fmt::format("slice step cannot be zero in {}", what), w);
  if (!k)
    ctx.emit(ir::make_check(ir::make_binary(BinaryOp::Ne, step, ix::c(0)), kValueError,
                            "slice step cannot be zero in " + what + (w.str().empty() ? "" : " (at " + w.str() + ")")));

  const auto lo_k = lo ? ix::value(lo) : std::optional<std::int64_t>(0);
  const auto hi_k = hi ? ix::value(hi) : std::nullopt;
  if (k && *k > 0 && lo_k && (!hi || hi_k)) {
    // Constant bounds: the start only matters when the slice is not empty, and then it is lo itself.
    const ir::Expr start = *lo_k >= 0 ? ix::c(*lo_k) : ix::max(ix::add(n, ix::c(*lo_k)), ix::c(0));
    ir::Expr len = unit_length(n, lo_k, hi_k);
    if (*k > 1) len = ix::div(ix::add(len, ix::c(*k - 1)), step);
    return {start, step, bind(ctx, len, "len"), label};
  }

  // General case (PySlice_AdjustIndices): every sign decided at run time by selects.
  const ir::Expr neg = ix::lt(step, ix::c(0));
  const ir::Expr lower = ix::select(neg, ix::c(-1), ix::c(0));
  const ir::Expr upper = ix::select(neg, ix::sub(n, ix::c(1)), n);
  auto norm = [&](const ir::Expr& b) {
    return ix::select(ix::lt(b, ix::c(0)), ix::max(ix::add(b, n), lower), ix::min(b, upper));
  };
  const ir::Expr start = bind(ctx, lo ? norm(lo) : ix::select(neg, ix::sub(n, ix::c(1)), ix::c(0)), "start");
  const ir::Expr stop = bind(ctx, hi ? norm(hi) : ix::select(neg, ix::c(-1), n), "stop");
  const ir::Expr down = ix::select(ix::lt(stop, start),
                                   ix::add(ix::div(ix::sub(ix::sub(start, stop), ix::c(1)), ix::sub(ix::c(0), step)),
                                           ix::c(1)),
                                   ix::c(0));
  const ir::Expr up = ix::select(ix::lt(start, stop),
                                 ix::add(ix::div(ix::sub(ix::sub(stop, start), ix::c(1)), step), ix::c(1)), ix::c(0));
  return {start, step, bind(ctx, ix::select(neg, down, up), "len"), label};
}

/// The view of `a` whose dimension d (of a) is read at `over_a[d]` of the view's index, with `extents`: for a
/// view of a view the maps are composed, so that loads always index the base array directly.
ArrayHandle compose(TraceContext& ctx, const ArrayHandle& a, std::vector<ArrayInfo::Axis> over_a,
                    std::vector<ir::Expr> extents, std::string label) {
  auto info = std::make_shared<ArrayInfo>();
  info->extents = std::move(extents);
  info->label = std::move(label);
  if (is_view(a)) {
    for (const ArrayInfo::Axis& b : a.info->axes) {
      if (b.dim < 0) {
        info->axes.push_back(b);
        continue;
      }
      const ArrayInfo::Axis& m = over_a[static_cast<size_t>(b.dim)];
      info->axes.push_back({ix::add(b.start, ix::mul(b.step, m.start)), ix::mul(b.step, m.step), m.dim});
    }
  } else {
    info->axes = std::move(over_a);
  }
  const int rank = static_cast<int>(info->extents.size());
  return ArrayHandle(a.var, rank, ctx.current_scope(), std::move(info));
}

}  // namespace

ArrayHandle make_view(const ArrayHandle& a, const ViewIndex* idx, int n, Where w) {
  TraceContext& ctx = TraceContext::active("an array view");
  ctx.check_array(a, "a view");
  ctx.begin_statement();
  int new_axes = 0;
  for (int p = 0; p < n; ++p) new_axes += idx[p].new_axis ? 1 : 0;
  if (n - new_axes > a.rank)
    ctx.fail(fmt::format("array '{}' of rank {} is viewed with {} indices", label_of(a), a.rank, n - new_axes), w);
  const std::vector<ir::Expr> ext = extents_of(a);
  const std::string name = label_of(a);

  // The view's dimensions over a's: a.dim d -> start + step * view index [dim] (dim -1: fixed). A new axis
  // is a view dimension of extent 1 that no dimension of a follows: its index is always 0 and reads nothing.
  std::vector<ArrayInfo::Axis> over_a;
  std::vector<ir::Expr> extents;
  std::string parts;
  int d = 0;  // the dimension of a that the next position takes
  for (int p = 0; p < n || d < a.rank; ++p) {
    const ViewIndex v = p < n ? idx[p] : ViewIndex{};
    const char* sep = p ? ", " : "";
    if (v.new_axis) {
      extents.push_back(ix::c(1));
      parts += sep + std::string("None");
      continue;
    }
    const size_t du = static_cast<size_t>(d++);
    if (v.index) {
      const ir::Expr i = stable(ctx, v.index->read(), "index");
      over_a.push_back({i, ix::c(1), -1});
      parts += sep + text(i);
    } else if (v.slice) {
      const Resolved r = resolve(ctx, ext[du], *v.slice, "the view of '" + name + "'", w);
      over_a.push_back({r.start, r.step, static_cast<int>(extents.size())});
      extents.push_back(r.length);
      parts += sep + r.label;
    } else {
      over_a.push_back({ix::c(0), ix::c(1), static_cast<int>(extents.size())});
      extents.push_back(ext[du]);
      parts += sep + std::string(":");
    }
  }
  if (extents.size() > static_cast<size_t>(kMaxRank))
    ctx.fail(fmt::format("the view {}[{}] would have {} dimensions; kiln arrays have at most {}", name, parts,
                         extents.size(), kMaxRank),
             w);
  return compose(ctx, a, std::move(over_a), std::move(extents), name + "[" + parts + "]");
}

ArrayHandle permute_view(const ArrayHandle& a, const int* axes, int n, Where w) {
  TraceContext& ctx = TraceContext::active("an array transpose");
  ctx.check_array(a, "a transpose");
  ctx.begin_statement();
  const std::string name = label_of(a);
  std::vector<int> perm;  // view dimension k is dimension perm[k] of a
  const std::string given = fmt::format("{}", fmt::join(std::span(axes, static_cast<std::size_t>(n)), ", "));
  if (n == 0) {
    for (int k = a.rank; k-- > 0;) perm.push_back(k);
  } else {
    std::vector<bool> seen(static_cast<size_t>(a.rank), false);
    bool ok = n == a.rank;
    for (int k = 0; k < n && ok; ++k) {
      const int ax = axes[k] < 0 ? axes[k] + a.rank : axes[k];
      ok = ax >= 0 && ax < a.rank && !seen[static_cast<size_t>(ax)];
      if (ok) seen[static_cast<size_t>(ax)] = true;
      perm.push_back(ax);
    }
    if (!ok)
      ctx.fail(fmt::format("transpose({}, {{{}}}): the axes must name each of the {} dimensions of '{}' once (a "
                           "permutation of 0..{})",
                           name, given, a.rank, name, a.rank - 1),
               w);
  }
  const std::vector<ir::Expr> ext = extents_of(a);
  std::vector<ArrayInfo::Axis> over_a(static_cast<size_t>(a.rank));
  std::vector<ir::Expr> extents;
  for (int k = 0; k < a.rank; ++k) {
    const size_t from = static_cast<size_t>(perm[static_cast<size_t>(k)]);
    over_a[from] = {ix::c(0), ix::c(1), k};
    extents.push_back(ext[from]);
  }
  const std::string label = n == 0 ? nested_label(name) + ".T" : fmt::format("transpose({}, {{{}}})", name, given);
  return compose(ctx, a, std::move(over_a), std::move(extents), label);
}

}  // namespace kiln::detail
