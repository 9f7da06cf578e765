// Subscripts of tensors and tiles, numpy style as PyPTO writes them: an index for every
// dimension (`x[i, j]` of a 2-D value) reads one element (pl.read); otherwise `x[a:b, :]`, `t[:,
// 0:HALF]`, `x[i]` are windows (pl.slice: a view of a tensor, a copy of a tile) whose extents are
// constant, an integer index dropping its dimension (a tile keeps at least two), and missing
// trailing indices meaning `:`.
#include <algorithm>
#include <optional>
#include <utility>

#include "parser_state.h"
#include "pypto/ir/linear_form.h"

namespace pypto::frontend::detail {

namespace {

// hi - lo when it is constant: both bounds constant, or bounds that differ by a constant
// whatever their variables are (x[i:i + 8], x[k * 64:(k + 1) * 64]).
std::optional<int64_t> slice_extent(const ExprPtr& lower, const ExprPtr& upper) {
  return ir::constant_difference(lower, upper);
}

}  // namespace

std::vector<SubscriptItem> Parser::parse_subscript_items() {
  std::vector<SubscriptItem> items;  // after '['
  while (true) {
    SubscriptItem item;
    item.span = here();
    if (!at(TK::Colon)) item.index = expect_expr(parse_value(), "a subscript");
    if (at(TK::Colon)) {
      advance();
      item.is_slice = true;
      if (!at(TK::Comma) && !at(TK::RBracket)) item.upper = expect_expr(parse_value(), "a slice");
      if (at(TK::Colon)) fail_here("a slice step (a:b:c) is not supported");
    }
    items.push_back(std::move(item));
    if (!at(TK::Comma)) break;
    advance();
    if (at(TK::RBracket)) break;
  }
  expect(TK::RBracket, "']' to close the subscript");
  return items;
}

SubscriptWindow Parser::subscript_window(const std::vector<int64_t>& shape,
                                         const std::vector<SubscriptItem>& items,
                                         const std::string& kind, Span span) const {
  if (items.size() > shape.size()) {
    fail(span, std::to_string(items.size()) + " indices for a " + std::to_string(shape.size()) +
                   "-D " + kind);
  }
  SubscriptWindow w;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d >= items.size()) {  // a missing trailing index is `:`
      w.offsets.push_back(ir::make_int(0, span));
      w.extents.push_back(shape[d]);
      w.kept.push_back(shape[d]);
      continue;
    }
    const SubscriptItem& item = items[d];
    ExprPtr lower = item.index ? item.index : ir::make_int(0, item.span);
    int64_t extent = 1;
    if (item.is_slice) {
      ExprPtr upper = item.upper ? item.upper : ir::make_int(shape[d], item.span);
      std::optional<int64_t> constant_extent = slice_extent(lower, upper);
      if (!constant_extent) {
        fail(item.span,
             "the extent of a slice must be constant: write x[i:i + 8] or "
             "x[k * 8:(k + 1) * 8], not bounds whose difference is known only at run time");
      }
      extent = *constant_extent;
      if (extent <= 0 || extent > shape[d]) {
        fail(item.span, "slice of extent " + std::to_string(extent) + " in dimension " +
                            std::to_string(d) + " of a " + kind + " of extent " +
                            std::to_string(shape[d]));
      }
      w.kept.push_back(extent);
    }
    w.offsets.push_back(lower);
    w.extents.push_back(extent);
  }
  return w;
}

namespace {

ExprPtr int_tuple(const std::vector<int64_t>& values, Span span) {
  std::vector<ExprPtr> items;
  for (int64_t v : values) items.push_back(ir::make_int(v, span));
  return ir::make_tuple(std::move(items), span);
}

}  // namespace

Value Parser::parse_value_subscript(const Value& v, Span span) {
  const TypePtr& type = v.expr->type();
  const auto* tensor = type->as<ir::TensorType>();
  const std::vector<int64_t>& shape = tensor ? tensor->shape : type->as<ir::TileType>()->shape;
  std::vector<SubscriptItem> items = parse_subscript_items();
  const bool element =
      items.size() == shape.size() &&
      std::none_of(items.begin(), items.end(), [](const SubscriptItem& i) { return i.is_slice; });
  if (element) {  // an index for every dimension
    std::vector<ExprPtr> indices;
    for (const SubscriptItem& i : items) indices.push_back(i.index);
    return expr_value(
        ir::make_op_call("read", {v.expr, ir::make_tuple(std::move(indices), span)}, {}, span),
        span);
  }
  SubscriptWindow w = subscript_window(shape, items, tensor ? "tensor" : "tile", span);
  ExprPtr result = ir::make_op_call(
      "slice", {v.expr, int_tuple(w.extents, span), ir::make_tuple(w.offsets, span)}, {}, span);
  // Indexed dimensions are dropped; a tile keeps at least two.
  while (!tensor && w.kept.size() < 2) w.kept.insert(w.kept.begin(), 1);
  if (w.kept != w.extents) {
    result = ir::make_op_call("reshape", {result, int_tuple(w.kept, span)}, {}, span);
  }
  return expr_value(result, span);
}

bool Parser::try_subscript_assignment(Block& block) {
  // `dst[...] = src`: dst = pl.assemble(dst, src, offsets) (src reshaped to the window when it
  // lacks the indexed dimensions).
  const size_t start = pos_;
  const Token& name = cur();
  VarPtr var = lookup_var(name.text);
  const TypePtr type = var ? var->type() : nullptr;
  if (!type || !(type->as<ir::TensorType>() || type->as<ir::TileType>())) return false;
  if (ir::is_task_array_type(type)) return try_task_array_store(block, var, name);
  advance();
  const Span span = here();
  advance();  // [
  std::vector<SubscriptItem> items = parse_subscript_items();
  if (!at(TK::Assign)) {
    pos_ = start;
    return false;
  }
  advance();
  const Span value_span = here();
  ExprPtr source = expect_expr(parse_value(), "the right-hand side of an assignment");
  const auto* tensor = type->as<ir::TensorType>();
  const std::vector<int64_t>& shape = tensor ? tensor->shape : type->as<ir::TileType>()->shape;
  SubscriptWindow w = subscript_window(shape, items, tensor ? "tensor" : "tile", span);
  const TypePtr& source_type = source->type();
  const std::vector<int64_t>* source_shape = nullptr;
  if (const auto* t = source_type->as<ir::TileType>()) source_shape = &t->shape;
  if (const auto* t = source_type->as<ir::TensorType>()) source_shape = &t->shape;
  auto elements = [](const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  };
  if (source_shape && *source_shape != w.extents &&
      elements(*source_shape) == elements(w.extents)) {
    source =
        ir::make_op_call("reshape", {source, int_tuple(w.extents, value_span)}, {}, value_span);
  }
  check_single_assignment(name);
  // `t[i, j] = scalar` with an index per dimension sets one element (pl.write); a window takes a
  // tile or tensor (pl.assemble).
  const bool element =
      source_type->as<ir::ScalarType>() && items.size() == shape.size() &&
      std::none_of(items.begin(), items.end(), [](const SubscriptItem& i) { return i.is_slice; });
  ExprPtr value =
      element
          ? ir::make_op_call("write", {var, ir::make_tuple(w.offsets, span), source}, {}, span)
          : ir::make_op_call("assemble", {var, source, ir::make_tuple(w.offsets, span)}, {}, span);
  VarPtr target = bind_var(name.text, value->type(), span_of(name));
  block.stmts.push_back(ir::make_node<ir::AssignStmt>(target, value, span_of(name)));
  return true;
}

}  // namespace pypto::frontend::detail
