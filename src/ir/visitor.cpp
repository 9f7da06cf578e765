#include "pypto/ir/visitor.h"

namespace pypto::ir {

void IRVisitor::visit(const ExprPtr& e) {
  if (!e) return;
  switch (e->kind()) {
    case ExprKind::IntImm:
      return visit_int_imm(*e->as<IntImm>());
    case ExprKind::FloatImm:
      return visit_float_imm(*e->as<FloatImm>());
    case ExprKind::BoolImm:
      return visit_bool_imm(*e->as<BoolImm>());
    case ExprKind::Var:
      return visit_var(*e->as<Var>());
    case ExprKind::Binary:
      return visit_binary(*e->as<Binary>());
    case ExprKind::Unary:
      return visit_unary(*e->as<Unary>());
    case ExprKind::Call:
      return visit_call(*e->as<Call>());
    case ExprKind::MakeTuple:
      return visit_make_tuple(*e->as<MakeTuple>());
    case ExprKind::TupleGetItem:
      return visit_tuple_get_item(*e->as<TupleGetItem>());
  }
}

void IRVisitor::visit(const StmtPtr& s) {
  if (!s) return;
  switch (s->kind()) {
    case StmtKind::Assign:
      return visit_assign(*s->as<AssignStmt>());
    case StmtKind::Eval:
      return visit_eval(*s->as<EvalStmt>());
    case StmtKind::Return:
      return visit_return(*s->as<ReturnStmt>());
    case StmtKind::Seq:
      return visit_seq(*s->as<SeqStmts>());
    case StmtKind::For:
      return visit_for(*s->as<ForStmt>());
    case StmtKind::If:
      return visit_if(*s->as<IfStmt>());
    case StmtKind::Yield:
      return visit_yield(*s->as<YieldStmt>());
    case StmtKind::Scope:
      return visit_scope(*s->as<ScopeStmt>());
    case StmtKind::While:
      return visit_while(*s->as<WhileStmt>());
  }
}

void IRVisitor::visit_function(const Function& f) {
  for (const auto& p : f.params) visit(p.var);
  visit(f.body);
}

void IRVisitor::visit_binary(const Binary& e) {
  visit(e.a);
  visit(e.b);
}
void IRVisitor::visit_unary(const Unary& e) { visit(e.a); }
void IRVisitor::visit_call(const Call& e) {
  for (const auto& a : e.args) visit(a);
}
void IRVisitor::visit_make_tuple(const MakeTuple& e) {
  for (const auto& a : e.elements) visit(a);
}
void IRVisitor::visit_tuple_get_item(const TupleGetItem& e) { visit(e.tuple); }

void IRVisitor::visit_assign(const AssignStmt& s) {
  visit(s.value);
  visit(s.var);
}
void IRVisitor::visit_eval(const EvalStmt& s) { visit(s.expr); }
void IRVisitor::visit_return(const ReturnStmt& s) {
  for (const auto& v : s.values) visit(v);
}
void IRVisitor::visit_seq(const SeqStmts& s) {
  for (const auto& st : s.stmts) visit(st);
}
void IRVisitor::visit_for(const ForStmt& s) {
  visit(s.start);
  visit(s.stop);
  visit(s.step);
  for (const auto& v : s.init_values) visit(v);
  visit(s.loop_var);
  for (const auto& v : s.iter_args) visit(v);
  visit(s.body);
  for (const auto& v : s.return_vars) visit(v);
}
void IRVisitor::visit_if(const IfStmt& s) {
  visit(s.cond);
  visit(s.then_body);
  visit(s.else_body);
  for (const auto& v : s.return_vars) visit(v);
}
void IRVisitor::visit_yield(const YieldStmt& s) {
  for (const auto& v : s.values) visit(v);
}
void IRVisitor::visit_scope(const ScopeStmt& s) { visit(s.body); }
void IRVisitor::visit_while(const WhileStmt& s) {
  for (const auto& v : s.init_values) visit(v);
  for (const auto& v : s.iter_args) visit(v);
  visit(s.cond);
  visit(s.body);
  for (const auto& v : s.return_vars) visit(v);
}

namespace {

// Definitions are statements, so the collector walks statements only and skips expressions.
class DefCollector : public IRVisitor {
 public:
  explicit DefCollector(std::vector<VarPtr>* out) : out_(out) {}

 protected:
  void visit_assign(const AssignStmt& s) override { out_->push_back(s.var); }
  void visit_eval(const EvalStmt&) override {}
  void visit_return(const ReturnStmt&) override {}
  void visit_yield(const YieldStmt&) override {}
  void visit_for(const ForStmt& s) override {
    out_->push_back(s.loop_var);
    for (const auto& v : s.iter_args) out_->push_back(v);
    visit(s.body);
    for (const auto& v : s.return_vars) out_->push_back(v);
  }
  void visit_while(const WhileStmt& s) override {
    for (const auto& v : s.iter_args) out_->push_back(v);
    visit(s.body);
    for (const auto& v : s.return_vars) out_->push_back(v);
  }
  void visit_if(const IfStmt& s) override {
    visit(s.then_body);
    visit(s.else_body);
    for (const auto& v : s.return_vars) out_->push_back(v);
  }

 private:
  std::vector<VarPtr>* out_;
};

}  // namespace

namespace {

class Mentions : public IRVisitor {
 public:
  explicit Mentions(const std::unordered_set<const Var*>& vars) : vars_(vars) {}
  bool found = false;

 protected:
  void visit_var(const Var& v) override { found = found || vars_.count(&v) > 0; }

 private:
  const std::unordered_set<const Var*>& vars_;
};

}  // namespace

bool mentions(const ExprPtr& e, const std::unordered_set<const Var*>& vars) {
  Mentions walk(vars);
  walk.visit(e);
  return walk.found;
}

std::vector<VarPtr> defined_vars(const StmtPtr& s) {
  std::vector<VarPtr> out;
  DefCollector(&out).visit(s);
  return out;
}

}  // namespace pypto::ir
