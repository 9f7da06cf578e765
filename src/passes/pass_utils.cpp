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
    if (!cat || *cat == OpCategory::Store || *cat == OpCategory::Communication) pure = false;
    // The pl.system ops order the device's work; only the core counts are plain values.
    if (cat == OpCategory::System && !c.type()->as<ScalarType>()) pure = false;
    IRVisitor::visit_call(c);
  }
};

}  // namespace

bool attr_flag(const Attrs& attrs, const char* key) {
  const AttrValue* v = find_attr(attrs, key);
  const auto* on = v ? std::get_if<bool>(v) : nullptr;
  return on && *on;
}

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

size_t TileTypeCache::KeyHash::operator()(const Key& k) const {
  // Boost's hash_combine mixing step, over every field of the key.
  size_t h = 0;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (int64_t d : k.shape) mix(std::hash<int64_t>()(d));
  mix(static_cast<size_t>(k.dtype));
  mix(k.space ? static_cast<size_t>(*k.space) + 1 : 0);
  if (k.memref) {
    mix(static_cast<size_t>(k.memref->space));
    mix(std::hash<int64_t>()(k.memref->buffer_id));
    mix(std::hash<int64_t>()(k.memref->size));
    mix(std::hash<int64_t>()(k.memref->addr));
  }
  return h;
}

TypePtr TileTypeCache::get(const TileType& like, std::optional<MemorySpace> space,
                           std::optional<MemRef> memref) {
  probe_.shape.assign(like.shape.begin(), like.shape.end());
  probe_.dtype = like.dtype;
  probe_.space = space;
  probe_.memref = memref;
  auto it = types_.find(probe_);
  if (it != types_.end()) return it->second;
  TypePtr type = tile_type(like.shape, like.dtype, space, memref);
  types_.emplace(probe_, type);
  return type;
}

TypePtr TileTypeCache::with_space(const TypePtr& tile, MemorySpace space) {
  const auto* t = as_tile(tile);
  if (!t) return tile;
  std::optional<MemRef> memref = t->memref;
  if (memref) memref->space = space;
  return get(*t, space, memref);
}

TypePtr TileTypeCache::with_memref(const TypePtr& tile, std::optional<MemRef> memref) {
  const auto* t = as_tile(tile);
  if (!t) return tile;
  return get(*t, memref ? std::optional<MemorySpace>(memref->space) : t->space, memref);
}

ExprPtr rebuild_call(const Call& call, std::vector<ExprPtr> args, AttrList attrs, TypePtr type) {
  return ir::make_node<Call>(call.call_kind, call.callee, std::move(args), std::move(attrs),
                             std::move(type), call.span());
}

ExprPtr make_typed_op_call(std::string op, std::vector<ExprPtr> args, Attrs attrs, TypePtr type,
                           Span span) {
  return ir::make_node<Call>(CallKind::Op, std::move(op), std::move(args), std::move(attrs),
                             std::move(type), span);
}

namespace {

// The base visitor visits defined variables too, so definitions and uses are both counted.
class OccurrenceCounter : public IRVisitor {
 public:
  ir::NodeMap<const Var*, int64_t>* out;

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

void count_var_occurrences(const StmtPtr& s, ir::NodeMap<const Var*, int64_t>* out) {
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

// Retypes tiles in one rebuilding walk: each tile variable's new type is decided the first time
// the walk meets it (its definition, in a valid program) and remembered in var_map, the variable
// itself when its type stays. A separate walk to collect the tiles first cost a whole extra pass
// over the IR in each of the three memory passes that use this.
class TileRetyper : public IRMutator {
 public:
  using NewType = std::function<std::optional<TypePtr>(const Var&)>;
  // It reads only the statement at hand and remembers variables, so it may release the old IR.
  explicit TileRetyper(const NewType& new_type) : new_type_(new_type) {
    releases_old_statements_ = true;
  }

  // Decides the replacement of `v` unless already decided; returns it (null for a non-tile).
  const ExprPtr* decide(const VarPtr& v) {
    if (!as_tile(v->type())) return nullptr;
    auto [it, inserted] = var_map.try_emplace(v.get());
    if (inserted) {
      auto t = new_type(*v);
      if (t && !types_equal(*t, v->type())) {
        it->second = make_var(v->name, *t, v->span());
      } else {
        it->second = v;
      }
    }
    return &it->second;
  }

 protected:
  ExprPtr mutate_var(const std::shared_ptr<const Var>& e) override {
    const ExprPtr* to = decide(e);
    return to ? *to : e;
  }
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    ExprPtr value = mutate(s->value);
    decide(s->var);
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
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    for (const auto& v : s->iter_args) decide(v);
    for (const auto& v : s->return_vars) decide(v);
    return IRMutator::mutate_for(s);
  }
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    for (const auto& v : s->iter_args) decide(v);
    for (const auto& v : s->return_vars) decide(v);
    return IRMutator::mutate_while(s);
  }
  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    for (const auto& v : s->return_vars) decide(v);
    return IRMutator::mutate_if(s);
  }

 private:
  std::optional<TypePtr> new_type(const Var& v) const { return new_type_(v); }
  const NewType& new_type_;
};

}  // namespace

FunctionPtr retype_tiles(const FunctionPtr& f,
                         const std::function<std::optional<TypePtr>(const Var&)>& new_type) {
  TileRetyper retyper(new_type);
  retyper.var_map.reserve(expected_variable_count(*f));
  for (const auto& p : f->params) retyper.decide(p.var);
  // Returns `f` itself when no variable changed: every var_map entry is then the variable.
  return retyper.mutate_function(f);
}

size_t expected_variable_count(const Function& f) {
  const auto* seq = f.body ? f.body->as<SeqStmts>() : nullptr;
  return f.params.size() + (seq ? seq->stmts.size() : 1);
}

ProgramPtr map_functions(const ProgramPtr& program,
                         const std::function<FunctionPtr(const FunctionPtr&)>& fn) {
  bool changed = false;
  std::vector<FunctionPtr> fns;
  fns.reserve(program->functions.size());
  for (const auto& f : program->functions) {
    // A program that only this pass holds is rebuilt releasing each old function as it goes.
    ir::ReleaseWhileRebuilding release(program, f);
    fns.push_back(fn(f));
    changed |= fns.back() != f;
  }
  if (!changed) return program;
  return program->with_functions(std::move(fns));
}

ProgramPtr map_incore_functions(const ProgramPtr& program,
                                const std::function<FunctionPtr(const FunctionPtr&)>& fn) {
  return map_functions(program,
                       [&](const FunctionPtr& f) { return is_kernel(f->type) ? fn(f) : f; });
}

ExprPtr int_tuple(const std::vector<int64_t>& values) {
  std::vector<ExprPtr> elements;
  elements.reserve(values.size());
  for (int64_t v : values) elements.push_back(make_int(v));
  return make_tuple(std::move(elements));
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
