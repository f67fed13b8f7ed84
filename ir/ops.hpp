// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Operators, intrinsics and reduction kinds of the IR, with their names and algebraic facts.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "kiln/dtype.hpp"
#include "kiln/ops.hpp"

namespace kiln::ir {

// The operator enums are public (kiln/ops.hpp); the IR refers to them as ir::BinaryOp etc. too.
using kiln::AtomicOp;
using kiln::BinaryOp;
using kiln::Border;
using kiln::Intrinsic;
using kiln::ReduceOp;
using kiln::UnaryOp;

std::string_view name_of(UnaryOp op);
std::string_view name_of(BinaryOp op);     ///< the printed spelling, e.g. "+", "min", "&&"
std::string_view name_of(Intrinsic fn);
std::string_view name_of(ReduceOp op);

bool is_comparison(BinaryOp op);
bool is_commutative(BinaryOp op);
int arity(Intrinsic fn);
/// True for intrinsics defined on floats only; integer arguments are converted to f64 by the frontend.
bool is_float_only(Intrinsic fn);
/// True for intrinsics whose result is bool (isnan, isinf, isfinite).
bool returns_bool(Intrinsic fn);

std::optional<UnaryOp> parse_unary(std::string_view s);
std::optional<BinaryOp> parse_binary(std::string_view s);
std::optional<Intrinsic> parse_intrinsic(std::string_view s);
std::optional<ReduceOp> parse_reduce(std::string_view s);
std::string_view name_of(Border b);

/// The binary operator that combines two partial results of a reduction (for ArgMin/ArgMax: the one
/// that compares their values).
BinaryOp combiner(ReduceOp op);
bool is_arg_reduction(ReduceOp op);

}  // namespace kiln::ir
