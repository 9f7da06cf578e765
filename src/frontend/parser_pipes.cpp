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
  for (const CallArg& a : call_args) {
    if (a.keyword.empty()) {
      fail(a.value.span, spelling + " takes keyword arguments only (split=, id=, shape=, dtype=)");
    }
  }
  const auto* tile = value_annotation_ ? value_annotation_->as<ir::TileType>() : nullptr;
  if (value_annotation_ && !tile) {
    fail(span, spelling + " gives a tile, but the name it is bound to is annotated " +
                   ir::type_to_string(value_annotation_));
  }
  if (!tile) return;  // the type rule asks for shape= and dtype=
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

}  // namespace pypto::frontend::detail
