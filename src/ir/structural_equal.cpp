#include "pypto/ir/structural_equal.h"

#include <cstring>
#include <string_view>
#include <unordered_map>

#include <xxhash.h>

#include "pypto/ir/node_memory.h"

namespace pypto::ir {

namespace {

// Compares two trees in lockstep. Variables are matched by the order in which they are first
// met (definition sites come first in a well-formed program): the first time `a` meets `x` and
// `b` meets `y` at the same position, x and y correspond for the rest of the comparison.
class EqualityChecker {
 public:
  bool var(const Var* x, const Var* y) {
    auto fx = forward_.find(x);
    auto by = backward_.find(y);
    if (fx != forward_.end() || by != backward_.end()) {
      return fx != forward_.end() && by != backward_.end() && fx->second == y && by->second == x;
    }
    if (!types_equal(x->type(), y->type())) return false;
    forward_.emplace(x, y);
    backward_.emplace(y, x);
    return true;
  }

  bool vars(const std::vector<VarPtr>& a, const std::vector<VarPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!var(a[i].get(), b[i].get())) return false;
    }
    return true;
  }

  bool exprs(const std::vector<ExprPtr>& a, const std::vector<ExprPtr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!expr(a[i], b[i])) return false;
    }
    return true;
  }

  bool expr(const ExprPtr& a, const ExprPtr& b) {
    if (!a || !b) return !a && !b;
    if (a->kind() != b->kind()) return false;
    if (a->kind() == ExprKind::Var) return var(a->as<Var>(), b->as<Var>());
    if (!types_equal(a->type(), b->type())) return false;
    switch (a->kind()) {
      case ExprKind::IntImm:
        return a->as<IntImm>()->value == b->as<IntImm>()->value;
      case ExprKind::FloatImm: {
        // Bitwise, so that -0.0 and 0.0 differ and NaN equals itself.
        double x = a->as<FloatImm>()->value, y = b->as<FloatImm>()->value;
        return std::memcmp(&x, &y, sizeof(double)) == 0;
      }
      case ExprKind::BoolImm:
        return a->as<BoolImm>()->value == b->as<BoolImm>()->value;
      case ExprKind::Var:
        return false;  // handled above
      case ExprKind::Binary: {
        const auto *x = a->as<Binary>(), *y = b->as<Binary>();
        return x->op == y->op && expr(x->a, y->a) && expr(x->b, y->b);
      }
      case ExprKind::Unary: {
        const auto *x = a->as<Unary>(), *y = b->as<Unary>();
        return x->op == y->op && expr(x->a, y->a);
      }
      case ExprKind::Call: {
        const auto *x = a->as<Call>(), *y = b->as<Call>();
        return x->call_kind == y->call_kind && x->callee == y->callee && x->attrs == y->attrs &&
               exprs(x->args, y->args);
      }
      case ExprKind::MakeTuple:
        return exprs(a->as<MakeTuple>()->elements, b->as<MakeTuple>()->elements);
      case ExprKind::TupleGetItem: {
        const auto *x = a->as<TupleGetItem>(), *y = b->as<TupleGetItem>();
        return x->index == y->index && expr(x->tuple, y->tuple);
      }
    }
    return false;
  }

  bool stmt(const StmtPtr& a, const StmtPtr& b) {
    if (!a || !b) return !a && !b;
    if (a->kind() != b->kind()) return false;
    switch (a->kind()) {
      case StmtKind::Assign: {
        const auto *x = a->as<AssignStmt>(), *y = b->as<AssignStmt>();
        return expr(x->value, y->value) && var(x->var.get(), y->var.get());
      }
      case StmtKind::Eval:
        return expr(a->as<EvalStmt>()->expr, b->as<EvalStmt>()->expr);
      case StmtKind::Return:
        return exprs(a->as<ReturnStmt>()->values, b->as<ReturnStmt>()->values);
      case StmtKind::Seq: {
        const auto &x = a->as<SeqStmts>()->stmts, &y = b->as<SeqStmts>()->stmts;
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i) {
          if (!stmt(x[i], y[i])) return false;
        }
        return true;
      }
      case StmtKind::For: {
        const auto *x = a->as<ForStmt>(), *y = b->as<ForStmt>();
        return x->for_kind == y->for_kind && expr(x->start, y->start) && expr(x->stop, y->stop) &&
               expr(x->step, y->step) && exprs(x->init_values, y->init_values) &&
               var(x->loop_var.get(), y->loop_var.get()) && vars(x->iter_args, y->iter_args) &&
               stmt(x->body, y->body) && vars(x->return_vars, y->return_vars);
      }
      case StmtKind::While: {
        const auto *x = a->as<WhileStmt>(), *y = b->as<WhileStmt>();
        return exprs(x->init_values, y->init_values) && vars(x->iter_args, y->iter_args) &&
               expr(x->cond, y->cond) && stmt(x->body, y->body) &&
               vars(x->return_vars, y->return_vars);
      }
      case StmtKind::If: {
        const auto *x = a->as<IfStmt>(), *y = b->as<IfStmt>();
        return expr(x->cond, y->cond) && stmt(x->then_body, y->then_body) &&
               stmt(x->else_body, y->else_body) && vars(x->return_vars, y->return_vars);
      }
      case StmtKind::Yield:
        return exprs(a->as<YieldStmt>()->values, b->as<YieldStmt>()->values);
      case StmtKind::Scope: {
        const auto *x = a->as<ScopeStmt>(), *y = b->as<ScopeStmt>();
        return x->level == y->level && x->name_hint == y->name_hint && x->split == y->split &&
               x->role == y->role && stmt(x->body, y->body);
      }
    }
    return false;
  }

  // strict_ssa=True is a check the parser made on the source; the IR means the same without it.
  static bool same_attrs(FunctionAttrs a, FunctionAttrs b) {
    a.strict_ssa = b.strict_ssa = false;
    return a == b;
  }

  bool function(const Function& a, const Function& b) {
    if (a.name != b.name || a.type != b.type || a.params.size() != b.params.size() ||
        a.return_types.size() != b.return_types.size() || !same_attrs(a.attrs, b.attrs)) {
      return false;
    }
    for (size_t i = 0; i < a.return_types.size(); ++i) {
      if (!types_equal(a.return_types[i], b.return_types[i])) return false;
    }
    for (size_t i = 0; i < a.params.size(); ++i) {
      if (a.params[i].direction != b.params[i].direction) return false;
      if (!var(a.params[i].var.get(), b.params[i].var.get())) return false;
    }
    return stmt(a.body, b.body);
  }

 private:
  std::unordered_map<const Var*, const Var*> forward_;
  std::unordered_map<const Var*, const Var*> backward_;
};

