// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fusion of stencils with their pointwise neighbours, before lower_stencils: once lowered, a stencil's
// interior and border parfors cover other index spaces than the maps around it, so fuse_parfors cannot join
// them any more.
#pragma once

#include "passes/pass.hpp"

namespace kiln::passes {

/// In each block, repeatedly:
/// - a pointwise consumer `r[i] = g(s[i], ...)` (a parfor over the stencil's space) of an allocated stencil
///   target s that nothing else uses becomes part of the stencil: it writes r[i] = g(value, ...) instead
///   (not for Border::skip, whose skipped elements are no function of the neighbourhood);
/// - a pointwise producer `t[i] = f(x[i], ...)` of a window t that nothing else uses is recomputed at every
///   read: t[i + c] becomes f(x[i + c], ...), and the arrays x become windows. That is exact when the
///   border maps the read of t and of every x to the same element, so x must have the stencil's shape;
///   never for Border::constant (f(cval) is not cval).
/// Every fusion and every refusal is a note under Topic::fusion.
ir::Function fuse_stencils(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
