// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Emits the parfor of one launch as CUDA C: a __global__ function (and a fold kernel when it reduces) whose
// body is the parfor's body as readable C, with the parameters the host binds at launch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/cuda/program.hpp"
#include "ir/analysis.hpp"
#include "ir/cooperative.hpp"
#include "ir/interior.hpp"
#include "ir/stmt.hpp"

namespace kiln::codegen::cuda {

/// Stencil windows reach at most this far from the index in either dimension (a window row is held in
/// registers, and lanes exchange at most this many elements with their neighbours).
inline constexpr std::int64_t kMaxStencilOffset = ir::kMaxStencilReach;
/// Shared-memory stencil tiles hold this many warps (the kernel is launched with at most 32 x this threads).
inline constexpr int kStencilTileWarps = 8;
/// Rows of a marching block tile (emit_march_block.cpp): blocks of 32 x this many threads.
inline constexpr int kMarchBlockRows = 8;
/// At most this much static shared memory for a kernel's tiles (48 KiB is the static limit; more would also
/// cut the blocks per SM further).
inline constexpr std::int64_t kMaxStencilTileBytes = 40 * 1024;

/// The prelude's functor of a reduction's combiner ("kiln_op_add()", ...), for kiln_block_reduce and
/// kiln_group_reduce; empty for ArgMin/ArgMax, which fold by their own rule.
const char* op_functor(ReduceOp op);

/// The CUDA C spelling of an element type ("float", "long long", ...).
const char* type_name(DType t);

/// Picks how a parfor is spread over threads (see Strategy).
Strategy strategy_of(const ir::ParforStmt& p);

/// Loads of an array that no iteration writes, at [invariant..., row + d, j + c] (j the innermost index,
/// row the one before it, |c|, |d| <= kMaxStencilOffset), grouped by array and invariant indices.
/// A 3-d parfor whose loads reach planes z + dz of one array at several dz marches along z (2.5-d
/// blocking): each thread walks its planes in order, holding what the body reads of each live plane in
/// registers, so that every plane is loaded once per thread, not once per dz.
struct StencilPlan {
  struct Group {
    const ir::VarNode* array = nullptr;
    std::vector<ir::Expr> prefix;  ///< the invariant leading indices (a marching group's last is z + dz)
    bool vertical = false;         ///< the array's next-to-last index is the parfor's row index plus d
    std::map<std::int64_t, std::set<std::int64_t>> offsets;  ///< d (0 unless vertical) -> the column offsets c
    /// A marching group: its loads' last prefix index is the parfor's first index plus dz, zlo <= dz <= zhi;
    /// `offsets` is the union over its planes (every plane is loaded as the same window rows, as the newest).
    bool marching = false;
    std::int64_t zlo = 0, zhi = 0;
    int planes() const { return static_cast<int>(zhi - zlo + 1); }
  };
  struct Use {
    int group;
    std::int64_t d, c;
    std::int64_t dz = 0;  ///< the plane of a marching group's load
  };
  std::vector<Group> groups;
  std::unordered_map<const ir::ExprNode*, Use> loads;
  /// Running sums (march_sums, emit_march.cpp): the store's value holds a left fold of + and - whose terms each
  /// read one plane of the one marching window, in the order the planes arrive along the walk. Each step then
  /// adds the newest plane's terms to the sums of the outputs that read it (as their plane dz), in the fold's
  /// order, and keeps only the newest plane in registers.
  struct Sums {
    const ir::ExprNode* root = nullptr;  ///< the fold: the store's value reads it, replaced by the finished sum
    std::vector<ir::Expr> spine;  ///< spine[0] the fold's first term, spine[k] = spine[k - 1] +/- term k
    std::vector<std::int64_t> dz;  ///< the plane each spine[k]'s term reads
    DType type = DType::F32;
  };
  std::optional<Sums> sums;
  int rows = 1, columns = 4;
  StencilMode mode = StencilMode::Shuffle;
  bool march = false;  ///< some group marches (rank 3, shared tiles)
  /// Marching plans: how many planes ahead of the step the loads run (0..2: chosen with the rows and rounds
  /// so that the registers fit, march_registers), and why (the diagnostics).
  int ahead = 0;
  std::string why;
  /// The block form of a marching plan (emit_march_block.cpp): blocks of 32 x kMarchBlockRows threads share each
  /// plane's tile of (y, x) in shared memory, one element a thread a step; `ahead` planes are loaded ahead.
  bool block = false;
  /// Marching tiles hold what the windows reach past the strip (the largest |c| of a window), not
  /// kMaxStencilOffset.
  std::int64_t halo = 0;
  /// Tests of the parfor's indices against bounds fixed in the kernel (`a <= i && i < b`: lower_stencils'
  /// bands, band_clamps' interiors) decided true, and the body with those branches replaced by their
  /// then-arms. Where every test holds (the interior) an element runs `interior` on the windows; the others
  /// (the border) run the whole body with plain loads, after the strip's interior elements.
  std::vector<ir::Expr> tests;
  ir::Stmt interior;
  ir::Stmt border;  ///< the body for the border elements: the body with the interior arm emptied
};

/// One row of a stencil window: the column offsets read from it, the one its registers hold (`base`, read
/// most often), and the others relative to it (from other lanes).
struct WindowRow {
  std::int64_t row = 0;  ///< relative to the thread's first row (0 for a window that is not vertical)
  std::int64_t base = 0;
  std::vector<std::int64_t> deltas;  ///< c - base for every other offset c, ascending
  std::int64_t lo() const { return deltas.empty() ? 0 : std::min<std::int64_t>(0, deltas.front()); }
  std::int64_t hi() const { return deltas.empty() ? 0 : std::max<std::int64_t>(0, deltas.back()); }
};
/// Group g's window rows under the plan's rows per thread.
std::vector<WindowRow> window_rows(const StencilPlan& plan, int g);
/// A marching group's registers: [plane][window row] -> the column offsets held (emit_march.cpp).
using MarchKept = std::vector<std::vector<std::set<std::int64_t>>>;
MarchKept march_kept(const StencilPlan& plan, int g);
/// A marching plan's running sums, where the body is one store whose value holds a left fold of terms ordered by
/// plane (StencilPlan::Sums); otherwise nothing, and `why` says what stops it.
std::optional<StencilPlan::Sums> march_sums(const StencilPlan& plan, const ir::ParforStmt& p, const ir::Stmt& body, std::string* why);
/// The 32-bit registers a thread of a marching plan holds while a step computes (emit_march.cpp): every live
/// plane's kept values, the newest planes' loads in flight (one set per plane loaded ahead; none without the
/// prefetch, whose step loads its plane before the older ones move down), and what the walk keeps besides
/// (indices, row offsets, masks, one copy's temporaries). ptxas spills or halves the blocks per SM when the
/// total passes the kernel's cap.
struct MarchRegisters {
  std::int64_t values = 0, ahead = 0, fixed = 0;
  std::int64_t total() const { return values + ahead + fixed; }
};
MarchRegisters march_registers(const StencilPlan& plan, int ahead);
/// The registers a thread of a marching kernel may use: __launch_bounds__(32 * kStencilTileWarps, min_blocks)
/// leaves 64 K / (threads x blocks) of an SM's register file (at most 255).
int march_register_cap(int min_blocks);
/// The blocks per SM a marching kernel in the block form is compiled for (emit_march_block.cpp).
int march_block_min_blocks();
/// The 32-bit registers a thread of a marching plan in the block form holds while a step computes, estimated.
int march_block_registers(const StencilPlan& plan);

/// A block's statements with nested blocks flattened (the emitter gives a nested block no C scope of its own).
void flatten_blocks(const ir::Stmt& s, std::vector<ir::Stmt>& out);
/// Statements a thread beyond a block's last row may run as the last row before a staged or tiled loop: no
/// loop, no check, no allocation, no atomic (its stores are suppressed; nothing else it does is seen).
bool last_row_safe(const ir::Stmt& s);

/// The stores of `body`, in order, when every one may wait until the body's loads are done (emit_kernel.cpp,
/// deferred_round): the body is lets, assignments and stores (with `branches`, ifs around them too), no load
/// reads an array that a store before it may have written, and some stored array is also loaded (an in-place
/// update, whose loads would otherwise wait behind the stores). Empty otherwise.
std::vector<const ir::StoreStmt*> deferrable_stores(const ir::Stmt& body, bool branches);

/// True if `e` reads only what the host has at launch: no element, nothing declared in p's body, not its indices.
bool known_at_launch(const ir::Expr& e, const ir::ParforStmt& p);

/// A parfor body as a loop with statements around it (staged walks, tiled loops): nested blocks flattened, split
/// at the first top-level loop.
struct RowLoop {
  const ir::ForStmt* loop = nullptr;
  std::vector<ir::Stmt> before, after;  ///< the body's other statements
};
/// `body` as a RowLoop whose statements before the loop are last_row_safe; nothing when it has no such loop.
std::optional<RowLoop> split_at_loop(const ir::Stmt& body);

/// A staged walk (emit_staged.cpp): the parfor body's statements around its loop, and the accesses of the
/// loop that go through shared tiles.
struct StagedPlan : RowLoop {
  struct Site {
    const ir::VarNode* array = nullptr;
    std::vector<ir::Expr> indices;  ///< the access's indices (its element at the loop's first step, with k = begin)
    bool store = false;
    /// The tile it goes through: its own (its index), or a store's the tile of a load site of its type, which
    /// each step reads before it stores.
    int tile = 0;
    /// Elements its run moves from one row to the next where the rows' parfor indices are consecutive; nothing
    /// when that is not a constant (a uniform block then reads the spacing off its first two rows).
    std::optional<std::int64_t> slope;
  };
  ir::VarSet inner;                     ///< variables the loop's body declares or assigns
  ir::LetValues lets;                   ///< the lets before the loop that nothing assigns
  std::vector<Site> sites;              ///< a tile each, but a store that shares a load's
  std::unordered_map<const ir::LoadExpr*, int> loads;
  std::unordered_map<const ir::StmtNode*, int> stores;
};

/// A tiled loop (emit_tiled.cpp): the parfor body's statements around its loop, and the loop's loads that
/// every row of a block makes at the same step (their indices read the loop's index and values the whole
/// block shares), each given a slot in a shared tile of its element type.
struct TiledPlan : RowLoop {
  struct Site {
    const ir::VarNode* array = nullptr;
    std::vector<ir::Expr> indices;  ///< the load's indices, functions of the loop's index and uniform values
    int tile = 0, slot = 0;         ///< its tile, and its place within a step's cells of the tile
  };
  struct Tile {
    DType elem;
    int width = 0;  ///< cells per step: the sites, padded so that a step's cells are one vector load
  };
  std::vector<Site> sites;
  std::vector<Tile> tiles;
  std::unordered_map<const ir::LoadExpr*, int> loads;  ///< -> its site
  int min_blocks = 0;  ///< blocks per SM asked of ptxas (__launch_bounds__'s second argument; 0: none)
};

/// A contraction (emit_contraction.cpp): a 2-d parfor whose elements (i, j) each run one loop over a range every
/// element shares (a sequential loop, or the 1-d reduction parfor that kiln::dot lowers to), reading arrays at
/// indices of (i, k) ("row" operands) and of (j, k) ("column" operands) — matrix products, Gram products,
/// triangles under a test of i and j. Emitted as a variant (`<kernel>_tiles`) that the host launches instead of
/// the kernel (choose_launch): a block takes kContractionTile x kContractionTile elements, each thread
/// kContractionPerThread^2 of them, and the loop runs in chunks of kContractionSteps steps whose operands the
/// block stages through shared tiles.
struct ContractionPlan {
  struct Site {
    const ir::VarNode* array = nullptr;
    std::vector<ir::Expr> indices;  ///< functions of k, the site's parfor index and values every element shares
    bool row = false;               ///< reads i (a row of the block's tile), else j (a column)
    bool k_fast = false;            ///< the array's last index reads k: consecutive threads fetch consecutive steps
  };
  ir::Expr guard;                          ///< the body's test of i and j around everything (a triangle), or null
  std::vector<ir::Stmt> before, after;     ///< the element's statements around the loop
  const ir::VarNode* k = nullptr;          ///< the loop's index
  ir::Expr begin, end;                     ///< the loop's range (shared by every element)
  ir::Stmt steps;                          ///< the loop's body
  std::vector<Site> sites;
  std::unordered_map<const ir::LoadExpr*, int> loads;  ///< -> its site
  /// Elements a thread reads from a tile in one vector load, per side (0: rows, 1: columns): 4 where every
  /// operand of the side is f32, 2 where they are f32 or f64 (16 bytes at most), else 1 (scalar reads).
  int width[2] = {1, 1};
  /// Chunks copied asynchronously (cp.async) into the second of two sets of tiles while the first is read,
  /// where every operand is 4 or 8 bytes (cp.async's sizes) and EmitOptions::contraction_async allows it.
  bool async = false;
};

/// A two-way tile (emit_cooperative.cpp): in a cooperative row, `parfor (j in b .. e) { let acc = x; for i in lo ..
/// hi { <computes acc> }; <store> }` followed by `for i in lo .. hi { let acc2 = y; parfor (j in b .. e) reduce(op
/// acc2) { <computes acc2> }; <store> }`, the stores to distinct arrays that neither reads.
struct TwoWayTile {
  ir::Stmt columns_stmt, rows_stmt;
  const ir::ParforStmt* columns = nullptr;
  const ir::ForStmt* rows = nullptr;
  const ir::LetStmt* column_acc = nullptr;
  const ir::ForStmt* column_walk = nullptr;
  ir::Stmt column_store;
  const ir::LetStmt* row_acc = nullptr;
  const ir::ParforStmt* row_sum = nullptr;
  ir::Stmt row_store;
};
std::optional<TwoWayTile> match_two_way(const ir::Stmt& first, const ir::Stmt& second);

class Emitter {
 public:
  Emitter(const ir::Function& f, const ir::ParforStmt& p, std::string name, const EmitOptions& opts);

