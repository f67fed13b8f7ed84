// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "ir/interpreter.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "ir/atomics.hpp"
#include "ir/builder.hpp"
#include "ir/messages.hpp"
#include "ir/printer.hpp"
#include "ir/random.hpp"
#include "ir/semantics.hpp"
#include "ir/scan_rows.hpp"
#include "ir/sort_rows.hpp"
#include "ir/status.hpp"

namespace kiln::ir {
namespace {

/// A new array's shape as kiln_rt_alloc writes it: a Python tuple, "(5,)" for rank 1.
std::string allocation_shape_text(int rank, const std::int64_t* shape) {
  return rank == 1 ? fmt::format("({},)", shape[0]) : shape_text(rank, shape);
}

// The interpreter first compiles the tree into closures with every variable resolved to a slot, then runs
// them: no name lookups and no type dispatch on the hot path.

using Value = ScalarSlot;

// A value sits at the start of its slot, as a load or store copies it (the slot is zeroed first).
template <class T>
T get(const Value& v) {
  T x;
  std::memcpy(&x, &v, sizeof(T));
  return x;
}

template <class T>
Value make(T x) {
  Value v;
  std::memset(&v, 0, sizeof v);
  std::memcpy(&v, &x, sizeof(T));
  return v;
}

using ExprFn = std::function<Value(Frame&)>;
using StmtFn = std::function<void(Frame&)>;

struct ArraySlot {
  int slot;
  int rank;
  DType elem;
  std::string name;
};

class Compiler final : public HostScope {
 public:
  Compiler(Function f, const Machine* machine) : fn_(std::move(f)), machine_(machine) {}
  Compiler(const Compiler&) = delete;
  Compiler& operator=(const Compiler&) = delete;

  const Function& function() const { return fn_; }
  const Machine* machine() const { return machine_; }

  int scalar(const VarNode* v) override { return scalar_slot(v); }
  int array(const VarNode* v) override { return array_slot(v); }
  std::function<ScalarSlot(Frame&)> value(const Expr& e) override { return expr(e); }
  int scalar_slot(const VarNode* v) {
    auto [it, fresh] = scalar_slots_.emplace(v, static_cast<int>(scalar_slots_.size()));
    return it->second;
  }
  int array_slot(const VarNode* v) {
    auto [it, fresh] = array_slots_.emplace(v, static_cast<int>(array_slots_.size()));
    return it->second;
  }

  /// Stops the run: the Machine's way, or the kiln::Error of the code naming the kernel.
  [[noreturn]] void fail(Frame& fr, std::int32_t code, const std::string& message) const {
    if (machine_) machine_->fail(fr, code, message);
    throw_status(code, fmt::format("kernel '{}': {}", fn_.name, resolve_locations(message, fn_.locations)));
  }
  size_t num_scalars() const { return scalar_slots_.size(); }
  size_t num_arrays() const { return array_slots_.size(); }

  ExprFn expr(const Expr& e) {
    switch (e->kind) {
      case ExprKind::Const: {
        const auto& c = e->as<ConstExpr>();
        const Value v = sem::with_type(c.type, [&](auto t) {
          using T = decltype(t);
          if constexpr (is_float_element_v<T>) return make<T>(static_cast<T>(c.f));
          else return make<T>(static_cast<T>(c.i));
        });
        return [v](Frame&) { return v; };
      }
      case ExprKind::VarRef: {
        const int s = scalar_slot(e->as<VarRefExpr>().var.get());
        return [s](Frame& fr) { return fr.scalars[s]; };
      }
      case ExprKind::Load: {
        const auto& l = e->as<LoadExpr>();
        if (windows_.count(l.array.get())) return window_load(l);
        auto addr = address(l.array, l.indices);
        if (machine_) {
          const std::size_t size = static_cast<std::size_t>(size_of(l.type));
          return [addr, size, m = machine_](Frame& fr) {
            Value v;
            std::memset(&v, 0, sizeof v);
            m->read(fr, addr(fr), &v, size);
            return v;
          };
        }
        return sem::with_type(l.type, [&](auto t) -> ExprFn {
          using T = decltype(t);
          return [addr](Frame& fr) {
            T x;
            std::memcpy(&x, addr(fr), sizeof(T));
            return make<T>(x);
          };
        });
      }
      case ExprKind::Dim: {
        const auto& d = e->as<DimExpr>();
        const int s = array_slot(d.array.get());
        const int axis = d.axis;
        return [s, axis](Frame& fr) { return make<std::int64_t>(fr.arrays[s].shape[axis]); };
      }
      case ExprKind::Unary: {
        const auto& u = e->as<UnaryExpr>();
        ExprFn a = expr(u.a);
        const UnaryOp op = u.op;
        return sem::with_type(u.type, [&](auto t) -> ExprFn {
          using T = decltype(t);
          return [a, op](Frame& fr) { return make<T>(sem::unary<T>(op, get<T>(a(fr)))); };
        });
      }
      case ExprKind::Binary: return binary(e->as<BinaryExpr>());
      case ExprKind::Select: {
        const auto& s = e->as<SelectExpr>();
        ExprFn c = expr(s.cond), a = expr(s.a), b = expr(s.b);
        return [c, a, b](Frame& fr) { return c(fr).b ? a(fr) : b(fr); };
      }
      case ExprKind::Cast: {
        const auto& c = e->as<CastExpr>();
        ExprFn a = expr(c.a);
        return sem::with_type(c.type, [&](auto to) -> ExprFn {
          using To = decltype(to);
          return sem::with_type(c.a->type, [&](auto from) -> ExprFn {
            using From = decltype(from);
            return [a](Frame& fr) { return make<To>(sem::cast<To, From>(get<From>(a(fr)))); };
          });
        });
      }
      case ExprKind::Call: return call(e->as<CallExpr>());
    }
    throw IRError("interpreter: unknown expression kind");
  }