// Feeds a canonical byte stream of the tree to XXH3; variables contribute the index of their
// first appearance instead of their identity or name.
class Hasher {
 public:
  Hasher() { XXH3_64bits_reset(&state_); }
  uint64_t digest() {
    flush();
    return XXH3_64bits_digest(&state_);
  }

  void function(const Function& f) {
    str(f.name);
    u64(static_cast<uint64_t>(f.type));
    u64(f.params.size());
    for (const auto& p : f.params) {
      u64(static_cast<uint64_t>(p.direction));
      var(p.var.get());
    }
    u64(f.return_types.size());
    for (const auto& t : f.return_types) type(t);
    attrs(f.attrs);
    stmt(f.body);
  }

  void attrs(const FunctionAttrs& a) {
    str(a.level);
    str(a.role);
    // Not strict_ssa: equal functions must hash alike (see same_attrs).
    u64(a.auto_scope ? 1u + *a.auto_scope : 0u);
    u64(a.extra.size());
    for (const auto& [key, value] : a.extra) {
      str(key);
      str(value);
    }
  }

  void stmt(const StmtPtr& s) {
    if (!s) return u64(0xFFu);
    u64(static_cast<uint64_t>(s->kind()));
    switch (s->kind()) {
      case StmtKind::Assign: {
        const auto* x = s->as<AssignStmt>();
        expr(x->value);
        return var(x->var.get());
      }
      case StmtKind::Eval:
        return expr(s->as<EvalStmt>()->expr);
      case StmtKind::Return:
        return exprs(s->as<ReturnStmt>()->values);
      case StmtKind::Seq: {
        const auto& stmts = s->as<SeqStmts>()->stmts;
        u64(stmts.size());
        for (const auto& st : stmts) stmt(st);
        return;
      }
      case StmtKind::For: {
        const auto* x = s->as<ForStmt>();
        u64(static_cast<uint64_t>(x->for_kind));
        expr(x->start);
        expr(x->stop);
        expr(x->step);
        exprs(x->init_values);
        var(x->loop_var.get());
        vars(x->iter_args);
        stmt(x->body);
        return vars(x->return_vars);
      }
      case StmtKind::While: {
        const auto* x = s->as<WhileStmt>();
        exprs(x->init_values);
        vars(x->iter_args);
        expr(x->cond);
        stmt(x->body);
        return vars(x->return_vars);
      }
      case StmtKind::If: {
        const auto* x = s->as<IfStmt>();
        expr(x->cond);
        stmt(x->then_body);
        stmt(x->else_body);
        return vars(x->return_vars);
      }
      case StmtKind::Yield:
        return exprs(s->as<YieldStmt>()->values);
      case StmtKind::Scope: {
        const auto* x = s->as<ScopeStmt>();
        str(x->level);
        str(x->name_hint);
        str(x->split);
        str(x->role);
        return stmt(x->body);
      }
    }
  }

