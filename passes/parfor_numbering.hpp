// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The numbering of parfors in the fusion report. Parfors entering fusion are numbered #1, #2, ... in source
// order; a parfor fusion builds is labelled with the numbers of the originals it holds ("#1+#3"). The
// numbering also records the parfor graph of the report and the Graphviz dump (PassContext::parfors): the
// parfors as they enter, the arrays and reduction results flowing between them, and the groups after fusion.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "passes/pass.hpp"
#include "passes/squeeze_unit_dims.hpp"

namespace kiln::passes {

class ParforNumbering {
 public:
  explicit ParforNumbering(PassContext& ctx) : ctx_(ctx) {}

  /// Numbers the parfors of `body` in a pre-order walk and records them and the dataflow between them in
  /// ctx.parfors; notes the unit dimensions `squeezed` dropped from each.
  void number(const ir::Stmt& body, const SqueezedParfors& squeezed);
  /// Records the groups after fusion: the originals each parfor of `body` holds, in order.
  void record_after(const ir::Stmt& body);

  /// `s` holds the original parfors `ids`.
  void remember(const ir::Stmt& s, std::vector<int> ids);
  /// The parfors nested in `after`, a renamed copy of `before`, hold the originals theirs held.
  void carry(const ir::Stmt& before, const ir::Stmt& after);
  /// The originals that `s` holds (none for a statement the numbering has not seen).
  const std::vector<int>& ids(const ir::Stmt& s) { return ids_[s.get()]; }
  /// "#1+#3", or "#?" for a statement the numbering has not seen.
  std::string label(const ir::Stmt& s) const;

 private:
  PassContext& ctx_;
  /// The original parfors each parfor node holds. Nodes are kept alive in alive_ so that no address in
  /// the map is ever reused by a new node.
  std::unordered_map<const ir::StmtNode*, std::vector<int>> ids_;
  std::vector<ir::Stmt> alive_;
};

}  // namespace kiln::passes