  StmtFn stmt(const Stmt& s) {
    switch (s->kind) {
      case StmtKind::Block: {
        std::vector<StmtFn> parts;
        for (const auto& x : s->as<BlockStmt>().stmts) parts.push_back(stmt(x));
        return [parts](Frame& fr) {
          for (const auto& p : parts) p(fr);
        };
      }
      case StmtKind::Let: {
        const auto& l = s->as<LetStmt>();
        ExprFn init = expr(l.init);
        const int slot = scalar_slot(l.var.get());
        return [init, slot](Frame& fr) { fr.scalars[slot] = init(fr); };
      }
      case StmtKind::Assign: {
        const auto& a = s->as<AssignStmt>();
        ExprFn value = expr(a.value);
        const int slot = scalar_slot(a.var.get());
        return [value, slot](Frame& fr) { fr.scalars[slot] = value(fr); };
      }
      case StmtKind::Store: {
        const auto& st = s->as<StoreStmt>();
        auto addr = address(st.array, st.indices);
        ExprFn value = expr(st.value);
        const auto size = static_cast<size_t>(size_of(st.array->type.elem));
        if (machine_)
          return [addr, value, size, m = machine_](Frame& fr) {
            const Value v = value(fr);  // evaluate the value before the address, as the backends do
            m->write(fr, addr(fr), &v, size);
          };
        return [addr, value, size](Frame& fr) {
          const Value v = value(fr);  // evaluate the value before the address, as the backends do
          std::memcpy(addr(fr), &v, size);
        };
      }
      case StmtKind::Atomic: return atomic(s->as<AtomicStmt>());
      case StmtKind::Sort: {
        const auto& x = s->as<SortStmt>();
        if (machine_) return machine_->sort(x, *this);
        return host_sort(x, *this);
      }
      case StmtKind::Scan: {
        const auto& x = s->as<ScanStmt>();
        if (machine_) return machine_->scan(x, *this);
        return host_scan(x, *this);
      }
      case StmtKind::For: {
        const auto& f = s->as<ForStmt>();
        ExprFn begin = expr(f.begin), end = expr(f.end);
        const int idx = scalar_slot(f.index.get());
        StmtFn body = stmt(f.body);
        return [begin, end, idx, body](Frame& fr) {
          const std::int64_t hi = end(fr).i64;
          for (std::int64_t i = begin(fr).i64; i < hi; ++i) {
            fr.scalars[idx] = make<std::int64_t>(i);
            body(fr);
          }
        };
      }
      case StmtKind::Parfor:
        host_only("a parfor outside every launch");
        return parfor(s->as<ParforStmt>());
      case StmtKind::Launch:
        if (machine_) return machine_->launch(s->as<LaunchStmt>(), *this);
        return parfor(s->as<LaunchStmt>().parfor());  // on host memory, a launch is its parfor
      case StmtKind::If: {
        const auto& i = s->as<IfStmt>();
        ExprFn cond = expr(i.cond);
        StmtFn then_body = stmt(i.then_body);
        StmtFn else_body = i.else_body ? stmt(i.else_body) : StmtFn([](Frame&) {});
        return [cond, then_body, else_body](Frame& fr) {
          if (cond(fr).b) then_body(fr);
          else else_body(fr);
        };
      }
      case StmtKind::Allocate: {
        const auto& a = s->as<AllocateStmt>();
        std::vector<ExprFn> shape;
        for (const auto& e : a.shape) shape.push_back(expr(e));
        const int slot = array_slot(a.array.get());
        const DType elem = a.array->type.elem;
        const std::string name = a.array->name;
        const int site = sites_++;
        return [this, shape, slot, elem, name, site](Frame& fr) {
          std::int64_t ext[kMaxRank];
          for (size_t k = 0; k < shape.size(); ++k) ext[k] = shape[k](fr).i64;
          fr.arrays[slot] = new_array(fr, site, elem, ext, static_cast<int>(shape.size()), name);
        };
      }
      case StmtKind::Check: return check(s->as<CheckStmt>());
      case StmtKind::Map:
        host_only("an array operation");
        return map(s->as<MapStmt>());
      case StmtKind::Reduce:
        host_only("an array reduction");
        return reduce(s->as<ReduceStmt>());
      case StmtKind::ReduceAxis:
        host_only("an array reduction");
        return reduce_axis(s->as<ReduceAxisStmt>());
      case StmtKind::Stencil:
        host_only("a stencil");
        return stencil(s->as<StencilStmt>());
      case StmtKind::Bind: {
        const auto& b = s->as<BindStmt>();
        const int target = array_slot(b.target.get()), source = array_slot(b.source.get());
        return [target, source](Frame& fr) { fr.arrays[target] = fr.arrays[source]; };
      }
    }
    throw IRError("interpreter: unknown statement kind");
  }