  void expr(const ExprPtr& e) {
    if (!e) return u64(0xFFu);
    u64(static_cast<uint64_t>(e->kind()));
    if (const auto* v = e->as<Var>()) return var(v);
    type(e->type());
    switch (e->kind()) {
      case ExprKind::IntImm:
        return u64(static_cast<uint64_t>(e->as<IntImm>()->value));
      case ExprKind::FloatImm:
        return f64(e->as<FloatImm>()->value);
      case ExprKind::BoolImm:
        return u64(e->as<BoolImm>()->value ? 1 : 0);
      case ExprKind::Var:
        return;
      case ExprKind::Binary: {
        const auto* x = e->as<Binary>();
        u64(static_cast<uint64_t>(x->op));
        expr(x->a);
        return expr(x->b);
      }
      case ExprKind::Unary: {
        const auto* x = e->as<Unary>();
        u64(static_cast<uint64_t>(x->op));
        return expr(x->a);
      }
      case ExprKind::Call: {
        const auto* x = e->as<Call>();
        u64(static_cast<uint64_t>(x->call_kind));
        str(x->callee);
        exprs(x->args);
        u64(x->attrs.size());
        for (const auto& [key, value] : x->attrs) {
          str(key);
          attr(value);
        }
        return;
      }
      case ExprKind::MakeTuple:
        return exprs(e->as<MakeTuple>()->elements);
      case ExprKind::TupleGetItem: {
        const auto* x = e->as<TupleGetItem>();
        u64(static_cast<uint64_t>(x->index));
        return expr(x->tuple);
      }
    }
  }

