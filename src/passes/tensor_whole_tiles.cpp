// Whole-tile lowering of kernels whose computed tensors cross loops and branches: see
// tensor_whole_tiles.h.
#include "tensor_whole_tiles.h"

#include <string>

#include "pass_utils.h"
#include "pypto/support/diagnostics.h"
#include "tensor_gather_lowering.h"
#include "tensor_matmul_operands.h"
#include "tensor_op_kinds.h"
#include "tensor_op_tiles.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

// The yield that ends `body`, or null.
const YieldStmt* final_yield(const StmtPtr& body) {
  if (!body) return nullptr;
  if (const auto* seq = body->as<SeqStmts>())
    return seq->stmts.empty() ? nullptr : final_yield(seq->stmts.back());
  return body->as<YieldStmt>();
}

// The tensors of a function that are kept as whole tiles: results of tensor ops, and every
// variable that takes one of them on (an alias, a loop-carried value, a branch's result).
// `carried` tells whether a loop or a branch is among them, which is what calls for the
// whole-tile lowering.
struct TiledValues : IRVisitor {
  NodeSet<const Var*> tiled;
  bool carried = false;

  bool holds(const ExprPtr& e) const {
    const auto* v = e ? e->as<Var>() : nullptr;
    return v && tiled.count(v);
  }
  // `pl.reshape(t, shape)` of a tiled tensor: the tile reshaped (a view of a tensor in memory
  // otherwise).
  bool reshapes_tiled(const ExprPtr& e) const {
    const Call* c = as_op_call(e);
    return c && c->callee == "reshape" && !c->args.empty() && holds(c->args[0]);
  }
  void add(const VarPtr& v, bool loop_or_branch) {
    if (tiled.insert(v.get()).second && loop_or_branch) carried = true;
  }
  void visit_assign(const AssignStmt& s) override {
    if (is_tensor_op(s.value) || holds(s.value) || reshapes_tiled(s.value)) add(s.var, false);
    IRVisitor::visit_assign(s);
  }
  // A loop-carried value is a tile when it starts as one or a trip hands one on.
  template <typename Loop>
  void carry(const Loop& s) {
    const YieldStmt* y = final_yield(s.body);
    for (size_t i = 0; i < s.iter_args.size(); ++i) {
      const bool from_tile = holds(s.init_values[i]) || tiled.count(s.iter_args[i].get()) ||
                             (y && i < y->values.size() && holds(y->values[i]));
      if (!from_tile || !is_tensor(s.iter_args[i]->type())) continue;
      add(s.iter_args[i], true);
      if (i < s.return_vars.size()) add(s.return_vars[i], true);
    }
  }
  void visit_for(const ForStmt& s) override {
    carry(s);
    IRVisitor::visit_for(s);
  }
  void visit_while(const WhileStmt& s) override {
    carry(s);
    IRVisitor::visit_while(s);
  }
  void visit_if(const IfStmt& s) override {
    const YieldStmt* then_yield = final_yield(s.then_body);
    const YieldStmt* else_yield = final_yield(s.else_body);
    for (size_t i = 0; i < s.return_vars.size(); ++i) {
      const bool from_tile =
          (then_yield && i < then_yield->values.size() && holds(then_yield->values[i])) ||
          (else_yield && i < else_yield->values.size() && holds(else_yield->values[i]));
      if (from_tile && is_tensor(s.return_vars[i]->type())) add(s.return_vars[i], true);
    }
    IRVisitor::visit_if(s);
  }
};

// Runs TiledValues until nothing more is found: a value found late (a trip's yield) can make an
// earlier one (the loop's iter_arg) a tile.
TiledValues find_tiled_values(const Function& f) {
  TiledValues found;
  size_t before = 0;
  do {
    before = found.tiled.size();
    found.visit(f.body);
  } while (found.tiled.size() != before);
  return found;
}

class WholeTileLowering : public IRMutator {
 public:
  WholeTileLowering(const Function& f, NodeSet<const Var*> tiled) : tiled_(std::move(tiled)) {
    for (const auto& p : f.params)
      if (p.direction != ParamDirection::In) outputs_.push_back(p.var);
    // Results returned by value beyond the Out parameters get Out parameters of their own, in
    // the order of the return values (ConvertTensorToTileOps' callers' side relies on it).
    struct Returns : IRVisitor {
      std::vector<const ReturnStmt*> all;
      void visit_return(const ReturnStmt& s) override { all.push_back(&s); }
    } returns;
    returns.visit(f.body);
    for (const ReturnStmt* r : returns.all) {
      for (size_t i = outputs_.size(); i < r->values.size(); ++i) {
        const auto* v = r->values[i]->as<Var>();
        if (!v || !tiled_.count(v)) continue;
        auto out = make_var("ret" + std::to_string(i) + "_out", v->type(), v->span());
        added_.push_back({out, ParamDirection::Out});
        outputs_.push_back(out);
      }
    }
    loaded_.emplace_back();
  }