  /// A new row-major array made at allocation site `site`: the Machine's, or host memory owned by the frame
  /// (freed when the call ends unless returned). The shape follows kiln::array_size's rule, with the compiled
  /// code's messages and status codes (kiln_rt_alloc).
  ArrayDesc new_array(Frame& fr, int site, DType elem, const std::int64_t* extents, int rank, const std::string& name) const {
    ArrayDesc d;
    for (int k = 0; k < rank; ++k) d.shape[k] = extents[k];
    const ArraySize size = array_size(d.shape, rank, size_of(elem));
    if (size.negative_axis >= 0)
      fail(fr, kShapeMismatch,
           fmt::format("cannot allocate array '{}' of shape {}: negative extent on axis {}", name,
                       allocation_shape_text(rank, d.shape), size.negative_axis));
    if (size.too_large)
      fail(fr, kShapeMismatch,
           fmt::format("cannot allocate array '{}' of shape {} with {}-byte elements: its size in bytes exceeds {}", name,
                       allocation_shape_text(rank, d.shape), size_of(elem), kMaxArrayBytes));
    for (int k = rank; k-- > 0;) d.strides[k] = k + 1 == rank ? 1 : d.strides[k + 1] * d.shape[k + 1];
    if (machine_) {
      d.data = machine_->allocate(fr, site, static_cast<std::size_t>(size.bytes), NewArray{name, rank, d.shape});
      return d;
    }
    d.data = allocate(elem, size.bytes);
    if (!d.data)
      throw Error(fmt::format("kernel '{}': out of memory allocating array '{}' of shape {} ({} bytes)", fn_.name, name,
                              allocation_shape_text(rank, d.shape), size.bytes));
    fr.owned.emplace_back(d.data, &std::free);
    return d;
  }

  /// Allocates `bytes` (a whole number of `elem`s), 64-byte aligned, filled with the poison pattern; null when
  /// memory is short.
  static void* allocate(DType elem, std::int64_t bytes) {
    const std::int64_t count = bytes / size_of(elem);
    const size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded ? rounded : 64);
    if (!p) return nullptr;
    sem::with_type(elem, [&](auto t) {
      using T = decltype(t);
      T poison;
      if constexpr (std::is_floating_point_v<T>) poison = std::numeric_limits<T>::quiet_NaN();
      else if constexpr (sem::is_half_v<T>) poison = T(std::numeric_limits<float>::quiet_NaN());
      else if constexpr (std::is_same_v<T, bool>) poison = true;
      else poison = static_cast<T>(0x5A5A5A5A5A5A5A5AULL);
      for (std::int64_t k = 0; k < count; ++k) std::memcpy(static_cast<char*>(p) + k * sizeof(T), &poison, sizeof(T));
    });
    return p;
  }

 private:
  const Function fn_;
  const Machine* const machine_;

  // The interpreter runs one statement at a time, so an atomic is its read, its update and its write. On a
  // device target's host function the element lives in the machine's memory.
  StmtFn atomic(const AtomicStmt& a) {
    auto addr = address(a.array, a.indices);
    ExprFn value = expr(a.value);
    ExprFn expected = a.expected ? expr(a.expected) : ExprFn([](Frame&) { return make<std::int32_t>(0); });
    const int slot = scalar_slot(a.result.get());
    const AtomicOp op = a.op;
    return sem::with_type(a.array->type.elem, [&](auto t) -> StmtFn {
      using T = decltype(t);
      return [addr, value, expected, slot, op, m = machine_](Frame& fr) {
        const T v = get<T>(value(fr)), e = get<T>(expected(fr));
        void* p = addr(fr);
        T old;
        if (m) m->read(fr, p, &old, sizeof(T));
        else std::memcpy(&old, p, sizeof(T));
        const T updated = sem::atomic_update(op, old, v, e);
        if (m) m->write(fr, p, &updated, sizeof(T));
        else std::memcpy(p, &updated, sizeof(T));
        fr.scalars[slot] = make<T>(old);
      };
    });
  }
  std::unordered_map<const VarNode*, int> scalar_slots_, array_slots_;
  int sites_ = 0;  ///< allocation sites so far

