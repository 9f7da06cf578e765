// The op spellings that are not one registry op: pl.full (a filled tile or tensor), the
// three-operand adds (pl.addc...), pl.tile.extract, pl.tensor.dim, pl.const and pl.cast with
// its rounding modes (parser_op_spellings.cpp sends them here).
#include <algorithm>
#include <array>
#include <climits>

#include "parser_state.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/element_ops.h"

namespace pypto::frontend::detail {

namespace {

DataType element_dtype(const TypePtr& type) {
  if (const auto* tile = type->as<ir::TileType>()) return tile->dtype;
  return type->as<ir::TensorType>()->dtype;
}

// A float constant converted to the integer dtype `to` as the device's cast converts an element
// (toward zero, saturating at the range of `to`, NaN to 0), held as a scalar holds it (a UINT64
// as its bit pattern).
int64_t float_to_int(double v, DataType to) {
  int64_t out = 0;
  support::with_dtype(static_cast<int32_t>(to), [&](auto type) {
    using T = decltype(type);
    out = static_cast<int64_t>(T::get(support::element_from<T>(v)));
  });
  return out;
}

// cast's rounding modes, by name and by code.
constexpr std::array<std::string_view, 7> kCastModes{"none", "rint",  "round", "floor",
                                                     "ceil", "trunc", "odd"};

}  // namespace

// The arguments of a form that is not one registry op (pl.full, pl.addc, pl.tensor.dim...),
// bound to `names` by position or keyword; every one must be given, once.
std::vector<const CallArg*> Parser::bind_form_args(const std::vector<CallArg>& call_args,
                                                   const std::vector<std::string_view>& names,
                                                   const std::string& spelling, Span span) {
  std::string listed;
  for (std::string_view n : names) listed += (listed.empty() ? "" : ", ") + std::string(n);
  std::vector<const CallArg*> bound(names.size(), nullptr);
  for (size_t i = 0; i < call_args.size(); ++i) {
    const CallArg& a = call_args[i];
    size_t index = i;
    if (!a.keyword.empty()) {
      auto it = std::find(names.begin(), names.end(), a.keyword);
      if (it == names.end()) {
        fail(a.keyword_span, "unknown keyword argument '" + std::string(a.keyword) + "' of " +
                                 spelling + " (expected one of: " + listed + ")");
      }
      index = static_cast<size_t>(it - names.begin());
    }
    if (index >= names.size()) {
      fail(a.value.span, spelling + " takes " + std::to_string(names.size()) + " arguments (" +
                             listed + "), got " + std::to_string(call_args.size()));
    }
    if (bound[index]) {
      fail(a.value.span, spelling + " got argument '" + std::string(names[index]) + "' twice");
    }
    bound[index] = &a;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (!bound[i]) fail(span, spelling + " is missing argument '" + std::string(names[i]) + "'");
  }
  return bound;
}

// pl.full(shape, dtype, value) / pl.tile.full / pl.tensor.full: a new tile (or, in an
// orchestration, tensor) of `dtype` whose every element is `value`: a zero-filled one plus
// the value.
Value Parser::parse_full(const std::string& spelling, bool as_tensor, Span span) {
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  const size_t uses_mark = var_uses_.size();
  std::vector<CallArg> call_args = parse_call_args(spelling);
  const std::vector<const CallArg*> bound =
      bind_form_args(call_args, {"shape", "dtype", "value"}, spelling, span);
  if (bound[1]->value.kind != Value::Kind::DType) {
    fail(bound[1]->value.span,
         "argument 'dtype' of " + spelling + " must be a dtype (pl.FP32, ...)");
  }
  const DataType dtype = bound[1]->value.dtype;
  ExprPtr value = expect_expr(bound[2]->value, [&] { return "argument 'value' of " + spelling; });
  const ir::ScalarFold folded = fold_constant(value);
  if (!folded.value) {
    fail(bound[2]->value.span, "argument 'value' of " + spelling + " must be a constant number");
  }
  const Span value_span = bound[2]->value.span;
  ExprPtr fill;
  if (ir::is_float(dtype)) {
    const double v = folded.value->kind == ir::Scalar::Kind::Float ? folded.value->f
                     : folded.value->kind == ir::Scalar::Kind::Int
                         ? static_cast<double>(folded.value->i)
                         : static_cast<double>(folded.value->b);
    fill = ir::make_float(v, value_span);
  } else {
    if (folded.value->kind == ir::Scalar::Kind::Float) {
      fail(value_span, "argument 'value' of " + spelling + " must be an integer for " +
                           std::string(ir::dtype_name(dtype)));
    }
    const int64_t v = folded.value->kind == ir::Scalar::Kind::Int ? folded.value->i
                      : folded.value->b                           ? 1
                                                                  : 0;
    const bool fits =
        dtype == DataType::UINT64 ? v >= 0 : ir::wrap_int(static_cast<uint64_t>(v), dtype) == v;
    if (dtype != DataType::BOOL && !fits) {
      fail(value_span, "argument 'value' of " + spelling + " is " + std::to_string(v) + ", which " +
                           std::string(ir::dtype_name(dtype)) + " cannot hold");
    }
    fill = ir::make_node<ir::IntImm>(v, dtype, value_span);
  }
  ExprPtr shape = expect_expr(bound[0]->value, [&] { return "argument 'shape' of " + spelling; });
  try {
    ExprPtr zeros = ir::make_op_call(as_tensor ? "create_tensor" : "create_tile", {shape},
                                     {{"dtype", ir::AttrValue(dtype)}}, span);
    return expr_value(ir::make_op_call("add", {zeros, fill}, {}, span), span);
  } catch (const CompileError& e) {
    throw CompileError(use_site(e.span(), uses_mark),
                       std::string(e.what()) + " (in " + spelling + ")");
  }
}

// pl.addc(lhs, rhs, rhs2) is lhs + rhs + rhs2 and pl.subc lhs - rhs - rhs2, of three tiles (or
// tensors); pl.addsc and pl.subsc the same with a scalar rhs. Each is two registry adds or subs,
// rounded after each.
Value Parser::parse_three_operand(const std::string& spelling, std::string_view op, Span span) {
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  const size_t uses_mark = var_uses_.size();
  std::vector<CallArg> call_args = parse_call_args(spelling);
  static const std::vector<std::string_view> kNames{"lhs", "rhs", "rhs2"};
  const std::vector<const CallArg*> bound = bind_form_args(call_args, kNames, spelling, span);
  std::array<ExprPtr, 3> operands;
  for (size_t i = 0; i < kNames.size(); ++i) {
    operands[i] = expect_expr(bound[i]->value, [&] {
      return "argument '" + std::string(kNames[i]) + "' of " + spelling;
    });
  }
  const bool scalar_rhs = op == "addsc" || op == "subsc";
  const TypePtr& rhs_type = operands[1]->type();
  if (scalar_rhs != static_cast<bool>(rhs_type && rhs_type->as<ir::ScalarType>())) {
    fail(bound[1]->value.span, spelling + " takes " + (scalar_rhs ? "a scalar" : "a tile") +
                                   " as rhs, got " + ir::type_to_string(rhs_type));
  }
  const char* step = op.substr(0, 3) == "add" ? "add" : "sub";
  try {
    ExprPtr first = ir::make_op_call(step, {operands[0], operands[1]}, {}, span);
    return expr_value(ir::make_op_call(step, {first, operands[2]}, {}, span), span);
  } catch (const CompileError& e) {
    throw CompileError(use_site(e.span(), uses_mark),
                       std::string(e.what()) + " (in " + spelling + ")");
  }
}

// pl.tile.extract(src, index_row, index_col, shape, target_memory=): the `shape` box of src at
// (index_row, index_col), as a tile in target_memory. Tiles here are plain row-major buffers in
// every memory space, so it is pl.slice, and a pl.move when the space changes.
// pl.write(tensor, indices, value): one element of a tensor set to a scalar, in a kernel. It is
// the store of a one-element tile filled with the value (pl.expands), so the passes and the
// device treat it as any store.
Value Parser::parse_extract(const std::string& spelling, Span span) {
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  const size_t uses_mark = var_uses_.size();
  std::vector<CallArg> call_args = parse_call_args(spelling);
  static const std::vector<std::string_view> kNames{"src", "index_row", "index_col", "shape",
                                                    "target_memory"};
  const std::vector<const CallArg*> bound = bind_form_args(call_args, kNames, spelling, span);
  std::array<ExprPtr, 4> operands;
  for (size_t i = 0; i < operands.size(); ++i) {
    operands[i] = expect_expr(bound[i]->value, [&] {
      return "argument '" + std::string(kNames[i]) + "' of " + spelling;
    });
  }
  if (bound[4]->value.kind != Value::Kind::Space) {
    fail(bound[4]->value.span, "argument 'target_memory' of " + spelling +
                                   " must be a memory space (pl.MemorySpace.Vec, ...)");
  }
  const ir::MemorySpace target = bound[4]->value.space;
  try {
    ExprPtr offsets = ir::make_tuple({operands[1], operands[2]}, span);
    ExprPtr box = ir::make_op_call("slice", {operands[0], operands[3], offsets}, {}, span);
    const auto* src = operands[0]->type()->as<ir::TileType>();
    if (src && src->space.value_or(ir::MemorySpace::Vec) == target) return expr_value(box, span);
    return expr_value(
        ir::make_op_call("move", {box}, {{"target_memory", ir::AttrValue(target)}}, span), span);
  } catch (const CompileError& e) {
    throw CompileError(use_site(e.span(), uses_mark),
                       std::string(e.what()) + " (in " + spelling + ")");
  }
}

// pl.const(value, dtype): a literal of the given dtype.
// pl.tensor.dim(tensor, axis): the extent of one axis (a negative one counts from the end) as
// an INT64 constant: shapes are static once dynamic dimensions are specialised.
Value Parser::parse_dim(const std::string& spelling, Span span) {
  if (!at(TK::LParen)) fail(span, "'" + spelling + "' must be called");
  std::vector<CallArg> call_args = parse_call_args(spelling);
  const std::vector<const CallArg*> bound =
      bind_form_args(call_args, {"tensor", "axis"}, spelling, span);
  const CallArg* tensor_arg = bound[0];
  const CallArg* axis_arg = bound[1];
  ExprPtr tensor = expect_expr(tensor_arg->value, "argument 'tensor' of " + spelling);
  const auto* type = tensor->type()->as<ir::TensorType>();
  if (!type) {
    fail(tensor_arg->value.span,
         spelling + " takes a tensor, got " + ir::type_to_string(tensor->type()));
  }
  ExprPtr axis_expr = expect_expr(axis_arg->value, "argument 'axis' of " + spelling);
  auto axis = fold_constant(axis_expr).value;
  if (!axis || axis->kind != ir::Scalar::Kind::Int) {
    fail(axis_arg->value.span, "argument 'axis' of " + spelling + " must be a constant integer");
  }
  const int64_t rank = static_cast<int64_t>(type->shape.size());
  const int64_t index = axis->i < 0 ? axis->i + rank : axis->i;
  if (index < 0 || index >= rank) {
    fail(axis_arg->value.span, "axis " + std::to_string(axis->i) + " is out of range for a " +
                                   std::to_string(rank) + "-D tensor");
  }
  return expr_value(ir::make_int(type->shape[static_cast<size_t>(index)], span), span);
}

Value Parser::parse_const(Span span) {
  const std::string spelling = "pl.const";
  if (!at(TK::LParen)) fail(span, "'pl.const' must be called");
  std::vector<CallArg> call_args = parse_call_args(spelling);
  if (call_args.size() != 2) {
    fail(span,
         "pl.const takes 2 arguments (value, dtype), got " + std::to_string(call_args.size()));
  }
  const CallArg* value_arg = &call_args[0];
  const CallArg* dtype_arg = &call_args[1];
  if (call_args[0].keyword == "dtype" || call_args[1].keyword == "value") {
    std::swap(value_arg, dtype_arg);
  }
  for (const CallArg& a : call_args) {
    if (!a.keyword.empty() && a.keyword != "value" && a.keyword != "dtype") {
      fail(a.keyword_span, "unknown keyword argument '" + std::string(a.keyword) +
                               "' of pl.const (expected value, dtype)");
    }
  }
  if (dtype_arg->value.kind != Value::Kind::DType) {
    fail(dtype_arg->value.span, "argument 'dtype' of pl.const must be a dtype (pl.INT32, ...)");
  }
  ExprPtr value = expect_expr(value_arg->value, "argument 'value' of pl.const");
  if (!fold_constant(value).value) {
    fail(value_arg->value.span, "argument 'value' of pl.const must be a constant number");
  }
  return expr_value(
      scalar_cast(value, dtype_arg->value.dtype, span, value_arg->value.span, spelling), span);
}

// pl.cast(x, target_type, mode="round"): the registry's cast of a tile or tensor, or a scalar
// conversion of a Scalar (PyPTO's pl.cast takes either).
Value Parser::parse_cast(const std::string& spelling, Span span) {
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  const size_t uses_mark = var_uses_.size();
  std::vector<CallArg> call_args = parse_call_args(spelling, /*allow_strings=*/true);
  // Take `mode` (third positional or keyword) out: the registry's cast has no such attribute.
  std::optional<CallArg> mode;
  for (size_t i = 0; i < call_args.size(); ++i) {
    if (call_args[i].keyword == "mode" || (call_args[i].keyword.empty() && i == 2)) {
      mode = call_args[i];
      call_args.erase(call_args.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  std::optional<int64_t> mode_code;
  if (mode) {
    if (mode->text) {
      auto it = std::find(kCastModes.begin(), kCastModes.end(), *mode->text);
      if (it == kCastModes.end()) {
        fail(mode->value.span, "unknown rounding mode '" + *mode->text + "' of " + spelling +
                                   " (expected none, rint, round, floor, ceil, trunc or odd)");
      }
      mode_code = it - kCastModes.begin();
    } else {
      ExprPtr e = expect_expr(mode->value, [&] { return "argument 'mode' of " + spelling; });
      const ir::ScalarFold c = fold_constant(e);
      if (!c.value || c.value->kind != ir::Scalar::Kind::Int || c.value->i < 0 || c.value->i > 6) {
        fail(mode->value.span, "argument 'mode' of " + spelling +
                                   " must be a rounding mode name or a code from 0 to 6");
      }
      mode_code = c.value->i;
    }
  }
  for (const CallArg& a : call_args) {
    if (a.text) fail(a.value.span, "a string is not a valid argument of " + spelling);
  }
  // A Scalar operand: a scalar conversion.
  if (!call_args.empty() && call_args[0].keyword.empty() &&
      call_args[0].value.kind == Value::Kind::Expr && call_args[0].value.expr->type() &&
      call_args[0].value.expr->type()->as<ir::ScalarType>()) {
    if (call_args.size() != 2 || call_args[1].value.kind != Value::Kind::DType) {
      fail(span, spelling + " of a Scalar takes (value, target_type) with a dtype target_type");
    }
    if (mode_code && *mode_code != 2) {
      fail(mode->value.span, spelling + " of a Scalar supports only the default mode 'round'");
    }
    return expr_value(scalar_cast(call_args[0].value.expr, call_args[1].value.dtype, span,
                                  call_args[0].value.span, spelling),
                      span);
  }
  const ir::OpDef* def = ir::OpRegistry::global().find("cast");
  ExprPtr call = bind_op_call(*def, span, spelling, call_args, uses_mark);
  if (mode_code && *mode_code != 0) {
    // What this compiler's cast does: float to integer rounds toward zero, other narrowing
    // conversions round to nearest even; integer conversions and widenings are exact.
    const auto* c = call->as<ir::Call>();
    const DataType from = element_dtype(c->args[0]->type());
    const DataType to = element_dtype(call->type());
    int64_t done = -1;  // -1: exact, any mode
    if (ir::is_float(from) && !ir::is_float(to)) {
      done = 5;
    } else if ((ir::is_float(to) && ir::dtype_bytes(to) < ir::dtype_bytes(from)) ||
               (!ir::is_float(from) && ir::is_float(to))) {
      done = 1;
    }
    if (done >= 0 && done != *mode_code) {
      fail(mode->value.span,
           "mode '" + std::string(kCastModes[static_cast<size_t>(*mode_code)]) + "' of " +
               spelling + " is not supported yet for " + std::string(ir::dtype_name(from)) +
               " to " + std::string(ir::dtype_name(to)) + " (this conversion rounds with '" +
               std::string(kCastModes[static_cast<size_t>(done)]) + "')");
    }
  }
  return expr_value(call, span);
}

// pl.mrgsort merges the runs of one tile (block_len=, the registry's mrgsort) or 2 to 4 sorted
// lists (PyPTO's format 2, mrgsort_lists). The lists' scratch tile (tmp=, or the fifth positional
// argument) is checked and dropped: the merge needs none here.
const ir::OpDef* Parser::mrgsort_form(const ir::OpDef& def, std::vector<CallArg>* call_args,
                                      const std::string& spelling) {
  size_t positional = 0;
  bool lists = false;
  for (const CallArg& a : *call_args) {
    if (a.keyword == "tmp" || a.keyword == "src1") lists = true;
    // A second positional argument that is a tile or a tensor is a second list (a scalar is
    // block_len).
    if (a.keyword.empty() && positional++ == 1 && a.value.kind == Value::Kind::Expr &&
        a.value.expr->type() && !a.value.expr->type()->as<ir::ScalarType>()) {
      lists = true;
    }
  }
  if (!lists) return &def;
  std::vector<CallArg> kept;
  positional = 0;
  for (CallArg& a : *call_args) {
    const bool scratch = a.keyword == "tmp" || (a.keyword.empty() && positional++ == 4);
    if (a.keyword == "block_len") {
      fail(a.keyword_span, spelling + " merges several lists (no block_len=) or the runs of one " +
                               "tile (block_len= and no other list)");
    }
    if (!scratch) {
      kept.push_back(std::move(a));
      continue;
    }
    const ExprPtr tmp = expect_expr(a.value, [&] { return "argument 'tmp' of " + spelling; });
    if (!tmp->type() || !(tmp->type()->as<ir::TileType>() || tmp->type()->as<ir::TensorType>())) {
      fail(a.value.span, "argument 'tmp' of " + spelling + " must be a tile, got " +
                             ir::type_to_string(tmp->type()));
    }
  }
  *call_args = std::move(kept);
  return ir::OpRegistry::global().find("mrgsort_lists");
}

ExprPtr Parser::scalar_cast(const ExprPtr& value, DataType to, Span span, Span value_span,
                            const std::string& spelling) {
  const auto* scalar = value->type() ? value->type()->as<ir::ScalarType>() : nullptr;
  if (!scalar) {
    fail(value_span, spelling + " expects a scalar, got " + ir::type_to_string(value->type()));
  }
  const DataType from = scalar->dtype;
  const ir::ScalarFold folded = fold_constant(value);
  if (folded.value) {
    const ir::Scalar& s = *folded.value;
    if (ir::is_float(to)) {
      const double v = s.kind == ir::Scalar::Kind::Float ? s.f
                       : s.kind == ir::Scalar::Kind::Int ? static_cast<double>(s.i)
                                                         : (s.b ? 1.0 : 0.0);
      return ir::make_node<ir::FloatImm>(v, to, span);
    }
    if (to == DataType::BOOL) return ir::make_bool(s.truthy(), span);
    int64_t v = s.kind == ir::Scalar::Kind::Int ? s.i : s.kind == ir::Scalar::Kind::Bool ? s.b : 0;
    v = s.kind == ir::Scalar::Kind::Float ? float_to_int(s.f, to)
                                          : ir::wrap_int(static_cast<uint64_t>(v), to);
    return ir::make_node<ir::IntImm>(v, to, span);
  }
  if (from == to) return value;
  // A value computed at run time converts exactly when the target holds every value of the
  // source: the arithmetic of the program promotes to it (x * 1.0, x + 0).
  if (ir::is_float(to) && to == DataType::FP32 && !ir::is_float(from)) {
    return ir::make_binary(ir::BinaryOp::Mul, value, ir::make_float(1.0, span), span);
  }
  // (Strictly wider: at one width `value + 0` would keep the type of `value`.)
  if (!ir::is_float(to) && !ir::is_float(from) && to != DataType::BOOL &&
      (ir::dtype_bytes(to) > ir::dtype_bytes(from) || from == DataType::BOOL)) {
    return ir::make_binary(ir::BinaryOp::Add, value, ir::make_node<ir::IntImm>(0, to, span), span);
  }
  // To a narrower integer: the value modulo 2^bits (floor modulo, so never negative), typed as
  // the target, whose element conversion then keeps those bits (sign-extending a signed target).
  const int64_t to_bits = 8 * ir::dtype_bytes(to);
  if (!ir::is_float(to) && !ir::is_float(from) && to != DataType::BOOL && to_bits < 64) {
    return ir::make_node<ir::Binary>(
        ir::BinaryOp::Mod, value,
        ir::make_node<ir::IntImm>(int64_t{1} << to_bits, DataType::INT64, span),
        ir::scalar_type(to), span);
  }
  fail(span, spelling + " of a " + std::string(ir::dtype_name(from)) + " Scalar computed at run " +
                 "time to " + std::string(ir::dtype_name(to)) +
                 " is not supported yet (integers convert to FP32 or another integer type)");
}

}  // namespace pypto::frontend::detail
