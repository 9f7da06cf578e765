// The argument forms of the cross-core pipe ops (src/ir/pipe_ops.h) that the registry's
// signature does not cover: a pl.tpop_from_aic / pl.tpop_from_aiv call names no tile, it fills
// one, and PyPTO takes that tile's shape and dtype from the annotation of the name it is bound
// to (`popped: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=1)`). The call
// keeps them as its shape=, dtype= and target_memory= attributes, so that it prints as a call
// that means the same without an annotation.
#include "parser_state.h"

namespace pypto::frontend::detail {

void Parser::complete_tpop_args(const std::string& spelling, std::vector<CallArg>& call_args,
                                Span span) {
  auto given = [&call_args](std::string_view key) {
    for (const CallArg& a : call_args)
      if (a.keyword == key) return true;
    return false;
  };
  const auto* tile = value_annotation_ ? value_annotation_->as<ir::TileType>() : nullptr;
  if (value_annotation_ && !tile) {
    fail(span, spelling + " gives a tile, but the name it is bound to is annotated " +
                   ir::type_to_string(value_annotation_));
  }
  if (!tile) return;  // the type rule asks for shape= and dtype=
  // The annotation's valid_shape: the region of the whole tile the consumer reads.
  bool positional = false;
  for (const CallArg& a : call_args)
    positional = positional || a.keyword.empty() || a.keyword == "valid_rows";
  std::vector<ExprPtr> valid;
  if (runtime_valid_shape_ && runtime_valid_exprs_.size() == 2) {
    valid = runtime_valid_exprs_;
  } else if (tile->view && tile->view->valid_shape.size() == 2 &&
             tile->view->valid_shape != tile->shape) {
    for (int64_t d : tile->view->valid_shape) valid.push_back(ir::make_int(d, span));
  }
  if (!positional && valid.size() == 2) {
    const char* const names[] = {"valid_rows", "valid_cols"};
    for (size_t i = 0; i < 2; ++i) {
      CallArg v;
      v.keyword = names[i];
      v.keyword_span = span;
      v.value.kind = Value::Kind::Expr;
      v.value.expr = valid[i];
      v.value.span = span;
      call_args.push_back(std::move(v));
    }
  }
  if (!given("shape")) {
    std::vector<ExprPtr> dims;
    for (int64_t d : tile->shape) dims.push_back(ir::make_int(d, span));
    CallArg shape;
    shape.keyword = "shape";
    shape.keyword_span = span;
    shape.value = expr_value(ir::make_tuple(std::move(dims), span), span);
    call_args.push_back(std::move(shape));
  }
  if (!given("dtype")) {
    CallArg dtype;
    dtype.keyword = "dtype";
    dtype.keyword_span = span;
    dtype.value.kind = Value::Kind::DType;
    dtype.value.dtype = tile->dtype;
    dtype.value.span = span;
    call_args.push_back(std::move(dtype));
  }
  if (!given("target_memory") && tile->space) {
    CallArg space;
    space.keyword = "target_memory";
    space.keyword_span = span;
    space.value.kind = Value::Kind::Space;
    space.value.space = *tile->space;
    space.value.span = span;
    call_args.push_back(std::move(space));
  }
}

// aic_initialize_pipe / aiv_initialize_pipe: a consumer buffer left out is 0 (PyPTO's default),
// also when only the second is given (v2c_consumer_buf=buf).
void complete_pipe_init_args(std::vector<CallArg>& call_args, Span span) {
  size_t positional = 0;
  bool c2v = false, v2c = false;
  for (const CallArg& a : call_args) {
    if (a.keyword.empty()) ++positional;
    if (a.keyword == "c2v_consumer_buf") c2v = true;
    if (a.keyword == "v2c_consumer_buf") v2c = true;
  }
  c2v = c2v || positional >= 1;
  v2c = v2c || positional >= 2;
  if (c2v || !v2c) return;  // nothing given, or the first is: the signature's order holds
  CallArg zero;
  zero.keyword = "c2v_consumer_buf";
  zero.keyword_span = span;
  zero.value.kind = Value::Kind::Expr;
  zero.value.expr = ir::make_node<ir::IntImm>(0, DataType::INT64, span);
  zero.value.span = span;
  call_args.push_back(std::move(zero));
}

bool Parser::skip_runtime_valid_shape(Span span) {
  if (!runtime_dims_allowed_ || !at(TK::LBracket)) return false;
  // A run-time name among the list's items (up to its closing bracket).
  std::optional<std::string> name;
  for (size_t ahead = 1;
       peek_token(ahead).kind != TK::RBracket && peek_token(ahead).kind != TK::EndOfFile &&
       peek_token(ahead).kind != TK::Newline;
       ++ahead) {
    const Token& t = peek_token(ahead);
    if (t.kind == TK::Name && lookup_var(t.text)) name = std::string(t.text);
  }
  if (!name) return false;
  advance();  // [
  runtime_valid_exprs_.clear();
  while (!at(TK::RBracket)) {
    Value item = parse_value();
    if (item.kind == Value::Kind::Expr && item.expr) runtime_valid_exprs_.push_back(item.expr);
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, "']' to close the list of pl.TileView valid_shape");
  runtime_valid_shape_ = std::make_pair(span, *name);
  return true;
}

void Parser::check_runtime_valid_shape(const ExprPtr& value) {
  if (!runtime_valid_shape_) return;
  const auto [span, name] = *runtime_valid_shape_;
  runtime_valid_shape_.reset();
  const auto* call = value->as<ir::Call>();
  const bool run_time_region =
      call && call->call_kind == ir::CallKind::Op &&
      (call->callee == "tpop_from_aic" || call->callee == "tpop_from_aiv" ||
       call->callee == "set_validshape");
  if (run_time_region) return;
  fail(span, "the run-time value '" + name +
                 "' in pl.TileView valid_shape is not supported: a type holds constants here (a "
                 "run-time valid region is given to pl.load(..., valid_shapes=[...]) or "
                 "pl.tile.set_validshape)");
}

}  // namespace pypto::frontend::detail