  /// Statements that only run on host memory: the passes lower and offload them before a Machine sees them.
  void host_only(const char* what) const {
    if (machine_)
      throw IRError(fmt::format("interpreter: {} in kernel '{}' cannot run with a Machine; lower and offload the function "
                                "first",
                                what, fn_.name));
  }
  /// While compiling a stencil's value: its windows, whose out-of-range reads the border answers.
  struct WindowRule {
    Border border;
    ExprFn cval;
  };
  std::unordered_map<const VarNode*, WindowRule> windows_;

  /// The index a border maps an out-of-range position q of an extent-n dimension to (nullopt: the border
  /// value). The stencil's size check guarantees |offset| < n, so one reflection suffices.
  static std::optional<std::int64_t> border_index(Border b, std::int64_t q, std::int64_t n) {
    switch (b) {
      case Border::constant: return std::nullopt;
      case Border::nearest: return q < 0 ? 0 : n - 1;
      case Border::wrap: return ((q % n) + n) % n;
      case Border::reflect: return q < 0 ? -q - 1 : 2 * n - q - 1;
      case Border::mirror: return n == 1 ? 0 : (q < 0 ? -q : 2 * n - 2 - q);
      case Border::skip: return q < 0 ? 0 : n - 1;  // never read: skipped indices are not computed
    }
    return std::nullopt;
  }

