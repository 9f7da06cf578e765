// Whole-tensor copies in InCore code, before ConvertTensorToTileOps lowers the tensor ops (see
// tensor_copies.h): a local tensor made only to hold a copy of another is that tensor, and a
// tensor assembled into another is loaded and stored (a transposed one transposed as a tile).
#include "tensor_copies.h"

#include <string>

#include "pass_utils.h"

namespace pypto::passes::detail {

using namespace ir;

namespace {

// Whether `call` writes into `v`: as the target of assemble or write, or the tensor of a store or
// mscatter.
bool writes_into(const Call& call, const Var* v) {
  auto is = [&](size_t i) { return i < call.args.size() && call.args[i].get() == v; };
  if (call.callee == "assemble" || call.callee == "write") return is(0);
  if (call.callee == "store" || call.callee == "mscatter") return is(2);
  return false;
}

bool zero_offsets(const ExprPtr& e) {
  const auto* t = e->as<MakeTuple>();
  if (!t) return false;
  for (const auto& x : t->elements) {
    const auto* i = x->as<IntImm>();
    if (!i || i->value != 0) return false;
  }
  return true;
}

struct Finder : IRVisitor {
  NodeMap<const Var*, const Call*> defs;  // tensor variable -> its defining op call
  NodeSet<const Var*> written;            // tensors some call writes into
  NodeSet<const Var*> returned;
  void visit_assign(const AssignStmt& s) override {
    if (const auto* c = s.value->as<Call>()) {
      defs[s.var.get()] = c;
      for (const auto& a : c->args)
        if (const auto* v = a->as<Var>(); v && writes_into(*c, v)) written.insert(v);
    }
    IRVisitor::visit_assign(s);
  }
  void visit_return(const ReturnStmt& s) override {
    for (const auto& v : s.values)
      if (const auto* var = v->as<Var>()) returned.insert(var);
    IRVisitor::visit_return(s);
  }
};

class Rewriter : public IRMutator {
 public:
  explicit Rewriter(const Function& f) {
    finder_.visit(f.body);
    count_var_occurrences(f.body, &occurrences_);
    for (const auto& p : f.params) params_.insert(p.var.get());
  }

  bool dropped_any() const { return !dropped_.empty(); }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    const auto* c = s->value->as<Call>();
    if (!c || c->call_kind != CallKind::Op || c->callee != "assemble" || c->args.size() != 3 ||
        !is_tensor(c->type()))
      return IRMutator::mutate_assign(s);
    const auto* target = c->args[0]->as<Var>();
    const auto* source = c->args[1]->as<Var>();
    if (!target || !source || !is_tensor(source->type())) return IRMutator::mutate_assign(s);
    const auto& source_shape = source->type()->as<TensorType>()->shape;
    // `t2 = assemble(create_tensor(shape), x, [0, ...])` with x of that shape, t2 only read: t2
    // is x.
    auto made = finder_.defs.find(target);
    auto uses = occurrences_.find(target);
    const bool only_this_use = uses != occurrences_.end() && uses->second == 2;  // def + here
    if (made != finder_.defs.end() && made->second->callee == "create_tensor" && only_this_use &&
        zero_offsets(c->args[2]) && c->type()->as<TensorType>()->shape == source_shape &&
        !finder_.written.count(s->var.get()) && !finder_.returned.count(s->var.get()) &&
        copied_from_input(source)) {
      var_map[s->var.get()] = mutate(c->args[1]);
      dropped_.insert(target);
      return make_seq({}, s->span());
    }
    // `d2 = assemble(d, x, offsets)` with x in memory (an input, a tensor a store wrote, a view
    // of either): a load where the assemble stands and a store.
    ExprPtr mapped = mutate(c->args[1]);
    const auto* from = mapped->as<Var>();
    if (from && source_shape.size() == 2) {
      if (StmtPtr copied = copy_transposed(*s, *c, *from)) return copied;
    }
    if (!from || !in_memory(from) || source_shape.size() > 2 || source_shape.empty())
      return IRMutator::mutate_assign(s);
    std::vector<StmtPtr> out;
    ExprPtr load = narrowed_load(*from, s->span());
    if (!load) {
      std::vector<ExprPtr> zeros, extent;
      for (int64_t d : source_shape) {
        zeros.push_back(make_int(0));
        extent.push_back(make_int(d));
      }
      load = make_op_call("load",
                          {mapped, make_tuple(std::move(zeros)), make_tuple(std::move(extent))}, {},
                          s->span());
    }
    auto tile = make_var(from->name + "_tile", load->type(), s->span());
    out.push_back(ir::make_node<AssignStmt>(tile, load, s->span()));
    ExprPtr store =
        make_op_call("store", {tile, mutate(c->args[2]), mutate(c->args[0])}, c->attrs, s->span());
    out.push_back(ir::make_node<AssignStmt>(remap(s->var), store, s->span()));
    return make_seq(std::move(out), s->span());
  }

  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    // The create_tensor of a local that became an alias is dropped with it.
    std::vector<StmtPtr> kept;
    bool changed = false;
    for (const auto& st : s->stmts) {
      const auto* a = st->as<AssignStmt>();
      if (a && creates_dropped(*a)) {
        changed = true;
        continue;
      }
      StmtPtr m = mutate(st);
      changed = changed || m != st;
      kept.push_back(std::move(m));
    }
    if (!changed) return s;
    return make_seq(std::move(kept), s->span());
  }

