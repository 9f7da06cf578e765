// Type rules and reference-interpreter semantics of the multi-rank ops (comm_ops.h).
#include "comm_ops.h"

namespace pypto::ir {

namespace op_rules {
namespace {

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
  if (op != 0 && op != 1)
    c.fail_call("op of " + c.op_name() + " must be pld.NotifyOp.AtomicAdd or Set");
  return no_value();
}

TypePtr infer_comm_wait(const OpContext& c) {
  expect_signal_cell(c, 0, 1);
  expect_integer_scalar(c, 2, "the expected value");
  const int64_t cmp = int_attr(c, "cmp", 1);
  if (cmp != 0 && cmp != 1) c.fail_call("cmp of " + c.op_name() + " must be pld.WaitCmp.Eq or Ge");
  // deferred=1: pld.system.defer_wait, whose task completes when the counter reaches the value.
  const int64_t deferred = int_attr(c, "deferred", 0);
  if (deferred != 0 && deferred != 1) c.fail_call("deferred of " + c.op_name() + " must be 0 or 1");
  if (deferred && cmp != 1) c.fail_call("a deferred " + c.op_name() + " waits with pld.WaitCmp.Ge");
  return no_value();
}

TypePtr infer_comm_barrier(const OpContext& c) {
  const TensorType* t = expect_tensor(c, 0);
  if (t->dtype != DataType::INT32 || t->shape.empty()) {
    c.fail(0, "the signal of a barrier must be an INT32 window buffer view of shape [nranks, 1]");
  }
  return c.args[0]->type();
}

namespace {

// The label of a collective as the program wrote it.
std::string collective_name(const OpContext& c) { return "pld.tensor." + c.op.substr(5); }

// A signal of a collective: an INT32 window view with a cell per rank along one dimension.
void expect_collective_signal(const OpContext& c, size_t i) {
  const TensorType* t = expect_tensor(c, i);
  if (t->dtype != DataType::INT32 || t->shape.empty() || t->shape.size() > 2) {
    c.fail(i, "the signal of " + collective_name(c) +
                  " must be an INT32 window buffer view of shape [nranks] or [nranks, 1], got " +
                  type_to_string(c.args.at(i)->type()));
  }
}

void expect_reduce_op(const OpContext& c) {
  const int64_t op = int_attr(c, "op", 0);
  if (op < 0 || op > 3) {
    c.fail_call("op of " + collective_name(c) +
                " must be pld.ReduceOp.Sum, Max, Min or Prod (got " + std::to_string(op) + ")");
  }
}

// What a reduction runs on: FP16 or FP32 windows.
const TensorType* expect_reduce_target(const OpContext& c, size_t i) {
  const TensorType* t = expect_tensor(c, i);
  if (t->dtype != DataType::FP32 && t->dtype != DataType::FP16) {
    c.fail(i, "the target of " + collective_name(c) + " must be FP16 or FP32, got " +
                  type_to_string(c.args.at(i)->type()));
  }
  return t;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d == kDynamicExtent) return kDynamicExtent;
    n *= d;
  }
  return n;
}

// The [NR * block, ...] target of allgather / all_to_all(_v) and its input.
void expect_exchange(const OpContext& c, size_t input, size_t target, bool one_block) {
  const TensorType* in = expect_tensor(c, input);
  const TensorType* out = expect_tensor(c, target);
  if (out->shape.size() < 2) {
    c.fail(target, "the target of " + collective_name(c) + " must be [nranks, ...], got " +
                       type_to_string(c.args.at(target)->type()));
  }
  expect_same_dtype(c, input, in->dtype, out->dtype);
  const int64_t want = element_count(out->shape), have = element_count(in->shape);
  const int64_t rows = out->shape[0];
  if (want == kDynamicExtent || have == kDynamicExtent || rows <= 0) return;
  if (one_block ? have * rows != want : have != want) {
    const std::string expected =
        one_block ? "one row of the target (" + std::to_string(want / rows) + ")"
                  : "as many elements as the target (" + std::to_string(want) + ")";
    c.fail(input, "the input of " + collective_name(c) + " must hold " + expected +
                      " elements, it holds " + std::to_string(have));
  }
}

}  // namespace

// comm_allreduce(target, signal) op=, mode= (0 mesh, 1 ring)
TypePtr infer_comm_allreduce(const OpContext& c) {
  expect_reduce_target(c, 0);
  // Without a signal (a host orchestrator's form) the run provides one.
  if (c.args.size() > 1) expect_collective_signal(c, 1);
  expect_reduce_op(c);
  const int64_t mode = int_attr(c, "mode", 0);
  if (mode != 0 && mode != 1) {
    c.fail_call("mode of pld.tensor.allreduce must be \"mesh\" or \"ring\"");
  }
  if (mode == 1 && (c.args.size() < 2 || c.args[1]->type()->as<TensorType>()->shape.size() != 2)) {
    c.fail(1,
           "the signal of pld.tensor.allreduce(mode=\"ring\") must be "
           "[2 * (nranks - 1), nranks]");
  }
  return c.args[0]->type();
}

// comm_reduce_scatter(target [NR * rows, ...], signal) op=
TypePtr infer_comm_reduce_scatter(const OpContext& c) {
  const TensorType* t = expect_reduce_target(c, 0);
  if (t->shape.size() < 2) {
    c.fail(0, "the target of pld.tensor.reduce_scatter must be [nranks, SIZE]");
  }
  expect_collective_signal(c, 1);
  expect_reduce_op(c);
  return c.args[0]->type();
}

// comm_broadcast(target, signal) root=
TypePtr infer_comm_broadcast(const OpContext& c) {
  expect_tensor(c, 0);
  expect_collective_signal(c, 1);
  if (int_attr(c, "root", -1) < 0) {
    c.fail_call("root= of pld.tensor.broadcast must be a rank (>= 0)");
  }
  return c.args[0]->type();
}

// comm_allgather(input, target [NR, ...], signal)
TypePtr infer_comm_allgather(const OpContext& c) {
  expect_exchange(c, 0, 1, /*one_block=*/true);
  expect_collective_signal(c, 2);
  return c.args[1]->type();
}

// comm_all_to_all(input, target, signal)
TypePtr infer_comm_all_to_all(const OpContext& c) {
  expect_exchange(c, 0, 1, /*one_block=*/false);
  expect_collective_signal(c, 2);
  return c.args[1]->type();
}

// comm_all_to_all_v(input, target, signal, send_counts [NR] | [NR, 1], recv_counts [NR, 1])
TypePtr infer_comm_all_to_all_v(const OpContext& c) {
  expect_exchange(c, 0, 1, /*one_block=*/false);
  expect_collective_signal(c, 2);
  for (size_t i : {size_t{3}, size_t{4}}) {
    const TensorType* t = expect_tensor(c, i);
    if (t->dtype != DataType::INT32 || t->shape.empty() || t->shape.size() > 2) {
      c.fail(i, std::string(i == 3 ? "send_counts" : "recv_counts") +
                    " of pld.tensor.all_to_all_v must be INT32 [nranks] or [nranks, 1], got " +
                    type_to_string(c.args.at(i)->type()));
    }
  }
  return c.args[1]->type();
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
  throw RunError(def.name +
                 " needs the ranks of a multi-rank run; the reference interpreter "
                 "runs one rank alone (run the program with a DistributedConfig)");
}

}  // namespace interp

}  // namespace pypto::ir