  ExprFn window_load(const LoadExpr& l) {
    std::vector<ExprFn> idx;
    for (const auto& i : l.indices) idx.push_back(expr(i));
    const int slot = array_slot(l.array.get());
    const WindowRule rule = windows_.at(l.array.get());
    const std::string name = l.array->name;
    return sem::with_type(l.type, [&](auto t) -> ExprFn {
      using T = decltype(t);
      return [this, idx, slot, rule, name](Frame& fr) {
        const ArrayDesc& d = fr.arrays[slot];
        std::int64_t offset = 0;
        for (size_t k = 0; k < idx.size(); ++k) {
          std::int64_t q = idx[k](fr).i64;
          if (q < 0 || q >= d.shape[k]) {
            const std::optional<std::int64_t> r = border_index(rule.border, q, d.shape[k]);
            if (!r) return rule.cval(fr);
            q = *r;
            if (q < 0 || q >= d.shape[k]) index_error(fr, name, k, q, d, idx.size());
          }
          offset += q * d.strides[k];
        }
        T x;
        std::memcpy(&x, static_cast<char*>(d.data) + offset * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
        return make<T>(x);
      };
    });
  }

  StmtFn stencil(const StencilStmt& st) {
    Space sp = space(st.indices, st.shape);
    ExprFn cval = st.cval ? expr(st.cval) : ExprFn();
    for (const auto& w : st.windows) windows_[w.get()] = WindowRule{st.border, cval};
    ExprFn value = expr(st.value);
    windows_.clear();
    std::vector<Expr> center;
    for (const auto& i : st.indices) center.push_back(make_ref(i));
    ExprFn first = expr(make_load(st.windows[0], center));  // what a new target holds where skip skips
    auto addr = address(st.target, st.target_index);
    const int size = size_of(st.target->type.elem);
    const bool allocate = st.allocate, skip = st.border == Border::skip;
    const int slot = array_slot(st.target.get());
    const DType elem = st.target->type.elem;
    const std::string name = st.target->name;
    const std::vector<std::int64_t> lo = st.lo, hi = st.hi;
    const int site = sites_++;
    return [this, sp, value, first, addr, size, allocate, skip, slot, elem, name, lo, hi, site](Frame& fr) {
      std::int64_t ext[kMaxRank];
      sp.extents(fr, ext);
      const int rank = static_cast<int>(sp.idx.size());
      if (allocate) fr.arrays[slot] = new_array(fr, site, elem, ext, rank, name);
      sp.each(fr, ext, [&] {
        bool inside = true;
        for (int d = 0; d < rank && skip; ++d) {
          const std::int64_t i = fr.scalars[sp.idx[d]].i64;
          inside &= i + lo[d] >= 0 && i + hi[d] < ext[d];
        }
        if (!inside && !allocate) return;
        const Value v = inside ? value(fr) : first(fr);
        std::memcpy(addr(fr), &v, static_cast<size_t>(size));
      });
    };
  }


  /// A closure computing the checked address of array[indices].
  std::function<void*(Frame&)> address(const Var& array, const std::vector<Expr>& indices) {
    std::vector<ExprFn> idx;
    for (const auto& i : indices) idx.push_back(expr(i));
    const int slot = array_slot(array.get());
    const int esize = size_of(array->type.elem);
    const std::string name = array->name;
    return [this, idx, slot, esize, name](Frame& fr) -> void* {
      const ArrayDesc& d = fr.arrays[slot];
      std::int64_t offset = 0;
      for (size_t k = 0; k < idx.size(); ++k) {
        const std::int64_t i = idx[k](fr).i64;
        if (i < 0 || i >= d.shape[k]) index_error(fr, name, k, i, d, idx.size());
        offset += i * d.strides[k];
      }
      return static_cast<char*>(d.data) + offset * esize;
    };
  }

  [[noreturn]] void index_error(Frame& fr, const std::string& name, size_t axis, std::int64_t i, const ArrayDesc& d,
                                 size_t rank) const {
    fail(fr, kIndexOutOfRange, fmt::format("index {} out of range on axis {} of {} (shape {})", i, axis, name,
                                           shape_text(static_cast<int>(rank), d.shape)));
  }

  ExprFn binary(const BinaryExpr& b) {
    ExprFn x = expr(b.a), y = expr(b.b);
    const BinaryOp op = b.op;
    if (op == BinaryOp::And) return [x, y](Frame& fr) { return make<bool>(x(fr).b && y(fr).b); };
    if (op == BinaryOp::Or) return [x, y](Frame& fr) { return make<bool>(x(fr).b || y(fr).b); };
    return sem::with_type(b.a->type, [&](auto t) -> ExprFn {
      using T = decltype(t);
      if (is_comparison(op))
        return [x, y, op](Frame& fr) { return make<bool>(sem::compare<T>(op, get<T>(x(fr)), get<T>(y(fr)))); };
      return [x, y, op](Frame& fr) {
        const T a = get<T>(x(fr));  // left before right, as written
        return make<T>(sem::binary<T>(op, a, get<T>(y(fr))));
      };
    });
  }

  ExprFn call(const CallExpr& c) {
    std::vector<ExprFn> args;
    for (const auto& a : c.args) args.push_back(expr(a));
    const Intrinsic fn = c.fn;
    if (random::is_random(fn)) return random_call(fn, args);
    return sem::with_type(c.args[0]->type, [&](auto t) -> ExprFn {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool>) {
        throw IRError("interpreter: intrinsic on bool");
      } else {
        if (returns_bool(fn)) {
          if constexpr (is_float_element_v<T>)
            return [args, fn](Frame& fr) { return make<bool>(sem::predicate<T>(fn, get<T>(args[0](fr)))); };
          throw IRError("interpreter: predicate on an integer");
        }
        return [args, fn](Frame& fr) {
          T v[3] = {};
          for (size_t k = 0; k < args.size(); ++k) v[k] = get<T>(args[k](fr));
          return make<T>(sem::call<T>(fn, v[0], v[1], v[2]));
        };
      }
    });
  }

  static ExprFn random_call(Intrinsic fn, const std::vector<ExprFn>& args) {
    return sem::with_type(random::result_type(fn), [&](auto t) -> ExprFn {
      using T = decltype(t);
      return [fn, args](Frame& fr) {
        std::int64_t a[3] = {};
        for (size_t k = 0; k < args.size(); ++k) a[k] = args[k](fr).i64;  // key, counter (, word), as written
        const random::Value v = random::evaluate(fn, a[0], a[1], a[2]);
        if constexpr (std::is_floating_point_v<T>) return make<T>(static_cast<T>(v.as_float));
        else return make<T>(static_cast<T>(v.as_int));
      };
    });
  }

  StmtFn check(const CheckStmt& c) {
    ExprFn cond = expr(c.cond);
    std::vector<ExprFn> args;
    for (const auto& a : c.args) args.push_back(expr(a));
    const std::int32_t code = c.code;
    const std::string message = c.message;
    return [this, cond, args, code, message](Frame& fr) {
      if (cond(fr).b) return;
      std::vector<std::int64_t> values;
      for (const auto& a : args) values.push_back(a(fr).i64);
      fail(fr, code, format_message(message, values.data(), values.size()));
    };
  }

