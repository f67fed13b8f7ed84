// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A launch's parfor as a __global__ function: the captured parameters, the loops that spread the
// iteration space over threads (see Strategy), the body, and the per-block reduction with its fold kernel.
#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/loads_in.hpp"
#include "ir/analysis.hpp"
#include "ir/builder.hpp"
#include "ir/reductions.hpp"
#include "ir/visitor.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cuda {
namespace {

const char* kGridStrideX = "(unsigned long long)gridDim.x * blockDim.x";


/// Arrays whose extents the body reads, by axis.
class DimUses : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::VarNode*, std::array<bool, kMaxRank>> used;

 protected:
  void visit(const ir::DimExpr& d) override { used[d.array.get()][static_cast<std::size_t>(d.axis)] = true; }
  // A binding declared inside the body copies its source's extents and strides.
  void visit(const ir::BindStmt& b) override { used[b.source.get()].fill(true); }
};

class Allocations : public ir::IRVisitor {
 public:
  std::vector<const ir::AllocateStmt*> found;

 protected:
  void visit(const ir::AllocateStmt& a) override {
    found.push_back(&a);
    ir::IRVisitor::visit(a);
  }
};

/// The clauses of the update condition of argmin/argmax reduction r (false/false if the body never updates it).
ArgClauses clauses_of(const ir::ParforStmt& p, const ir::Reduction& r) {
  struct Finder : ir::IRVisitor {
    const ir::Reduction* r = nullptr;
    std::optional<ir::ArgUpdate> update;
    void visit(const ir::IfStmt& s) override {
      if (!update) update = ir::match_arg_update(s, *r);
      ir::IRVisitor::visit(s);
    }
  } finder;
  finder.r = &r;
  finder.walk(p.body);
  ArgClauses c;
  if (!finder.update) return c;
  std::vector<ir::Expr> terms = {finder.update->cond};
  while (!terms.empty()) {
    const ir::Expr t = terms.back();
    terms.pop_back();
    const auto* b = ir::dyn<ir::BinaryExpr>(t);
    if (!b) continue;
    if (b->op == BinaryOp::Or) {
      terms.push_back(b->a);
      terms.push_back(b->b);
    } else if (b->op == BinaryOp::And) {
      c.nan_wins = true;  // the only conjunction match_arg_update accepts: isnan(x) && !isnan(var)
    } else if (b->op == BinaryOp::Lt && ir::uses(b->a, r.index.get())) {
      c.empty_loses = true;
    }
  }
  return c;
}

std::string offset_text(std::size_t bytes) { return std::to_string(bytes); }

/// Whether `body` holds a parfor (which a thread of the enclosing kernel runs as a loop nest).
bool holds_nested_parfor(const ir::Stmt& body) {
  struct Finder final : ir::IRVisitor {
    bool found = false;
    void visit(const ir::ParforStmt&) override { found = true; }
  } finder;
  finder.walk(body);
  return finder.found;
}

}  // namespace

const char* op_functor(ReduceOp op) {
  switch (op) {
    case ReduceOp::Add: return "kiln_op_add()";
    case ReduceOp::Mul: return "kiln_op_mul()";
    case ReduceOp::Min: return "kiln_op_min()";
    case ReduceOp::Max: return "kiln_op_max()";
    default: return "";
  }
}

std::string_view name_of(Strategy s) {
  switch (s) {
    case Strategy::Elementwise: return "elementwise";
    case Strategy::Reduce: return "reduction";
    case Strategy::ArgReduce: return "argmin/argmax reduction";
    case Strategy::Cooperative: return "cooperative rows";
    case Strategy::Staged: return "staged walks";
    case Strategy::Tiled: return "tiled loop";
  }
  return "?";
}

Strategy strategy_of(const ir::ParforStmt& p) {
  if (p.reductions.empty()) return Strategy::Elementwise;
  for (const auto& r : p.reductions)
    if (ir::is_arg_reduction(r.op)) return Strategy::ArgReduce;
  return Strategy::Reduce;
}

Emitter::Emitter(const ir::Function& f, const ir::ParforStmt& p, std::string name, const EmitOptions& opts)
    : fn_(f), p_(p), opts_(opts) {
  k_.name = std::move(name);
  k_.parfor = &p;
  k_.rank = static_cast<int>(p.indices.size());
  k_.strategy = strategy_of(p);
  if (k_.strategy == Strategy::Elementwise && opts.cooperative) {
    ir::CooperativePlan plan = ir::plan_cooperative(p);
    if (plan.eligible) {
      k_.strategy = Strategy::Cooperative;
      coop_ = std::move(plan);
    }
  }
  k_.reductions = p.reductions;
  if (k_.rank > kMaxRank) throw CompileError(fmt::format("kiln CUDA backend: parfor of rank {}", k_.rank), {});
  taken_.insert(k_.name);
}

