// Type rules and reference-interpreter semantics of the multi-rank ops (comm_ops.h).
#include "comm_ops.h"

namespace pypto::ir {

namespace op_rules {
namespace {

TypePtr no_value() { return std::make_shared<TupleType>(std::vector<TypePtr>{}); }

void expect_integer_scalar(const OpContext& c, size_t i, const char* what) {
  const auto* s = c.args.at(i)->type()->as<ScalarType>();
  if (!s || !is_integer_dtype(s->dtype)) {
    c.fail(i, std::string(what) + " of " + c.op_name() + " must be an integer, got " +
                  type_to_string(c.args.at(i)->type()));
  }
}

int64_t int_attr(const OpContext& c, const char* key, int64_t fallback) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return fallback;
  const auto* i = std::get_if<int64_t>(v);
  if (!i) c.fail_call(std::string(key) + " of " + c.op_name() + " must be an integer");
  return *i;
}

// A signal: an INT32 window tensor; `offsets` one integer per dimension.
void expect_signal_cell(const OpContext& c, size_t signal, size_t offsets) {
  const TensorType* t = expect_tensor(c, signal);
  if (t->dtype != DataType::INT32) {
    c.fail(signal, "a signal must be an INT32 window buffer view, got " +
                       type_to_string(c.args.at(signal)->type()));
  }
  auto offs = expect_offsets(c, offsets);
  expect_rank(c, offsets, "offsets", offs.size(), t->shape.size());
  check_region(c, offsets, offs, std::vector<int64_t>(t->shape.size(), 1), t->shape);
}

}  // namespace

TypePtr infer_comm_ctx(const OpContext& c) {
  expect_tensor(c, 0);
  return scalar_type(DataType::INT32);
}

TypePtr infer_comm_rank(const OpContext& c) {
  expect_integer_scalar(c, 0, "the comm context");
  return scalar_type(DataType::INT32);
}

TypePtr infer_comm_world_size(const OpContext&) { return scalar_type(DataType::INT64); }

TypePtr infer_comm_peer_view(const OpContext& c) {
  expect_tensor(c, 0);
  expect_integer_scalar(c, 1, "the peer");
  return c.args[0]->type();
}

TypePtr infer_comm_notify(const OpContext& c) {
  expect_signal_cell(c, 0, 2);
  expect_integer_scalar(c, 1, "the peer");
  expect_integer_scalar(c, 3, "the value");
  const int64_t op = int_attr(c, "op", 0);
  if (op != 0 && op != 1) c.fail_call("op of " + c.op_name() + " must be pld.NotifyOp.AtomicAdd or Set");
  return no_value();
}

TypePtr infer_comm_wait(const OpContext& c) {
  expect_signal_cell(c, 0, 1);
  expect_integer_scalar(c, 2, "the expected value");
  const int64_t cmp = int_attr(c, "cmp", 1);
  if (cmp != 0 && cmp != 1) c.fail_call("cmp of " + c.op_name() + " must be pld.WaitCmp.Eq or Ge");
  return no_value();
}

TypePtr infer_comm_barrier(const OpContext& c) {
  const TensorType* t = expect_tensor(c, 0);
  if (t->dtype != DataType::INT32 || t->shape.empty()) {
    c.fail(0, "the signal of a barrier must be an INT32 window buffer view of shape [nranks, 1]");
  }
  return c.args[0]->type();
}

TypePtr infer_comm_alloc_window(const OpContext& c) {
  expect_integer_scalar(c, 0, "the size");
  return scalar_type(DataType::INT64);
}

TypePtr infer_comm_window(const OpContext& c) {
  expect_integer_scalar(c, 0, "the window buffer");
  std::vector<int64_t> shape = expect_const_shape(c, 1);
  const DataType dtype = required_dtype_attr(c, "dtype");
  expect_shape_fits(c, 1, shape, dtype);
  return tensor_type(std::move(shape), dtype);
}

}  // namespace op_rules

namespace interp {

Value op_comm_scalar(const OpDef& def, const Call&, const Args&) {
  return Value::of_int(def.name == "comm_nranks" ? 1 : 0);
}

Value op_comm_peer_view(const OpDef&, const Call&, const Args& a) {
  if (a.at(1).kind != Value::Kind::Int || a.at(1).i != 0) {
    throw RunError("the reference interpreter runs rank 0 of 1 alone: it has no peer " +
                   std::to_string(a.at(1).i) + " (run the program with a DistributedConfig)");
  }
  return a.at(0);
}

Value op_comm_unsupported(const OpDef& def, const Call&, const Args&) {
  throw RunError(def.name + " needs the ranks of a multi-rank run; the reference interpreter "
                            "runs one rank alone (run the program with a DistributedConfig)");
}

}  // namespace interp

}  // namespace pypto::ir
