#include "pass_utils.h"

#include "pypto/ir/scalar_arith.h"

namespace pypto::passes::detail {

using namespace ir;

const TileType* as_tile(const TypePtr& t) { return t ? t->as<TileType>() : nullptr; }
const TileType* as_tile(const ExprPtr& e) { return e ? as_tile(e->type()) : nullptr; }
bool is_tensor(const TypePtr& t) { return t && t->kind() == TypeKind::Tensor; }
bool is_scalar(const TypePtr& t) { return t && t->kind() == TypeKind::Scalar; }

const Call* as_op_call(const ExprPtr& e, std::string_view name) {
  const auto* c = e ? e->as<Call>() : nullptr;
  if (!c || c->call_kind != CallKind::Op) return nullptr;
  if (!name.empty() && c->callee != name) return nullptr;
  return c;
}

std::optional<OpCategory> op_category(const Call& call) {
  if (call.call_kind != CallKind::Op) return std::nullopt;
  const OpDef* def = OpRegistry::global().find(call.callee);
  if (!def) return std::nullopt;
  return def->category;
}

namespace {

class PurityCheck : public IRVisitor {
 public:
  bool pure = true;

 protected:
  void visit_call(const Call& c) override {
    if (c.call_kind == CallKind::Function) pure = false;
    auto cat = op_category(c);
    if (!cat || *cat == OpCategory::Store) pure = false;
    IRVisitor::visit_call(c);
  }
};

}  // namespace

bool is_pure(const ExprPtr& e) {
  PurityCheck check;
  check.visit(e);
  return check.pure;
}

TypePtr with_space(const TypePtr& tile, MemorySpace space) {
  const auto* t = as_tile(tile);
  if (!t) return tile;
  std::optional<MemRef> memref = t->memref;
  if (memref) memref->space = space;
  return tile_type(t->shape, t->dtype, space, memref);
}

TypePtr with_memref(const TypePtr& tile, std::optional<MemRef> memref) {
  const auto* t = as_tile(tile);
  if (!t) return tile;
  return tile_type(t->shape, t->dtype,
                   memref ? std::optional<MemorySpace>(memref->space) : t->space, memref);
}

ExprPtr rebuild_call(const Call& call, std::vector<ExprPtr> args, Attrs attrs, TypePtr type) {
  return ir::make_node<Call>(call.call_kind, call.callee, std::move(args), std::move(attrs),
                             std::move(type), call.span());
}

ExprPtr make_typed_op_call(std::string op, std::vector<ExprPtr> args, Attrs attrs, TypePtr type,
                           Span span) {
  return ir::make_node<Call>(CallKind::Op, std::move(op), std::move(args), std::move(attrs),
                             std::move(type), span);
}

namespace {

class DefCollector : public IRVisitor {
 public:
  std::vector<VarPtr>* out;

 protected:
  void visit_assign(const AssignStmt& s) override {
    out->push_back(s.var);
    IRVisitor::visit_assign(s);
  }
  void visit_for(const ForStmt& s) override {
    out->push_back(s.loop_var);
    for (const auto& v : s.iter_args) out->push_back(v);
    IRVisitor::visit_for(s);
    for (const auto& v : s.return_vars) out->push_back(v);
  }
  void visit_if(const IfStmt& s) override {
    IRVisitor::visit_if(s);
    for (const auto& v : s.return_vars) out->push_back(v);
  }
};

// The base visitor visits defined variables too, so definitions and uses are both counted.
class OccurrenceCounter : public IRVisitor {
 public:
  std::unordered_map<const Var*, int64_t>* out;

 protected:
  void visit_var(const Var& v) override { ++(*out)[&v]; }
};

class UseCollector : public IRVisitor {
 public:
  std::vector<const Var*>* out;