GpuKernel Emitter::emit(std::string& out) {
  written_ = arrays_written(p_.body);
  if (k_.strategy != Strategy::ArgReduce) k_.unroll = opts_.unroll;  // cooperative rows: the spread loops
  // Unrolling gives each thread several independent iterations to hide memory latency, and divides the grid
  // by the factor. A body that runs a loop already gives its thread a loop of work, so unrolling buys nothing
  // and costs threads: 65 536 n-body iterations unrolled 4x are 16 384 threads, an eighth of what an H100 keeps
  // resident. Such parfors run one iteration per thread. A nested parfor that the thread runs itself (not
  // spread over a group: elementwise and reducing kernels) is such a loop too: kiln::dot(A, B) as a thread per
  // output walking the reduced axis ran 12.7 ms with 4 outputs a thread (2000 x 2100 x 2200 f64 on an H100,
  // 52.7 % achieved occupancy, the four walks one after another).
  // Such a thread keeps its array pointers __restrict__ all the same (with the variant without them for calls
  // whose arguments overlap, as unrolled kernels): the loop's loads can then go ahead of its stores, several in
  // flight. Without it every step's load waits for the step before to store (the pointers may alias), one load in
  // flight a thread: cumsum(x, 0) of an 8192^2 f64 matrix, a thread a column walking down its rows, ran 3.42 ms
  // against 1.21 ms for the same loop by hand with __restrict__ pointers (H100).
  bool walks = false;
  if (k_.unroll > 1 && (k_.strategy == Strategy::Elementwise || k_.strategy == Strategy::Reduce) &&
      (ir::runs_a_loop(p_.body) || holds_nested_parfor(p_.body))) {
    k_.unroll = 1;
    walks = true;
    unroll_note_ = "one iteration per thread: the body runs a sequential loop, which is a thread's work already; its array "
                   "pointers __restrict__ (a variant without them for overlapping arguments), so that the loop's loads go "
                   "ahead of its stores";
  }
  // A contraction keeps the plain form as its kernel (a thread per element: the launch model's choice for small
  // or skinny products) beside its tiles variant.
  plan_contraction();
  if (!contraction_) plan_staged();
  if (!contraction_ && !staged_) plan_tiled();
  if (staged_ || tiled_) {
    k_.unroll = 1;
    unroll_note_.clear();
    walks = false;
  }
  if (!contraction_) {
    plan_stencil();
    plan_private();
  }
  k_.plan = plan_text();
  if (contraction_)
    k_.plan += fmt::format("; a contraction ({} operand(s) of rows, {} of columns through shared tiles): its variant {} gives a block "
                           "{} x {} elements, {} a thread, the loop staged {} steps at a time",
                           std::count_if(contraction_->sites.begin(), contraction_->sites.end(), [](const ContractionPlan::Site& x) { return x.row; }),
                           std::count_if(contraction_->sites.begin(), contraction_->sites.end(), [](const ContractionPlan::Site& x) { return !x.row; }),
                           k_.tiles_name, kContractionTile, kContractionTile, kContractionPerThread * kContractionPerThread, kContractionSteps) +
              fmt::format(", read {} row and {} column element(s) a shared load ({}), the next chunk {}", contraction_->width[0],
                          contraction_->width[1], contraction_->width[0] > 1 || contraction_->width[1] > 1 ? "f32 and f64 sides as vectors" : "scalar reads",
                          contraction_->async ? "copied by cp.async into a second set of tiles (4- and 8-byte operands)"
                                              : opts_.contraction_async ? "carried in registers (operands of other sizes)"
                                                                        : "carried in registers (KILN_CUDA_CONTRACTION_ASYNC=0)");
  if (!privates_.empty()) {
    std::string names;
    for (const PrivateCandidate& c : privates_) names += (names.empty() ? "" : ", ") + c.array->name;
    k_.plan += "; array reduction(s) " + names +
               ": per-block copies in shared memory where the launch finds room and enough iterations per block (private_copies.hpp)";
  }
  if (!private_note_.empty()) k_.plan += "; " + private_note_.substr(0, private_note_.size() - 1);
  capture();

  // Reduction accumulators and scratch slots.
  for (const auto& r : p_.reductions) {
    k_.slot.push_back(k_.slots);
    k_.slots += ir::is_arg_reduction(r.op) ? 2 : 1;
    k_.clauses.push_back(ir::is_arg_reduction(r.op) ? clauses_of(p_, r) : ArgClauses{});
  }
  const bool reducing = k_.strategy == Strategy::Reduce || k_.strategy == Strategy::ArgReduce;
  if (coop_) line("__shared__ unsigned long long kiln_coop_shared[33];  // a block's warp values and the row's result");
  if (reducing) {
    line("__shared__ unsigned long long kiln_shared[32];");
    if (k_.strategy == Strategy::ArgReduce) line("__shared__ unsigned long long kiln_shared_index[32];");
  }
  declare_locals();
  for (std::size_t i = 0; i < p_.reductions.size(); ++i) {
    const ir::Reduction& r = p_.reductions[i];
    const char* t = type_name(r.var->type.elem);
    // Each thread starts from the identity; the host combines the total with the variable's value.
    line(std::string(t) + " " + bind(r.var.get()) + " = " + constant(ir::identity_of(r.op, r.var->type.elem)->as<ir::ConstExpr>()) + ";");
    if (r.index) line("long long " + bind(r.index.get()) + " = -1LL;");
  }
  private_prologue();
  const std::string prefix = body_;
  const int depth = depth_;
  stencil_on_ = stencil_.has_value();
  plan_deferred_stores();
  if (!deferred_.empty())
    k_.plan += "; each round computes its iterations' values before it stores them (independent iterations: no load waits for "
               "an earlier iteration's store, as an in-place update's would)";
  if (!strip_deferred_.empty())
    k_.plan += "; each strip computes all its copies' values before it stores them (the copies are independent iterations and, "
               "in this variant, the arguments do not overlap: no in-place load waits for an earlier copy's store)";
  loops_and_tail();
  const std::string main_body = body_;
  std::string alias_body = main_body;
  bool writes_argument = false;
  for (const auto& [v, written] : k_.argument_arrays) writes_argument |= written;
  const bool restrict = k_.unroll > 1 || (walks && !contraction_);
  const bool alias_variant = restrict && k_.argument_arrays.size() >= 2 && writes_argument;
  if (alias_variant && !deferred_.empty()) {
    // Arguments that overlap may share elements between iterations: that variant keeps each store before the
    // next iteration's loads.
    body_ = prefix;
    depth_ = depth;
    const std::vector<const ir::StoreStmt*> stores = std::move(deferred_);
    deferred_.clear();
    loops_and_tail();
    alias_body = body_;
    deferred_ = stores;
  }
  if (alias_variant && stencil_on_) {
    // Loading a window before the body is only right when no written array overlaps the window's: the
    // variant for overlapping arguments reads every element where the body reads it.
    body_ = prefix;
    depth_ = depth;
    stencil_on_ = false;
    // One iteration per round: the variant runs only for overlapping arguments, and a stencil's body (its
    // border arms included) copied per round would be most of the kernel's NVRTC time.
    const int unroll = k_.unroll;
    k_.unroll = 1;
    loops_and_tail();
    k_.unroll = unroll;
    alias_body = body_;
  }
  std::string tiles_body;
  if (contraction_) {
    body_ = prefix;
    depth_ = depth;
    contraction_loops();
    tiles_body = body_;
  }
  if (k_.slots) {
    k_.params.push_back({ParamKind::Scratch});
    param_names_.push_back("kiln_scratch");
  }
  if (k_.may_fail) {
    k_.params.push_back({ParamKind::Status});
    param_names_.push_back("kiln_status");
  }
  if (!privates_.empty()) {
    k_.params.push_back({ParamKind::Private});
    param_names_.push_back("kiln_private");
  }

  std::string head = "// " + (p_.origin.empty() ? std::string("parfor") : p_.origin) + ": " + std::to_string(k_.rank) + "-d, " +
                     std::string(name_of(k_.strategy));
  for (const auto& r : p_.reductions) head += ", " + std::string(ir::name_of(r.op)) + " " + r.var->name;
  head += "\n";
  if (coop_) head += "// " + coop_->reason + "\n";
  if (staged_)
    head += "// up to " + std::to_string(kStagedThreads) + " rows per block walk their loop in step, " + std::to_string(staged_->sites.size()) +
            " access(es) staged through shared tiles\n";
  if (tiled_) {
    head += "// up to " + std::to_string(kTiledThreads) + " rows per block run their loop in rounds of as many steps, " +
            std::to_string(tiled_->sites.size()) + " load(s) of each step fetched once per block into shared tiles\n";
  }
  if (!unroll_note_.empty()) head += "// " + unroll_note_ + "\n";
  if (!deferred_.empty()) head += "// each round's loads before its stores: the iterations are independent\n";
  if (!strip_deferred_.empty()) head += "// each strip's loads before its stores: the copies are independent iterations\n";
  if (stencil_) {
    const StencilPlan& sp = *stencil_;
    head += "// stencil: " + std::to_string(sp.columns) + " x 32 elements of the innermost dimension per warp";
    if (sp.rows > 1) head += ", " + std::to_string(sp.rows) + " rows per thread";
    head += sp.mode == StencilMode::Shared ? ", neighbours through shared memory\n" : ", neighbours through warp shuffles\n";
    if (sp.block) {
      head += "// stencil: blocks of 32 x " + std::to_string(kMarchBlockRows) + " threads walk a tile of (y, x) along dimension 0, each plane's tile "
              "staged once in shared memory\n// stencil: " + sp.why + "\n";
    } else if (sp.march) {
      int planes = 1;
      for (const auto& G : sp.groups) planes = std::max(planes, G.planes());
      head += "// stencil: each thread walks a chunk of dimension 0 holding " + std::to_string(planes) +
              " planes of its window values in registers (2.5-d blocking; the newest plane's neighbours through the tile)" +
              (sp.ahead == 1   ? ", loading the next plane while a step computes"
               : sp.ahead == 2 ? ", loading the next two planes while a step computes"
                               : "") +
              "\n// stencil: " + sp.why + "\n";
    }
    if (!sp.tests.empty())
      head += "// stencil: elements inside " + std::to_string(sp.tests.size()) +
              " bounds test(s) compute the interior arm on the windows; the strip's others run the whole body afterwards\n";
  }
  out += head + signature(k_.name, restrict) + " {\n" + main_body + "}\n";
  // Arguments may be one array passed twice (or overlapping views of one buffer); then __restrict__ would be
  // a lie, so the same body also exists without it and the host picks per call.
  if (alias_variant) {
    k_.alias_name = k_.name + "_alias";
    out += "// " + k_.name + " for overlapping array arguments\n" + signature(k_.alias_name, false) + " {\n" + alias_body + "}\n";
  }
  if (contraction_)
    out += "// " + k_.name + " as a contraction: a block per " + std::to_string(kContractionTile) + " x " + std::to_string(kContractionTile) +
           " tile of elements, " + std::to_string(kContractionPerThread * kContractionPerThread) + " a thread, the loop's operands staged " +
           std::to_string(kContractionSteps) + " steps at a time (emit_contraction.cpp)\n" + signature(k_.tiles_name, false, true) + " {\n" +
           tiles_body + "}\n";
  if (reducing) fold_kernel(out);
  return k_;
}