  FunctionPtr lower(const FunctionPtr& f, std::vector<TypePtr>* added_outputs) {
    FunctionPtr lowered = mutate_function(f);
    if (added_.empty()) return lowered;
    std::vector<Param> params = lowered->params;
    for (const auto& p : added_) {
      params.push_back(p);
      added_outputs->push_back(p.var->type());
    }
    return make_node<Function>(lowered->name, lowered->type, std::move(params),
                               lowered->return_types, lowered->body, lowered->span, lowered->attrs);
  }

 protected:
  // A tiled tensor is read only where this lowering reads it (tensor ops, pl.assemble, loops,
  // branches, the return); anywhere else it would need a tensor in memory.
  ExprPtr mutate_var(const std::shared_ptr<const Var>& e) override {
    if (tiled_.count(e.get())) {
      throw CompileError(e->span(),
                         "tensor '" + e->name +
                             "' is kept whole in a tile (a loop or a branch of this kernel carries "
                             "tensors that tensor ops compute), so it can only feed tensor ops, "
                             "pl.assemble into a tensor, loops, branches and the return");
    }
    return IRMutator::mutate_var(e);
  }

  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    std::vector<StmtPtr> out;
    if (tiled_.count(s->var.get())) {
      if (s->value->as<Var>()) {  // an alias: the same tile
        tiles_[s->var.get()] = tile_of(s->value, &out);
        return make_seq(std::move(out), s->span());
      }
      ExprPtr value = tile_op(*s->value->as<Call>(), s->var->name, &out);
      auto tile = make_var(s->var->name, value->type(), s->span());
      check_fits(*tile);
      out.push_back(make_node<AssignStmt>(tile, value, s->span()));
      tiles_[s->var.get()] = tile;
      return make_seq(std::move(out), s->span());
    }
    // `t2 = pl.assemble(t, value, offsets)` of a tiled value: stored into t at offsets.
    if (const auto* a = as_op_call(s->value, "assemble");
        a && a->args.size() == 3 && is_tensor(a->args[0]->type()) && holds(a->args[1])) {
      ExprPtr tile = tile_of(a->args[1], &out);
      ExprPtr store = make_op_call("store", {tile, mutate(a->args[2]), mutate(a->args[0])},
                                   a->attrs, s->span());
      out.push_back(make_node<AssignStmt>(s->var, store, s->span()));
      return make_seq(std::move(out), s->span());
    }
    return IRMutator::mutate_assign(s);
  }

  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    std::vector<StmtPtr> out;
    ExprPtr start = mutate(s->start), stop = mutate(s->stop), step = mutate(s->step);
    Carried c = carry(s->iter_args, s->init_values, &out);
    StmtPtr body = mutate_body(s->body, c.slots);
    std::vector<VarPtr> returns = results(s->return_vars, c.iter_args);
    out.push_back(make_node<ForStmt>(s->loop_var, start, stop, step, s->for_kind,
                                     std::move(c.iter_args), std::move(c.init), body,
                                     std::move(returns), s->span()));
    return make_seq(std::move(out), s->span());
  }

  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    std::vector<StmtPtr> out;
    Carried c = carry(s->iter_args, s->init_values, &out);
    ExprPtr cond = mutate(s->cond);
    StmtPtr body = mutate_body(s->body, c.slots);
    std::vector<VarPtr> returns = results(s->return_vars, c.iter_args);
    out.push_back(make_node<WhileStmt>(cond, std::move(c.iter_args), std::move(c.init), body,
                                       std::move(returns), s->span()));
    return make_seq(std::move(out), s->span());
  }

  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    std::vector<bool> slots;
    for (const auto& r : s->return_vars) slots.push_back(tiled_.count(r.get()) != 0);
    ExprPtr cond = mutate(s->cond);
    StmtPtr then_body = mutate_body(s->then_body, slots);
    StmtPtr else_body = s->else_body ? mutate_body(s->else_body, slots) : nullptr;
    // A branch's result takes the type of what the branches yield.
    const YieldStmt* y = final_yield(then_body);
    std::vector<VarPtr> returns;
    for (size_t i = 0; i < s->return_vars.size(); ++i) {
      const VarPtr& r = s->return_vars[i];
      if (!slots[i] || !y || i >= y->values.size()) {
        returns.push_back(remap(r));
        continue;
      }
      auto tile = make_var(r->name, y->values[i]->type(), r->span());
      tiles_[r.get()] = tile;
      returns.push_back(tile);
    }
    return make_node<IfStmt>(cond, then_body, else_body, std::move(returns), s->span());
  }

  StmtPtr mutate_yield(const std::shared_ptr<const YieldStmt>& s) override {
    if (yield_slots_.empty()) return IRMutator::mutate_yield(s);
    const std::vector<bool>& slots = yield_slots_.back();
    std::vector<StmtPtr> out;
    std::vector<ExprPtr> values;
    for (size_t i = 0; i < s->values.size(); ++i) {
      const bool tile = i < slots.size() && slots[i];
      values.push_back(tile ? tile_of(s->values[i], &out) : mutate(s->values[i]));
    }
    out.push_back(make_node<YieldStmt>(std::move(values), s->span()));
    return make_seq(std::move(out), s->span());
  }

  // A computed tensor returned: stored into the Out parameter it goes to.
  StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s) override {
    std::vector<StmtPtr> out;
    std::vector<ExprPtr> values;
    for (size_t i = 0; i < s->values.size(); ++i) {
      const ExprPtr& v = s->values[i];
      if (!holds(v) || i >= outputs_.size()) {
        values.push_back(mutate(v));
        continue;
      }
      const VarPtr& destination = outputs_[i];
      const auto& shape = destination->type()->as<TensorType>()->shape;
      ExprPtr store = make_op_call(
          "store",
          {tile_of(v, &out), int_tuple(std::vector<int64_t>(shape.size(), 0)), destination}, {},
          s->span());
      auto stored = make_var(destination->name, store->type(), s->span());
      out.push_back(make_node<AssignStmt>(stored, store, s->span()));
      values.push_back(stored);
    }
    out.push_back(make_node<ReturnStmt>(std::move(values), s->span()));
    return make_seq(std::move(out), s->span());
  }

 private:
  bool holds(const ExprPtr& e) const {
    const auto* v = e->as<Var>();
    return v && tiled_.count(v);
  }

  // A whole tile must fit Vec: the kernel keeps it there across the loop or branch.
  static void check_fits(const Var& tile) {
    const auto* t = tile.type()->as<TileType>();
    if (!t) return;
    int64_t bytes = dtype_bytes(t->dtype);
    for (int64_t d : t->shape) bytes *= d;
    const int64_t capacity = memory_space_capacity(MemorySpace::Vec);
    if (bytes <= capacity) return;
    throw CompileError(tile.span(),
                       "tensor '" + tile.name + "' of shape " + shape_to_string(t->shape) + " (" +
                           std::to_string(bytes) + " bytes) is kept whole in Vec, which holds " +
                           std::to_string(capacity) +
                           " bytes: a loop or a branch of this kernel carries tensors that tensor "
                           "ops compute; carry smaller tensors, or write the loop on tiles");
  }

  // The tile of tensor `e`: its own when it is tiled, else (a parameter, a view of one) the
  // whole tensor loaded, once per body that reads it.
  ExprPtr tile_of(const ExprPtr& e, std::vector<StmtPtr>* out) {
    const auto* v = e->as<Var>();
    if (!v || !is_tensor(v->type())) return mutate(e);
    if (auto it = tiles_.find(v); it != tiles_.end()) return it->second;
    for (auto scope = loaded_.rbegin(); scope != loaded_.rend(); ++scope)
      if (auto it = scope->find(v); it != scope->end()) return it->second;
    VarPtr tile = load_whole(*v, e, "_tile", out);
    loaded_.back()[v] = tile;
    return tile;
  }

  // Tensor `e` (variable `v`) loaded whole into a new tile named `v` + `suffix`.
  VarPtr load_whole(const Var& v, const ExprPtr& e, const std::string& suffix,
                    std::vector<StmtPtr>* out) {
    const auto& shape = v.type()->as<TensorType>()->shape;
    for (int64_t d : shape) {
      if (d <= 0) {
        throw CompileError(v.span(), "tensor '" + v.name + "' of shape " + shape_to_string(shape) +
                                         " is read whole into a tile, which needs its extents");
      }
    }
    ExprPtr load = make_op_call(
        "load", {mutate(e), int_tuple(std::vector<int64_t>(shape.size(), 0)), int_tuple(shape)}, {},
        e->span());
    auto tile = make_var(v.name + suffix, load->type(), e->span());
    check_fits(*tile);
    out->push_back(make_node<AssignStmt>(tile, load, e->span()));
    return tile;
  }

  // Tensor op `c` on whole tiles.
  ExprPtr tile_op(const Call& c, const std::string& name, std::vector<StmtPtr>* out) {
    if (c.callee == "matmul") return tile_matmul(c, name, out);
    if (c.callee == "matmul_acc" && c.args.size() == 3) return tile_matmul_acc(c, name, out);
    if (is_tensor_matmul(&c) || is_tensor_gather_op(&c) || is_tensor_expand_clone(&c)) {
      throw CompileError(c.span(),
                         "pl." + c.callee +
                             " on tensors is not supported yet in a kernel whose loops or branches "
                             "carry tensors that tensor ops compute; write it on tiles");
    }
    std::vector<ExprPtr> args;
    for (const auto& a : c.args)
      args.push_back(is_tensor_creation(&c) || !is_tensor(a->type()) ? mutate(a) : tile_of(a, out));
    const bool reduction = is_tensor_reduction(&c);
    const auto& shape = (reduction ? c.args[0]->type() : c.type())->as<TensorType>()->shape;
    return tile_form(c, std::move(args), shape, name, out);
  }

  // `pl.matmul(a, b)` of tensors on whole tiles: the operands loaded whole (into Mat: a load
  // only the cube reads goes there, InferTileMemorySpace), the product made in Acc and moved to
  // Vec, where the elementwise ops it feeds (`acc = pl.add(acc, pl.matmul(a, w))`) read it. On
  // a2a3 PyPTO hands such a product from the cube core to the vector core through a pipe
  // buffer; this device moves the values either way.
  ExprPtr tile_matmul(const Call& c, const std::string& name, std::vector<StmtPtr>* out) {
    std::vector<ExprPtr> args;
    for (const auto& a : c.args) {
      if (!is_tensor(a->type()) || !a->as<Var>()) {
        args.push_back(mutate(a));
      } else {
        // A load of its own, which only the cube reads (InferTileMemorySpace places it in Mat),
        // rather than the Vec tile of the same view elementwise ops may read.
        args.push_back(holds(a) ? spilled(a, out)
                                : ExprPtr(load_whole(*a->as<Var>(), a, "_mat", out)));
      }
    }
    ExprPtr product = make_op_call("matmul", std::move(args), c.attrs, c.span());
    auto acc = make_var(name + "_acc", product->type(), c.span());
    check_fits(*acc);
    out->push_back(make_node<AssignStmt>(acc, product, c.span()));
    return make_op_call("move", {acc}, {{"target_memory", MemorySpace::Vec}}, c.span());
  }

  // `pl.matmul_acc(acc, a, b)` of tensors on whole tiles: acc + a @ b. The accumulator is a tile
  // in Vec here (a loop carries it, elementwise ops may read it), which neither target moves
  // back into Acc; so the product is made in Acc as pl.matmul's is (tile_matmul), moved to Vec
  // and added there, both in the accumulator's dtype (FP32 or INT32: the cube's own).
  ExprPtr tile_matmul_acc(const Call& c, const std::string& name, std::vector<StmtPtr>* out) {
    const DataType acc_dtype = c.args[0]->type()->as<TensorType>()->dtype;
    const DataType operand_dtype = c.args[1]->type()->as<TensorType>()->dtype;
    // The cube's accumulator type for these operands (as the tile matmul's type rule has it).
    const DataType product_dtype = is_integer(operand_dtype) ? DataType::INT32 : DataType::FP32;
    if (product_dtype != acc_dtype) {
      throw CompileError(c.span(), "pl.matmul_acc accumulates a " +
                                       std::string(dtype_name(product_dtype)) +
                                       " product of these operands, but the accumulator is " +
                                       std::string(dtype_name(acc_dtype)) +
                                       "; start it with pl.matmul(..., out_dtype=pl." +
                                       std::string(dtype_name(product_dtype)) + ")");
    }
    ExprPtr acc = tile_of(c.args[0], out);
    Attrs attrs = {{"out_dtype", product_dtype}};
    for (const auto& [key, value] : c.attrs)
      if (key == "a_trans" || key == "b_trans") attrs.emplace_back(key, value);
    ExprPtr mm = make_op_call("matmul", {c.args[1], c.args[2]}, std::move(attrs), c.span());
    ExprPtr moved = tile_matmul(*mm->as<Call>(), name, out);
    auto product = make_var(name + "_product", moved->type(), c.span());
    out->push_back(make_node<AssignStmt>(product, moved, c.span()));
    return make_op_call("add", {acc, product}, {}, c.span());
  }

  // A computed operand of a matmul: its tile is in Vec, from which a2a3 cannot move a tile to
  // the cube's buffers (PyPTO hands it over through a pipe buffer in GM). It is stored to a
  // scratch tensor the kernel gains as an Out parameter, `<name>_spill`, and loaded from there
  // (into Mat, as a load only the cube reads).
  ExprPtr spilled(const ExprPtr& operand, std::vector<StmtPtr>* out) {
    const auto* v = operand->as<Var>();
    ExprPtr tile = tile_of(operand, out);
    const auto& shape = v->type()->as<TensorType>()->shape;
    auto scratch = make_var(v->name + "_spill", v->type(), v->span());
    added_.push_back({scratch, ParamDirection::Out});
    const ExprPtr origin = int_tuple(std::vector<int64_t>(shape.size(), 0));
    auto stored = make_var(v->name + "_spilled", v->type(), v->span());
    out->push_back(make_node<AssignStmt>(
        stored, make_op_call("store", {tile, origin, scratch}, {}, v->span()), v->span()));
    ExprPtr load = make_op_call("load", {stored, origin, int_tuple(shape)}, {}, v->span());
    auto reloaded = make_var(v->name + "_mat", load->type(), v->span());
    check_fits(*reloaded);
    out->push_back(make_node<AssignStmt>(reloaded, load, v->span()));
    return reloaded;
  }

  struct Carried {
    std::vector<VarPtr> iter_args;
    std::vector<ExprPtr> init;
    std::vector<bool> slots;  // which iter_args are tiles
  };
  Carried carry(const std::vector<VarPtr>& iter_args, const std::vector<ExprPtr>& init,
                std::vector<StmtPtr>* out) {
    Carried c;
    for (size_t i = 0; i < iter_args.size(); ++i) {
      const VarPtr& arg = iter_args[i];
      const bool tile = tiled_.count(arg.get()) != 0;
      c.slots.push_back(tile);
      if (!tile) {
        c.init.push_back(mutate(init[i]));
        c.iter_args.push_back(remap(arg));
        continue;
      }
      ExprPtr start = tile_of(init[i], out);
      auto carried = make_var(arg->name, start->type(), arg->span());
      tiles_[arg.get()] = carried;
      c.init.push_back(start);
      c.iter_args.push_back(carried);
    }
    return c;
  }
  // The return variables of a loop: a tile where the iter_arg is one.
  std::vector<VarPtr> results(const std::vector<VarPtr>& return_vars,
                              const std::vector<VarPtr>& iter_args) {
    std::vector<VarPtr> out;
    for (size_t i = 0; i < return_vars.size(); ++i) {
      const VarPtr& r = return_vars[i];
      if (!tiled_.count(r.get()) || i >= iter_args.size()) {
        out.push_back(remap(r));
        continue;
      }
      auto tile = make_var(r->name, iter_args[i]->type(), r->span());
      tiles_[r.get()] = tile;
      out.push_back(tile);
    }
    return out;
  }
  // A loop's or a branch's body: its yield hands on tiles in `slots`; tensors it loads stay
  // inside it.
  StmtPtr mutate_body(const StmtPtr& body, const std::vector<bool>& slots) {
    yield_slots_.push_back(slots);
    loaded_.emplace_back();
    StmtPtr lowered = mutate(body);
    loaded_.pop_back();
    yield_slots_.pop_back();
    return lowered;
  }

  NodeSet<const Var*> tiled_;
  NodeMap<const Var*, ExprPtr> tiles_;                // tiled tensor -> its tile
  std::vector<NodeMap<const Var*, ExprPtr>> loaded_;  // per body: tensors loaded whole
  std::vector<std::vector<bool>> yield_slots_;        // per enclosing loop or branch
  std::vector<VarPtr> outputs_;                       // where return value i is stored
  std::vector<Param> added_;
};

}  // namespace

bool carries_computed_tensors(const Function& f) { return find_tiled_values(f).carried; }

FunctionPtr lower_to_whole_tiles(const FunctionPtr& f, std::vector<TypePtr>* added_outputs) {
  WholeTileLowering lowering(*f, find_tiled_values(*f).tiled);
  return lowering.lower(f, added_outputs);
}

}  // namespace pypto::passes::detail