  /// Visits every index of [0, extents) in row-major order, setting the index slots first.
  struct Space {
    std::vector<ExprFn> shape;
    std::vector<int> idx;
    template <class F>
    void each(Frame& fr, const std::int64_t* ext, F&& f) const {
      const size_t rank = idx.size();
      for (size_t d = 0; d < rank; ++d)
        if (ext[d] <= 0) return;
      std::int64_t i[kMaxRank] = {};
      for (size_t d = 0; d < rank; ++d) fr.scalars[idx[d]] = make<std::int64_t>(0);
      for (;;) {
        f();
        size_t d = rank;
        while (d-- > 0) {
          if (++i[d] < ext[d]) {
            fr.scalars[idx[d]] = make<std::int64_t>(i[d]);
            break;
          }
          i[d] = 0;
          fr.scalars[idx[d]] = make<std::int64_t>(0);
        }
        if (d == static_cast<size_t>(-1)) return;
      }
    }
    void extents(Frame& fr, std::int64_t* ext) const {
      for (size_t d = 0; d < shape.size(); ++d) ext[d] = shape[d](fr).i64;
    }
  };

  Space space(const std::vector<Var>& indices, const std::vector<Expr>& shape) {
    Space sp;
    for (const auto& e : shape) sp.shape.push_back(expr(e));
    for (const auto& i : indices) sp.idx.push_back(scalar_slot(i.get()));
    return sp;
  }

  StmtFn map(const MapStmt& m) {
    Space sp = space(m.indices, m.shape);
    auto addr = address(m.target, m.target_index);
    ExprFn value = expr(m.value);
    const int size = size_of(m.target->type.elem);
    const bool allocate = m.allocate;
    const int slot = array_slot(m.target.get());
    const DType elem = m.target->type.elem;
    const std::string name = m.target->name;
    const int site = sites_++;
    return [this, sp, addr, value, size, allocate, slot, elem, name, site](Frame& fr) {
      std::int64_t ext[kMaxRank];
      sp.extents(fr, ext);
      if (allocate) fr.arrays[slot] = new_array(fr, site, elem, ext, static_cast<int>(sp.idx.size()), name);
      sp.each(fr, ext, [&] {
        const Value v = value(fr);
        std::memcpy(addr(fr), &v, static_cast<size_t>(size));
      });
    };
  }

  /// A running reduction of values of type T with NumPy's rules; `index` counts the values seen.
  template <class T>
  struct Fold {
    ReduceOp op;
    T acc;
    std::int64_t best = -1, count = 0;
    Fold(ReduceOp o, const ConstExpr& identity) : op(o) {
      if constexpr (std::is_floating_point_v<T>) acc = static_cast<T>(identity.f);
      else acc = static_cast<T>(identity.i);
    }
    void add(T x) {
      if (is_arg_reduction(op)) {
        const bool better = op == ReduceOp::ArgMin ? x < acc : x > acc;
        bool nan_wins = false;
        if constexpr (std::is_floating_point_v<T>) nan_wins = std::isnan(x) && !std::isnan(acc);
        if (best < 0 || better || nan_wins) {
          acc = x;
          best = count;
        }
      } else {
        acc = sem::binary<T>(combiner(op), acc, x);
      }
      ++count;
    }
    Value result() const { return is_arg_reduction(op) ? make<std::int64_t>(best) : make<T>(acc); }
  };

  StmtFn reduce(const ReduceStmt& r) {
    Space sp = space(r.indices, r.shape);
    ExprFn value = expr(r.value);
    const int slot = scalar_slot(r.result.get());
    const ReduceOp op = r.op;
    const Expr identity = identity_of(op, r.value->type);
    return sem::with_type(r.value->type, [&](auto t) -> StmtFn {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool> || sem::is_half_v<T>) {
        throw IRError("interpreter: reduction of bools or 16-bit floats (the builder refuses them)");
      } else {
        return [sp, value, slot, op, identity](Frame& fr) {
          std::int64_t ext[kMaxRank];
          sp.extents(fr, ext);
          Fold<T> fold(op, identity->as<ConstExpr>());
          sp.each(fr, ext, [&] { fold.add(get<T>(value(fr))); });
          fr.scalars[slot] = fold.result();
        };
      }
    });
  }

