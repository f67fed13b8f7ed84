// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Integer (i64) expression builders for extents and indices that fold constants as they go, so that views
// and broadcasting produce the same expression for the same extent (`max((n - 2), 0)` for a[1:-1], a[:-2]
// and a[2:] alike) and constant shapes stay constant.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/stmt.hpp"

namespace kiln::detail::ix {

ir::Expr c(std::int64_t v);
std::optional<std::int64_t> value(const ir::Expr& e);  ///< the constant, if e is one

ir::Expr add(const ir::Expr& a, const ir::Expr& b);
ir::Expr sub(const ir::Expr& a, const ir::Expr& b);
ir::Expr mul(const ir::Expr& a, const ir::Expr& b);
ir::Expr div(const ir::Expr& a, const ir::Expr& b);  ///< truncating (kiln's integer division)
ir::Expr min(const ir::Expr& a, const ir::Expr& b);
ir::Expr max(const ir::Expr& a, const ir::Expr& b);
ir::Expr select(const ir::Expr& cond, const ir::Expr& a, const ir::Expr& b);
/// Comparisons (bool results), folded when both sides are constants.
ir::Expr lt(const ir::Expr& a, const ir::Expr& b);
ir::Expr eq(const ir::Expr& a, const ir::Expr& b);
/// Logical and of bools, dropping constant-true operands.
ir::Expr both(const ir::Expr& a, const ir::Expr& b);

}  // namespace kiln::detail::ix
