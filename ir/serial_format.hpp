// What both directions of ir/serialize.hpp share: the range of each enum the format carries.
#pragma once

#include "ir/stmt.hpp"

namespace kiln::ir::serial {

// The last enumerator of each enum the format carries: a decoded byte above it is refused.
inline constexpr auto kLastDType = DType::F64;
inline constexpr auto kLastVarKind = VarKind::Binding;
inline constexpr auto kLastExprKind = ExprKind::Call;
inline constexpr auto kLastStmtKind = StmtKind::Launch;
inline constexpr auto kLastUnaryOp = UnaryOp::BitNot;
inline constexpr auto kLastBinaryOp = BinaryOp::Ge;
inline constexpr auto kLastIntrinsic = Intrinsic::IsFinite;
inline constexpr auto kLastReduceOp = ReduceOp::ArgMax;
inline constexpr auto kLastBorder = Border::skip;

}  // namespace kiln::ir::serial