  /// Emits the kernel(s); returns their metadata and appends their source to `out`.
  GpuKernel emit(std::string& out);

 private:
  struct ArrayNames {
    std::string data;
    std::string extent[kMaxRank];
    std::string stride[kMaxRank];  ///< "" for a unit innermost stride
    int rank = 0;
  };

  // names (emit_expr.cpp)
  std::string fresh(const std::string& base);
  std::string bind(const ir::VarNode* v);
  const std::string& name(const ir::VarNode* v) const;
  const ArrayNames& array(const ir::VarNode* v) const;

  // expressions (emit_expr.cpp)
  std::string expr(const ir::Expr& e);
  std::string constant(const ir::ConstExpr& c) const;
  std::string unary(const ir::UnaryExpr& u);
  std::string binary(const ir::BinaryExpr& b);
  std::string cast(DType to, DType from, const std::string& x) const;
  std::string call(const ir::CallExpr& c);
  std::string element(const ir::VarNode* array, const std::vector<ir::Expr>& indices);
  /// The element's offset in elements from the array's data pointer (what element() indexes it with).
  std::string element_offset(const ir::VarNode* array, const std::vector<ir::Expr>& indices);

  // statements (emit_stmt.cpp)
  void line(const std::string& s);
  void stmt(const ir::Stmt& s);
  void block(const ir::Stmt& s);  ///< s as a braced body at depth + 1
  /// Before let stmts[at] of a block: computes once the costly parts (math library calls) that it and the
  /// lets right after it repeat, recorded in lets_ so that expr() reads them.
  void hoist_repeated_calls(const std::vector<ir::Stmt>& stmts, std::size_t at);
  void store(const ir::StoreStmt& s);
  /// kiln::atomic_* on an element (emit_atomics.cpp).
  void atomic(const ir::AtomicStmt& a);
  void nested_parfor(const ir::ParforStmt& p);
  void allocate(const ir::AllocateStmt& a);
  /// An array binding inside the body: a pointer with its extents and strides, (re)assigned.
  void bind_array(const ir::BindStmt& b);
  void check(const ir::CheckStmt& c);
  /// Reports a failure through the status and leaves the thread's iterations.
  void fail(int code, const std::string& message, const std::vector<std::string>& args);

