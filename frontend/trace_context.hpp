// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The state of one trace in progress: the scope stack of statement lists being built, the traced values
// alive in it, and the function's parameters and result. One per thread at a time (thread_local).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/stmt.hpp"
#include "kiln/kernel.hpp"

namespace kiln::ir {
class IRMutator;
}

namespace kiln::detail {

/// An if/elif/else chain whose branches are still being traced; emitted once the chain is complete.
struct PendingIf {
  std::uint64_t chain = 0;
  std::vector<ir::Expr> conds;
  std::vector<ir::Stmt> bodies;  ///< one per cond, plus a final else body if has_else
  bool has_else = false;
  bool branch_open = false;
};

struct Scope {
  std::uint64_t id = 0;
  std::vector<ir::Stmt> stmts;
  std::optional<PendingIf> pending;
  bool parallel = false;  ///< the body of a prange (kiln::swap may not rebind arrays declared outside it)
  /// A loop's bounds, read in the enclosing scope and emitted with the loop when it closes (kiln::swap
  /// rewrites them like the statements already traced).
  std::vector<ir::Expr>* loop_lo = nullptr;
  std::vector<ir::Expr>* loop_hi = nullptr;
};

class TraceContext {
 public:
  TraceContext(std::string kernel, std::vector<ParamInstance> params, std::vector<std::string> param_names);
  ~TraceContext();
  TraceContext(const TraceContext&) = delete;
  TraceContext& operator=(const TraceContext&) = delete;

  /// The trace in progress on this thread, or null.
  static TraceContext* current();
  /// The trace in progress; throws TraceError naming `what` when called outside a kernel.
  static TraceContext& active(const char* what);

  const std::string& kernel() const { return kernel_; }
  /// kiln::Options::halo_reads of the variant being traced: stencils read ghost layers, so their inputs
  /// need no minimum extent (frontend/stencil.cpp leaves that check out).
  bool halo_reads = false;
  /// The variant runs on a target whose threads walk neighbouring rows in lock step (CUDA): a scan along the
  /// last axis traces its three passes, whose block walks such a target stages, and never the rows form
  /// (ir::ScanSpec::lockstep_rows).
  bool lockstep_rows = false;
  /// An address in the binary holding the kernel's code (its tracer): source_lines reads the kernel's source
  /// only if that binary was built after the file's last change.
  const void* code = nullptr;
  /// A source position made into text while tracing (Where::str): check messages get it as a `{@k}`
  /// reference to Function::locations instead (see finish).
  void note_location(const std::string& where);
  /// The source positions noted so far (note_location), in order of first use.
  const std::vector<std::string>& locations() const { return locations_; }
  /// A traced value was made at `where` (TracedValue's constructors): the source listing of the diagnostics
  /// runs through the last line of the kernel's file that made one.
  void note_line(const Where& where);
  /// The first and last line of `file` (a std::source_location file name) noted by note_line, or {0, 0}.
  std::pair<unsigned, unsigned> noted_lines(const char* file) const;
  [[noreturn]] void fail(const std::string& what, const Where& where = {}) const;
  /// As fail, for a value of a type the operation does not take: a kiln::TypeError.
  [[noreturn]] void fail_type(const std::string& what, const Where& where = {}) const;

  // ---- scopes
  std::uint64_t current_scope() const { return scopes_.back().id; }
  bool on_stack(std::uint64_t scope) const;
  std::uint64_t open_scope();
  /// Pops the innermost scope (which must be `id`), completing any pending branch chain in it.
  ir::Stmt close_scope(std::uint64_t id);
  /// Pops `id` and everything above it without emitting (an exception is unwinding the trace).
  void discard_scope(std::uint64_t id);
  /// Completes a pending branch chain in the current scope: a new statement starts here.
  void begin_statement();
  void emit(ir::Stmt s);
  PendingIf* pending_in_current() { return scopes_.back().pending ? &*scopes_.back().pending : nullptr; }
  Scope& scope(std::uint64_t id);
  /// The scopes opened inside scope `id` that are still open, outermost first.
  std::vector<Scope*> scopes_inside(std::uint64_t id);
  static std::uint64_t new_scope_id();

  // ---- values (the rules of traced.hpp)
  void enroll(TracedValue* v);
  void withdraw(TracedValue* v);
  Node read(const TracedValue& v);
  void assign(TracedValue& x, const TracedValue& v, bool consume);
  /// `v` is a temporary read for the last time: stop watching it, so it is not snapshotted needlessly.
  void consume(const TracedValue& v);
  /// Turns `v` into an IR variable initialised, at the end of its own scope, with its current expression.
  void promote(const TracedValue& v);
  /// Snapshots every live value that reads memory (before a store).
  void snapshot_memory_readers();
  /// Rewrites the expression of every live value created inside scope `id` (kiln::swap substitutes
  /// array bindings into what was traced before it).
  void rewrite_values_inside(std::uint64_t id, ir::IRMutator& rewrite);
  /// Snapshots every live value that reads variable `slot` (before an assignment to it).
  void snapshot_readers_of(const ir::VarNode* slot);

  // ---- variables and the function
  ir::Var new_local(DType t, std::string name, const Where& where);
  ir::Var new_index(std::string name);
  ir::Var new_array(DType t, int rank, std::string name, const Where& where);
  void check_array(const ArrayHandle& a, const char* what) const;
  std::string name_of(const TracedValue& v) const;

  const std::vector<ParamInstance>& instances() const { return instances_; }
  ir::Var param(int index) const { return params_.at(static_cast<size_t>(index)); }
  std::uint64_t root_scope() const { return scopes_.front().id; }
  void set_result(ir::Expr e) { result_ = std::move(e); }
  void set_result_array(ir::Var a) { result_array_ = std::move(a); }
  /// Appends a member to a tuple result.
  void add_result_member(ir::ResultMember m) { tuple_.push_back(std::move(m)); }
  /// Whether the array `a` is already a member of the tuple result (the caller would own it twice).
  bool returns_array(const ir::VarNode* a) const {
    for (const auto& m : tuple_)
      if (m.array.get() == a) return true;
    return false;
  }

  /// Completes the trace: the root block, the parameters and the result.
  ir::Function finish();

 private:
  std::string kernel_;
  std::vector<ParamInstance> instances_;
  std::vector<ir::Var> params_;
  std::vector<Scope> scopes_;
  TracedValue* live_ = nullptr;  ///< intrusive list of enrolled (volatile) values
  ir::Expr result_;
  ir::Var result_array_;
  std::vector<ir::ResultMember> tuple_;
  TraceContext* previous_;

  void flush(Scope& s);
  std::vector<std::string> locations_;  ///< note_location, in order of first use
  /// note_line: per file, the lines values were made on. Few files (the kernel's, kiln's headers).
  struct LineSpan {
    const char* file;
    unsigned first, last;
  };
  std::vector<LineSpan> line_spans_;
};

/// Sets/restores the thread's current trace.
TraceContext*& current_trace();

}  // namespace kiln::detail
