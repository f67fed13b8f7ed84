// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Translation of one kiln Function into an LLVM module: the entry `kiln_entry` plus one outlined chunk
// function per parfor. The Emitter's methods are split by topic over emit_*.cpp.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/backend.hpp"
#include "codegen/llvm/trip_bound.hpp"
#include "ir/lanes.hpp"
#include "ir/stmt.hpp"

namespace kiln::codegen::cpu::detail {

/// An array as generated code sees it: base pointer and, per axis, extent and stride in elements. Each is
/// an SSA value of the current function, or null where the function never needs it.
struct ArrayValue {
  llvm::Value* data = nullptr;
  llvm::Value* shape[kMaxRank] = {};
  llvm::Value* stride[kMaxRank] = {};
};

/// A scalar variable: a read-only SSA value (parameters, loop indices, captured values) or a stack slot
/// (mutable locals, reduction accumulators) that mem2reg turns back into SSA.
struct ScalarValue {
  llvm::Value* value = nullptr;
  bool in_slot = false;
};

/// An array binding's stack slots (entry-block allocas): a BindStmt stores the named array's descriptor
/// into them and every use reloads it, so a rebinding in a loop reaches later iterations (mem2reg turns
/// the slots into phis). Null where the field is a constant of the binding's type (a unit stride).
struct BindingSlots {
  llvm::AllocaInst* data = nullptr;
  llvm::AllocaInst* shape[kMaxRank] = {};
  llvm::AllocaInst* stride[kMaxRank] = {};
};

/// The LLVM function being emitted: the kernel entry or a parfor chunk.
struct FunctionState {
  llvm::Function* fn = nullptr;
  llvm::BasicBlock* entry = nullptr;  ///< allocas and one-time loads; branches to `body` when finished
  llvm::BasicBlock* body = nullptr;
  llvm::Value* status = nullptr;      ///< KernelStatus*
  std::unordered_map<const ir::VarNode*, ScalarValue> scalars;
  std::unordered_map<const ir::VarNode*, ArrayValue> arrays;
  /// Bindings declared in this function; a binding captured from the caller is a plain entry of `arrays`.
  std::unordered_map<const ir::VarNode*, BindingSlots> bindings;
  /// The reductions whose private accumulators this chunk owns.
  std::unordered_map<const ir::VarNode*, ReduceOp> reductions;
  /// Array reductions updated here with atomic read-modify-writes (the array is shared with other threads):
  /// those of this chunk's parfor when it runs in atomic mode, and those inherited from enclosing chunks.
  std::unordered_map<const ir::VarNode*, ReduceOp> atomic_arrays;
  /// The array reductions of this chunk's parfor: iterations may update the same element, so their
  /// accesses must not carry the loop's parallel-access tag.
  std::unordered_set<const ir::VarNode*> reduced_arrays;
  /// One slot per Allocate site, holding its live allocation or null; all are freed on every exit.
  std::vector<llvm::AllocaInst*> alloc_slots;
  std::unordered_map<const ir::VarNode*, llvm::AllocaInst*> slot_of;
  llvm::BasicBlock* fail = nullptr;   ///< frees the allocations and returns status->code (made on demand)
  llvm::MDNode* access_group = nullptr;  ///< tags array accesses inside a parfor's innermost loop
  /// The loop being emitted updates an array reduction at data-dependent indices, so it will not
  /// vectorize: scalar instruction sequences that would block vectorization are the faster choice here.
  bool scalar_loop = false;
  /// Emitting the few iterations left after a parfor's groups of lanes: its sequential loops are neither
  /// vectorized nor unrolled (see emit_stmt.cpp).
  bool lanes_body = false;
  int loop_depth = 0;                 ///< > 0: an Allocate may run again, so it frees its previous array
  bool in_chunk = false;              ///< a parfor's chunk: parfors nested in it run inline
  int half_conversions = 0;           ///< scalar hardware f16 conversions emitted so far (loop() asks how many)
  int loops = 0;                      ///< loops emitted so far (loop() asks whether its body holds one)
  llvm::AllocaInst* shape_scratch = nullptr;  ///< [kMaxRank x i64] passed to kiln_rt_alloc
};

/// How one array reduction of a parfor runs, decided by the caller at run time: the chunk reaches the
/// array as `data + piece * piece_bytes` with `strides` (the piece's private copy, or the array itself).
struct ArrayPlan {
  const ir::ArrayReduction* reduction = nullptr;
  ArrayValue target;                        ///< the array, in the caller
  llvm::Value* copies = nullptr;            ///< the private copies, or null (a single piece, or atomic mode)
  llvm::AllocaInst* slot = nullptr;         ///< holds `copies`, so that the failure path frees them
  ArrayValue view;                          ///< what piece 0 of the chunk sees: its copy, or the target
  llvm::Value* piece_bytes = nullptr;       ///< the distance between copies; 0 when the chunk sees the target
  llvm::Value* chunk_piece_bytes = nullptr; ///< piece_bytes as loaded in the chunk
};

/// Which code a chunk runs for its array reductions: plain loads and stores (on a private copy, or on
/// the array itself when a single piece runs), or atomic read-modify-writes on the shared array.
enum class ChunkMode : std::uint8_t { Plain, Atomic };

/// A parfor body being outlined into a chunk function. The context fields carry the caller's values into
/// the chunk: the caller stores `value`, the chunk loads it at entry and `bind`s the loaded value to the
/// variable (or bound) it stands for. Constants need no field: each chunk variant binds them directly.
struct Outline {
  struct Field {
    llvm::Value* value;
    std::function<void(llvm::Value*)> bind;
  };
  std::vector<llvm::Value*> begins, ends;           ///< per dimension, in the caller
  std::vector<llvm::Value*> inner_begin, inner_end;  ///< dimensions 1.., in the chunk
  std::vector<Field> fields;
  std::vector<Field> constants;
  llvm::StructType* ctx_type = nullptr;
  /// The partial's fields: one per reduction, and for ArgMin/ArgMax a second one, the i64 index.
  std::vector<llvm::Type*> partial_types;
  std::vector<unsigned> partial_field;  ///< per reduction, its (first) field
  llvm::StructType* partial_type = nullptr;
  /// The array reductions this parfor privatizes or updates atomically (not those an enclosing chunk
  /// already updates atomically), with how the caller chose to run them.
  std::vector<ArrayPlan> arrays;
  FunctionState chunk;
};

/// Lane mode (emit_lanes.cpp): while set, a parfor body runs `width` consecutive iterations at once. Values
/// that differ between lanes are <width x T> vectors, the others stay scalars; `mask` holds the lanes that
/// run the current statement (null: all of them).
struct Lanes {
  unsigned width = 0;  ///< 0: scalar code
  const ir::LanePlan* plan = nullptr;
  llvm::Value* mask = nullptr;
  /// In the groups after the whole ones (tail_lanes): the lanes inside the parfor's range, lane 0 always
  /// among them. Where `mask` is this one, a uniform load needs no test and an assignment no merge: a lane
  /// past the range stores nothing, and nothing reads its values afterwards.
  llvm::Value* tail = nullptr;
};

/// Roughly how many expression evaluations a thread should get before a parfor forks: below that, waking
/// the team costs more than it saves.
constexpr std::int64_t kGrainWork = 32768;

class Emitter {
 public:
  /// `vector_bits`: the width of the target's vector registers that generated code should use (lane
  /// counts); 0 keeps every parfor body scalar, for LLVM's loop vectorizer alone. `half_lanes`: 0 where
  /// f16 <-> f32 conversions are kiln's integer steps; else the target converts in hardware (x86 F16C), so
  /// LLVM's `half` conversions are instructions rather than library calls (half_casts.cpp), and a loop
  /// converting f16 asks the vectorizer for this many lanes (one vector register of f32).
  Emitter(llvm::Module& module, const CodegenOptions& opts, const ir::Function& f, unsigned vector_bits,
          unsigned half_lanes);