  // the kernel around the body (emit_kernel.cpp)
  void capture();
  /// GpuKernel::plan: the rule that chose the strategy and the coarsening ceiling, in words.
  std::string plan_text() const;
  void declare_locals();
  void loops();
  void grid_stride_loops();
  /// Sets deferred_ when the unrolled rounds may issue every iteration's loads before any store (see
  /// emit_kernel.cpp): lets, assignments, stores and ifs, none of whose loads reads an array stored before it
  /// (a store under an if gets a flag per iteration); and strip_deferred_ when a 2-d stencil strip's copies may
  /// (the same rule, a flag per store and copy).
  void plan_deferred_stores();
  /// `count` iterations of the innermost dimension, the u-th at `kiln_tx + u * kiln_sx`, their stores deferred
  /// to after all of them; with `guarded`, each only where it exists (the rounds' remainder).
  void deferred_round(int count, bool guarded);
  /// The loop nest plus `tail` (the code after the loops), into body_.
  void loops_and_tail();

  // cooperative rows (emit_cooperative.cpp)
  void cooperative_loops();
  /// A nested parfor of a cooperative row: its iterations strided over the group, its reductions combined
  /// by kiln_group_reduce into every thread.
  void spread_parfor(const ir::ParforStmt& q);
  /// A row's statements, as stmt() would emit its block, but each two-way tile (match_two_way) as one walk.
  void cooperative_row(const ir::Stmt& body);
  void two_way_tile(const TwoWayTile& t);
  /// Declares the parfor's indices from `position`, a row-major number in its index space (kiln_b*, kiln_n*).
  void bind_row_major(const std::string& position);
  /// A store of a cooperative row, by the group's first thread, then made visible to the group.
  void leader_store(const ir::StoreStmt& s);