  StmtFn reduce_axis(const ReduceAxisStmt& r) {
    Space sp = space(r.indices, r.shape);
    ExprFn value = expr(r.value);
    const int slot = array_slot(r.target.get());
    const ReduceOp op = r.op;
    const int axis = r.axis;
    const bool keepdims = r.keepdims;
    const DType out_type = r.target->type.elem;
    const std::string name = r.target->name;
    const Expr identity = identity_of(op, r.value->type);
    return sem::with_type(r.value->type, [&](auto t) -> StmtFn {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool> || sem::is_half_v<T>) {
        throw IRError("interpreter: reduction of bools or 16-bit floats (the builder refuses them)");
      } else {
        const int site = sites_++;
        return [this, sp, value, slot, op, axis, keepdims, out_type, name, identity, site](Frame& fr) {
          std::int64_t ext[kMaxRank], out_ext[kMaxRank] = {};
          sp.extents(fr, ext);
          const int rank = static_cast<int>(sp.idx.size());
          int out_rank = 0;
          for (int d = 0; d < rank; ++d) {
            if (d != axis) out_ext[out_rank++] = ext[d];
            else if (keepdims) out_ext[out_rank++] = 1;
          }
          ArrayDesc out = new_array(fr, site, out_type, out_ext, out_rank, name);
          fr.arrays[slot] = out;
          // One fold per output element, fed in row-major order of the space (the axis varies within).
          std::int64_t out_count = 1;
          for (int d = 0; d < out_rank; ++d) out_count *= out_ext[d];
          std::vector<Fold<T>> folds(static_cast<size_t>(std::max<std::int64_t>(out_count, 0)),
                                     Fold<T>(op, identity->as<ConstExpr>()));
          sp.each(fr, ext, [&] {
            std::int64_t flat = 0;
            for (int d = 0; d < rank; ++d) {
              if (d == axis) continue;
              flat = flat * ext[d] + fr.scalars[sp.idx[d]].i64;
            }
            folds[static_cast<size_t>(flat)].add(get<T>(value(fr)));
          });
          const int esize = size_of(out_type);
          for (std::int64_t k = 0; k < out_count; ++k) {
            const Value v = folds[static_cast<size_t>(k)].result();
            std::memcpy(static_cast<char*>(out.data) + k * esize, &v, static_cast<size_t>(esize));
          }
        };
      }
    });
  }

  StmtFn parfor(const ParforStmt& p) {
    std::vector<ExprFn> begins, ends;
    std::vector<int> idx;
    for (size_t d = 0; d < p.indices.size(); ++d) {
      begins.push_back(expr(p.begins[d]));
      ends.push_back(expr(p.ends[d]));
      idx.push_back(scalar_slot(p.indices[d].get()));
    }
    StmtFn body = stmt(p.body);
    // Sequential row-major execution: reductions simply accumulate into their variable in index order.
    return [begins, ends, idx, body](Frame& fr) {
      const size_t rank = idx.size();
      std::int64_t lo[kMaxRank], hi[kMaxRank];
      for (size_t d = 0; d < rank; ++d) {
        lo[d] = begins[d](fr).i64;
        hi[d] = ends[d](fr).i64;
        if (hi[d] <= lo[d]) return;
      }
      std::function<void(size_t)> level = [&](size_t d) {
        for (std::int64_t i = lo[d]; i < hi[d]; ++i) {
          fr.scalars[idx[d]] = make<std::int64_t>(i);
          if (d + 1 == rank) body(fr);
          else level(d + 1);
        }
      };
      level(0);
    };
  }
};

}  // namespace

struct Executor::Impl {
  Compiler c;
  /// Where each parameter goes: its slot, and its size in bytes for a scalar (0 for an array). One table, so
  /// that a run does not visit the parameters' variables (a call of a small kernel is short enough for those
  /// cache misses to count).
  struct ParamSlot {
    int slot;
    int scalar_bytes;
  };
  std::vector<ParamSlot> param_slots;
  StmtFn body;
  /// The result's members in order (a single result is one member): a scalar's closure, or an array's slot.
  std::vector<ExprFn> member_fns;
  std::vector<int> member_arrays;

  Impl(const Function& f, const Machine* machine) : c(f, machine) {
    for (const auto& p : f.params)
      param_slots.push_back(p->type.is_array() ? ParamSlot{c.array_slot(p.get()), 0}
                                               : ParamSlot{c.scalar_slot(p.get()), static_cast<int>(size_of(p->type.elem))});
    body = c.stmt(f.body);
    auto member = [&](const Expr& scalar, const Var& array) {
      member_fns.push_back(scalar ? c.expr(scalar) : ExprFn());
      member_arrays.push_back(array ? c.array_slot(array.get()) : -1);
    };
    if (f.result || f.result_array) member(f.result, f.result_array);
    for (const auto& m : f.tuple) member(m.scalar, m.array);
  }
};

std::string NewArray::text() const { return fmt::format("array {} of shape {}", name, allocation_shape_text(rank, shape)); }

Executor::Executor(const Function& f, const Machine* machine) : impl_(std::make_unique<Impl>(f, machine)) {}
Executor::~Executor() = default;

void Executor::run(void* const* args, void* result, void* machine_state) const { run(args, result, machine_state, nullptr); }