  /// Emits `int32_t kiln_entry(void* const* args, void* result, KernelStatus* status)`.
  void emit_entry();

 private:
  llvm::Module& mod_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  const CodegenOptions& opts_;
  const ir::Function& fn_;
  const LetDefinitions lets_;  ///< for trip-count bounds
  llvm::FastMathFlags base_fmf_;  ///< flags on every FP operation (empty unless fast_math)
  FunctionState* fs_ = nullptr;
  int chunk_count_ = 0;
  unsigned vector_bits_ = 0;
  unsigned half_lanes_ = 0;
  Lanes lanes_;
  /// Alias scopes (emit_expr.cpp, tag_access): one per array the kernel allocates, which shares memory with
  /// no other array; its accesses are in its scope, and every other array's are noalias with it.
  std::unordered_map<const ir::VarNode*, llvm::MDNode*> alloc_scope_;
  std::unordered_map<const ir::VarNode*, llvm::MDNode*> alloc_noalias_;  ///< all allocation scopes but its own
  llvm::MDNode* all_alloc_scopes_ = nullptr;
  void make_alias_scopes();

  // ---- emit_support.cpp: types, variables, function scaffolding ----
  [[noreturn]] void internal_error(const std::string& what) const;
  llvm::Type* value_type(DType t);   ///< SSA type: i1 for bool
  llvm::Type* memory_type(DType t);  ///< in-memory type: i8 for bool
  llvm::Value* to_memory(llvm::Value* v, DType t);
  llvm::Value* from_memory(llvm::Value* v, DType t);
  llvm::Value* i64(std::int64_t v);
  llvm::StructType* array_desc_type();
  llvm::AllocaInst* entry_alloca(llvm::Type* t, const llvm::Twine& name);
  void begin_function(llvm::Function* fn, FunctionState& state);
  /// Frees the state's allocations (except `keep`), makes the failure block, and closes the entry block.
  void finish_function(const std::vector<const ir::VarNode*>& keep, const std::function<void()>& success_return,
                       const std::function<void()>& failure_return);
  llvm::BasicBlock* fail_block();
  /// Branches to the failure block when `failed` is true; continues in a new block otherwise.
  void fail_if(llvm::Value* failed);
  ScalarValue& scalar(const ir::VarNode* v);
  ArrayValue& array(const ir::VarNode* v);
  llvm::Value* read(const ir::VarNode* v);
  /// Loads an ArrayDesc's fields once, in the entry block.
  ArrayValue load_array_desc(llvm::Value* desc, const ir::Type& type);
  /// Emits `for (i = begin; i < end; ++i) body(i)`; with an access group the loop is marked parallel.
  /// `no_interleave` asks the vectorizer for one vector per stream and iteration (emit_parfor.cpp says when);
  /// `no_vectorize` keeps it away from a loop that runs too few iterations to use vectors (trip_bound.hpp).
  void loop(llvm::Value* begin, llvm::Value* end, const llvm::Twine& name, llvm::MDNode* access_group,
            const std::function<void(llvm::Value*)>& body, bool no_interleave = false, bool no_vectorize = false);
  /// True if kiln IR bounds `for i in begin .. end` below what the vectorizer could use, where LLVM will not
  /// see it (trip_bound.hpp).
  bool too_short_to_vectorize(const ir::Expr& begin, const ir::Expr& end) const;

