// Counts IR nodes with the read-only visitor: every visit_* override counts its node and recurses
// through the base class.
#include "pypto/ir/ir_size.h"

#include "pypto/ir/visitor.h"

namespace pypto::ir {

namespace {

class NodeCounter : public IRVisitor {
 public:
  std::int64_t count = 0;

 protected:
  void visit_int_imm(const IntImm&) override { ++count; }
  void visit_float_imm(const FloatImm&) override { ++count; }
  void visit_bool_imm(const BoolImm&) override { ++count; }
  void visit_var(const Var&) override { ++count; }
  void visit_binary(const Binary& e) override { ++count, IRVisitor::visit_binary(e); }
  void visit_unary(const Unary& e) override { ++count, IRVisitor::visit_unary(e); }
  void visit_call(const Call& e) override { ++count, IRVisitor::visit_call(e); }
  void visit_make_tuple(const MakeTuple& e) override { ++count, IRVisitor::visit_make_tuple(e); }
  void visit_tuple_get_item(const TupleGetItem& e) override {
    ++count, IRVisitor::visit_tuple_get_item(e);
  }
  void visit_assign(const AssignStmt& s) override { ++count, IRVisitor::visit_assign(s); }
  void visit_eval(const EvalStmt& s) override { ++count, IRVisitor::visit_eval(s); }
  void visit_return(const ReturnStmt& s) override { ++count, IRVisitor::visit_return(s); }
  void visit_seq(const SeqStmts& s) override { ++count, IRVisitor::visit_seq(s); }
  void visit_for(const ForStmt& s) override { ++count, IRVisitor::visit_for(s); }
  void visit_if(const IfStmt& s) override { ++count, IRVisitor::visit_if(s); }
  void visit_while(const WhileStmt& s) override { ++count, IRVisitor::visit_while(s); }
  void visit_yield(const YieldStmt& s) override { ++count, IRVisitor::visit_yield(s); }
  void visit_scope(const ScopeStmt& s) override { ++count, IRVisitor::visit_scope(s); }
};

}  // namespace

std::int64_t count_nodes(const Program& program) {
  NodeCounter counter;
  for (const auto& function : program.functions) {
    ++counter.count;
    counter.visit_function(*function);
  }
  return counter.count;
}

}  // namespace pypto::ir