 private:
  // Most fields are one 8-byte word: they are gathered here and handed to XXH3 a buffer at a
  // time, since each XXH3_64bits_update call costs far more than copying a word (the stream's
  // digest does not depend on how it was split).
  void bytes(const void* p, size_t n) {
    if (used_ + n > sizeof buffer_) {
      flush();
      if (n > sizeof buffer_) {
        XXH3_64bits_update(&state_, p, n);
        return;
      }
    }
    std::memcpy(buffer_ + used_, p, n);
    used_ += n;
  }
  void flush() {
    XXH3_64bits_update(&state_, buffer_, used_);
    used_ = 0;
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
  void f64(double v) { bytes(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    bytes(s.data(), s.size());
  }

  void var(const Var* v) {
    auto [it, inserted] = var_index_.emplace(v, var_index_.size());
    u64(it->second);
    if (inserted) type(v->type());
  }
  void vars(const std::vector<VarPtr>& vs) {
    u64(vs.size());
    for (const auto& v : vs) var(v.get());
  }
  void exprs(const std::vector<ExprPtr>& es) {
    u64(es.size());
    for (const auto& e : es) expr(e);
  }

  void shape(const std::vector<int64_t>& s) {
    u64(s.size());
    for (int64_t d : s) u64(static_cast<uint64_t>(d));
  }

  void type(const TypePtr& t) {
    if (!t) return u64(0xFFu);
    u64(static_cast<uint64_t>(t->kind()));
    switch (t->kind()) {
      case TypeKind::Scalar:
        return u64(static_cast<uint64_t>(t->as<ScalarType>()->dtype));
      case TypeKind::Tensor: {
        const auto* x = t->as<TensorType>();
        u64(static_cast<uint64_t>(x->dtype));
        return shape(x->shape);
      }
      case TypeKind::Tile: {
        const auto* x = t->as<TileType>();
        u64(static_cast<uint64_t>(x->dtype));
        shape(x->shape);
        u64(x->space ? static_cast<uint64_t>(*x->space) + 1 : 0);
        if (x->memref) {
          u64(static_cast<uint64_t>(x->memref->space));
          u64(static_cast<uint64_t>(x->memref->buffer_id));
          u64(static_cast<uint64_t>(x->memref->size));
          u64(static_cast<uint64_t>(x->memref->addr));
        }
        return;
      }
      case TypeKind::Tuple: {
        const auto& els = t->as<TupleType>()->elements;
        u64(els.size());
        for (const auto& el : els) type(el);
        return;
      }
    }
  }

  void attr(const AttrValue& v) {
    u64(v.index());
    struct Visitor {
      Hasher* h;
      void operator()(int64_t x) const { h->u64(static_cast<uint64_t>(x)); }
      void operator()(double x) const { h->f64(x); }
      void operator()(bool x) const { h->u64(x ? 1 : 0); }
      void operator()(const std::string& x) const { h->str(x); }
      void operator()(DataType x) const { h->u64(static_cast<uint64_t>(x)); }
      void operator()(MemorySpace x) const { h->u64(static_cast<uint64_t>(x)); }
      void operator()(const std::vector<int64_t>& x) const { h->shape(x); }
      void operator()(PadValue x) const { h->u64(static_cast<uint64_t>(x)); }
    };
    std::visit(Visitor{this}, v);
  }

  XXH3_state_t state_;
  unsigned char buffer_[1024];
  size_t used_ = 0;
  NodeMap<const Var*, uint64_t> var_index_;
};

}  // namespace

bool structural_equal(const Program& a, const Program& b) {
  if (a.name != b.name || a.functions.size() != b.functions.size()) return false;
  for (size_t i = 0; i < a.functions.size(); ++i) {
    if (!structural_equal(*a.functions[i], *b.functions[i])) return false;
  }
  return true;
}

bool structural_equal(const Function& a, const Function& b) {
  return EqualityChecker().function(a, b);
}

bool structural_equal(const StmtPtr& a, const StmtPtr& b) { return EqualityChecker().stmt(a, b); }

bool structural_equal(const ExprPtr& a, const ExprPtr& b) { return EqualityChecker().expr(a, b); }

uint64_t structural_hash(const Program& p) {
  // Functions are hashed independently (their variables are separate), then combined in order.
  uint64_t parts[2] = {XXH3_64bits(p.name.data(), p.name.size()), p.functions.size()};
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, parts, sizeof parts);
  for (const auto& f : p.functions) {
    uint64_t fh = structural_hash(*f);
    XXH3_64bits_update(&state, &fh, sizeof fh);
  }
  return XXH3_64bits_digest(&state);
}

uint64_t structural_hash(const Function& f) {
  Hasher h;
  h.function(f);
  return h.digest();
}

}  // namespace pypto::ir
