// Type rules and reference-interpreter semantics of the pl.system ops (system_ops.h).
#include "system_ops.h"

#include <cstdint>

#include "interpreter_blocks.h"
#include "task_ops.h"

#include "pypto/ir/system_op_attrs.h"

namespace pypto::ir {

namespace op_rules {
namespace {

const AttrValue* attr(const OpContext& c, const char* key) { return find_attr(c.attrs, key); }

int64_t int_attr(const OpContext& c, const char* key, bool required) {
  const AttrValue* v = attr(c, key);
  if (!v) {
    if (required) c.fail_call(c.op_name() + " needs " + key + "=");
    return -1;
  }
  const auto* i = std::get_if<int64_t>(v);
  if (!i) c.fail_call(std::string(key) + " of " + c.op_name() + " must be an integer");
  return *i;
}

void expect_pipe(const OpContext& c, const char* key) {
  const int64_t pipe = int_attr(c, key, /*required=*/true);
  if (!pipe_type_name(pipe)) {
    c.fail_call(std::string(key) + " of " + c.op_name() +
                " must be a pl.PipeType (MTE1, MTE2, MTE3, M, V, S, FIX or ALL), got " +
                std::to_string(pipe));
  }
}

std::string string_attr(const OpContext& c, const char* key, const char* fallback) {
  const AttrValue* v = attr(c, key);
  if (!v) return fallback;
  const auto* s = std::get_if<std::string>(v);
  if (!s) c.fail_call(std::string(key) + " of " + c.op_name() + " must be a string");
  return *s;
}

void expect_integer_scalar(const OpContext& c, size_t i, const char* what) {
  const auto* s = c.args.at(i)->type()->as<ScalarType>();
  if (!s || !is_integer_dtype(s->dtype)) {
    c.fail(i, std::string(what) + " of " + c.op_name() + " must be an integer scalar, got " +
                  type_to_string(c.args.at(i)->type()));
  }
}

}  // namespace

TypePtr infer_pipe_flag(const OpContext& c) {
  expect_pipe(c, "set_pipe");
  expect_pipe(c, "wait_pipe");
  const int64_t event = int_attr(c, "event_id", /*required=*/true);
  if (event < 0) c.fail_call("event_id of " + c.op_name() + " must be >= 0, got " + std::to_string(event));
  return no_value();
}

// The event is a constant (event_id=, 0..13: 14 and 15 are reserved) or a run-time integer
// scalar (the argument `event`), not both.
TypePtr infer_cross_core_event(const OpContext& c) {
  expect_pipe(c, "pipe");
  const bool dynamic = !c.args.empty();
  const AttrValue* constant = attr(c, "event_id");
  if (dynamic && constant) c.fail_call(c.op_name() + " takes its event id once: a constant event_id= or a scalar");
  if (!dynamic && !constant) c.fail_call(c.op_name() + " needs an event id (0 to 13, or an integer scalar)");
  if (dynamic) {
    expect_integer_scalar(c, 0, "the event id");
  } else {
    const int64_t event = int_attr(c, "event_id", true);
    if (event < 0 || event > 13) {
      c.fail_call("event_id of " + c.op_name() + " must be 0 to 13 (14 and 15 are reserved), got " +
                  std::to_string(event));
    }
  }
  if (attr(c, "ffts_mode")) {
    const int64_t mode = int_attr(c, "ffts_mode", false);
    if (mode < 0 || mode > 2) c.fail_call("ffts_mode of " + c.op_name() + " must be 0, 1 or 2, got " + std::to_string(mode));
  }
  if (attr(c, "core_type")) {
    const std::string core = string_attr(c, "core_type", "");
    if (core != "aic" && core != "aiv") {
      c.fail_call("core_type of " + c.op_name() + " must be 'aic' or 'aiv', got '" + core + "'");
    }
  }
  return no_value();
}

// The FFTS workspace: a 1-D INT64 tensor of at least 256 elements.
TypePtr infer_set_ffts(const OpContext& c) {
  const TensorType* t = expect_tensor(c, 0);
  if (t->dtype != DataType::INT64 || t->shape.size() != 1 || t->shape[0] < 256) {
    c.fail(0, "the workspace of " + c.op_name() +
                  " must be a 1-D INT64 tensor of at least 256 elements, got " +
                  type_to_string(c.args[0]->type()));
  }
  return no_value();
}

TypePtr infer_pipe_barrier(const OpContext&) { return no_value(); }

// No arguments (all of global memory), or a tensor with the shape and offsets of a region, one
// integer per dimension each.
TypePtr infer_cacheinvalid(const OpContext& c) {
  if (c.args.empty()) return no_value();
  if (c.args.size() != 3) {
    c.fail_call(c.op_name() + " takes no arguments (all of global memory) or a tensor, its "
                              "region's shapes and offsets");
  }
  const TensorType* t = expect_tensor(c, 0);
  auto shapes = expect_offsets(c, 1, "shapes");
  expect_rank(c, 1, "shapes", shapes.size(), t->shape.size());
  auto offsets = expect_offsets(c, 2, "offsets");
  expect_rank(c, 2, "offsets", offsets.size(), t->shape.size());
  std::vector<int64_t> extent;
  for (size_t d = 0; d < shapes.size(); ++d) {
    if (!shapes[d]) return no_value();  // a run-time region: the device's view checks it
    if (*shapes[d] < 1) c.fail(1, "the shapes of " + c.op_name() + " must be positive");
    extent.push_back(*shapes[d]);
  }
  check_region(c, 2, offsets, extent, t->shape);
  return no_value();
}

// Hard form: no arguments. Soft form (mode="soft"): a shared INT32 workspace of at least 16
// elements and the participant count.
TypePtr infer_syncall(const OpContext& c) {
  const std::string core = string_attr(c, "core_type", "mix");
  if (core != "mix" && core != "aiv_only" && core != "aic_only") {
    c.fail_call("core_type of " + c.op_name() + " must be 'mix', 'aiv_only' or 'aic_only', got '" +
                core + "'");
  }
  const std::string mode = string_attr(c, "mode", "hard");
  if (mode == "hard") {
    if (!c.args.empty()) {
      c.fail(0, c.op_name() + "(mode='hard') takes no gm_workspace or used_cores; pass "
                              "mode='soft' for the barrier over a global-memory workspace");
    }
    return no_value();
  }
  if (mode != "soft") c.fail_call("mode of " + c.op_name() + " must be 'hard' or 'soft', got '" + mode + "'");
  if (c.args.size() != 2) {
    c.fail_call(c.op_name() + "(mode='soft') needs gm_workspace= (a shared, zeroed INT32 tensor "
                              "of at least 16 elements) and used_cores= (the participant count)");
  }
  const TensorType* ws = expect_tensor(c, 0);
  int64_t elements = 1;
  for (int64_t d : ws->shape) elements *= d;
  if (ws->dtype != DataType::INT32 || elements < 16) {
    c.fail(0, "the gm_workspace of " + c.op_name() +
                  " must be an INT32 tensor of at least 16 elements (one 64-byte line), got " +
                  type_to_string(c.args[0]->type()));
  }
  expect_integer_scalar(c, 1, "used_cores");
  if (const auto* n = c.args[1]->as<IntImm>(); n && (n->value < 0 || n->value > INT32_MAX)) {
    c.fail(1, "used_cores of " + c.op_name() + " must be in [0, 2^31 - 1], got " +
                  std::to_string(n->value));
  }
  return no_value();
}

TypePtr infer_core_count(const OpContext&) { return scalar_type(DataType::INT32); }

}  // namespace op_rules

namespace interp {

Value op_system_none(const OpDef&, const Call&, const Args&) { return Value{}; }

Value op_syncall(const OpDef&, const Call&, const Args&) {
  launch_syncall();
  return Value{};
}

Value op_core_count(const OpDef&, const Call&, const Args&) { return Value::of_int(1); }

}  // namespace interp

}  // namespace pypto::ir
