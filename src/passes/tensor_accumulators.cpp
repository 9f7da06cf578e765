// Tensor accumulators of matmul loops become Acc tiles: see tensor_accumulators.h.
#include "tensor_accumulators.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "pass_utils.h"
#include "pypto/passes/l0_tile_choice.h"
#include "tensor_matmul_operands.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

// One accumulator: statement `create` of the list makes it, loop `loop` carries it as iter_arg
// `position`, statement `assemble` writes the loop's result into a tensor.
struct Accumulator {
  size_t create = 0, loop = 0, assemble = 0;
  size_t position = 0;
  int64_t rows = 0, cols = 0;  // its shape
  DataType dtype = DataType::FP32;
};

// The variable statement `s` of a list defines with a call, and the call.
const Call* assigned_call(const StmtPtr& s, const Var* v) {
  const auto* a = s->as<AssignStmt>();
  return a && a->var.get() == v ? as_op_call(a->value) : nullptr;
}

// The call that defines `v` among the statements of `body`.
const Call* definition_in(const StmtPtr& body, const Var* v) {
  for (const auto& s : stmt_list(body))
    if (const Call* c = assigned_call(s, v)) return c;
  return nullptr;
}

// A 2-D tensor variable (an operand view the matmul loads from).
bool is_matrix_tensor(const ExprPtr& e) {
  const auto* t = e->as<Var>() ? e->type()->as<TensorType>() : nullptr;
  return t && t->shape.size() == 2;
}

// The matmul steps of a loop that makes its carried value `position` with them: the values the
// body yields there are matmul or matmul_acc(iter_arg, ...) results of 2-D tensor views, either
// directly or as the two branches of an if. Collected into `steps`; false for any other loop.
bool matmul_steps(const ForStmt& loop, size_t position, NodeSet<const Var*>* steps) {
  auto body = stmt_list(loop.body);
  const auto* yield = body.empty() ? nullptr : body.back()->as<YieldStmt>();
  if (!yield || position >= yield->values.size()) return false;
  const auto* yielded = yield->values[position]->as<Var>();
  if (!yielded) return false;
  const Var* carried = loop.iter_args[position].get();
  int64_t accumulating = 0;
  auto step = [&](const Var* v, const Call* c) {
    if (!c || !is_tensor_matmul(c)) return false;
    const size_t first = c->callee == "matmul_acc" ? 1 : 0;
    if (c->args.size() != first + 2) return false;
    if (first == 1) {
      const auto* acc = c->args[0]->as<Var>();
      if (acc != carried) return false;
      ++accumulating;
    }
    if (!is_matrix_tensor(c->args[first]) || !is_matrix_tensor(c->args[first + 1])) return false;
    steps->insert(v);
    return true;
  };
  bool found = false;
  for (const auto& s : body) {
    if (const Call* c = assigned_call(s, yielded)) {
      found = step(yielded, c);
      break;
    }
    const auto* branch = s->as<IfStmt>();
    if (!branch) continue;
    auto at = std::find_if(branch->return_vars.begin(), branch->return_vars.end(),
                           [&](const VarPtr& r) { return r.get() == yielded; });
    if (at == branch->return_vars.end()) continue;
    const auto index = static_cast<size_t>(at - branch->return_vars.begin());
    found = true;
    for (const StmtPtr& side : {branch->then_body, branch->else_body}) {
      auto stmts = stmt_list(side);
      const auto* y = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
      const auto* v = y && index < y->values.size() ? y->values[index]->as<Var>() : nullptr;
      found = found && v && step(v, definition_in(side, v));
    }
    steps->insert(yielded);
    break;
  }
  if (!found) return false;
  // The carried tensor is read only as the accumulator of those steps.
  NodeMap<const Var*, int64_t> uses;
  count_var_occurrences(loop.body, &uses);
  return uses[carried] == accumulating;
}

