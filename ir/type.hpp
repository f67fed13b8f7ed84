// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// IR types and variables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/dtype.hpp"

namespace kiln::ir {

/// A scalar (rank 0) or an array of rank 1..kMaxRank with strides known at run time.
struct Type {
  DType elem = DType::F64;
  std::uint8_t rank = 0;
  /// Arrays only: the innermost stride is known to be 1, so the innermost loop can vectorize without gathers.
  bool unit_stride = false;
  /// Arrays only: bit d set when the extent of dimension d is known to be 1 (kernels are specialized on
  /// this, so that NumPy broadcasting is decided when tracing).
  std::uint8_t unit_dims = 0;

  static Type scalar(DType t) { return Type{t, 0, false, 0}; }
  static Type array(DType t, int rank, bool unit_stride, std::uint8_t unit_dims = 0) {
    return Type{t, static_cast<std::uint8_t>(rank), unit_stride, unit_dims};
  }
  bool unit_dim(int d) const { return (unit_dims >> d) & 1; }
  bool is_array() const { return rank > 0; }
  bool is_scalar() const { return rank == 0; }
  friend bool operator==(const Type&, const Type&) = default;
};

std::string to_string(const Type& t);

/// Where a variable comes from; it decides what may be done with it.
enum class VarKind : std::uint8_t {
  Param,  ///< kernel argument: scalars are read-only, arrays are readable and writable
  Local,  ///< a mutable local scalar introduced by Let, or an array introduced by Allocate
  Index,  ///< induction variable of a For or Parfor (read-only)
  Binding,  ///< an array variable naming another array, rebindable (BindStmt): may alias any array of its type
};

/// A variable. Identity is the node's address; the name is only for printing and diagnostics.
struct VarNode {
  std::string name;
  Type type;
  VarKind kind;
  std::string where;  ///< where the user declared it ("file.cpp:12"), for diagnostics; may be empty
};
using Var = std::shared_ptr<const VarNode>;

inline Var make_var(std::string name, Type type, VarKind kind, std::string where = {}) {
  return std::make_shared<const VarNode>(VarNode{std::move(name), type, kind, std::move(where)});
}

}  // namespace kiln::ir