  // staged walks (emit_staged.cpp)
  /// Sets staged_ and Strategy::Staged when the parfor's body is a walk the rule admits.
  void plan_staged();
  /// `array[indices]` reads or writes, at step k of the loop, the element k - begin after step 0's.
  bool staged_access(const ir::VarNode* array, const std::vector<ir::Expr>& indices) const;
  /// A staged access whose rows' runs lie far enough apart that staging them pays.
  bool staged_spread(const std::vector<ir::Expr>& indices) const;
  void staged_loops();
  /// This thread's cell of a site's tile at the current step.
  std::string staged_cell(int site) const;

  /// Staged walks and tiled loops: a block of `most` consecutive rows (a constant, or blockDim.x; grid-striding
  /// over blocks), or with `spread` of ceil(rows / gridDim.x) rows when that is fewer, each row bound (threads
  /// past the last row as the last row, kiln_live false) and its statements `before` the loop run (stores only
  /// for live rows). Leaves a scope open for the loop.
  void open_block_rows(const std::string& most, const std::vector<ir::Stmt>& before, bool spread = false);
  /// The statements `after` the loop for live rows, and the end of the block's rows.
  void close_block_rows(const std::vector<ir::Stmt>& after);

  // tiled loops (emit_tiled.cpp)
  /// Sets tiled_ and Strategy::Tiled when the parfor's body is a loop the rule admits (see emit_tiled.cpp).
  void plan_tiled();
  void tiled_loops();
  /// A site's cell at the current step of the tiled loop.
  std::string tiled_cell(int site) const;
  /// For a staged site's fetch (tiled loops, contractions): emits each of `indices` once as a named value (the
  /// innermost scope of lets_, which must exist, reads them from then on) and returns the test that they lie
  /// within `v`'s extents. A cell is fetched only where its element exists (rows past the last, steps past
  /// the end). `site` numbers the names.
  std::string fetched_in_extents(const ir::VarNode* v, const std::vector<ir::Expr>& indices, std::size_t site);

