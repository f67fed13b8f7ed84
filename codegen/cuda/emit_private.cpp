// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-block private copies of array reductions and atomics in shared memory (private_copies.hpp says when and why): the
// copies' layout and identity fill before the grid-stride loops, the updates into them, and the merge into
// the arrays after the loops. Every part runs under the kernel's kiln_private argument (bit 2c: candidate c
// has a copy; bit 2c + 1: it counts in 32 bits), uniform over the grid, so the same kernel also runs the plain
// path (one global atomic per update) when the launch model gives no copy.
#include <fmt/format.h>

#include "codegen/cuda/emitter.hpp"
#include "ir/builder.hpp"

namespace kiln::codegen::cuda {
namespace {

std::string bit(int c, int which) { return fmt::format("{}u", 1u << (2 * c + which)); }
std::string copy_name(int c) { return fmt::format("kiln_copy{}", c); }
std::string copy32_name(int c) { return fmt::format("kiln_copy{}_32", c); }
std::string elements_name(int c) { return fmt::format("kiln_copy{}_n", c); }

/// The global atomic that merges a copy's element (Sub and Div were folded into the operand of each update).
const char* merge_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::Mul: return "kiln_atomic_mul";
    case ReduceOp::Min: return "kiln_atomic_min";
    case ReduceOp::Max: return "kiln_atomic_max";
    default: return "kiln_atomic_add";
  }
}

}  // namespace

void Emitter::plan_private() {
  const bool grid_stride = (k_.strategy == Strategy::Elementwise && !stencil_ && !staged_ && !tiled_ && !coop_) || k_.strategy == Strategy::Reduce;
  if (!grid_stride) return;
  privates_ = plan_private_copies(p_, &private_note_);
  for (const PrivateCandidate& c : privates_) guarded_arrays_.insert(c.array);
  k_.privates = privates_;
}

void Emitter::private_prologue() {
  if (privates_.empty()) return;
  line("// array reductions: per-block copies in dynamic shared memory where kiln_private says so (private_copies.hpp)");
  line("extern __shared__ unsigned long long kiln_copies[];");
  line("const unsigned kiln_block_threads = blockDim.x * blockDim.y * blockDim.z;");
  line("char* kiln_copy_next = (char*)kiln_copies;");
  for (std::size_t i = 0; i < privates_.size(); ++i) {
    const int c = static_cast<int>(i);
    const PrivateCandidate& pc = privates_[i];
    const ArrayNames& n = array(pc.array);
    std::string count;
    for (int d = 0; d < n.rank; ++d) count += (d ? " * " : "") + std::string("(unsigned long long)") + n.extent[d];
    const std::string t = type_name(pc.elem);
    line("const unsigned long long " + elements_name(c) + " = " + count + ";");
    line(t + "* const " + copy_name(c) + " = (" + t + "*)kiln_copy_next;");
    if (pc.narrow_bound > 0) line("unsigned* const " + copy32_name(c) + " = (unsigned*)kiln_copy_next;");
    const std::string size = pc.narrow_bound > 0 ? "((kiln_private & " + bit(c, 1) + ") ? 4ull : " + std::to_string(size_of(pc.elem)) + "ull)"
                                                 : std::to_string(size_of(pc.elem)) + "ull";
    line("if (kiln_private & " + bit(c, 0) + ") kiln_copy_next += (" + elements_name(c) + " * " + size + " + 7ull) / 8ull * 8ull;");
  }
  line("if (kiln_private) {");
  ++depth_;
  for (std::size_t i = 0; i < privates_.size(); ++i) {
    const int c = static_cast<int>(i);
    const PrivateCandidate& pc = privates_[i];
    const std::string id = constant(ir::identity_of(pc.op, pc.elem)->as<ir::ConstExpr>());
    line("if (kiln_private & " + bit(c, 0) + ")");
    line("  for (unsigned long long kiln_f = kiln_thread(); kiln_f < " + elements_name(c) + "; kiln_f += kiln_block_threads)");
    if (pc.narrow_bound > 0)
      line("    if (kiln_private & " + bit(c, 1) + ") " + copy32_name(c) + "[kiln_f] = 0u; else " + copy_name(c) + "[kiln_f] = " + id + ";");
    else
      line("    " + copy_name(c) + "[kiln_f] = " + id + ";");
  }
  line("__syncthreads();");
  --depth_;
  line("}");
}