std::string Emitter::plan_text() const {
  switch (k_.strategy) {
    case Strategy::Reduce:
    case Strategy::ArgReduce:
      return fmt::format("{} reduction(s): blocks of {} threads, at most {} blocks, partials combined in a fixed order", p_.reductions.size(),
                         kReduceThreads, kMaxReduceBlocks);
    case Strategy::Cooperative: return coop_->reason;
    case Strategy::Staged:
      return fmt::format("a sequential loop walking runs far apart: up to {} rows per block walk in step, {} access(es) staged", kStagedThreads,
                         staged_->sites.size());
    case Strategy::Tiled: {
      std::int64_t bytes = 0;
      for (const TiledPlan::Tile& t : tiled_->tiles) bytes += static_cast<std::int64_t>(t.width) * size_of(t.elem) * kTiledThreads;
      return fmt::format("every row runs one loop over a shared range: {} load(s) of each step fetched once per block of up to {} rows into "
                         "{} bytes of shared tiles, each row's steps in order{}",
                         tiled_->sites.size(), kTiledThreads, bytes,
                         tiled_->min_blocks > 0 ? fmt::format("; {} blocks per SM asked of ptxas", tiled_->min_blocks) : std::string());
    }
    case Strategy::Elementwise: break;
  }
  if (stencil_)
    return fmt::format("stencil: {} x 32 elements of the innermost dimension per warp, {} row(s) per thread, neighbours through {}{}",
                       stencil_->columns, stencil_->rows, stencil_->mode == StencilMode::Shared ? "shared memory" : "warp shuffles",
                       stencil_->march ? "; marching along dimension 0 with " + stencil_->why : "; " + stencil_->why);
  if (!unroll_note_.empty()) return unroll_note_;
  if (k_.unroll > 1)
    return fmt::format("straight-line body: up to {} iterations per thread per round, where the grid still fills the device", k_.unroll);
  return "one iteration per thread (KILN_CUDA_UNROLL=1)";
}

