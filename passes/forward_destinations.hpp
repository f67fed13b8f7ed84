// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once
#include "passes/pass.hpp"

namespace kiln::passes {

/// Writes a new array straight into the array it is copied into: `o(kiln::all) = kiln::cumsum(x)` traces an
/// allocation T, the statements that fill it, and the map `o[i] = T[i]`; when that map copies the whole of T
/// element for element, T is not returned nor used after it, and nothing between the allocation and the copy
/// touches o (its extents aside) nor binds T, the statements fill o instead, the copy and the allocation go,
/// and the shape checks of the copy move before them (so a wrong shape still fails before anything is
/// written).
/// T may also be made by an allocating map that later statements go on to fill (a sort's keys: `o(kiln::all) =
/// kiln::sort(x)` copies x into T, sorts T and copies T into o): the map then writes o, and the sort sorts o
/// in place, one copy instead of two. A sort needs compact rows, so o must be compact whatever the call
/// passes: an array the kernel allocates or a 1-d parameter of stride 1 (the stride is in the signature).
/// A map copied straight away needs none of this (fusion puts the map into the copy); this is for producers
/// that are several loops (a scan's three passes, a sort).
ir::Function forward_destinations(const ir::Function& f, PassContext& ctx);

}  // namespace kiln::passes