// Finds accumulators in a statement list.
std::vector<Accumulator> find_accumulators(const std::vector<StmtPtr>& stmts) {
  std::vector<Accumulator> found;
  NodeMap<const Var*, int64_t> uses;
  for (const auto& s : stmts) count_var_occurrences(s, &uses);
  for (size_t i = 0; i < stmts.size(); ++i) {
    const auto* create = stmts[i]->as<AssignStmt>();
    const Call* made = create ? as_op_call(create->value, "create_tensor") : nullptr;
    const auto* type = made ? create->var->type()->as<TensorType>() : nullptr;
    // Defined and used once: as a loop's initial value.
    if (!type || type->shape.size() != 2 || uses[create->var.get()] != 2) continue;
    for (size_t j = i + 1; j < stmts.size(); ++j) {
      const auto* loop = stmts[j]->as<ForStmt>();
      if (!loop) continue;
      auto init = std::find_if(loop->init_values.begin(), loop->init_values.end(),
                               [&](const ExprPtr& e) { return e.get() == create->var.get(); });
      if (init == loop->init_values.end()) continue;
      Accumulator acc;
      acc.create = i;
      acc.loop = j;
      acc.position = static_cast<size_t>(init - loop->init_values.begin());
      NodeSet<const Var*> steps;
      if (!matmul_steps(*loop, acc.position, &steps)) break;
      const Var* result = loop->return_vars[acc.position].get();
      if (uses[result] != 2) break;  // defined, then assembled
      for (size_t k = j + 1; k < stmts.size(); ++k) {
        const auto* a = stmts[k]->as<AssignStmt>();
        const Call* assemble = a ? as_op_call(a->value, "assemble") : nullptr;
        if (!assemble || assemble->args.size() != 3 || assemble->args[1].get() != result) continue;
        if (!is_tensor(assemble->args[0]->type())) break;
        // The destination and offsets must be known right after the loop.
        std::unordered_set<const Var*> later;
        for (size_t m = j + 1; m < k; ++m)
          for (const auto& v : defined_vars(stmts[m])) later.insert(v.get());
        if (mentions(assemble->args[0], later) || mentions(assemble->args[2], later)) break;
        acc.assemble = k;
        break;
      }
      if (acc.assemble == 0) break;
      acc.rows = type->shape[0];
      acc.cols = type->shape[1];
      acc.dtype = type->dtype;
      found.push_back(acc);
      break;
    }
  }
  return found;
}

// Rewrites one copy of an accumulator loop for the block of rows [r0, r0 + rows) and columns
// [c0, c0 + cols): the carried tensor becomes an Acc tile, each matmul step loads its block of
// the operand views into Mat.
class BlockLoop : public IRMutator {
 public:
  BlockLoop(const Accumulator& acc, const NodeSet<const Var*>& steps, int64_t r0, int64_t c0,
            int64_t rows, int64_t cols)
      : acc_(acc), steps_(steps), r0_(r0), c0_(c0), rows_(rows), cols_(cols) {}

  TypePtr tile() const { return tile_type({rows_, cols_}, acc_.dtype, MemorySpace::Acc); }

  // Renames a variable to a new one of the Acc tile type.
  void retype(const VarPtr& v) { var_map[v.get()] = make_var(v->name, tile(), v->span()); }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    if (!steps_.count(s->var.get())) return IRMutator::mutate_assign(s);
    const Call& mm = *s->value->as<Call>();
    const size_t first = mm.callee == "matmul_acc" ? 1 : 0;
    auto flag = [&](const char* key) {
      const AttrValue* v = find_attr(mm.attrs, key);
      const auto* on = v ? std::get_if<bool>(v) : nullptr;
      return on && *on;
    };
    std::vector<StmtPtr> out;
    // The block's rows of the left operand ([K, M] when stored transposed) and its columns of
    // the right one ([N, K] when transposed), loaded into Mat.
    auto load = [&](const ExprPtr& view, bool rows_of_it, bool transposed, int64_t start,
                    int64_t extent) {
      const auto& shape = view->type()->as<TensorType>()->shape;
      const bool along_rows = rows_of_it != transposed;
      std::vector<int64_t> box = shape;
      std::vector<ExprPtr> at = {make_int(0), make_int(0)};
      box[along_rows ? 0 : 1] = extent;
      at[along_rows ? 0 : 1] = make_int(start);
      std::vector<ExprPtr> dims = {make_int(box[0]), make_int(box[1])};
      ExprPtr value = make_op_call("load", {mutate(view), make_tuple(at), make_tuple(dims)},
                                   {{"target_memory", MemorySpace::Mat}}, s->span());
      const auto* named = view->as<Var>();
      auto v = make_var(named->name + "_mat", value->type(), s->span());
      out.push_back(ir::make_node<AssignStmt>(v, value, s->span()));
      return ExprPtr(v);
    };
    std::vector<ExprPtr> args;
    if (first == 1) args.push_back(mutate(mm.args[0]));
    args.push_back(load(mm.args[first], true, flag("a_trans"), r0_, rows_));
    args.push_back(load(mm.args[first + 1], false, flag("b_trans"), c0_, cols_));
    ExprPtr product = make_op_call(mm.callee, std::move(args), mm.attrs, s->span());
    if (!types_equal(product->type(), tile())) {
      throw CompileError(s->span(), "the matmul accumulated into tensor '" + s->var->name +
                                        "' makes " + type_to_string(product->type()) +
                                        ", not the accumulator's " + type_to_string(tile()));
    }
    auto v = make_var(s->var->name, product->type(), s->span());
    var_map[s->var.get()] = v;
    out.push_back(ir::make_node<AssignStmt>(v, product, s->span()));
    return make_seq(std::move(out), s->span());
  }

 private:
  const Accumulator& acc_;
  const NodeSet<const Var*>& steps_;
  int64_t r0_, c0_, rows_, cols_;
};