void Emitter::loops_and_tail() {
  loops();
  if (k_.may_fail) line("kiln_stop:;");
  for (const ir::AllocateStmt* a : allocations_) line("free(" + array(a->array.get()).data + ");");
  private_merge();
  if (k_.strategy == Strategy::Reduce || k_.strategy == Strategy::ArgReduce) block_reductions();
}

void Emitter::capture() {
  // Bounds first: the host evaluates them and passes the lower bound and the count of each dimension.
  for (int d = 0; d < k_.rank; ++d) {
    k_.params.push_back({ParamKind::Begin, nullptr, d});
    param_names_.push_back("kiln_b" + std::to_string(d));
    k_.params.push_back({ParamKind::Count, nullptr, d});
    param_names_.push_back("kiln_n" + std::to_string(d));
  }
  std::unordered_set<const ir::VarNode*> own;
  for (const auto& i : p_.indices) own.insert(i.get());
  for (const auto& r : p_.reductions) {
    own.insert(r.var.get());
    if (r.index) own.insert(r.index.get());
  }
  DimUses dims;
  dims.walk(p_.body);
  const std::vector<ir::Var> free = ir::free_vars(p_.body);
  // A binding may name any array of its type, a local one captured alongside it too: then every array the
  // kernel reads or writes takes part in the host's overlap test.
  bool binding = false;
  for (const ir::Var& v : free) binding |= v->type.is_array() && v->kind == ir::VarKind::Binding;
  for (const ir::Var& v : free) {
    if (own.count(v.get())) continue;
    if (v->type.is_scalar()) {
      k_.params.push_back({ParamKind::Scalar, v.get()});
      param_names_.push_back(bind(v.get()));
      continue;
    }
    ArrayNames n;
    n.rank = v->type.rank;
    n.data = fresh(v->name);
    k_.params.push_back({ParamKind::Data, v.get()});
    param_names_.push_back(n.data);
    if (v->kind == ir::VarKind::Param || v->kind == ir::VarKind::Binding || binding)
      k_.argument_arrays.emplace_back(v.get(), written_.count(v.get()) > 0);
    auto it = dims.used.find(v.get());
    for (int k = 0; k < n.rank; ++k) {
      // A stencil window's loads are guarded by every extent of its array.
      if ((it != dims.used.end() && it->second[static_cast<std::size_t>(k)]) || guarded_arrays_.count(v.get())) {
        n.extent[k] = fresh(n.data + "_n" + std::to_string(k));
        k_.params.push_back({ParamKind::Extent, v.get(), k});
        param_names_.push_back(n.extent[k]);
      }
      // A unit innermost stride is known at compile time: plain x[i] indexing, coalesced and vectorizable.
      if (k == n.rank - 1 && v->type.unit_stride) continue;
      n.stride[k] = fresh(n.data + "_s" + std::to_string(k));
      k_.params.push_back({ParamKind::Stride, v.get(), k});
      param_names_.push_back(n.stride[k]);
    }
    arrays_[v.get()] = n;
  }
  for (const std::string& s : param_names_) taken_.insert(s);
}

