// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Halo exchange: the ghost layers a kernel's stencils read, filled from the neighbouring ranks' blocks
// (non-blocking, every array of a call in one Waitall) and, at the global edges, by the border rule.
#pragma once

#include <vector>

#include "distributed/block.hpp"

namespace kiln::dist::detail {

/// The ghost layers one array needs: widths below (`lo`) and above (`hi`) its owned elements per
/// dimension, and the border rule of the stencils reading it.
struct HaloNeed {
  Block* block = nullptr;
  std::int64_t lo[kMaxRank] = {}, hi[kMaxRank] = {};
  Border border = Border::reflect;
  double cval = 0;
  std::string name;  ///< the kernel argument, for messages
};

/// Checks that every rank's block along every axis can send and fill the widths `need` asks for (the
/// same answer on every rank: it is computed from the partition, not from this rank's block). Throws
/// DistributedError naming the kernel, the argument and the fix.
void check_halo(const std::string& kernel, const HaloNeed& need);

/// One exchange in flight: started with every send and receive posted, finished by one Waitall and the
/// border fill at the global edges.
class Exchange {
 public:
  explicit Exchange(std::vector<HaloNeed> needs);
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange();
  void finish();
  /// Whether a message goes to or comes from another rank. When none does (one rank; every neighbour
  /// beyond a global edge or this rank itself across a `wrap` axis of one rank) there is nothing to
  /// overlap: finish() is local copying only.
  bool travels() const { return travels_; }
  /// Writes, before the messages arrive, the ghosts at global edges whose border rule reads only the
  /// block's own planes (finish() then writes the rest: the corners that take received ghosts).
  void fill_settled();
  /// How far reads along axis d below (or above, `high`) the block must stay from its edge to touch no
  /// ghost that a message or a late border fill writes: the widest such halo of the exchange's arrays.
  std::int64_t wait_reach(int d, bool high) const;

 private:
  std::vector<HaloNeed> needs_;
  std::vector<MPI_Request> requests_;
  bool done_ = false;
  bool travels_ = false;
  bool prefilled_ = false;
};

}  // namespace kiln::dist::detail