  // contractions (emit_contraction.cpp)
  /// Sets contraction_ when the parfor is a contraction the rule admits (see emit_contraction.cpp).
  void plan_contraction();
  /// The `_tiles` variant's body.
  void contraction_loops();
  /// A site's cell at the current step for the element copy being emitted.
  std::string contraction_cell(int site) const;
  /// The tile row (side 0) or column (1) of the thread's m-th element copy along that side, as CUDA text.
  std::string contraction_offset(int side, int m) const;

  // stencils (emit_stencil.cpp)
  void plan_stencil();
  void stencil_loops();
  /// The window rows of a group that does not march: loaded into registers and stored to its tile, with the
  /// names of the values recorded in stencil_values_.
  void stencil_window(int g);
  // marching 3-d stencils (emit_march.cpp)
  /// Declares a marching group's registers (every live plane's, the newest plane's loads) and records their
  /// names in stencil_values_.
  void march_declare(int g);
  /// A marching plan's rows, rounds and planes loaded ahead: the largest form whose registers fit the kernel's
  /// cap (march_registers), and the reason (StencilPlan::why).
  void plan_march(StencilPlan& plan) const;
  /// A strip's rows and rounds cut until its registers fit two blocks an SM (emit_stencil.cpp, strip_registers).
  void plan_strip(StencilPlan& plan) const;
  /// Loads the plane whose first index is `z` into group g's newest-plane registers of buffer b (one buffer
  /// per plane loaded ahead).
  void march_load(int g, const std::string& z, int b);
  /// Moves buffer b's newest-plane registers into plane p's and the group's tile (before a __syncwarp).
  void march_store(int g, int p, int b);
  /// Reads plane p's neighbours that its registers keep from the tile (after the __syncwarp).
  void march_neighbours(int g, int p);
  /// After a step: every plane's registers move one plane down (with running sums: each sum one output down).
  void march_shift(int g);
  /// Running sums: sum j of copy (v, u), the output j planes after the step's.
  std::string march_sum_reg(int j, int v, int u) const;
  /// Running sums: the newest plane's terms added to sums first_j .. planes - 1 of every copy (sum j takes the
  /// terms of plane zhi - j; the last one starts).
  void march_sums_add(int first_j);
  /// One step of the walk at plane `z` (a C expression), its newest plane in buffer b.
  void march_step(const std::string& z, int b, const std::string& ahead);
  /// The first index of plane z + dz.
  std::string march_plane(const std::string& z, std::int64_t dz) const;
  /// The walk of a marching stencil: the planes below the first step's newest, then a loop over the chunk.
  void march_loops();
  /// Before the walk: which copies' elements exist (kiln_live) and pass the bounds tests that do not involve
  /// the walked index (kiln_inner), a bit per copy; neither changes along the walk.
  void march_masks(const std::string& bits);
  /// strip_copies for a step of the walk: the masks' bits, the walked index's tests once per step.
  void march_copies(const std::string& bits);
  /// Whether a marching kernel's border elements run after the walk (march_border_pass): every bounds test
  /// reads the walked index alone or none of it, so which elements of a step are border follows from
  /// kiln_live, kiln_inner and the step's plane test.
  bool march_border_after() const;
  /// After the walk: each plane of the chunk again, its border elements through the whole body. Inside the
  /// walk, the border body's address arithmetic and clamps would be live beside every kept plane's values
  /// (ptxas gave the 27-point float stencil at one row 156 registers for 36 of values, and spilled at 128).
  void march_border_pass(const std::string& bits);
  /// The condition that copy (v, u) of a marching thread's step is an element of the iteration space.
  std::string march_live_test(int v, int u) const;
  // the block form of a marching stencil (emit_march_block.cpp)
  /// Whether the marching plan takes the block form; if so the plan is set for it (rows, rounds, ahead, why).
  bool plan_march_block(StencilPlan& plan, const std::string& sums_why) const;
  /// The walk of the block form: a block's tiles of (y, x), each walked along z through a ring of shared tiles.
  void march_block_loops();
  /// One step of the block form: the newest planes (buffer b) into their slots, the loads `ahead` planes on, the
  /// barrier, the step's copies.
  void march_block_step(const std::string& z, int b);
  /// Loads plane `z` of group g into buffer b (the thread's cells of the group's tile).
  void march_block_load(int g, const std::string& z, int b);
  /// Stores buffer b of group g to the tile slot `slot`.
  void march_block_store(int g, const std::string& slot, int b);
  /// The step's pointers to each plane's slot at the thread's own cell (the newest plane's number `newest`).
  void march_block_views(int g, const std::string& newest);
  /// Moves the running sums one output plane down.
  void march_block_shift();
  /// A planned load's value in the block form: its plane's slot at a constant offset from the thread's cell.
  std::string march_block_value(const StencilPlan::Use& use) const;
  /// The body once per row and round of the strip (emit_stencil.cpp), then the border elements'.
  void stencil_bodies();
  /// The border elements of kiln_border, one at a time through the whole body.
  void border_loop(const std::string& bits);
  /// The copies of the body, each under the guards of its row and round and the bounds tests (`bits`: the
  /// type of a bit per copy).
  void strip_copies(const std::string& bits);
  /// One copy of the body at row v, round u of the strip: with `test` (the bounds tests, "" when the plan has
  /// none) the interior arm when it holds, else (`record`) the copy's bit set in kiln_border for the border pass.
  void stencil_copy(int v, int u, const std::string& test, const std::string& bits, bool record = true);
  /// The value of a planned load in the current body copy.
  std::string stencil_value(const StencilPlan::Use& use) const;
  void chunked_loop();
  // private copies of array reductions (emit_private.cpp, private_copies.hpp)
  /// Plans privates_ (grid-stride kernels only) and marks their arrays' extents for capture.
  void plan_private();
  /// Before the loops: each copy's place in the dynamic shared memory and its identity fill, under kiln_private.
  void private_prologue();
  /// An update of candidate c's element at `indices` (`a[k] = a[k] op e`, or a kiln::atomic_* whose old value
  /// nothing reads) by `operand`: into the block's copy when the launch made one (and k is in range), else the
  /// global atomic `fn` of the plain path.
  void private_update(const std::vector<ir::Expr>& indices, int c, const char* fn, const std::string& operand);
  /// After the loops: every copy's elements that differ from the identity, combined into the array.
  void private_merge();
  void block_reductions();
  void fold_kernel(std::string& out);
  /// `tiles`: the contraction variant's (its launch bounds).
  std::string signature(const std::string& name, bool restrict, bool tiles = false) const;
  std::string param_decl(const Param& p, bool restrict) const;