void Emitter::declare_locals() {
  Allocations a;
  a.walk(p_.body);
  allocations_ = a.found;
  for (const ir::AllocateStmt* s : allocations_) {
    ArrayNames n;
    n.rank = s->array->type.rank;
    n.data = fresh(s->array->name);
    std::string decl = std::string(type_name(s->array->type.elem)) + "* " + n.data + " = nullptr;";
    std::string dims;
    for (int k = 0; k < n.rank; ++k) {
      n.extent[k] = fresh(n.data + "_n" + std::to_string(k));
      dims += (dims.empty() ? "" : ", ") + n.extent[k] + " = 0";
      if (k + 1 < n.rank) {
        n.stride[k] = fresh(n.data + "_s" + std::to_string(k));
        dims += ", " + n.stride[k] + " = 0";
      }
    }
    line(decl + "  // allocated inside the parfor (device heap)");
    line("long long " + dims + ";");
    arrays_[s->array.get()] = n;
  }
}

void Emitter::loops() {
  switch (k_.strategy) {
    case Strategy::Elementwise: return stencil_on_ ? stencil_loops() : grid_stride_loops();
    case Strategy::Reduce: return grid_stride_loops();
    case Strategy::ArgReduce: return chunked_loop();
    case Strategy::Cooperative: return cooperative_loops();
    case Strategy::Staged: return staged_loops();
    case Strategy::Tiled: return tiled_loops();
  }
}

// The last dimension runs along x (consecutive threads touch consecutive elements: coalesced), the one
// before along y, the others merged along z. Each loop strides by the whole grid, so any grid covers any
// extent.
void Emitter::grid_stride_loops() {
  const int r = k_.rank;
  auto index = [&](int d, const std::string& t) {
    line("const long long " + bind(p_.indices[static_cast<std::size_t>(d)].get()) + " = kiln_b" + std::to_string(d) +
         " + (long long)" + t + ";");
  };
  int open = 0;
  if (r >= 3) {
    std::string count = "kiln_n0";
    for (int d = 1; d < r - 2; ++d) count += " * kiln_n" + std::to_string(d);
    line("for (unsigned long long kiln_tz = (unsigned long long)blockIdx.z * blockDim.z + threadIdx.z; kiln_tz < " + count +
         "; kiln_tz += (unsigned long long)gridDim.z * blockDim.z) {");
    ++depth_, ++open;
    if (r == 3) {
      index(0, "kiln_tz");
    } else {  // rank 4: z carries dimensions 0 and 1
      index(0, "(kiln_tz / kiln_n1)");
      index(1, "(kiln_tz % kiln_n1)");
    }
  }
  if (r >= 2) {
    const std::string n = "kiln_n" + std::to_string(r - 2);
    line("for (unsigned long long kiln_ty = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; kiln_ty < " + n +
         "; kiln_ty += (unsigned long long)gridDim.y * blockDim.y) {");
    ++depth_, ++open;
    index(r - 2, "kiln_ty");
  }
  const std::string n = "kiln_n" + std::to_string(r - 1);
  line(std::string("const unsigned long long kiln_sx = ") + kGridStrideX + ";");
  line("unsigned long long kiln_tx = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;");
  if (k_.unroll > 1) {
    // The rounds keep each thread's iterations in the same order as a plain grid-stride loop.
    const std::string u = std::to_string(k_.unroll);
    line("for (; kiln_tx + " + std::to_string(k_.unroll - 1) + " * kiln_sx < " + n + "; kiln_tx += " + u + " * kiln_sx) {");
    ++depth_;
    if (!deferred_.empty()) {
      deferred_round(k_.unroll, false);
    } else {
      line("#pragma unroll");
      line("for (unsigned kiln_u = 0; kiln_u < " + u + "; ++kiln_u) {");
      ++depth_;
      index(r - 1, "(kiln_tx + kiln_u * kiln_sx)");
      stmt(p_.body);
      --depth_;
      line("}");
    }
    --depth_;
    line("}");
  }
  if (!deferred_.empty()) {
    // After the rounds at most unroll - 1 iterations are left to the thread: one more round, each iteration
    // under its own test, so that their loads too are in flight together.
    deferred_round(k_.unroll - 1, true);
  } else {
    line("for (; kiln_tx < " + n + "; kiln_tx += kiln_sx) {");
    ++depth_, ++open;
    index(r - 1, "kiln_tx");
    stmt(p_.body);
  }
  while (open-- > 0) {
    --depth_;
    line("}");
  }
}

