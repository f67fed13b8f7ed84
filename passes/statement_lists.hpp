// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The walks shared by the passes that rewrite statement lists bottom-up. Fusion, temporaries and buffer
// reuse decide about neighbouring statements of one block, so each block is handed over as a list once the
// blocks nested in it are done; the hoisting passes replace each loop by what they take out of it followed
// by the loop, once the loops nested in it are done; the lowering passes and collapse_parfors replace one
// statement by several, spliced into its block.
#pragma once

#include <functional>
#include <unordered_set>
#include <vector>

#include "ir/stmt.hpp"
#include "ir/visitor.hpp"

namespace kiln::passes {

/// Transforms the statements of one block, already rewritten themselves, into the block's new statements.
using StatementListRewrite = std::function<std::vector<ir::Stmt>(std::vector<ir::Stmt>)>;

/// Told of each For, Parfor or If the walk rebuilt around a changed body: the original node, then the new
/// one (fusion keeps its parfor numbering across the rebuild).
using RebuiltStmt = std::function<void(const ir::Stmt& before, const ir::Stmt& after)>;

/// Rebuilds `s` bottom-up: every Block becomes a block of `rewrite_list` applied to its rewritten statements,
/// innermost blocks first and in source order (a For's, a Parfor's body; an If's then branch before its
/// else branch). A For, Parfor or If whose bodies come back unchanged is returned as is (same node); other
/// statements are not entered. A null `s` (a missing else branch) stays null.
ir::Stmt rewrite_statement_lists(const ir::Stmt& s, const StatementListRewrite& rewrite_list,
                                 const RebuiltStmt& rebuilt = {});

/// The statements that replace one For or Parfor, whose body the walk has already rewritten.
using LoopExpansion = std::function<std::vector<ir::Stmt>(const ir::Stmt& loop)>;

/// Rebuilds `body` with every For and Parfor replaced by `expand_loop` of it, innermost loops first and in
/// source order (an If's then branch before its else branch), looking through blocks and ifs. A body that
/// was a single statement and is still one is returned unwrapped; otherwise the result is a block. A null
/// `body` (a missing else branch) stays null.
ir::Stmt expand_loops(const ir::Stmt& body, const LoopExpansion& expand_loop);

/// A mutator whose visits may replace one statement by several: `splice` makes a block that the block
/// around it takes apart, so that what the statements declare (a lowered statement's target array, a let
/// hoisted out of a loop nest) stays visible to the statements after them. A spliced block that is not a
/// statement of a block (a loop's whole body) stays a block.
class SplicingMutator : public ir::IRMutator {
 protected:
  using ir::IRMutator::visit;
  /// A block of `stmts` that the enclosing block splices in.
  ir::Stmt splice(std::vector<ir::Stmt> stmts);
  /// Mutates each statement, then splices; the same node when no statement changed.
  ir::Stmt visit(const ir::BlockStmt& b, const ir::Stmt& self) override;
  /// Told of each statement of a block, as it was, once it has been mutated (lower_stencils learns what
  /// the statements before the next one establish).
  virtual void mutated(const ir::Stmt& /*original*/) {}

 private:
  std::unordered_set<const ir::StmtNode*> spliced_;
  std::vector<ir::Stmt> alive_;  ///< keeps the spliced blocks alive, so that their addresses stay unique
};

}  // namespace kiln::passes