  const ir::Function& fn_;
  const ir::ParforStmt& p_;
  const EmitOptions& opts_;
  GpuKernel k_;
  std::string body_;  ///< the __global__ function's body as it is built
  int depth_ = 1;
  std::unordered_set<std::string> taken_;
  std::unordered_map<const ir::VarNode*, std::string> names_;
  std::unordered_map<const ir::VarNode*, ArrayNames> arrays_;
  std::unordered_set<const ir::VarNode*> written_;          ///< arrays the kernel stores to
  std::vector<const ir::AllocateStmt*> allocations_;        ///< allocations inside the body
  std::vector<std::string> param_names_;                    ///< parallel to k_.params
  /// Per open block: the lets emitted in it since its last other statement, by initializer. An expression
  /// equal to one of them reads the let instead: the IR repeats a value that the frontend also snapshotted
  /// into a let (black_scholes computes erf four times otherwise), and NVVM does not merge such calls.
  std::vector<std::vector<std::pair<ir::Expr, std::string>>> lets_;
  std::optional<ir::CooperativePlan> coop_;  ///< set for Strategy::Cooperative
  std::string unroll_note_;  ///< why the parfor is not unrolled (a loop in its body), for the kernel's head comment
  bool spreading_ = false;  ///< emitting a spread parfor's body (each thread its own iterations)
  bool leading_ = false;    ///< emitting a store inside `if (kiln_lane == 0)`
  int spread_count_ = 0;    ///< names the spread loops' counters
  /// Arrays the row loads: only a store to one of them needs the group to synchronize after it.
  std::unordered_set<const ir::VarNode*> coop_loaded_;
  std::optional<StagedPlan> staged_;
  bool staged_on_ = false;      ///< emitting the staged loop's steps: its accesses read and write the tiles
  /// Emitting the statements before a staged or tiled loop, which threads beyond the block's rows run as its
  /// last row (they must reach the barriers): stores only for live rows.
  bool staged_prefix_ = false;
  std::optional<TiledPlan> tiled_;
  bool tiled_on_ = false;  ///< emitting the tiled loop's steps: its planned loads read the tiles
  std::optional<ContractionPlan> contraction_;
  bool contraction_on_ = false;   ///< emitting a copy of the loop's steps: planned loads read the tiles
  int contraction_m_ = 0, contraction_n_ = 0;  ///< the element copy being emitted: row m, column n of the thread's
  std::optional<StencilPlan> stencil_;
  bool stencil_on_ = false;  ///< emitting the stencil form (the alias variant is the plain one)
  int stencil_v_ = 0, stencil_u_ = 0;  ///< the body copy being emitted: row v, round u
  /// (group, plane dz, window row, round, column offset) -> the expression holding that element in this chunk
  std::map<std::tuple<int, std::int64_t, std::int64_t, int, std::int64_t>, std::string> stencil_values_;
  /// Arrays whose every extent the kernel reads (stencil windows and tiles guard their loads by them, private
  /// copies are laid out by them): all their extents are captured.
  std::unordered_set<const ir::VarNode*> guarded_arrays_;
  std::vector<PrivateCandidate> privates_;  ///< array reductions that may update per-block copies
  std::string private_note_;                ///< why others may not (for the plan)
  /// Marching groups: [plane][window row] -> the column offsets its registers keep across steps.
  std::map<int, MarchKept> march_kept_;
  /// Spine nodes of a running-sums fold read as a register while a sum's update or the finished store is emitted.
  std::unordered_map<const ir::ExprNode*, std::string> march_sum_names_;
  /// The body's stores, in order, when its rounds defer them (plan_deferred_stores); empty otherwise.
  std::vector<const ir::StoreStmt*> deferred_;
  bool deferred_flags_ = false;  ///< some store of deferred_ is under an if: each has a flag per iteration
  /// The interior's stores, in order, when a strip's copies defer them (plan_deferred_stores); empty otherwise.
  std::vector<const ir::StoreStmt*> strip_deferred_;
  bool deferring_ = false;  ///< emitting the first half of a round: a store fills its slots instead
  /// While deferring: the slot a store fills (a round's `kiln_u`, a strip copy's number) and whether it is a
  /// strip's (strip_deferred_, with a flag per store and slot: a store under an if may not run).
  std::string defer_slot_ = "kiln_u";
  bool defer_strip_ = false;
  /// While a marching step's copies are emitted: the interior's stores to [z + a, y + b, x + c] of a 3-d array,
  /// with the step's pointer to the thread's first copy's element (march_out_rows; store() adds the copy's row
  /// times the row stride and its round's 32 u as constant offsets), and that row stride.
  std::unordered_map<const ir::StmtNode*, std::pair<std::string, std::string>> march_out_;
  /// Declares the step's store pointers of march_out_.
  void march_out_rows();
};

}  // namespace kiln::codegen::cuda