 protected:
  void visit_var(const Var& v) override { out->push_back(&v); }
};

}  // namespace

std::vector<VarPtr> defined_vars(const StmtPtr& s) {
  std::vector<VarPtr> out;
  DefCollector c;
  c.out = &out;
  c.visit(s);
  return out;
}

void count_var_occurrences(const StmtPtr& s, std::unordered_map<const Var*, int64_t>* out) {
  OccurrenceCounter c;
  c.out = out;
  c.visit(s);
}

void collect_used_vars(const ExprPtr& e, std::vector<const Var*>* out) {
  UseCollector c;
  c.out = out;
  c.visit(e);
}

std::vector<StmtPtr> stmt_list(const StmtPtr& s) {
  if (!s) return {};
  if (const auto* seq = s->as<SeqStmts>()) return seq->stmts;
  return {s};
}

namespace {

class TileRetyper : public IRMutator {
 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    ExprPtr value = mutate(s->value);
    VarPtr var = remap(s->var);
    if (var != s->var && as_tile(var->type())) {
      if (const auto* call = value->as<Call>()) {
        if (!types_equal(call->type(), var->type())) {
          value = rebuild_call(*call, call->args, call->attrs, var->type());
        }
      }
    }
    if (value == s->value && var == s->var) return s;
    return ir::make_node<AssignStmt>(std::move(var), std::move(value), s->span());
  }
};

class TileVarFinder : public IRVisitor {
 public:
  std::vector<VarPtr> vars;
  std::unordered_set<const Var*> seen;
  void add(const VarPtr& v) {
    if (as_tile(v->type()) && seen.insert(v.get()).second) vars.push_back(v);
  }

 protected:
  void visit_assign(const AssignStmt& s) override {
    add(s.var);
    IRVisitor::visit_assign(s);
  }
  void visit_for(const ForStmt& s) override {
    for (const auto& v : s.iter_args) add(v);
    for (const auto& v : s.return_vars) add(v);
    IRVisitor::visit_for(s);
  }
  void visit_if(const IfStmt& s) override {
    for (const auto& v : s.return_vars) add(v);
    IRVisitor::visit_if(s);
  }
};

}  // namespace

FunctionPtr retype_tiles(const FunctionPtr& f,
                         const std::function<std::optional<TypePtr>(const Var&)>& new_type) {
  TileVarFinder finder;
  for (const auto& p : f->params) finder.add(p.var);
  finder.visit(f->body);
  TileRetyper retyper;
  for (const auto& v : finder.vars) {
    auto t = new_type(*v);
    if (!t || types_equal(*t, v->type())) continue;
    retyper.var_map[v.get()] = make_var(v->name, *t, v->span());
  }
  if (retyper.var_map.empty()) return f;
  return retyper.mutate_function(f);
}

ProgramPtr map_functions(const ProgramPtr& program,
                         const std::function<FunctionPtr(const FunctionPtr&)>& fn) {
  bool changed = false;
  std::vector<FunctionPtr> fns;
  fns.reserve(program->functions.size());
  for (const auto& f : program->functions) {
    fns.push_back(fn(f));
    changed |= fns.back() != f;
  }
  if (!changed) return program;
  return program->with_functions(std::move(fns));
}

ProgramPtr map_incore_functions(const ProgramPtr& program,
                                const std::function<FunctionPtr(const FunctionPtr&)>& fn) {
  return map_functions(
      program, [&](const FunctionPtr& f) { return f->type == FunctionType::InCore ? fn(f) : f; });
}

std::string span_text(Span span) {
  if (!span.valid()) return "?";
  return std::to_string(span.line) + ":" + std::to_string(span.col);
}

}  // namespace pypto::passes::detail

namespace pypto::passes::detail {

ir::ScalarFold evaluate_const_int(const ir::ExprPtr& e) {
  using namespace ir;
  const auto* st = e && e->type() ? e->type()->as<ScalarType>() : nullptr;
  if (!e || (st && is_float(st->dtype))) return {};
  ScalarFold r = fold_literal_expr(e);
  if (r.value && r.value->kind != Scalar::Kind::Int) return {};
  return r;
}

}  // namespace pypto::passes::detail