namespace {

/// A Frame taken from the calling thread's spares and given back after the run: its slots need no allocation
/// once the thread has run a function with as many (the host function of every call on a device target runs
/// here, so a call of a small kernel would otherwise pay for them each time).
///
/// Kernels may run while the process exits (docs/architecture.md, "Exit"), after the thread's thread_local
/// objects are gone: the spares are reached through a plain pointer, which their owner clears when it goes,
/// and a run after that takes a frame of its own.
class ThreadFrame {
  using Spares = std::vector<std::unique_ptr<Frame>>;
  enum class State : unsigned char { unused, live, gone };
  /// One thread_local object, so that a run looks the thread's storage up once (in a shared library each
  /// thread_local is a call to __tls_get_addr).
  struct Local {
    Spares* spares = nullptr;  // trivially destructible: readable at any time
    State state = State::unused;
  };
  struct Owner {
    ~Owner() {
      Local& l = local;
      delete l.spares;
      l.spares = nullptr;
      l.state = State::gone;
    }
  };
  static thread_local Local local;
  static thread_local Owner owner;

 public:
  ThreadFrame() : local_(local) {
    if (local_.state == State::unused) {
      local_.spares = new Spares;
      local_.state = State::live;
      (void)&owner;  // constructed now, so that it frees the spares when the thread ends
    }
    if (local_.spares && !local_.spares->empty()) {
      frame_ = std::move(local_.spares->back());
      local_.spares->pop_back();
    } else {
      frame_ = std::make_unique<Frame>();
    }
  }
  ~ThreadFrame() {
    frame_->owned.clear();  // the run's host arrays it did not hand over
    frame_->machine_state = nullptr;
    frame_->results_pending = false;
    if (local_.spares && local_.spares->size() < kSpares) local_.spares->push_back(std::move(frame_));
  }
  ThreadFrame(const ThreadFrame&) = delete;
  ThreadFrame& operator=(const ThreadFrame&) = delete;
  Frame& operator*() const { return *frame_; }

 private:
  static constexpr std::size_t kSpares = 4;  // runs nested on one thread (a machine may run another function)
  Local& local_;
  std::unique_ptr<Frame> frame_;
};

thread_local ThreadFrame::Local ThreadFrame::local;
thread_local ThreadFrame::Owner ThreadFrame::owner;

}  // namespace

bool Executor::run(void* const* args, void* result, void* machine_state, PendingRun* pending) const {
  const Impl& m = *impl_;
  const Function& f = m.c.function();
  const ThreadFrame frame;
  Frame& fr = *frame;
  fr.scalars.assign(m.c.num_scalars(), Value{});
  fr.arrays.assign(m.c.num_arrays(), ArrayDesc{});
  fr.machine_state = machine_state;
  for (size_t i = 0; i < m.param_slots.size(); ++i) {
    const auto [slot, bytes] = m.param_slots[i];
    if (bytes == 0) {
      fr.arrays[slot] = *static_cast<const ArrayDesc*>(args[i]);
    } else {
      Value v;
      std::memset(&v, 0, sizeof v);
      std::memcpy(&v, args[i], static_cast<size_t>(bytes));
      fr.scalars[slot] = v;
    }
  }
  m.body(fr);
  const bool deferred = pending && fr.results_pending;
  if (fr.results_pending && !pending)
    throw IRError(fmt::format("kernel '{}': the machine left the results pending in a run that cannot wait for them", f.name));
  // Every scalar member is evaluated before any array is handed over, so an evaluation error frees them all.
  if (!deferred) write_scalar_members(fr, result);
  void* const* outs = f.returns_tuple() ? static_cast<void* const*>(result) : &result;
  for (size_t i = 0; i < m.member_fns.size(); ++i) {
    if (m.member_fns[i]) continue;
    ArrayDesc& out = *static_cast<ArrayDesc*>(outs[i]);
    out = fr.arrays[m.member_arrays[i]];
    if (m.c.machine()) continue;  // the Machine's memory stays the Machine's
    for (auto& o : fr.owned)
      if (o.get() == out.data) o.release();  // ownership passes to the caller
  }
  if (deferred) *pending = PendingRun{std::move(fr.scalars), std::move(fr.arrays)};
  return deferred;
}

void Executor::finish(const PendingRun& run, void* result) const {
  Frame fr;
  fr.scalars = run.scalars;
  fr.arrays = run.arrays;
  write_scalar_members(fr, result);
}

void Executor::write_scalar_members(Frame& fr, void* result) const {
  const Impl& m = *impl_;
  const Function& f = m.c.function();
  const size_t n = m.member_fns.size();  // at most kMaxResults
  std::array<Value, kMaxResults> values{};
  for (size_t i = 0; i < n; ++i)
    if (m.member_fns[i]) values[i] = m.member_fns[i](fr);
  void* const* outs = f.returns_tuple() ? static_cast<void* const*>(result) : &result;
  for (size_t i = 0; i < n; ++i) {
    if (!m.member_fns[i]) continue;
    const DType t = f.result ? f.result->type : f.tuple[i].scalar->type;
    std::memcpy(outs[i], &values[i], static_cast<size_t>(size_of(t)));
  }
}

void interpret(const Function& f, void* const* args, void* result) { Executor(f).run(args, result); }

}  // namespace kiln::ir
