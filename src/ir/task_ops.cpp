// Type rules and reference-interpreter semantics of the scheduling ops (task_ops.h).
#include "task_ops.h"

#include "pto_abi.h"

namespace pypto::ir {

bool is_task_id_type(const TypePtr& type) {
  const auto* s = type ? type->as<ScalarType>() : nullptr;
  return s && s->dtype == kTaskIdDType;
}

bool is_task_array_type(const TypePtr& type) {
  const auto* t = type ? type->as<TensorType>() : nullptr;
  return t && t->dtype == kTaskIdDType && t->shape.size() == 1;
}

namespace op_rules {

namespace {

int64_t int_attr(const OpContext& c, const char* key, int64_t fallback) {
  const AttrValue* v = find_attr(c.attrs, key);
  if (!v) return fallback;
  const auto* i = std::get_if<int64_t>(v);
  if (!i) c.fail_call(std::string(key) + " of " + c.op_name() + " must be an integer");
  return *i;
}

// Argument i: a tuple whose elements are TaskIds or TaskId arrays.
void expect_dependency_list(const OpContext& c, size_t i) {
  const auto* tuple = c.args.at(i)->as<MakeTuple>();
  if (!tuple) c.fail(i, "the dependencies of " + c.op_name() + " must be a list");
  for (const auto& e : tuple->elements) {
    if (!is_task_id_type(e->type()) && !is_task_array_type(e->type())) {
      throw CompileError(e->span().valid() ? e->span() : c.call_span,
                         "a dependency must be a TaskId or an array of TaskIds, got " +
                             type_to_string(e->type()));
    }
  }
}

}  // namespace

TypePtr infer_task_options(const OpContext& c) {
  expect_dependency_list(c, 0);
  if (c.args.size() == 1) return no_value();
  if (c.args.size() != 3) c.fail_call(c.op_name() + " takes a predicate operand with its indices");
  ShapedInfo operand = expect_shaped(c, 1);
  if (operand.is_tile) c.fail(1, "the predicate's operand must be a tensor");
  const int64_t cmp = int_attr(c, "predicate_cmp", -1);
  if (cmp < PTO_CMP_EQ || cmp > PTO_CMP_GE) c.fail_call("unknown predicate comparison");
  return no_value();
}

TypePtr infer_task_id(const OpContext&) { return scalar_type(kTaskIdDType); }

TypePtr infer_task_dummy(const OpContext& c) {
  expect_dependency_list(c, 0);
  return scalar_type(kTaskIdDType);
}

TypePtr infer_manual_scope(const OpContext& c) {
  const AttrValue* v = find_attr(c.attrs, "manual");
  if (!v || !std::get_if<bool>(v)) c.fail_call(c.op_name() + " needs manual=True or False");
  return no_value();
}

TypePtr infer_task_array_set(const OpContext& c) {
  if (!is_task_array_type(c.args.at(0)->type()))
    c.fail(0, "expected an array of TaskIds" + c.where(0) + ", got " +
                  type_to_string(c.args[0]->type()));
  const auto* index = c.args.at(1)->type()->as<ScalarType>();
  if (!index || !(is_integer(index->dtype)))
    c.fail(1, "the slot of a TaskId array must be an integer, got " +
                  type_to_string(c.args[1]->type()));
  if (!is_task_id_type(c.args.at(2)->type()))
    c.fail(2, "a TaskId array holds TaskIds, got " + type_to_string(c.args[2]->type()));
  return c.args[0]->type();
}

TypePtr infer_task_blocks(const OpContext& c) {
  const auto* count = c.args.at(0)->type() ? c.args[0]->type()->as<ScalarType>() : nullptr;
  if (!count || !is_integer(count->dtype))
    c.fail(0, "the number of blocks must be an integer scalar, got " +
                  type_to_string(c.args[0]->type()));
  return no_value();
}

TypePtr infer_launch_query(const OpContext&) { return scalar_type(DataType::INT64); }

}  // namespace op_rules

namespace interp {

namespace {
// The block of the launch this thread's interpreter runs now (none: block 0 of 1).
thread_local int64_t current_block_index = 0;
thread_local int64_t current_block_count = 1;
}  // namespace

LaunchBlockScope::LaunchBlockScope(int64_t index, int64_t count)
    : saved_index_(current_block_index), saved_count_(current_block_count) {
  current_block_index = index;
  current_block_count = count;
}

LaunchBlockScope::~LaunchBlockScope() {
  current_block_index = saved_index_;
  current_block_count = saved_count_;
}

int64_t current_launch_block_count() { return current_block_count; }

Value op_launch_query(const OpDef&, const Call& c, const Args&) {
  if (c.callee == "get_block_idx") return Value::of_int(current_block_index);
  if (c.callee == "get_block_num") return Value::of_int(current_block_count);
  return Value::of_int(0);  // get_subblock_idx: one AIV lane
}

Value op_task_none(const OpDef&, const Call&, const Args&) { return Value{}; }

Value op_task_id(const OpDef&, const Call&, const Args&) {
  // Any non-zero handle will do: the interpreter never waits.
  static thread_local int64_t next = 0;
  return Value::of_int(++next);
}

Value op_task_array_set(const OpDef&, const Call& c, const Args& a) {
  if (a.size() != 3 || a[0].kind != Value::Kind::Tensor || !a[1].is_integral())
    throw RunError("invalid arguments of pl." + c.callee);
  const TensorView& t = a[0].tensor;
  const int64_t index = a[1].as_int();
  if (t.shape.size() != 1 || index < 0 || index >= t.shape[0]) {
    throw RunError("slot " + std::to_string(index) + " is outside the TaskId array of " +
                   std::to_string(t.shape.empty() ? 0 : t.shape[0]) + " slots");
  }
  auto* slots = static_cast<uint64_t*>(t.buffer->data);
  slots[t.offset + index * t.strides[0]] = static_cast<uint64_t>(a[2].as_int());
  return a[0];
}

bool task_predicate_holds(const Call& c, const Args& a) {
  if (a.size() != 3) return true;
  if (a[1].kind != Value::Kind::Tensor || a[2].kind != Value::Kind::Tuple)
    throw RunError("invalid predicate operand");
  std::vector<int64_t> index;
  for (const Value& v : *a[2].tuple) index.push_back(v.as_int());
  TilePtr element =
      read_region(a[1].tensor, index, std::vector<int64_t>(index.size(), 1), "the predicate");
  const double value = element->data.at(0);
  int64_t cmp = -1, target = 0;
  if (const AttrValue* v = find_attr(c.attrs, "predicate_cmp")) cmp = std::get<int64_t>(*v);
  if (const AttrValue* v = find_attr(c.attrs, "predicate_target")) target = std::get<int64_t>(*v);
  const auto t = static_cast<double>(target);
  switch (cmp) {
    case PTO_CMP_EQ: return value == t;
    case PTO_CMP_NE: return value != t;
    case PTO_CMP_LT: return value < t;
    case PTO_CMP_LE: return value <= t;
    case PTO_CMP_GT: return value > t;
    case PTO_CMP_GE: return value >= t;
    default: throw RunError("unknown predicate comparison");
  }
}

}  // namespace interp

}  // namespace pypto::ir
