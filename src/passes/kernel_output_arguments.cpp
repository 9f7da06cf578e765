#include "kernel_output_arguments.h"

#include <utility>

#include "pass_utils.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

// Calls of kernels that gained Out parameters pass them a tensor allocated just before the call
// (`ret0_out = pl.create_tensor(...)`), as PyPTO's pass does at its call sites.
class OutputArgumentAdder : public IRMutator {
 public:
  OutputArgumentAdder(const Function& caller,
                      const std::unordered_map<std::string, AddedParameters>& added)
      : added_(added) {
    // A result the caller returns as its own j-th output is written straight into that output
    // parameter, which the caller's caller reads (the interpreter's contract for returns).
    // Only an output the body does not otherwise use: writing it earlier changes nothing else.
    ir::NodeMap<const Var*, int64_t> uses;
    count_var_occurrences(caller.body, &uses);
    std::vector<VarPtr> outputs;
    for (const auto& p : caller.params)
      if (p.direction != ParamDirection::In)
        outputs.push_back(uses.count(p.var.get()) ? nullptr : p.var);
    for (const auto& st : stmt_list(caller.body)) {
      const auto* r = st->as<ReturnStmt>();
      for (size_t j = 0; r && j < r->values.size() && j < outputs.size(); ++j) {
        const auto* v = r->values[j]->as<Var>();
        if (v && outputs[j]) returned_as_[v] = outputs[j];
      }
    }
  }

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr value = with_outputs(s->value, &pre, s->var.get());
    if (value == s->value) return IRMutator::mutate_assign(s);
    pre.push_back(ir::make_node<AssignStmt>(s->var, value, s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_eval(const std::shared_ptr<const EvalStmt>& s) override {
    // `task_blocks(n)` makes the next kernel call an SPMD launch of n blocks.
    if (const auto* blocks = as_op_call(s->expr, "task_blocks"); blocks && !blocks->args.empty())
      launch_blocks_ = blocks->args[0];
    std::vector<StmtPtr> pre;
    ExprPtr value = with_outputs(s->expr, &pre);
    if (value == s->expr) return IRMutator::mutate_eval(s);
    pre.push_back(ir::make_node<EvalStmt>(value, s->span()));
    return make_seq(std::move(pre), s->span());
  }

 private:
  ExprPtr with_outputs(const ExprPtr& e, std::vector<StmtPtr>* pre, const Var* result = nullptr) {
    const auto* call = e->as<Call>();
    if (!call || call->call_kind != CallKind::Function) return e;
    // The block count of this call (null: one block); the launch ends with the call.
    const ExprPtr blocks = std::exchange(launch_blocks_, nullptr);
    auto it = added_.find(call->callee);
    if (it == added_.end()) return e;
    std::vector<ExprPtr> args = call->args;
    const auto& outputs = it->second.outputs;
    // `per_block`: a scratch tensor of which every block of the launch gets its own part
    // (kBlockScratchParams), so the launch's parts stack along dimension 0.
    auto allocate = [&](TypePtr type, const std::string& name, bool per_block = false) {
      const auto* tensor = type->as<TensorType>();
      std::vector<ExprPtr> dims;
      for (int64_t d : tensor->shape) dims.push_back(make_int(d));
      if (per_block && blocks && !tensor->shape.empty()) {
        const int64_t part = tensor->shape[0];
        std::vector<int64_t> shape = tensor->shape;
        const auto count = as_const_int(blocks);
        shape[0] = count ? *count * part : kDynamicExtent;
        dims[0] = count ? make_int(shape[0]) : make_binary(BinaryOp::Mul, blocks, make_int(part));
        type = tensor_type(std::move(shape), tensor->dtype);
      }
      auto out = make_var(name, type, e->span());
      pre->push_back(
          ir::make_node<AssignStmt>(out,
                                    make_op_call("create_tensor", {make_tuple(std::move(dims))},
                                                 {{"dtype", tensor->dtype}}, e->span()),
                                    e->span()));
      args.push_back(out);
    };
    bool into_own_output = false;
    if (outputs.size() == 1 && result && is_tensor(result->type())) {
      auto out = returned_as_.find(result);
      if (out != returned_as_.end() && types_equal(out->second->type(), outputs[0])) {
        args.push_back(out->second);
        into_own_output = true;
      }
    }
    for (size_t i = 0; !into_own_output && i < outputs.size(); ++i)
      allocate(outputs[i], "ret" + std::to_string(i) + "_out");
    for (size_t i = 0; i < it->second.scratch.size(); ++i)
      allocate(it->second.scratch[i], "scratch" + std::to_string(i), /*per_block=*/true);
    return rebuild_call(*call, std::move(args), call->attrs, call->type());
  }

  const std::unordered_map<std::string, AddedParameters>& added_;
  ir::NodeMap<const Var*, VarPtr> returned_as_;
  ExprPtr launch_blocks_;  // the block count of the next kernel call, from task_blocks
};

}  // namespace

FunctionPtr pass_added_outputs(const FunctionPtr& caller,
                               const std::unordered_map<std::string, AddedParameters>& added) {
  OutputArgumentAdder adder(*caller, added);
  return adder.mutate_function(caller);
}

}  // namespace pypto::passes::detail
