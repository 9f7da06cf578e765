// PyPTO's spellings of ops: the `pl.tensor.<op>` and `pl.tile.<op>` namespaces, the names that
// differ from the registry's (pl.tile.create is create_tile, pl.tile.muls is mul), the forms
// that are not one registry op (pl.full, pl.const, pl.cast of a Scalar, cast's rounding mode),
// and a located "not supported yet" for the ops of the language this compiler does not have.
#include <array>
#include <climits>
#include <iterator>

#include "parser_state.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/element_ops.h"

namespace pypto::frontend::detail {

namespace {

// A spelling whose registry op has another name. `ns` is "tile", "tensor" or "" (plain pl.).
struct Alias {
  std::string_view ns;
  std::string_view spelling;
  std::string_view op;
};

constexpr std::array<Alias, 7> kAliases{{
    {"tile", "create", "create_tile"},
    {"tensor", "create", "create_tensor"},
    // ci is the tile op, arange (PyPTO's pl.arange) the tensor one.
    {"tile", "arange", "ci"},
    {"tensor", "ci", "arange"},
    // random makes a tensor (PyPTO's pl.random), tile_random a tile.
    {"tile", "random", "tile_random"},
    // The result of fillpad is a new value whatever buffer holds it.
    {"tile", "fillpad_inplace", "fillpad"},
    {"", "fillpad_inplace", "fillpad"},
}};

// The scalar-operand forms, in every namespace: the registry's elementwise ops take a scalar
// second operand directly, so pl.adds(t, 2.0) is pl.add(t, 2.0) with a check that the operand
// is a scalar.
struct ScalarForm {
  std::string_view spelling;
  std::string_view op;
};
constexpr std::array<ScalarForm, 14> kScalarForms{{
    {"adds", "add"},
    {"subs", "sub"},
    {"muls", "mul"},
    {"divs", "div"},
    {"maximums", "maximum"},
    {"minimums", "minimum"},
    {"rems", "rem"},
    {"fmods", "fmod"},
    {"ands", "and_"},
    {"ors", "or_"},
    {"xors", "xor"},
    {"shls", "shl"},
    {"shrs", "shr"},
    {"cmps", "cmp"},
}};

const ScalarForm* scalar_form(std::string_view spelling) {
  for (const ScalarForm& f : kScalarForms) {
    if (f.spelling == spelling) return &f;
  }
  return nullptr;
}

// Ops of the language (its tensor, tile, unified and system op modules, and the statement
// helpers) that have no implementation here. One a line, so that an op gaining an
// implementation is one line deleted.
// clang-format off
constexpr std::string_view kUnsupported[] = {
    "alloc",
    "create_l1",
    "dump_tag",
    "gather_row",
    "gatherb",
    "mgather",
    "no_dep",
    "view",
    "while_",
};
// clang-format on

bool is_unsupported(std::string_view name) {
  return std::find(std::begin(kUnsupported), std::end(kUnsupported), name) !=
         std::end(kUnsupported);
}

std::string spelling_of(std::string_view ns, std::string_view op) {
  return "pl." + (ns.empty() ? std::string() : std::string(ns) + ".") + std::string(op);
}

// Registry ops that take or make global tensors in any namespace (their tensor parameters are
// named so), and those that only exist on tiles.
bool is_tensor_parameter(std::string_view name) {
  return name == "tensor" || name == "output_tensor";
}

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

// The op arguments that take a layout, by keyword and by position (PyPTO's signatures). A tile
// layout says how a hardware buffer arranges the tile's elements; the CPU device keeps every
// tile row-major, and a move computes the same values whatever its destination's layout, so the
// argument is checked and dropped. A tensor is created row-major (ND) only.
struct LayoutArgument {
  std::string_view op;
  std::string_view keyword;
  size_t position;
  bool tile;  // a pl.TileLayout member, else a pl.TensorLayout one
};
constexpr std::array<LayoutArgument, 3> kLayoutArguments{{
    {"move", "blayout", 2, true},
    {"move", "slayout", 3, true},
    {"create_tensor", "layout", 2, false},
}};

}  // namespace

// parser_pipes.cpp: a pipe initialization's consumer buffer left out is 0.
void complete_pipe_init_args(std::vector<CallArg>& call_args, Span span);

void accept_layout_argument(const ir::OpDef& def, std::string_view keyword, const Value& value,
                            size_t position, const std::string& spelling) {
  const bool tile = value.kind == Value::Kind::TileLayout;
  for (const LayoutArgument& l : kLayoutArguments) {
    const bool named = keyword.empty() ? l.position == position : l.keyword == keyword;
    if (l.op != def.name || !named) continue;
    if (l.tile != tile) break;
    if (!tile && value.level != "ND") {
      throw CompileError(value.span, "pl.TensorLayout." + std::string(value.level) + " in " +
                                         spelling +
                                         " is not supported: tensors on this device are row-major "
                                         "(pl.TensorLayout.ND)");
    }
    return;
  }
  const std::string where = keyword.empty() ? "argument " + std::to_string(position + 1)
                                            : "'" + std::string(keyword) + "'";
  throw CompileError(value.span, "expected an expression in " + where + " of " + spelling +
                                     ", got " + std::string(value_kind_description(value)));
}

std::string_view Parser::canonical_keyword(const ir::OpDef& def, std::string_view keyword) {
  if (def.arg_names.empty()) return keyword;
  const std::string& first = def.arg_names[0];
  const bool names_the_operand = keyword == "tensor" || keyword == "tile" || keyword == "input";
  if (names_the_operand && first != keyword &&
      (first == "tensor" || first == "tile" || first == "input" || first == "target")) {
    if (std::find(def.arg_names.begin(), def.arg_names.end(), keyword) == def.arg_names.end()) {
      return first;
    }
  }
  if (keyword == "row_vec" && def.arg_names.size() > 1 && def.arg_names[1] == "row") return "row";
  if (keyword == "col_vec" && def.arg_names.size() > 1 && def.arg_names[1] == "col") return "col";
  if (keyword == "offset" && (def.name == "assemble" || def.name == "slice")) return "offsets";
  return keyword;
}

Value Parser::parse_op_spelling(std::string_view ns, std::string_view op, Span span) {
  const std::string spelling = spelling_of(ns, op);
  if (op == "full") return parse_full(spelling, ns != "tile", span);
  if (op == "const" && ns.empty()) return parse_const(span);
  if (op == "dim" && ns != "tile") return parse_dim(spelling, span);
  if (op == "cast") return parse_cast(spelling, span);
  if (op == "extract" && ns == "tile") return parse_extract(spelling, span);
  if (op == "set_validshape") return parse_set_validshape(spelling, span);
  if (op == "addc" || op == "subc" || op == "addsc" || op == "subsc")
    return parse_three_operand(spelling, op, span);
  if (ns.empty() && op == "create")
    fail(span, "unknown op 'pl.create' (pl.tile.create or pl.tensor.create)");
  // The registry names the ops of pl.system with their namespace ("system.syncall").
  const bool system = ns == "system";
  const std::string system_name = system ? "system." + std::string(op) : std::string();
  std::string_view name = system ? std::string_view(system_name) : op;
  for (const Alias& a : kAliases) {
    if (a.ns == ns && a.spelling == op) name = a.op;
  }
  const ScalarForm* scalar_operand = system ? nullptr : scalar_form(op);
  if (scalar_operand) name = scalar_operand->op;
  const ir::OpDef* def = ir::OpRegistry::global().find(name);
  // The cross-core pipe ops are spelled with and without the pl.system namespace
  // (pl.reserve_buffer is pl.system.reserve_buffer; pl.system.tpush_to_aiv is pl.tpush_to_aiv).
  std::string other_name;
  if (!def && ns.empty()) other_name = "system." + std::string(op);
  if (!def && system) other_name = std::string(op);
  if (!def && !other_name.empty()) {
    const ir::OpDef* other = ir::OpRegistry::global().find(other_name);
    if (other && other->category == ir::OpCategory::System) def = other;
  }
  if (!def) {
    if (is_unsupported(op)) fail(span, spelling + " is not supported yet");
    fail(span, "unknown op '" + spelling + "'");
  }
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  const size_t uses_mark = var_uses_.size();
  // A string literal is an argument only of a string attribute (gemv's acc_phase="final",
  // gather's cmp_mode="eq").
  auto has_attr = [&](const char* key) {
    return std::find(def->attr_names.begin(), def->attr_names.end(), key) != def->attr_names.end();
  };
  const bool string_attrs = has_attr("acc_phase") || has_attr("cmp_mode") || name == "gather" ||
                            has_attr("core_type") || has_attr("mode") || has_attr("peer_func") ||
                            has_attr("name");
  std::vector<CallArg> call_args = parse_call_args(spelling, string_attrs);
  if (system) system_call_args(*def, call_args);
  if (def->name == "tpop_from_aic" || def->name == "tpop_from_aiv")
    complete_tpop_args(spelling, call_args, span);
  if (def->name == "system.aic_initialize_pipe" || def->name == "system.aiv_initialize_pipe")
    complete_pipe_init_args(call_args, span);
  // pl.gather and pl.scatter are one spelling of several ops, told apart by their keywords:
  // gather(x, mask_pattern=) is gather_mask, gather(x, kvalue=, cmp_mode=, out_cols=) is
  // gather_compare, and scatter(x, mask_pattern=, dst=) is scatter_mask(dst, x, mask_pattern).
  if (name == "gather" || name == "scatter") {
    auto has = [&](std::initializer_list<std::string_view> keys) {
      for (const CallArg& a : call_args)
        for (std::string_view k : keys)
          if (a.keyword == k) return true;
      return false;
    };
    if (name == "gather" && has({"mask_pattern", "output_dtype"})) {
      def = ir::OpRegistry::global().find("gather_mask");
    } else if (name == "gather" && has({"kvalue", "cmp_mode", "out_cols", "count_dtype"})) {
      def = ir::OpRegistry::global().find("gather_compare");
    } else if (ns == "tile" && flat_index_form(call_args)) {
      return parse_flat_index_form(spelling, name, call_args, span, uses_mark);
    } else if (name == "scatter" && has({"mask_pattern", "dst"})) {
      def = ir::OpRegistry::global().find("scatter_mask");
      for (CallArg& a : call_args) {
        if (!a.keyword.empty()) continue;
        a.keyword = "src";  // the compact source is the first (only) positional argument
        a.keyword_span = a.value.span;
        break;
      }
    }
  }
  if (def->name == "mrgsort") def = mrgsort_form(*def, &call_args, spelling);
  std::optional<CallArg> store_shapes;
  if (def->name == "store") store_shapes = take_store_shapes(call_args);
  ExprPtr call = bind_op_call(*def, span, spelling, call_args, uses_mark);
  if (store_shapes) check_store_shapes(*store_shapes, *call->as<ir::Call>(), spelling);
  if (scalar_operand) {
    const auto* c = call->as<ir::Call>();
    const TypePtr& type = c && c->args.size() > 1 ? c->args[1]->type() : nullptr;
    if (!type || !type->as<ir::ScalarType>()) {
      Span where = call_args.size() > 1 ? call_args[1].value.span : span;
      fail(where, spelling + " takes a scalar as its second argument, got " +
                      ir::type_to_string(type) + " (for two operands of one shape, write " +
                      spelling_of(ns, scalar_operand->op) + ")");
    }
  }
  // The namespace says which kind the op works on: pl.tensor ops take tensors, pl.tile ops take
  // tiles (and the tensor a load reads or a store writes).
  if (ns == "tile" || ns == "tensor") {
    const auto* c = call->as<ir::Call>();
    for (size_t i = 0; c && i < c->args.size(); ++i) {
      const TypePtr& type = c->args[i]->type();
      const bool tile = type && type->as<ir::TileType>();
      const bool tensor = type && type->as<ir::TensorType>();
      const bool wrong = ns == "tensor" ? tile : tensor && !is_tensor_parameter(def->arg_names[i]);
      if (!wrong) continue;
      Span where = i < call_args.size() ? call_args[i].value.span : span;
      const bool tensors = ns == "tensor";
      fail(where, spelling + " takes " + (tensors ? "tensors" : "tiles") + ", got " +
                      ir::type_to_string(type) + " in argument " + std::to_string(i + 1) +
                      " (for " + (tensors ? "tiles" : "tensors") + ", write pl." +
                      (tensors ? "tile." : "tensor.") + std::string(op) + " or pl." + def->name +
                      ")");
    }
  }
  return expr_value(call, span);
}

// pl.store(tile, offsets, tensor, shapes): the partition written, which is the tile's shape here
// (the NPU's passes fill it in when they flatten N-D tiles). Taken out of the arguments (4th
// positional or shapes=), then checked against the tile.
std::optional<CallArg> Parser::take_store_shapes(std::vector<CallArg>& call_args) {
  size_t positional = 0;
  for (size_t i = 0; i < call_args.size(); ++i) {
    const bool keyed = call_args[i].keyword == "shapes";
    if (!keyed && !call_args[i].keyword.empty()) continue;
    if (keyed || positional++ == 3) {
      CallArg shapes = call_args[i];
      call_args.erase(call_args.begin() + static_cast<std::ptrdiff_t>(i));
      return shapes;
    }
  }
  return std::nullopt;
}

void Parser::check_store_shapes(const CallArg& shapes, const ir::Call& call,
                                const std::string& spelling) {
  const auto* tile = call.args.at(0)->type()->as<ir::TileType>();
  const auto* list = shapes.value.kind == Value::Kind::Expr && shapes.value.expr
                         ? shapes.value.expr->as<ir::MakeTuple>()
                         : nullptr;
  std::vector<int64_t> given;
  for (size_t i = 0; list && i < list->elements.size(); ++i) {
    const auto n = ir::as_const_int(list->elements[i]);
    if (!n) break;
    given.push_back(*n);
  }
  // Leading unit dimensions aside, the partition must be the tile.
  auto strip = [](std::vector<int64_t> s) {
    while (s.size() > 1 && s.front() == 1) s.erase(s.begin());
    return s;
  };
  if (!tile || !list || given.size() != list->elements.size() ||
      strip(given) != strip(tile->shape)) {
    fail(shapes.value.span, "the shapes of " + spelling +
                                " (the partition it writes) must be the tile's shape" +
                                (tile ? ", " + ir::shape_to_string(tile->shape) : std::string()) +
                                ", written as a list of integers");
  }
}

// pl.tile.gather(src, indices, tmp) and pl.tile.scatter(dst, src, indexes), PyPTO's tile forms
// with flat indices (into src, or dst, in row-major order), told from the axis forms by their
// second argument, a tile: the index form along the columns of the operands seen as one row,
// reshaped back. (tmp is the hardware's scratch tile, unused here.)
bool Parser::flat_index_form(const std::vector<CallArg>& call_args) {
  if (call_args.size() != 3) return false;
  for (const CallArg& a : call_args)
    if (!a.keyword.empty() || a.value.kind != Value::Kind::Expr || !a.value.expr ||
        !a.value.expr->type() || !a.value.expr->type()->as<ir::TileType>())
      return false;
  return true;
}

Value Parser::parse_flat_index_form(const std::string& spelling, std::string_view op,
                                    const std::vector<CallArg>& call_args, Span span,
                                    size_t uses_mark) {
  auto shape_of = [](const ExprPtr& e) { return e->type()->as<ir::TileType>()->shape; };
  auto as_row = [&](const ExprPtr& e) {
    int64_t n = 1;
    for (int64_t d : shape_of(e)) n *= d;
    return ir::make_op_call("reshape", {e, ir::make_tuple({ir::make_int(1), ir::make_int(n)})}, {},
                            e->span());
  };
  auto shape_tuple = [](const std::vector<int64_t>& shape) {
    std::vector<ExprPtr> dims;
    for (int64_t d : shape) dims.push_back(ir::make_int(d));
    return ir::make_tuple(std::move(dims));
  };
  const ExprPtr& a = call_args[0].value.expr;
  const ExprPtr& b = call_args[1].value.expr;
  const ExprPtr& c = call_args[2].value.expr;
  try {
    if (op == "gather") {  // gather(src, indices, tmp): out[i, j] = src.flat[indices[i, j]]
      ExprPtr row = ir::make_op_call("gather", {as_row(a), ir::make_int(1), as_row(b)}, {}, span);
      return expr_value(ir::make_op_call("reshape", {row, shape_tuple(shape_of(b))}, {}, span),
                        span);
    }
    // scatter(dst, src, indexes): dst.flat[indexes[i, j]] = src[i, j]
    ExprPtr row =
        ir::make_op_call("scatter", {as_row(a), ir::make_int(1), as_row(c), as_row(b)}, {}, span);
    return expr_value(ir::make_op_call("reshape", {row, shape_tuple(shape_of(a))}, {}, span), span);
  } catch (const CompileError& e) {
    throw CompileError(use_site(e.span(), uses_mark), std::string(e.what()) + " (in " + spelling +
                                                          ", indices into the tile " +
                                                          "seen as one row)");
  }
}

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
