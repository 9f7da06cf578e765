#pragma once

#include <unordered_set>
#include <vector>

#include "pypto/ir/program.h"

namespace pypto::ir {

// Read-only traversal. Override the visit_* of the nodes you care about and call the base
// version to keep recursing into children.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  void visit(const ExprPtr& e);
  void visit(const StmtPtr& s);
  void visit_function(const Function& f);  // visits params, then the body

 protected:
  virtual void visit_int_imm(const IntImm&) {}
  virtual void visit_float_imm(const FloatImm&) {}
  virtual void visit_bool_imm(const BoolImm&) {}
  virtual void visit_var(const Var&) {}
  virtual void visit_binary(const Binary& e);
  virtual void visit_unary(const Unary& e);
  virtual void visit_call(const Call& e);
  virtual void visit_make_tuple(const MakeTuple& e);
  virtual void visit_tuple_get_item(const TupleGetItem& e);

  virtual void visit_assign(const AssignStmt& s);
  virtual void visit_eval(const EvalStmt& s);
  virtual void visit_return(const ReturnStmt& s);
  virtual void visit_seq(const SeqStmts& s);
  virtual void visit_for(const ForStmt& s);
  virtual void visit_if(const IfStmt& s);
  virtual void visit_yield(const YieldStmt& s);
  virtual void visit_scope(const ScopeStmt& s);
  virtual void visit_while(const WhileStmt& s);
};

// Whether expression `e` reads any variable of `vars`.
bool mentions(const ExprPtr& e, const std::unordered_set<const Var*>& vars);

// Every Var defined by a statement tree: Assign targets, loop vars, iter_args, return_vars.
std::vector<VarPtr> defined_vars(const StmtPtr& s);

}  // namespace pypto::ir
