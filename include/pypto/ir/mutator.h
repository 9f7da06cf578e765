#pragma once

#include <functional>
#include <vector>

#include "pypto/ir/node_memory.h"
#include "pypto/ir/program.h"

namespace pypto::ir {

// Rebuilding traversal in the style of Halide's IRMutator: each mutate_* returns the node itself
// when nothing beneath it changed, so untouched subtrees stay shared.
//
// Variables are leaves: mutate_var returns the variable unchanged unless overridden. Statements
// that define variables (Assign, For, If) keep their Var objects unless the override replaces
// them; a pass that renames variables does so through `var_map`, which mutate_var consults.
class IRMutator {
 public:
  virtual ~IRMutator() = default;

  ExprPtr mutate(const ExprPtr& e);
  StmtPtr mutate(const StmtPtr& s);
  // Mutates the body; returns the same function when the body is unchanged.
  FunctionPtr mutate_function(const FunctionPtr& f);

  // Substitution applied to every variable occurrence (uses and definitions).
  NodeMap<const Var*, ExprPtr> var_map;

 protected:
  virtual ExprPtr mutate_int_imm(const std::shared_ptr<const IntImm>& e) { return e; }
  virtual ExprPtr mutate_float_imm(const std::shared_ptr<const FloatImm>& e) { return e; }
  virtual ExprPtr mutate_bool_imm(const std::shared_ptr<const BoolImm>& e) { return e; }
  virtual ExprPtr mutate_var(const std::shared_ptr<const Var>& e);  // applies var_map
  virtual ExprPtr mutate_binary(const std::shared_ptr<const Binary>& e);
  virtual ExprPtr mutate_unary(const std::shared_ptr<const Unary>& e);
  virtual ExprPtr mutate_call(const std::shared_ptr<const Call>& e);
  virtual ExprPtr mutate_make_tuple(const std::shared_ptr<const MakeTuple>& e);
  virtual ExprPtr mutate_tuple_get_item(const std::shared_ptr<const TupleGetItem>& e);

  virtual StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s);
  virtual StmtPtr mutate_eval(const std::shared_ptr<const EvalStmt>& s);
  virtual StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s);
  virtual StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s);
  virtual StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s);
  virtual StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s);
  virtual StmtPtr mutate_yield(const std::shared_ptr<const YieldStmt>& s);
  virtual StmtPtr mutate_scope(const std::shared_ptr<const ScopeStmt>& s);
  virtual StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s);

  // Whether mutate_function may release the old statements of a function armed by a
  // ReleaseWhileRebuilding as it rebuilds them (below). Only for a mutator that never looks at a
  // statement it has already passed, or at anything but a variable of one: an old statement is
  // gone once its replacement exists (variables stay alive until the walk ends).
  bool releases_old_statements_ = false;

  // Helpers for overrides: mutate every element, report whether any changed.
  std::vector<ExprPtr> mutate_all(const std::vector<ExprPtr>& es, bool* changed);
  // Maps a defining or used variable through var_map (identity when absent).
  VarPtr remap(const VarPtr& v) const;
  std::vector<VarPtr> remap_all(const std::vector<VarPtr>& vs, bool* changed) const;
};

// Releasing the old version of a function while a pass rebuilds it.
//
// A pass that rebuilds a function used to hold two whole versions of it until it returned: the
// one it read and the one it built; dropping the old one was then one more walk, over nodes long
// out of cache. Once a kernel's IR outgrows the last-level cache, every walk fetched both
// versions from memory (the git history of bench/README.md, "Pass pipeline per IR node"). When
// nothing but the pass holds the old version, each old top-level statement can instead be released
// right after its replacement is built: it is freed while still in cache, and its blocks are the
// next ones the node pool hands out.
//
// A ReleaseWhileRebuilding marks one function as consumable for its lifetime. It arms only when
// `program` and `f` are held by nothing else: the caller's reference is the program's only one,
// and the program's is the function's only one. A program that a user, a profiler or an
// instrument still holds is therefore never changed. The first rebuild_body of `f`
// (ConvertToSSA, and IRMutator::mutate_function of a mutator that allows it) releases as it
// goes; any later walk of `f` in the same scope sees a plain function. The caller must not read the
// old function's body after that rebuild: when it changed something, the old body's statements are
// gone.
class ReleaseWhileRebuilding {
 public:
  ReleaseWhileRebuilding(const ProgramPtr& program, const FunctionPtr& f);
  ~ReleaseWhileRebuilding();
  ReleaseWhileRebuilding(const ReleaseWhileRebuilding&) = delete;
  ReleaseWhileRebuilding& operator=(const ReleaseWhileRebuilding&) = delete;

 private:
  const Function* previous_;
};

// `rebuild(f.body)`; or, when `f` is armed (above) and its body is a statement list nothing else
// holds, the list of `rebuild(statement)` for each statement, each old statement moved out of
// the list and dropped as soon as its replacement exists. Variables that dropped statements
// defined stay alive until rebuild_body returns, so no address a pass recorded for an old
// variable can come back as a new node's during the walk. When every statement came back
// unchanged, they are put back and `f` is returned as it was.
StmtPtr rebuild_body(const Function& f, const std::function<StmtPtr(const StmtPtr&)>& rebuild);

// Replaces variables by expressions in `s` (a convenience over IRMutator::var_map).
StmtPtr substitute(const StmtPtr& s, const NodeMap<const Var*, ExprPtr>& map);
ExprPtr substitute(const ExprPtr& e, const NodeMap<const Var*, ExprPtr>& map);

}  // namespace pypto::ir
