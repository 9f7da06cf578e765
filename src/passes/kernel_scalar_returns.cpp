// Scalars returned by kernels travel through one-element Out tensors: kernel_scalar_returns.h.
#include "kernel_scalar_returns.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "pass_utils.h"
#include "pypto/ir/op_registry.h"

namespace pypto::passes::detail {

namespace {

using namespace ir;

// Writes each scalar return value into its Out parameter just before the return.
class ScalarReturnWriter : public IRMutator {
 public:
  // `outputs[i]`: the Out parameter of return value i, or null for a tensor.
  explicit ScalarReturnWriter(std::vector<VarPtr> outputs) : outputs_(std::move(outputs)) {}

 protected:
  StmtPtr mutate_return(const std::shared_ptr<const ReturnStmt>& s) override {
    std::vector<StmtPtr> stmts;
    for (size_t i = 0; i < s->values.size() && i < outputs_.size(); ++i) {
      if (!outputs_[i]) continue;
      const ExprPtr& value = s->values[i];
      auto written = make_var(outputs_[i]->name + "_written", outputs_[i]->type(), value->span());
      stmts.push_back(make_node<AssignStmt>(
          written,
          make_op_call("write",
                       {outputs_[i], make_tuple({make_int(0, s->span())}, s->span()), value}, {},
                       value->span()),
          s->span()));
    }
    if (stmts.empty()) return IRMutator::mutate_return(s);
    stmts.push_back(s);
    return make_seq(std::move(stmts), s->span());
  }

 private:
  std::vector<VarPtr> outputs_;
};

// Index in `params` of the k-th Out/InOut parameter; params.size() when there are only k.
size_t output_position(const std::vector<Param>& params, size_t k) {
  size_t seen = 0;
  for (size_t p = 0; p < params.size(); ++p) {
    if (params[p].direction == ParamDirection::In) continue;
    if (seen++ == k) return p;
  }
  return seen == k ? params.size() : SIZE_MAX;
}

// Passes a created one-element tensor for each scalar Out parameter of the kernels called.
class ScalarOutputArguments : public IRMutator {
 public:
  explicit ScalarOutputArguments(const std::unordered_map<std::string, ScalarOutputs>& added)
      : added_(added) {}

 protected:
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr value = with_outputs(s->value, &pre);
    if (value == s->value) return IRMutator::mutate_assign(s);
    pre.push_back(make_node<AssignStmt>(s->var, value, s->span()));
    return make_seq(std::move(pre), s->span());
  }
  StmtPtr mutate_eval(const std::shared_ptr<const EvalStmt>& s) override {
    std::vector<StmtPtr> pre;
    ExprPtr value = with_outputs(s->expr, &pre);
    if (value == s->expr) return IRMutator::mutate_eval(s);
    pre.push_back(make_node<EvalStmt>(value, s->span()));
    return make_seq(std::move(pre), s->span());
  }

 private:
  ExprPtr with_outputs(const ExprPtr& e, std::vector<StmtPtr>* pre) {
    const auto* call = e->as<Call>();
    if (!call || call->call_kind != CallKind::Function) return e;
    auto it = added_.find(call->callee);
    if (it == added_.end()) return e;
    std::vector<ExprPtr> args = call->args;
    const ScalarOutputs& outputs = it->second;
    for (size_t k = 0; k < outputs.param_indices.size(); ++k) {
      const auto* tensor = outputs.types[k]->as<TensorType>();
      auto out = make_var("ret_scalar" + std::to_string(k), outputs.types[k], e->span());
      pre->push_back(make_node<AssignStmt>(
          out,
          make_op_call("create_tensor", {make_tuple({make_int(1, e->span())}, e->span())},
                       {{"dtype", tensor->dtype}}, e->span()),
          e->span()));
      const size_t at = std::min(outputs.param_indices[k], args.size());
      args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), out);
    }
    return rebuild_call(*call, std::move(args), call->attrs, call->type());
  }

  const std::unordered_map<std::string, ScalarOutputs>& added_;
};

}  // namespace

FunctionPtr return_scalars_through_outputs(const FunctionPtr& kernel, ScalarOutputs* added) {
  std::vector<Param> params = kernel->params;
  std::vector<VarPtr> outputs(kernel->return_types.size());
  for (size_t i = 0; i < kernel->return_types.size(); ++i) {
    const auto* scalar = kernel->return_types[i]->as<ScalarType>();
    if (!scalar) continue;
    // Return value i is the i-th output: the new parameter goes where that one is now.
    const size_t at = output_position(params, i);
    if (at == SIZE_MAX) {
      throw CompileError(kernel->span,
                         "InCore function '" + kernel->name + "' returns a scalar as its value " +
                             std::to_string(i) + " after a value that is not one of its outputs " +
                             "(a tensor it only reads): return the scalar first, or return " +
                             "that tensor through a pl.Out parameter");
    }
    auto out = make_var("ret" + std::to_string(i) + "_scalar", tensor_type({1}, scalar->dtype),
                        kernel->span);
    params.insert(params.begin() + static_cast<std::ptrdiff_t>(at),
                  Param{out, ParamDirection::Out});
    outputs[i] = out;
  }
  if (params.size() == kernel->params.size()) return kernel;
  // The final indices, once all are inserted.
  for (size_t p = 0; p < params.size(); ++p) {
    for (const auto& out : outputs) {
      if (out && params[p].var == out) {
        added->param_indices.push_back(p);
        added->types.push_back(out->type());
      }
    }
  }
  ScalarReturnWriter writer(outputs);
  FunctionPtr written = writer.mutate_function(kernel);
  return make_node<Function>(written->name, written->type, std::move(params), written->return_types,
                             written->body, written->span, written->attrs);
}

FunctionPtr pass_scalar_outputs(const FunctionPtr& caller,
                                const std::unordered_map<std::string, ScalarOutputs>& added) {
  ScalarOutputArguments adder(added);
  return adder.mutate_function(caller);
}

}  // namespace pypto::passes::detail