 private:
  // A parameter, or a slice, reshape or view of one (read, never written here).
  bool copied_from_input(const Var* v) const {
    for (int depth = 0; v && depth < 8; ++depth) {
      if (params_.count(v)) return !finder_.written.count(v);
      auto def = finder_.defs.find(v);
      if (def == finder_.defs.end()) return false;
      const Call& c = *def->second;
      if (c.callee != "slice" && c.callee != "reshape" && c.callee != "view") return false;
      v = c.args[0]->as<Var>();
    }
    return false;
  }

  // The load of the valid region of `v`, a tensor view narrowed by pl.set_validshape (a slice
  // whose type has a valid region) that only this assemble uses: the region is read from the
  // sliced tensor at the slice's offsets, and the view itself is dropped (it is only metadata
  // here). Null for any other tensor.
  ExprPtr narrowed_load(const Var& v, Span span) {
    const auto* type = v.type()->as<TensorType>();
    auto def = finder_.defs.find(&v);
    auto uses = occurrences_.find(&v);
    if (!type || !type->view || type->view->valid_shape.empty() || def == finder_.defs.end() ||
        def->second->callee != "slice" || uses == occurrences_.end() || uses->second != 2) {
      return nullptr;
    }
    const Call& slice = *def->second;
    std::vector<ExprPtr> extent;
    for (int64_t d : type->view->valid_shape) extent.push_back(make_int(d));
    dropped_.insert(&v);
    return make_op_call(
        "load", {mutate(slice.args[0]), mutate(slice.args[2]), make_tuple(std::move(extent))}, {},
        span);
  }

  // A tensor whose elements are in memory at this point: a parameter or what a pl.store into one
  // returns, or a slice, reshape or view of those (a tensor op's result is not, until it is
  // lowered).
  bool in_memory(const Var* v) const {
    for (int depth = 0; v && depth < 8; ++depth) {
      if (params_.count(v)) return true;
      auto def = finder_.defs.find(v);
      if (def == finder_.defs.end()) return false;
      const Call& c = *def->second;
      if (c.callee == "store") return true;
      if (c.callee != "slice" && c.callee != "reshape" && c.callee != "view") return false;
      v = c.args[0]->as<Var>();
    }
    return false;
  }

  // `d2 = assemble(d, x, offsets)` with x = transpose(y) of a 2-D y in memory: a kernel cannot
  // load a transposed view of global memory, so y is loaded, transposed as a tile and stored.
  StmtPtr copy_transposed(const AssignStmt& s, const Call& assemble, const Var& x) {
    auto def = finder_.defs.find(&x);
    if (def == finder_.defs.end() || def->second->callee != "transpose") return nullptr;
    const Call& transpose = *def->second;
    const auto* y = transpose.args[0]->as<Var>();
    if (!y || !in_memory(y)) return nullptr;
    const auto* y_type = y->type()->as<TensorType>();
    if (!y_type || y_type->shape.size() != 2) return nullptr;
    ExprPtr source = mutate(transpose.args[0]);
    ExprPtr load =
        make_op_call("load", {source, int_tuple({0, 0}), int_tuple(y_type->shape)}, {}, s.span());
    auto tile = make_var(y->name + "_tile", load->type(), s.span());
    ExprPtr turned = make_op_call("transpose", {tile, transpose.args[1], transpose.args[2]},
                                  transpose.attrs, s.span());
    auto turned_tile = make_var(x.name + "_tile", turned->type(), s.span());
    ExprPtr store =
        make_op_call("store", {turned_tile, mutate(assemble.args[2]), mutate(assemble.args[0])},
                     assemble.attrs, s.span());
    return make_seq({ir::make_node<AssignStmt>(tile, load, s.span()),
                     ir::make_node<AssignStmt>(turned_tile, turned, s.span()),
                     ir::make_node<AssignStmt>(remap(s.var), store, s.span())},
                    s.span());
  }

  // Dropped locals are only known once their copy is seen, after their create_tensor: the
  // statement is kept when it comes first and removed on a second walk (see rewrite_tensor_copies).
  bool creates_dropped(const AssignStmt& a) const { return dropped_.count(a.var.get()) != 0; }

  Finder finder_;
  NodeMap<const Var*, int64_t> occurrences_;
  NodeSet<const Var*> params_;
  NodeSet<const Var*> dropped_;
};

}  // namespace

FunctionPtr rewrite_tensor_copies(const FunctionPtr& f) {
  Rewriter rewriter(*f);
  FunctionPtr once = rewriter.mutate_function(f);
  if (once == f || !rewriter.dropped_any()) return once;
  // A second walk drops the create_tensor statements of the locals that became aliases (the
  // first saw them before their copies).
  return rewriter.mutate_function(once);
}

}  // namespace pypto::passes::detail
