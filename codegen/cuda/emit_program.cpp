// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An offloaded kernel as a CUDA program: each launch (passes/offload.cpp) becomes a __global__ function; the
// host function around the launches runs on the host executor (ir/interpreter.hpp with device_machine.hpp).
#include "codegen/cuda/emit_program.hpp"

#include <cctype>

#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "codegen/cuda/prelude.hpp"
#include "ir/analysis.hpp"
#include "ir/visitor.hpp"
#include "kiln/error.hpp"

namespace kiln::codegen::cuda {
namespace {

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k_" + out;
  return out;
}

class ProgramBuilder {
 public:
  ProgramBuilder(Program& prog, const EmitOptions& opts) : prog_(prog), opts_(opts) {}

  void host_function(const ir::Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case ir::StmtKind::Block:
        for (const auto& x : s->as<ir::BlockStmt>().stmts) host_function(x);
        return;
      case ir::StmtKind::For: return host_function(s->as<ir::ForStmt>().body);
      case ir::StmtKind::If:
        host_function(s->as<ir::IfStmt>().then_body);
        return host_function(s->as<ir::IfStmt>().else_body);
      case ir::StmtKind::Launch: {
        const auto& l = s->as<ir::LaunchStmt>();
        // The verifier numbers launches in body order, so kernel k is gpu_kernels[k].
        const std::string name = identifier(prog_.function->name) + "_k" + std::to_string(l.kernel);
        Emitter e(*prog_.function, l.parfor(), name, opts_);
        const std::size_t begin = prog_.kernels.size();
        GpuKernel k = e.emit(prog_.kernels);
        const int first = entries_;
        k.entry = entries_++;
        if (!k.alias_name.empty()) k.alias_entry = entries_++;
        if (!k.fold_name.empty()) k.fold_entry = entries_++;
        if (!k.tiles_name.empty()) k.tiles_entry = entries_++;
        prog_.gpu_kernels.push_back(std::move(k));
        split_functions(begin, entries_ - first);
        prog_.kernels += "\n";
        return;
      }
      case ir::StmtKind::Let:
      case ir::StmtKind::Assign:
      case ir::StmtKind::Store:
      case ir::StmtKind::Atomic:
      case ir::StmtKind::Allocate:
      case ir::StmtKind::Bind:
      case ir::StmtKind::Sort:  // on the device, through the machine (sort_kernels.hpp)
      case ir::StmtKind::Scan:  // on the device, through the machine (scan_kernels.hpp)
      case ir::StmtKind::Check: return;  // the host runs these
      case ir::StmtKind::Parfor:
        backend_error(prog_.function->name, "a parfor outside every launch; the offload pass makes launches of them");
      default:
        // Array-level operations are lowered to parfors before code generation; anything else is new.
        backend_error(prog_.function->name,
                      fmt::format("statement kind {} reached code generation unlowered", static_cast<int>(s->kind)));
    }
  }

 private:
  /// Records the functions one launch emitted from `begin` on: each ends with a "}" line (bodies are
  /// indented, so only a function's end is a "}" at the start of a line). Text that does not split into
  /// `count` such functions stays one range: a coarser unit of compilation, never a wrong one.
  void split_functions(std::size_t begin, int count) {
    const std::string& text = prog_.kernels;
    std::vector<std::pair<std::size_t, std::size_t>> found;
    for (std::size_t at = begin; at < text.size();) {
      const std::size_t close = text.find("\n}\n", at);
      if (close == std::string::npos) break;
      found.emplace_back(at, close + 3);
      at = close + 3;
    }
    const bool all = static_cast<int>(found.size()) == count && !found.empty() && found.back().second == text.size();
    if (all) prog_.functions.insert(prog_.functions.end(), found.begin(), found.end());
    else if (text.size() > begin) prog_.functions.emplace_back(begin, text.size());
  }

  Program& prog_;
  const EmitOptions& opts_;
  int entries_ = 0;
};

}  // namespace

static_assert(EmitOptions{}.staged_steps == kStagedSteps, "EmitOptions' default is program.hpp's");