std::vector<const ir::StoreStmt*> deferrable_stores(const ir::Stmt& body, bool branches) {
  std::vector<const ir::StoreStmt*> stores;
  ir::VarSet stored;
  bool ok = true;
  // A load after a store of its array (or of one it may be) would read the old element once stores wait.
  auto reads_stored = [&](const ir::Stmt& s) {
    for (const ir::LoadExpr* l : loads_in(s))
      for (const ir::VarNode* a : stored)
        if (ir::may_alias(a, l->array.get())) return true;
    return false;
  };
  std::function<void(const ir::Stmt&)> walk = [&](const ir::Stmt& s) {
    if (!ok || !s) return;
    switch (s->kind) {
      case ir::StmtKind::Block:
        for (const ir::Stmt& t : s->as<ir::BlockStmt>().stmts) walk(t);
        return;
      case ir::StmtKind::If:
        // Both arms in order: a load in the else arm after a store in the then arm counts as after it.
        if (!branches || reads_stored(s)) {
          ok = false;
          return;
        }
        walk(s->as<ir::IfStmt>().then_body);
        walk(s->as<ir::IfStmt>().else_body);
        return;
      case ir::StmtKind::Let:
      case ir::StmtKind::Assign:
      case ir::StmtKind::Store:
        if (reads_stored(s)) {
          ok = false;
          return;
        }
        if (s->kind == ir::StmtKind::Store) {
          stores.push_back(&s->as<ir::StoreStmt>());
          stored.insert(s->as<ir::StoreStmt>().array.get());
        }
        return;
      default: ok = false;  // a loop would store more than once, a check or a binding may leave early
    }
  };
  walk(body);
  if (!ok) return {};
  // Only an array both loaded and stored holds a load back: loads from the others are __restrict__ and move
  // above the stores anyway.
  bool in_place = false;
  for (const ir::LoadExpr* l : loads_in(body))
    for (const ir::VarNode* a : stored) in_place = in_place || ir::may_alias(a, l->array.get());
  return in_place ? stores : std::vector<const ir::StoreStmt*>{};
}

void Emitter::plan_deferred_stores() {
  deferred_.clear();
  deferred_flags_ = false;
  strip_deferred_.clear();
  // A 2-d strip's copies are iterations too (emit_stencil.cpp, strip_copies); the marching walk stores as it goes.
  if (stencil_on_ && !stencil_->march && k_.unroll > 1)
    strip_deferred_ = deferrable_stores(stencil_->tests.empty() ? p_.body : stencil_->interior, /*branches=*/true);
  if (k_.unroll <= 1 || stencil_on_ || coop_ || staged_ || tiled_ || !privates_.empty() || !p_.array_reductions.empty() ||
      (k_.strategy != Strategy::Elementwise && k_.strategy != Strategy::Reduce))
    return;
  deferred_ = deferrable_stores(p_.body, /*branches=*/true);
  // A store under an if may not run: then each store has a flag per iteration, set where it runs.
  std::function<bool(const ir::Stmt&)> branches = [&](const ir::Stmt& s) {
    if (!s) return false;
    if (s->kind == ir::StmtKind::If) return true;
    if (s->kind != ir::StmtKind::Block) return false;
    for (const ir::Stmt& t : s->as<ir::BlockStmt>().stmts)
      if (branches(t)) return true;
    return false;
  };
  deferred_flags_ = !deferred_.empty() && branches(p_.body);
}

// The iterations of a parfor are independent: none reads an element another writes. Yet an unrolled round
// that stores through a pointer and then loads through it again (an in-place update, `a[i, j] = a[i, j] +
// u[i] v[j]`) makes the compiler keep every load behind the store before it, since it cannot tell the
// elements apart: the round's loads go one DRAM round trip after another. On an H100 gemver's rank-2 update
// ran so at 57 % of DRAM (ncu: the four loads of a round each after a store in the PTX). Here every iteration
// of the round computes its values and the offsets it stores to first, into registers, and the stores follow.
void Emitter::deferred_round(int count, bool guarded) {
  const int r = k_.rank;
  const std::string c = std::to_string(count);
  for (std::size_t k = 0; k < deferred_.size(); ++k) {
    const std::string t = type_name(deferred_[k]->array->type.elem), ks = std::to_string(k);
    line(t + " kiln_dv" + ks + "[" + c + "] = {};");
    line("long long kiln_do" + ks + "[" + c + "] = {};");
    if (deferred_flags_) line("bool kiln_df" + ks + "[" + c + "] = {};");
  }
  if (guarded) line("bool kiln_dk[" + c + "] = {};");
  line("#pragma unroll");
  line("for (unsigned kiln_u = 0; kiln_u < " + c + "; ++kiln_u) {");
  ++depth_;
  if (guarded) {
    line("kiln_dk[kiln_u] = kiln_tx + kiln_u * kiln_sx < kiln_n" + std::to_string(r - 1) + ";");
    line("if (kiln_dk[kiln_u]) {");
    ++depth_;
  }
  line("const long long " + bind(p_.indices[static_cast<std::size_t>(r - 1)].get()) + " = kiln_b" + std::to_string(r - 1) +
       " + (long long)(kiln_tx + kiln_u * kiln_sx);");
  deferring_ = true;
  lets_.emplace_back();
  stmt(p_.body);
  lets_.pop_back();
  deferring_ = false;
  if (guarded) {
    --depth_;
    line("}");
  }
  --depth_;
  line("}");
  line("#pragma unroll");
  line("for (unsigned kiln_u = 0; kiln_u < " + c + "; ++kiln_u) {");
  ++depth_;
  if (guarded) {
    line("if (kiln_dk[kiln_u]) {");
    ++depth_;
  }
  for (std::size_t k = 0; k < deferred_.size(); ++k) {
    const std::string ks = std::to_string(k);
    line(std::string(deferred_flags_ ? "if (kiln_df" + ks + "[kiln_u]) " : "") + array(deferred_[k]->array.get()).data + "[kiln_do" + ks +
         "[kiln_u]] = kiln_dv" + ks + "[kiln_u];");
  }
  if (guarded) {
    --depth_;
    line("}");
  }
  --depth_;
  line("}");
}

