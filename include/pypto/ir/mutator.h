#pragma once

#include <unordered_map>

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
  std::unordered_map<const Var*, ExprPtr> var_map;

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

  // Helpers for overrides: mutate every element, report whether any changed.
  std::vector<ExprPtr> mutate_all(const std::vector<ExprPtr>& es, bool* changed);
  // Maps a defining or used variable through var_map (identity when absent).
  VarPtr remap(const VarPtr& v) const;
  std::vector<VarPtr> remap_all(const std::vector<VarPtr>& vs, bool* changed) const;
};

// Replaces variables by expressions in `s` (a convenience over IRMutator::var_map).
StmtPtr substitute(const StmtPtr& s, const std::unordered_map<const Var*, ExprPtr>& map);
ExprPtr substitute(const ExprPtr& e, const std::unordered_map<const Var*, ExprPtr>& map);

}  // namespace pypto::ir
