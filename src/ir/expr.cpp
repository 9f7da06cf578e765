#include "pypto/ir/expr.h"

#include "pypto/ir/node_memory.h"

#include <stdexcept>

namespace pypto::ir {

std::string_view binary_op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::FloorDiv:
      return "//";
    case BinaryOp::Mod:
      return "%";
    case BinaryOp::Min:
      return "min";
    case BinaryOp::Max:
      return "max";
    case BinaryOp::Eq:
      return "==";
    case BinaryOp::Ne:
      return "!=";
    case BinaryOp::Lt:
      return "<";
    case BinaryOp::Le:
      return "<=";
    case BinaryOp::Gt:
      return ">";
    case BinaryOp::Ge:
      return ">=";
    case BinaryOp::And:
      return "and";
    case BinaryOp::Or:
      return "or";
    case BinaryOp::Shl:
      return "<<";
    case BinaryOp::Shr:
      return ">>";
  }
  return "?";
}

bool is_comparison(BinaryOp op) {
  switch (op) {
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      return true;
    default:
      return false;
  }
}

AttrList::AttrList(Attrs attrs) {
  if (!attrs.empty()) list_ = make_node<Attrs>(std::move(attrs));
}

const Attrs& AttrList::no_attrs() {
  static const Attrs* const none = new Attrs();  // never destroyed, like the node pool
  return *none;
}

const AttrValue* find_attr(const Attrs& attrs, std::string_view key) {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

void throw_nesting_too_deep(Span span, int32_t depth) {
  throw CompileError(span, "program nested " + std::to_string(depth) +
                               " levels deep exceeds the compiler's nesting limit of " +
                               std::to_string(kMaxIRDepth) +
                               " (expressions, calls, loops and ifs inside one another); "
                               "split it into several statements or functions");
}

ExprPtr make_int(int64_t v, Span span) { return ir::make_node<IntImm>(v, DataType::INT64, span); }
ExprPtr make_float(double v, Span span) { return ir::make_node<FloatImm>(v, DataType::FP32, span); }
ExprPtr make_bool(bool v, Span span) { return ir::make_node<BoolImm>(v, span); }
VarPtr make_var(std::string name, TypePtr type, Span span) {
  return ir::make_node<Var>(std::move(name), std::move(type), span);
}

namespace {

DataType scalar_dtype(const ExprPtr& e) {
  const auto* s = e->type() ? e->type()->as<ScalarType>() : nullptr;
  if (!s)
    throw CompileError(e->span(), "expected a scalar operand, got " + type_to_string(e->type()));
  return s->dtype;
}

// Python-like promotion: any float operand makes the result float; else the wider integer.
// (Of two floats, or two integers, of one width: the left operand's type.)
DataType promote(DataType a, DataType b) {
  if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
  if (a == DataType::BOOL && b == DataType::BOOL) return DataType::INT64;
  if (a == DataType::BOOL) return b;
  if (b == DataType::BOOL) return a;
  return dtype_bytes(b) > dtype_bytes(a) ? b : a;
}

}  // namespace

ExprPtr make_binary(BinaryOp op, ExprPtr a, ExprPtr b, Span span) {
  DataType da = scalar_dtype(a), db = scalar_dtype(b);
  DataType result;
  if (is_comparison(op) || op == BinaryOp::And || op == BinaryOp::Or) {
    result = DataType::BOOL;
  } else if (op == BinaryOp::Div) {
    result = DataType::FP32;
  } else if (op == BinaryOp::Shl || op == BinaryOp::Shr) {
    if (is_float(da) || is_float(db) || da == DataType::BOOL || db == DataType::BOOL) {
      throw CompileError(span, "operator '" + std::string(binary_op_symbol(op)) +
                                   "' takes integers, got " + std::string(dtype_name(da)) +
                                   " and " + std::string(dtype_name(db)));
    }
    result = da;  // the shifted value's type, as the count does not widen it
  } else {
    result = promote(da, db);
  }
  return ir::make_node<Binary>(op, std::move(a), std::move(b), scalar_type(result), span);
}

ExprPtr make_tuple(std::vector<ExprPtr> elements, Span span) {
  std::vector<TypePtr> types;
  types.reserve(elements.size());
  for (const auto& e : elements) types.push_back(e->type());
  return ir::make_node<MakeTuple>(std::move(elements), tuple_type(std::move(types)), span);
}

ExprPtr make_tuple_get_item(ExprPtr tuple, int64_t index, Span span) {
  const auto* tt = tuple->type() ? tuple->type()->as<TupleType>() : nullptr;
  if (!tt) throw CompileError(span, "expected a tuple value, got " + type_to_string(tuple->type()));
  if (index < 0 || index >= static_cast<int64_t>(tt->elements.size())) {
    throw CompileError(span, "tuple index " + std::to_string(index) + " out of range for " +
                                 std::to_string(tt->elements.size()) + " values");
  }
  TypePtr t = tt->elements[static_cast<size_t>(index)];
  return ir::make_node<TupleGetItem>(std::move(tuple), index, std::move(t), span);
}

std::optional<int64_t> as_const_int(const ExprPtr& e) {
  if (const auto* i = e ? e->as<IntImm>() : nullptr) return i->value;
  return std::nullopt;
}

}  // namespace pypto::ir