void Emitter::bind_row_major(const std::string& position) {
  const int r = k_.rank;
  if (r == 1) {
    line("const long long " + bind(p_.indices[0].get()) + " = kiln_b0 + (long long)" + position + ";");
    return;
  }
  line("unsigned long long kiln_rest = " + position + ";");
  for (int d = r - 1; d >= 0; --d) {
    const std::string nd = "kiln_n" + std::to_string(d);
    const std::string pos = d == 0 ? "kiln_rest" : "(kiln_rest % " + nd + ")";
    line("const long long " + bind(p_.indices[static_cast<std::size_t>(d)].get()) + " = kiln_b" + std::to_string(d) +
         " + (long long)" + pos + ";");
    if (d > 0) line("kiln_rest /= " + nd + ";");
  }
}

// argmin/argmax keep the first best: thread t takes the t-th contiguous run of the row-major space, and the
// block and fold trees combine runs in order.
void Emitter::chunked_loop() {
  const int r = k_.rank;
  std::string total = "kiln_n0";
  for (int d = 1; d < r; ++d) total += " * kiln_n" + std::to_string(d);
  line("const unsigned long long kiln_total = " + total + ";");
  line(std::string("const unsigned long long kiln_threads = ") + kGridStrideX + ";");
  line("const unsigned long long kiln_chunk = kiln_total / kiln_threads + (kiln_total % kiln_threads != 0);");
  line("const unsigned long long kiln_first = min(kiln_total, ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) * kiln_chunk);");
  line("const unsigned long long kiln_last = min(kiln_total, kiln_first + kiln_chunk);");
  line("for (unsigned long long kiln_t = kiln_first; kiln_t < kiln_last; ++kiln_t) {");
  ++depth_;
  bind_row_major("kiln_t");
  stmt(p_.body);
  --depth_;
  line("}");
}

void Emitter::block_reductions() {
  for (std::size_t i = 0; i < p_.reductions.size(); ++i) {
    const ir::Reduction& r = p_.reductions[i];
    const DType t = r.var->type.elem;
    const std::string tn = type_name(t);
    const std::string id = constant(ir::identity_of(r.op, t)->as<ir::ConstExpr>());
    const std::string v = name(r.var.get());
    const std::string part = "((" + tn + "*)(kiln_scratch + " + offset_text(GpuKernel::partials_offset(k_.slot[i])) + "))[kiln_block()]";
    if (ir::is_arg_reduction(r.op)) {
      const ArgClauses& c = k_.clauses[i];
      line("kiln_block_argreduce<" + tn + ", " + (r.op == ReduceOp::ArgMin ? "true" : "false") + ", " + (c.nan_wins ? "true" : "false") +
           ", " + (c.empty_loses ? "true" : "false") + ">(" + v + ", " + name(r.index.get()) + ", " + id +
           ", kiln_shared, kiln_shared_index);");
      const std::string ipart = "((long long*)(kiln_scratch + " + offset_text(GpuKernel::partials_offset(k_.slot[i] + 1)) + "))[kiln_block()]";
      line("if (kiln_thread() == 0) {");
      line("  " + part + " = " + v + ";");
      line("  " + ipart + " = " + name(r.index.get()) + ";");
      line("}");
    } else {
      line(v + " = kiln_block_reduce(" + v + ", " + op_functor(r.op) + ", " + id + ", kiln_shared);");
      line("if (kiln_thread() == 0) " + part + " = " + v + ";");
    }
  }
}