  // ---- emit_expr.cpp: expressions ----
  llvm::Value* expr(const ir::Expr& e);
  llvm::Value* constant(const ir::ConstExpr& c);
  llvm::Value* unary(const ir::UnaryExpr& u);
  /// The strict binary operators (arithmetic, bitwise, comparisons) on evaluated operands of type t.
  llvm::Value* binary(BinaryOp op, DType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* compare(BinaryOp op, DType t, llvm::Value* a, llvm::Value* b);
  llvm::Value* int_divide(BinaryOp op, llvm::Value* a, llvm::Value* b, bool is_signed);
  llvm::Value* logical(const ir::BinaryExpr& e);
  llvm::Value* select(const ir::SelectExpr& e);
  llvm::Value* cast(DType to, DType from, llvm::Value* v);
  /// Float to integer, saturating, through the x86 conversion instruction (see emit_expr.cpp).
  llvm::Value* x86_float_to_int(DType to, DType from, llvm::Value* v);
  /// f16/bf16 (held as their i16 bits) <-> f32, scalar or lanes, with the bits kiln/half.hpp defines
  /// (half_casts.cpp): f16 with the hardware's conversions where half_lanes_ is set, else kiln/half.hpp's steps.
  llvm::Value* half_to_f32(DType from, llvm::Value* bits);
  llvm::Value* f32_to_half(DType to, llvm::Value* v);
  llvm::Value* f16_to_f32_hardware(llvm::Value* bits);
  llvm::Value* f32_to_f16_hardware(llvm::Value* v);
  llvm::Value* element_address(const ir::Var& array, const std::vector<ir::Expr>& indices);
  llvm::Value* address_of(const ir::Var& array, const std::vector<llvm::Value*>& idx);
  llvm::Value* load(const ir::LoadExpr& l);
  /// Tags an access to `array` as one of the current parfor's independent iterations (unless `array` is
  /// one of its array reductions).
  void tag_access(llvm::Instruction* access, const ir::VarNode* array);

  // ---- emit_call.cpp: intrinsics ----
  llvm::Value* call(const ir::CallExpr& c);
  llvm::Value* libm_call(const char* name, DType t, llvm::ArrayRef<llvm::Value*> args);
  // ---- emit_random.cpp: the random intrinsics (ir/random.hpp) on evaluated i64 key and counter ----
  /// A random intrinsic (emit_random.cpp); `word` is the packed kinds' third argument, null for the others.
  llvm::Value* random(Intrinsic fn, llvm::Value* key, llvm::Value* counter, llvm::Value* word);

  // ---- emit_stmt.cpp: statements ----
  void stmt(const ir::Stmt& s);
  void assign(const ir::AssignStmt& a);
  void reduction_update(const ir::AssignStmt& a, ReduceOp op);
  void store(const ir::StoreStmt& s);
  void if_stmt(const ir::IfStmt& s);
  void allocate(const ir::AllocateStmt& a);
  void sort(const ir::SortStmt& s);  // emit_sort.cpp
  /// Makes a binding name the source's array: stores its descriptor into the binding's slots. Bindings own
  /// no memory, so nothing is freed here or at exit (the verifier keeps a binding within its arrays' lives).
  void bind(const ir::BindStmt& s);
  /// Registers a new allocation slot of the current function (null at entry, freed on every exit).
  llvm::AllocaInst* allocation_slot(const llvm::Twine& name);

  // ---- emit_check.cpp: run-time checks ----
  void check(const ir::CheckStmt& c);

  // ---- emit_parfor.cpp: outlining and scalar reductions ----
  void parfor(const ir::ParforStmt& p);
  /// A parfor nested in a chunk, as a loop nest in that chunk (see emit_parfor.cpp).
  void inline_parfor(const ir::ParforStmt& p);
  /// Roughly how many expression evaluations one run of `s` costs, counting the trips of nested loops
  /// whose bounds the current function can compute; at most kGrainWork.
  llvm::Value* work_estimate(const ir::Stmt& s);
  /// The same estimate as a double, without the cap: what the runtime weighs pieces of unequal work by.
  llvm::Value* work_weight(const ir::Stmt& s);
  /// Hands parfor p (no reductions) to the runtime: kiln_rt_parfor_split where its iterations do unequal
  /// work (ir::splits_by_work) or run in lane groups across its only index, else kiln_rt_parfor.
  void run_plain_parfor(const ir::ParforStmt& p, const Outline& o, llvm::Value* chunk, llvm::Value* ctx, llvm::Value* grain);
  /// The lanes of p's innermost loop, or 0 when it does not run in lanes (ir::plan_lanes, vector width).
  unsigned lanes_of(const ir::ParforStmt& p) const;
  /// The value of `e` in the current function when it can be computed here without side effects or
  /// faults (no loads; every variable it reads bound here), else null.
  llvm::Value* try_expr(const ir::Expr& e);
  void capture_context(const ir::ParforStmt& p, Outline& o);
  /// Emits the chunk function; with `pieces` it takes the piece number as a fifth argument (kiln_piece_fn).
  llvm::Function* emit_chunk(const ir::ParforStmt& p, Outline& o, ChunkMode mode, bool pieces);
  llvm::Value* parfor_grain(const ir::ParforStmt& p, const Outline& o);

  /// Emits the innermost loop of parfor p, `for index in [lo, hi): body`, marked parallel: `iteration(i,
  /// group)` emits one iteration (group: the loop's parallel access group). Loops whose bodies test their
  /// index were cut by passes/partition_loops.cpp already. Where ir::plan_lanes says so, whole groups of
  /// lanes run first (lanes_loop) and masked groups (tail_lanes) or this loop take the rest.
  void innermost_loop(const ir::ParforStmt& p, llvm::Value* lo, llvm::Value* hi,
                      const std::function<void(llvm::Value*, llvm::MDNode*)>& iteration);
  void fold_partials(const ir::ParforStmt& p, const Outline& o, llvm::Value* blocks, llvm::AllocaInst* partials);
  /// Folds one ArgMin/ArgMax partial (value, index) into the reduction's variables, by the body's rule.
  void fold_arg_partial(const ir::ParforStmt& p, const ir::Reduction& r, llvm::Value* value, llvm::Value* index);
  llvm::Value* reduction_identity(ReduceOp op, DType t);
  /// The combiner of a reduction applied to evaluated operands.
  llvm::Value* combine(ReduceOp op, DType t, llvm::Value* a, llvm::Value* b);

  // ---- emit_lanes.cpp: parfor bodies run in lanes (ir/lanes.hpp) ----
  /// Runs p's body over [lo, lo + k * w) in groups of `w` lanes; returns where the groups end.
  llvm::Value* lanes_loop(const ir::ParforStmt& p, const ir::LanePlan& plan, llvm::Value* lo, llvm::Value* hi, unsigned w);
  /// Runs p's body over [lo, hi) in groups of `w` lanes, the last one masked to the lanes before `hi`. Only for
  /// a parfor without scalar reductions (whose partials lanes_loop folds before the rest continues in order).
  void tail_lanes(const ir::ParforStmt& p, const ir::LanePlan& plan, llvm::Value* lo, llvm::Value* hi, unsigned w);
  unsigned lane_count(const ir::LanePlan& plan) const;
  /// `v` as a vector of the current width (a scalar is broadcast); unchanged outside lane mode.
  llvm::Value* splat(llvm::Value* v);
  /// Broadcasts the scalars among `values` when another of them is a vector, so that they combine.
  void match_lanes(std::initializer_list<llvm::Value**> values);
  /// The type `scalar` takes in lane mode where `like` is a vector: a vector of the same count.
  llvm::Type* shaped_like(llvm::Type* scalar, llvm::Value* like);
  llvm::Value* any_lane(llvm::Value* mask);
  /// The mask of the lanes that run where `cond` (a lane value) holds, within the current mask.
  llvm::Value* narrowed_mask(llvm::Value* cond);
  /// A library function applied lane by lane (scalar calls: each lane gets what a scalar iteration gets).
  llvm::Value* per_lane(llvm::ArrayRef<llvm::Value*> args, const std::function<llvm::Value*(llvm::ArrayRef<llvm::Value*>)>& call);
  llvm::Value* lane_load(const ir::LoadExpr& l);
  void lane_store(const ir::StoreStmt& s);
  /// The address of lane 0's element when the access is contiguous across lanes, else null.
  llvm::Value* contiguous_address(const ir::Var& array, const std::vector<ir::Expr>& indices,
                                  const std::vector<llvm::Value*>& idx);
  llvm::Value* lane_select(const ir::SelectExpr& e);
  llvm::Value* lane_logical(const ir::BinaryExpr& e);
  /// Evaluates `e` for the lanes of `mask` only (loads of other lanes are not performed).
  llvm::Value* expr_under(const ir::Expr& e, llvm::Value* mask);
  void lane_if(const ir::IfStmt& s);
  /// A loop whose bounds differ between lanes: over the union of the running lanes' ranges, each lane
  /// masked off outside its own.
  void lane_for(const ir::ForStmt& f, llvm::Value* begin, llvm::Value* end);
  void lane_assign(const ScalarValue& slot, const ir::VarNode* var, llvm::Value* value);

  // ---- emit_array_reductions.cpp: privatized and atomic array reductions ----
  /// Decides at run time how the array reductions `fresh` of a parfor of `pieces` pieces run (fills
  /// o.arrays); returns the i1 that is true when the atomic chunk must run.
  llvm::Value* plan_array_reductions(const std::vector<const ir::ArrayReduction*>& fresh, Outline& o, llvm::Value* pieces);
  /// In a chunk's entry: points each planned array at the piece's copy.
  void bind_array_pieces(Outline& o, llvm::Value* piece);
  /// After the parfor: combines the private copies into their arrays in piece order, then frees them.
  void combine_array_copies(const Outline& o, llvm::Value* pieces);
  void combine_copies(const ArrayPlan& plan, llvm::Value* pieces);
  /// `a[k] = a[k] op e` as one atomic read-modify-write of a[k].
  void atomic_update(const ir::StoreStmt& s, ReduceOp op);
  /// A compare-exchange loop replacing *addr by update(*addr), for the updates atomicrmw lacks; returns the
  /// value it replaced.
  llvm::Value* atomic_rmw_loop(llvm::Value* addr, DType t, const std::function<llvm::Value*(llvm::Value*)>& update);

  // ---- emit_atomics.cpp: kiln::atomic_* on array elements (ir::AtomicStmt) ----
  void atomic(const ir::AtomicStmt& a);

  // ---- emit_runtime.cpp: declarations of the runtime functions (runtime/parallel.hpp) ----
  llvm::FunctionCallee rt_parfor();
  llvm::FunctionCallee rt_parfor_split();
  llvm::FunctionCallee rt_reduce_blocks();
  llvm::FunctionCallee rt_parfor_reduce();
  llvm::FunctionCallee rt_alloc();
  llvm::FunctionCallee rt_free();
  llvm::FunctionCallee rt_release();
  llvm::FunctionCallee rt_parfor_width();
  llvm::FunctionCallee rt_parfor_pieces();
  llvm::FunctionCallee rt_parfor_reduce_pieces();
  llvm::FunctionCallee rt_private_copies();
  llvm::FunctionCallee rt_copies_done();
  llvm::FunctionCallee rt_combine_sums();
  llvm::FunctionCallee rt_sort();
  llvm::FunctionCallee rt_fail();
};

}  // namespace kiln::codegen::cpu::detail