void Emitter::private_update(const std::vector<ir::Expr>& indices, int c, const char* fn, const std::string& operand) {
  const PrivateCandidate& pc = privates_[static_cast<std::size_t>(c)];
  const ArrayNames& n = array(pc.array);
  const std::string t = type_name(pc.elem);
  line("{");
  ++depth_;
  std::string in_range, flat, offset;
  for (int d = 0; d < n.rank; ++d) {
    const std::string x = fmt::format("kiln_x{}", d);
    line("const long long " + x + " = " + expr(indices[static_cast<std::size_t>(d)]) + ";");
    in_range += " && (unsigned long long)" + x + " < (unsigned long long)" + n.extent[d];
    flat = d ? "(" + flat + ") * (unsigned long long)" + n.extent[d] + " + (unsigned long long)" + x : "(unsigned long long)" + x;
    offset += (d ? " + " : "") + x + (n.stride[d].empty() ? "" : " * " + n.stride[d]);
  }
  line("const " + t + " kiln_v = (" + t + ")" + operand + ";");
  // An index out of range takes the plain path: the copy has no such element, and the global update does what
  // the kernel does without copies (bounds-checked kernels never get here with one).
  line("if ((kiln_private & " + bit(c, 0) + ")" + in_range + ") {");
  ++depth_;
  line("const unsigned long long kiln_f = " + flat + ";");
  if (pc.narrow_bound > 0)
    line("if (kiln_private & " + bit(c, 1) + ") atomicAdd(&" + copy32_name(c) + "[kiln_f], (unsigned)kiln_v); else " + fn + "(&" +
         copy_name(c) + "[kiln_f], kiln_v);");
  else
    line(std::string(fn) + "(&" + copy_name(c) + "[kiln_f], kiln_v);");
  --depth_;
  line("} else {");
  line("  " + std::string(fn) + "(&" + n.data + "[" + offset + "], kiln_v);");
  line("}");
  --depth_;
  line("}");
}

void Emitter::private_merge() {
  if (privates_.empty()) return;
  line("if (kiln_private) {  // the block's copies into the arrays: elements still at the identity change nothing");
  ++depth_;
  line("__syncthreads();");
  for (std::size_t i = 0; i < privates_.size(); ++i) {
    const int c = static_cast<int>(i);
    const PrivateCandidate& pc = privates_[i];
    const ArrayNames& n = array(pc.array);
    const std::string t = type_name(pc.elem);
    const std::string id = constant(ir::identity_of(pc.op, pc.elem)->as<ir::ConstExpr>());
    line("if (kiln_private & " + bit(c, 0) + ")");
    line("  for (unsigned long long kiln_f = kiln_thread(); kiln_f < " + elements_name(c) + "; kiln_f += kiln_block_threads) {");
    depth_ += 2;
    if (pc.narrow_bound > 0)  // a 32-bit count, sign-extended: the block's sum fits (launch_model.hpp)
      line("const " + t + " kiln_v = (kiln_private & " + bit(c, 1) + ") ? (" + t + ")(long long)(int)" + copy32_name(c) + "[kiln_f] : " +
           copy_name(c) + "[kiln_f];");
    else
      line("const " + t + " kiln_v = " + copy_name(c) + "[kiln_f];");
    line("if (kiln_same_bits(kiln_v, (" + t + ")" + id + ")) continue;");
    std::string offset;
    line("unsigned long long kiln_rest = kiln_f;");
    for (int d = n.rank - 1; d >= 0; --d) {
      const std::string x = fmt::format("kiln_x{}", d);
      if (d > 0) {
        line("const long long " + x + " = (long long)(kiln_rest % (unsigned long long)" + n.extent[d] + ");");
        line("kiln_rest /= (unsigned long long)" + n.extent[d] + ";");
      } else {
        line("const long long " + x + " = (long long)kiln_rest;");
      }
    }
    for (int d = 0; d < n.rank; ++d)
      offset += (d ? " + " : "") + fmt::format("kiln_x{}", d) + (n.stride[d].empty() ? "" : " * " + n.stride[d]);
    line(std::string(merge_fn(pc.op)) + "(&" + n.data + "[" + offset + "], kiln_v);");
    depth_ -= 2;
    line("  }");
  }
  --depth_;
  line("}");
}

}  // namespace kiln::codegen::cuda