std::string emission_settings(const EmitOptions& opts) {
  const StencilSettings& st = opts.stencil;
  const char* mode = st.mode == StencilMode::Off ? "off" : st.mode == StencilMode::Shared ? "shared" : "shuffle";
  return "unroll=" + std::to_string(opts.unroll) + ";stencil=" + mode + ";rows=" + std::to_string(st.rows) +
         ";rounds=" + std::to_string(st.rounds) + (opts.cooperative ? "" : ";cooperative=0") +
         (st.march_rows != StencilSettings{}.march_rows ? ";march_rows=" + std::to_string(st.march_rows) : "") +
         (st.march_registers != StencilSettings{}.march_registers ? ";march_registers=" + std::to_string(st.march_registers) : "") +
         (st.march_prefetch != StencilSettings{}.march_prefetch ? ";march_prefetch=" + std::to_string(st.march_prefetch) : "") +
         (st.march_min_blocks != StencilSettings{}.march_min_blocks ? ";march_min_blocks=" + std::to_string(st.march_min_blocks) : "") +
         (st.march_form == MarchForm::Block ? ";march_form=block" : st.march_form == MarchForm::Warp ? ";march_form=warp" : "") +
         (st.strip_registers != StencilSettings{}.strip_registers ? ";strip_registers=" + std::to_string(st.strip_registers) : "") +
         (opts.halo_reads ? ";halo_reads=1" : "") +
         (opts.staged_steps != kStagedSteps ? ";staged_steps=" + std::to_string(opts.staged_steps) : "") +
         (opts.tiled_min_blocks > 0 ? ";tiled_min_blocks=" + std::to_string(opts.tiled_min_blocks) : "") +
         (opts.contraction_async ? "" : ";contraction_async=0") +
         (opts.contraction_min_blocks != 2 ? ";contraction_min_blocks=" + std::to_string(opts.contraction_min_blocks) : "");
}

std::unordered_set<const ir::VarNode*> arrays_written(const ir::Stmt& s) {
  struct Binds : ir::IRVisitor {
    std::vector<const ir::BindStmt*> all;
    void visit(const ir::BindStmt& b) override { all.push_back(&b); }
  } binds;
  binds.walk(s);
  ir::VarSet out = ir::stored_arrays(s);
  for (bool changed = true; changed;) {
    changed = false;
    for (const ir::BindStmt* b : binds.all)
      if (out.count(b->target.get()) && out.insert(b->source.get()).second) changed = true;
  }
  return out;
}

void backend_error(const std::string& kernel, const std::string& what) {
  throw CompileError(fmt::format("kiln CUDA backend: kernel '{}': {}", kernel, what), {});
}

std::vector<std::string> Program::entries() const {
  std::vector<std::string> names;
  for (const auto& k : gpu_kernels)
    for (const std::string* n : {&k.name, &k.alias_name, &k.fold_name, &k.tiles_name})
      if (!n->empty()) names.push_back(*n);
  return names;
}

Program emit_program(const ir::Function& f, const EmitOptions& opts) {
  const StencilSettings& st = opts.stencil;
  if (st.rows < 1 || st.rows > 16 || st.rounds < 1 || st.rounds > 16 || st.march_rows < 1 || st.march_rows > 16)
    throw ValueError(fmt::format("stencil settings: rows, rounds and march_rows must be in [1, 16], got rows={} rounds={} march_rows={}", st.rows,
                                 st.rounds, st.march_rows));
  if ((st.march_registers != 0 && (st.march_registers < 8 || st.march_registers > 255)) || st.march_prefetch < 0 || st.march_prefetch > 2 || st.march_min_blocks < 1 ||
      st.march_min_blocks > 8)
    throw ValueError(fmt::format("stencil settings: march_registers must be 0 or in [8, 255], march_prefetch in [0, 2] and march_min_blocks in "
                                 "[1, 8], got {}, {} and {}",
                                 st.march_registers, st.march_prefetch, st.march_min_blocks));
  Program prog;
  prog.function = std::make_shared<const ir::Function>(f);  // shares the nodes: ParforStmt pointers stay valid
  prog.prelude = prelude();
  prog.kernels = "\n// ---- kiln kernel '" + f.name + "': one __global__ function per top-level parfor ----\n";
  ProgramBuilder(prog, opts).host_function(prog.function->body);
  return prog;
}

}  // namespace kiln::codegen::cuda