ExprPtr shifted(const ExprPtr& offsets, int64_t r0, int64_t c0) {
  const auto* tuple = offsets->as<MakeTuple>();
  std::vector<ExprPtr> els = tuple->elements;
  auto add = [](const ExprPtr& e, int64_t d) -> ExprPtr {
    if (d == 0) return e;
    if (const auto* i = e->as<IntImm>()) return make_int(i->value + d, e->span());
    return make_binary(BinaryOp::Add, e, make_int(d), e->span());
  };
  els[els.size() - 2] = add(els[els.size() - 2], r0);
  els[els.size() - 1] = add(els[els.size() - 1], c0);
  return make_tuple(std::move(els), offsets->span());
}

class AccumulatorRewriter : public IRMutator {
 protected:
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    auto found = find_accumulators(s->stmts);
    if (found.empty()) return IRMutator::mutate_seq(s);
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < s->stmts.size(); ++i) {
      auto match = std::find_if(found.begin(), found.end(), [&](const Accumulator& a) {
        return a.create == i || a.loop == i || a.assemble == i;
      });
      if (match == found.end()) {
        out.push_back(mutate(s->stmts[i]));
      } else if (match->loop == i) {
        rewrite(*match, s->stmts, &out);
      }
    }
    return make_seq(std::move(out), s->span());
  }

 private:
  void rewrite(const Accumulator& acc, const std::vector<StmtPtr>& stmts,
               std::vector<StmtPtr>* out) {
    const auto* loop = stmts[acc.loop]->as<ForStmt>();
    const auto* assign = stmts[acc.assemble]->as<AssignStmt>();
    const Call& assemble = *assign->value->as<Call>();
    ExprPtr destination = mutate(assemble.args[0]);
    ExprPtr offsets = mutate(assemble.args[2]);
    if (!offsets->as<MakeTuple>()) {
      throw CompileError(assign->span(),
                         "pl.assemble of a matmul accumulator needs its offsets "
                         "as a list");
    }
    // The operands' K (of the first step) chooses the blocks; only M and N are split here,
    // K blocks are AutoTileMatmulL0's.
    NodeSet<const Var*> steps;
    matmul_steps(*loop, acc.position, &steps);
    int64_t inner = 1, operand_bytes = 1;
    for (const Var* v : steps) {
      const Call* c = nullptr;
      for (const auto& st : stmt_list(loop->body)) {
        if ((c = assigned_call(st, v))) break;
        if (const auto* b = st->as<IfStmt>()) {
          if ((c = definition_in(b->then_body, v)) || (c = definition_in(b->else_body, v))) break;
        }
      }
      if (!c || !is_tensor_matmul(c)) continue;
      const size_t first = c->callee == "matmul_acc" ? 1 : 0;
      const auto* left = c->args[first]->type()->as<TensorType>();
      inner = std::max(inner, std::max(left->shape[0], left->shape[1]));
      operand_bytes = dtype_bytes(left->dtype);
    }
    // The carried tile and a product of the loop's steps are live at once (the first step's
    // fresh product beside the carried initial tile): a block is counted as elements of twice
    // the size. Blocks get half of Acc, so that the kernel's other Acc tiles keep room.
    constexpr int64_t kLiveBytes = 2 * 4;
    int64_t block_rows = acc.rows, block_cols = acc.cols;
    if (acc.rows * acc.cols * kLiveBytes > memory_space_capacity(MemorySpace::Acc)) {
      L0Capacities half = L0Capacities::device();
      half.acc /= 2;
      const L0TileConfig cfg = device_l0_tile_config(acc.rows, acc.cols, inner, operand_bytes,
                                                     operand_bytes, kLiveBytes, half);
      if (auto t = choose_device_l0_tile(cfg)) {
        block_rows = t->m;
        block_cols = t->n;
      }
    }
    const int64_t blocks =
        ((acc.rows + block_rows - 1) / block_rows) * ((acc.cols + block_cols - 1) / block_cols);
    // Each block is a copy of the loop: a bound keeps a huge accumulator from flooding the IR.
    constexpr int64_t kMaxBlocks = 1024;
    if (blocks > kMaxBlocks) {
      throw CompileError(
          stmts[acc.create]->span(),
          "the matmul accumulator '" + stmts[acc.create]->as<AssignStmt>()->var->name + "' of " +
              shape_to_string({acc.rows, acc.cols}) + " would need " + std::to_string(blocks) +
              " blocks of Acc (at most " + std::to_string(kMaxBlocks) +
              "); accumulate smaller tensors, e.g. one per block of the result");
    }
    VarPtr stored;
    for (int64_t r0 = 0; r0 < acc.rows; r0 += block_rows) {
      for (int64_t c0 = 0; c0 < acc.cols; c0 += block_cols) {
        const int64_t rows = std::min(block_rows, acc.rows - r0);
        const int64_t cols = std::min(block_cols, acc.cols - c0);
        // Each copy but the first renames the loop's variables apart (SSA).
        StmtPtr copy = stmts[acc.loop];
        NodeSet<const Var*> copy_steps = steps;
        if (blocks > 1) {
          NodeMap<const Var*, ExprPtr> fresh;
          for (const auto& v : defined_vars(copy))
            fresh[v.get()] = make_var(v->name, v->type(), v->span());
          copy = substitute(copy, fresh);
          copy_steps.clear();
          for (const Var* v : steps) copy_steps.insert(fresh.at(v)->as<Var>());
        }
        const auto* l = copy->as<ForStmt>();
        BlockLoop block(acc, copy_steps, r0, c0, rows, cols);
        block.var_map = var_map;
        ExprPtr create =
            make_op_call("create_tile", {make_tuple({make_int(rows), make_int(cols)})},
                         {{"dtype", acc.dtype}, {"target_memory", MemorySpace::Acc}}, l->span());
        auto start = make_var(loop_name(*l, acc), create->type(), l->span());
        out->push_back(ir::make_node<AssignStmt>(start, create, l->span()));
        block.retype(l->iter_args[acc.position]);
        block.retype(l->return_vars[acc.position]);
        for (const auto& st : stmt_list(l->body)) {
          const auto* b = st->as<IfStmt>();
          if (!b) continue;
          for (const auto& r : b->return_vars)
            if (copy_steps.count(r.get())) block.retype(r);
        }
        std::vector<ExprPtr> init = l->init_values;
        init[acc.position] = start;
        auto rebuilt = ir::make_node<ForStmt>(l->loop_var, l->start, l->stop, l->step, l->for_kind,
                                              l->iter_args, std::move(init), l->body,
                                              l->return_vars, l->span());
        out->push_back(block.mutate(StmtPtr(rebuilt)));
        ExprPtr result = block.var_map.at(l->return_vars[acc.position].get());
        ExprPtr value = make_op_call("store", {result, shifted(offsets, r0, c0), destination},
                                     assemble.attrs, assign->span());
        stored = make_var(assign->var->name, value->type(), assign->span());
        out->push_back(ir::make_node<AssignStmt>(stored, value, assign->span()));
        destination = stored;
      }
    }
    var_map[assign->var.get()] = stored;
  }

  static std::string loop_name(const ForStmt& l, const Accumulator& acc) {
    return l.iter_args[acc.position]->name;
  }
};

}  // namespace

FunctionPtr rewrite_tensor_accumulators(const FunctionPtr& f) {
  AccumulatorRewriter rewriter;
  return rewriter.mutate_function(f);
}

}  // namespace pypto::passes::detail