void Emitter::fold_kernel(std::string& out) {
  k_.fold_name = k_.name + "_fold";
  std::string s = "// fold of " + k_.name + ": one partial per block, combined in block order\n";
  s += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kMaxReduceBlocks) + ") " + k_.fold_name +
       "(char* kiln_scratch, unsigned kiln_blocks) {\n";
  s += "  __shared__ unsigned long long kiln_shared[32];\n";
  if (k_.strategy == Strategy::ArgReduce) s += "  __shared__ unsigned long long kiln_shared_index[32];\n";
  for (std::size_t i = 0; i < p_.reductions.size(); ++i) {
    const ir::Reduction& r = p_.reductions[i];
    const DType t = r.var->type.elem;
    const std::string tn = type_name(t);
    const std::string id = constant(ir::identity_of(r.op, t)->as<ir::ConstExpr>());
    const std::string part = "((const " + tn + "*)(kiln_scratch + " + offset_text(GpuKernel::partials_offset(k_.slot[i])) + "))[threadIdx.x]";
    const std::string res = "*(" + tn + "*)(kiln_scratch + " + offset_text(k_.result_offset(k_.slot[i])) + ")";
    s += "  {  // " + std::string(ir::name_of(r.op)) + " " + r.var->name + "\n";
    s += "    " + tn + " v = threadIdx.x < kiln_blocks ? " + part + " : " + id + ";\n";
    if (ir::is_arg_reduction(r.op)) {
      const ArgClauses& c = k_.clauses[i];
      const std::string ipart = "((const long long*)(kiln_scratch + " + offset_text(GpuKernel::partials_offset(k_.slot[i] + 1)) + "))[threadIdx.x]";
      s += "    long long k = threadIdx.x < kiln_blocks ? " + ipart + " : -1LL;\n";
      s += "    kiln_block_argreduce<" + tn + ", " + (r.op == ReduceOp::ArgMin ? "true" : "false") + ", " + (c.nan_wins ? "true" : "false") +
           ", " + (c.empty_loses ? "true" : "false") + ">(v, k, " + id + ", kiln_shared, kiln_shared_index);\n";
      s += "    if (threadIdx.x == 0) {\n";
      s += "      " + res + " = v;\n";
      s += "      *(long long*)(kiln_scratch + " + offset_text(k_.result_offset(k_.slot[i] + 1)) + ") = k;\n";
      s += "    }\n";
    } else {
      s += "    v = kiln_block_reduce(v, " + std::string(op_functor(r.op)) + ", " + id + ", kiln_shared);\n";
      s += "    if (threadIdx.x == 0) " + res + " = v;\n";
    }
    s += "  }\n";
  }
  out += s + "}\n";
}

std::string Emitter::param_decl(const Param& p, bool restrict) const {
  switch (p.kind) {
    case ParamKind::Begin: return "long long";
    case ParamKind::Count: return "unsigned long long";
    case ParamKind::Scalar: return type_name(p.var->type.elem);
    case ParamKind::Data:
      return std::string(written_.count(p.var) ? "" : "const ") + type_name(p.var->type.elem) + (restrict ? "* __restrict__" : "*");
    case ParamKind::Extent:
    case ParamKind::Stride: return "long long";
    case ParamKind::Scratch: return "char*";
    case ParamKind::Status: return "KilnStatus*";
    case ParamKind::Private: return "unsigned";
  }
  return "void*";
}

std::string Emitter::signature(const std::string& name, bool restrict, bool tiles) const {
  std::string s = "extern \"C\" __global__ void ";
  // Contractions: two blocks an SM, at most 128 registers a thread for the 16 elements' values and a step's
  // operands. Three (80 registers) spill 36-76 bytes in the suite's products and ran them 2-10 % slower on an
  // H100 (KILN_CUDA_CONTRACTION_MIN_BLOCKS=3, gpuprod2's run of 25 Nov 2026).
  if (tiles)
    s += "__launch_bounds__(" + std::to_string(kContractionThreads) + ", " + std::to_string(opts_.contraction_min_blocks) + ") ";
  else if (k_.strategy == Strategy::Reduce || k_.strategy == Strategy::ArgReduce)
    s += "__launch_bounds__(" + std::to_string(kReduceThreads) + ") ";
  else if (k_.strategy == Strategy::Cooperative)
    s += "__launch_bounds__(" + std::to_string(kMaxRowThreads) + ") ";  // a block per row: up to this many
  else if (k_.strategy == Strategy::Staged)
    s += "__launch_bounds__(" + std::to_string(kStagedThreads) + ", " + std::to_string(kStagedBlocksPerSm) + ") ";
  else if (k_.strategy == Strategy::Tiled)
    s += "__launch_bounds__(" + std::to_string(kTiledThreads) + (tiled_->min_blocks > 0 ? ", " + std::to_string(tiled_->min_blocks) : "") + ") ";
  else if (stencil_ && stencil_->mode == StencilMode::Shared)  // the tiles hold this many warps
    s += "__launch_bounds__(" + std::to_string(32 * kStencilTileWarps) +
         (stencil_->block   ? ", " + std::to_string(march_block_min_blocks())
          : stencil_->march ? ", " + std::to_string(opts_.stencil.march_min_blocks)
                            : std::string()) +
         ") ";
  s += name + "(";
  for (std::size_t i = 0; i < k_.params.size(); ++i) {
    if (i) s += i % 4 == 0 ? ",\n    " : ", ";
    s += param_decl(k_.params[i], restrict) + " " + param_names_[i];
  }
  return s + ")";
}

}  // namespace kiln::codegen::cuda
