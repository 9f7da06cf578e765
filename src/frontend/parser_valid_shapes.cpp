// Valid regions of kernel tensor parameters: `x: pl.Tensor[[16, 128], pl.FP32,
// pl.TensorView(valid_shape=[16, VALID], layout=pl.TensorLayout.ND)]`.
//
// As in PyPTO, such a parameter is a tensor of which only the declared region holds data: a
// pl.load of it reads no more than that region (its tile's valid region is the requested one
// cut to what the declared region leaves past the load's offsets). The IR type stays the whole
// tensor; the parser writes the cut into each load's valid_shapes, so the rest of the pipeline
// sees ordinary partly valid loads and print -> parse -> print stays a fixed point.
//
// A pl.dynamic name that only such views use (`VALID`) has no value in the kernel itself: it
// becomes a leading Scalar[INDEX] parameter of the specialisation, named after it, and each
// call passes the valid extent of its argument at the position where the name stands, e.g. the
// `valid_len` of `pl.slice(sij, [16, 128], [0, 0], valid_shape=[16, valid_len])` (an argument
// without a valid_shape is valid in its whole shape).
#include <algorithm>

#include "parser_state.h"
#include "pypto/ir/valid_extent.h"

namespace pypto::frontend::detail {

void Parser::note_param_valid_shape(const std::vector<int64_t>& shape,
                                    const std::vector<int64_t>& valid, Span span) {
  const std::string declared = "pl.TensorView valid_shape " + ir::shape_to_string(valid) +
                               " on a tensor of shape " + ir::shape_to_string(shape);
  if (!reading_any_param_) {
    fail(span, declared +
                   " is supported on a kernel's parameter only; for part of a tensor write "
                   "pl.slice(..., valid_shape=[...]) or pl.load(..., valid_shapes=[...])");
  }
  if (!reading_kernel_param_) {
    fail(span, declared +
                   " is supported on the parameters of kernels (InCore, AIC, AIV functions), "
                   "whose loads read within it; an orchestration passes a partly valid window "
                   "as pl.slice(..., valid_shape=[...])");
  }
  // A template's first reading gives dynamic names placeholder extents: each specialisation
  // reads the annotation again with the real ones.
  if (view_names_dynamic_ || (dynamic_uses_ && !dynamic_uses_->empty())) return;
  std::vector<ValidDim> dims;
  for (size_t d = 0; d < valid.size(); ++d) {
    if (valid[d] == ir::kDynamicExtent) {
      const std::string name = d < view_valid_names_.size() ? view_valid_names_[d] : "";
      if (name.empty()) {
        fail(span, "entry " + std::to_string(d) +
                       " of the pl.TensorView valid_shape is computed from a dynamic dimension: "
                       "a caller's valid extent can give the value of a dimension named on its "
                       "own only (valid_shape=[16, VALID])");
      }
      dims.push_back(ValidDim{0, name});
      continue;
    }
    if (valid[d] < 0 || valid[d] > shape[d]) {
      fail(span, declared + ": entry " + std::to_string(d) + " is outside [0, " +
                     std::to_string(shape[d]) + "]");
    }
    dims.push_back(ValidDim{valid[d], ""});
  }
  current_param_valid_ = std::move(dims);
}

void Parser::finish_param_valid_shape(FunctionSignature& sig, std::string_view name) {
  if (current_param_valid_.empty()) return;
  for (const ValidDim& d : current_param_valid_) {
    if (!d.symbol.empty() && std::find(sig.valid_symbols.begin(), sig.valid_symbols.end(),
                                       d.symbol) == sig.valid_symbols.end()) {
      sig.valid_symbols.push_back(d.symbol);
    }
  }
  sig.param_valid.emplace(std::string(name), std::move(current_param_valid_));
  current_param_valid_.clear();
}

void Parser::add_valid_symbol_params(FunctionSignature& sig) {
  std::vector<ir::Param> leading;
  std::vector<std::string> symbols;
  for (const std::string& name : sig.valid_symbols) {
    auto own = std::find_if(sig.params.begin(), sig.params.end(),
                            [&](const ir::Param& p) { return p.var->name == name; });
    if (own != sig.params.end()) {
      // The kernel takes the extent as a parameter of its own: the caller passes it.
      if (!own->var->type()->as<ir::ScalarType>()) {
        fail(own->var->span(), "'" + name +
                                   "' names a dimension of a pl.TensorView valid_shape and a "
                                   "parameter that is not a scalar; rename one of them");
      }
      continue;
    }
    symbols.push_back(name);
    leading.push_back(ir::Param{ir::make_var(name, ir::scalar_type(DataType::INT64), sig.span),
                                ir::ParamDirection::In});
  }
  sig.valid_symbols = std::move(symbols);
  sig.params.insert(sig.params.begin(), leading.begin(), leading.end());
}

namespace {

// The valid extents a pl.slice(..., valid_shape=[...]) call gives its window, if `e` is one.
const std::vector<ExprPtr>* slice_valid_shape(const ExprPtr& e) {
  const auto* call = e ? e->as<ir::Call>() : nullptr;
  if (!call || call->call_kind != ir::CallKind::Op || call->callee != "slice" ||
      call->args.size() < 4 || !call->args[3]) {
    return nullptr;
  }
  const auto* tuple = call->args[3]->as<ir::MakeTuple>();
  return tuple ? &tuple->elements : nullptr;
}

}  // namespace

void Parser::note_bound_value(const VarPtr& var, const ExprPtr& value) {
  if (const std::vector<ExprPtr>* valid = slice_valid_shape(value)) {
    slice_valid_shapes_[var.get()] = *valid;
  }
}

std::vector<ExprPtr> Parser::valid_symbol_arguments(const FunctionSignature& sig,
                                                    const std::vector<ExprPtr>& args,
                                                    const std::vector<Span>& arg_spans, Span span) {
  const size_t leading = sig.valid_symbols.size();
  std::vector<ExprPtr> values;
  for (const std::string& symbol : sig.valid_symbols) {
    ExprPtr value;
    size_t from = 0;
    for (size_t p = 0; p < args.size() && leading + p < sig.params.size(); ++p) {
      auto it = sig.param_valid.find(sig.params[leading + p].var->name);
      if (it == sig.param_valid.end()) continue;
      for (size_t d = 0; d < it->second.size(); ++d) {
        if (it->second[d].symbol != symbol) continue;
        // The argument's valid extent at d: its pl.slice's valid_shape, else its extent.
        ExprPtr extent;
        const std::vector<ExprPtr>* valid = slice_valid_shape(args[p]);
        if (const auto* v = args[p]->as<ir::Var>(); !valid && v) {
          auto known = slice_valid_shapes_.find(v);
          if (known != slice_valid_shapes_.end()) valid = &known->second;
        }
        if (valid && d < valid->size()) {
          extent = (*valid)[d];
          if (const auto* name = extent->as<ir::Var>();
              name && lookup_var(name->name).get() != name) {
            fail(arg_spans[p], "the valid extent '" + name->name +
                                   "' of this argument (from its "
                                   "pl.slice) is not visible here, so '" +
                                   symbol + "' of '" + sig.name +
                                   "' gets no value; call it where the slice is made");
          }
        } else {
          const auto* t = args[p]->type()->as<ir::TensorType>();
          if (!t || d >= t->shape.size() || t->shape[d] == ir::kDynamicExtent) {
            fail(arg_spans[p], "'" + symbol + "' of '" + sig.name +
                                   "' is the valid extent of dimension " + std::to_string(d) +
                                   " of this argument, which is known only at run time; pass "
                                   "a window with a valid_shape, pl.slice(..., valid_shape=[...])");
          }
          extent = ir::make_int(t->shape[d], arg_spans[p]);
        }
        if (!value) {
          value = extent;
          from = p;
          continue;
        }
        const auto a = ir::as_const_int(value), b = ir::as_const_int(extent);
        if (a && b ? *a != *b : value.get() != extent.get()) {
          fail(arg_spans[p], "'" + symbol + "' of '" + sig.name +
                                 "' is the valid extent of "
                                 "arguments " +
                                 std::to_string(from + 1) + " and " + std::to_string(p + 1) +
                                 ", which differ here; one name is one "
                                 "extent");
        }
      }
    }
    if (!value) {
      fail(span, "'" + symbol + "' of '" + sig.name + "' gets no value from this call");
    }
    values.push_back(std::move(value));
  }
  return values;
}

Value Parser::parse_set_validshape(const std::string& spelling, Span span) {
  // Metadata only, as in PyPTO: the same elements, valid in [0, rows) x [0, cols). That is the
  // whole-tensor window pl.slice(t, shape, [0, 0], valid_shape=[rows, cols]), which loads of it
  // and tensor ops on it read within (tensor_window_valid.h).
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  std::vector<CallArg> call_args = parse_call_args(spelling);
  const std::vector<const CallArg*> bound =
      bind_form_args(call_args, {"input", "valid_rows", "valid_cols"}, spelling, span);
  ExprPtr input = expect_expr(bound[0]->value, [&] { return "argument 'input' of " + spelling; });
  if (input->type()->as<ir::TileType>()) {
    // Of a tile: the registry's set_validshape (src/ir/pipe_ops.h), the same elements valid in
    // the region given, which a pl.tpush_to_aiv then carries.
    std::vector<ExprPtr> args{input};
    for (size_t i = 1; i <= 2; ++i) {
      args.push_back(expect_expr(bound[i]->value, [&] {
        return std::string("argument '") + (i == 1 ? "valid_rows" : "valid_cols") + "' of " +
               spelling;
      }));
    }
    return expr_value(ir::make_op_call("set_validshape", std::move(args), {}, span), span);
  }
  const auto* tensor = input->type()->as<ir::TensorType>();
  if (!tensor) {
    fail(bound[0]->value.span,
         spelling + " takes a tensor or a tile, got " + ir::type_to_string(input->type()));
  }
  if (spelling == "pl.tile.set_validshape") {
    fail(bound[0]->value.span, spelling + " takes a tile, got " +
                                   ir::type_to_string(input->type()) +
                                   " (for a tensor, write pl.set_validshape)");
  }
  if (tensor->shape.size() != 2) {
    fail(bound[0]->value.span,
         spelling + " needs a 2-D tensor, got " + ir::type_to_string(input->type()));
  }
  std::vector<ExprPtr> valid;
  for (size_t i = 1; i <= 2; ++i) {
    valid.push_back(expect_expr(bound[i]->value, [&] {
      return std::string("argument '") + (i == 1 ? "valid_rows" : "valid_cols") + "' of " +
             spelling;
    }));
  }
  std::vector<ExprPtr> shape, zeros;
  for (int64_t d : tensor->shape) {
    shape.push_back(ir::make_int(d, span));
    zeros.push_back(ir::make_int(0, span));
  }
  ExprPtr window = ir::make_op_call(
      "slice",
      {input, ir::make_tuple(std::move(shape), span), ir::make_tuple(std::move(zeros), span),
       ir::make_tuple(std::move(valid), span)},
      {}, span);
  return expr_value(window, span);
}

void Parser::intersect_load_with_param_valid(std::vector<ExprPtr>& args, Span span) {
  if (args.size() < 3 || !args[0] || signatures_.empty()) return;
  const FunctionSignature& sig = signatures_[current_function_];
  if (sig.param_valid.empty()) return;
  const auto* var = args[0]->as<ir::Var>();
  auto param = std::find_if(sig.params.begin(), sig.params.end(),
                            [&](const ir::Param& p) { return p.var.get() == var; });
  if (!var || param == sig.params.end()) return;
  auto declared = sig.param_valid.find(var->name);
  if (declared == sig.param_valid.end()) return;
  const auto* tensor = var->type()->as<ir::TensorType>();
  const auto* offsets = args[1] ? args[1]->as<ir::MakeTuple>() : nullptr;
  const auto* window = args[2] ? args[2]->as<ir::MakeTuple>() : nullptr;
  // A tile of lower rank than the tensor reads across its dimensions: as in PyPTO, it keeps
  // the valid_shapes it was given.
  if (!tensor || !offsets || !window || window->elements.size() != tensor->shape.size() ||
      offsets->elements.size() != tensor->shape.size()) {
    return;
  }
  const std::vector<ValidDim>& dims = declared->second;
  std::vector<ExprPtr> requested = window->elements;
  if (args.size() > 3 && args[3]) {
    const auto* given = args[3]->as<ir::MakeTuple>();
    if (!given || given->elements.size() != requested.size()) return;  // the op's check says why
    requested = given->elements;
  }
  bool changed = false;
  for (size_t d = 0; d < dims.size() && d < requested.size(); ++d) {
    ExprPtr limit;
    if (!dims[d].symbol.empty()) {
      auto p = std::find_if(sig.params.begin(), sig.params.end(),
                            [&](const ir::Param& q) { return q.var->name == dims[d].symbol; });
      if (p == sig.params.end()) continue;
      limit = p->var;
    } else if (dims[d].extent < tensor->shape[d]) {
      limit = ir::make_int(dims[d].extent, span);
    } else {
      continue;  // valid in the whole dimension
    }
    // What the declared region leaves past the offset.
    requested[d] = ir::extent_within(requested[d], limit, offsets->elements[d], span);
    changed = true;
  }
  if (!changed) return;
  args.resize(4);
  args[3] = ir::make_tuple(std::move(requested), span);
}

}  // namespace pypto::frontend::detail
