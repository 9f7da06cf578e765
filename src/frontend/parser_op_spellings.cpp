// PyPTO's spellings of ops: the `pl.tensor.<op>` and `pl.tile.<op>` namespaces, the names that
// differ from the registry's (pl.tile.create is create_tile, pl.tile.muls is mul), the forms
// that are not one registry op (pl.full, pl.const, pl.cast of a Scalar, cast's rounding mode),
// and a located "not supported yet" for the ops of the language this compiler does not have.
#include <array>
#include <climits>
#include <iterator>

#include "parser_state.h"
#include "pypto/frontend/op_spellings.h"
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
    "while_",
};
// clang-format on

bool is_unsupported(std::string_view name) {
  return std::find(std::begin(kUnsupported), std::end(kUnsupported), name) !=
         std::end(kUnsupported);
}

// The registry op a spelling names: through the aliases and the scalar-operand forms, with the
// ops of pl.system, which the registry names with their namespace ("system.syncall"). The
// cross-core pipe ops are spelled with and without it (pl.reserve_buffer is
// pl.system.reserve_buffer; pl.system.tpush_to_aiv is pl.tpush_to_aiv). Null if none.
const ir::OpDef* find_spelled_op(std::string_view ns, std::string_view op) {
  const bool system = ns == "system";
  std::string name = system ? "system." + std::string(op) : std::string(op);
  for (const Alias& a : kAliases) {
    if (a.ns == ns && a.spelling == op) name = a.op;
  }
  if (const ScalarForm* f = system ? nullptr : scalar_form(op)) name = f->op;
  const ir::OpRegistry& registry = ir::OpRegistry::global();
  if (const ir::OpDef* def = registry.find(name)) return def;
  std::string other_name;
  if (ns.empty()) other_name = "system." + std::string(op);
  if (system) other_name = std::string(op);
  const ir::OpDef* other = other_name.empty() ? nullptr : registry.find(other_name);
  return other && other->category == ir::OpCategory::System ? other : nullptr;
}

std::string spelling_of(std::string_view ns, std::string_view op) {
  return "pl." + (ns.empty() ? std::string() : std::string(ns) + ".") + std::string(op);
}

// Registry ops that take or make global tensors in any namespace (their tensor parameters are
// named so), and those that only exist on tiles.
bool is_tensor_parameter(std::string_view op, std::string_view name) {
  return name == "tensor" || name == "output_tensor" || name == "mem" || name == "scratch" ||
         (op == "gather_row" && name == "src") || (op == "mgather" && name == "idx");
}

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
constexpr std::array<LayoutArgument, 4> kLayoutArguments{{
    {"move", "blayout", 2, true},
    {"move", "slayout", 3, true},
    {"create_tensor", "layout", 2, false},
    {"view", "layout", 3, false},
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
  if (keyword == "acc" && def.name == "gather_row") return "dst";  // pl.tensor.gather_row's name
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
  if (op == "dump_tag" && ns != "tile") return parse_dump_tag(spelling, span);
  if (op == "alloc" && (ns == "tile" || ns == "tensor")) {
    fail(span, spelling +
                   " names an allocation as a pl.Ptr (parser_ptr.cpp): write 'buf: pl.Ptr "
                   "= " +
                   spelling + "(pl.Mem.Vec, size)'");
  }
  if (op == "no_dep") {
    fail(span, spelling +
                   " marks an argument of a kernel call (parser_call_attrs.cpp): write "
                   "self.<kernel>(" +
                   spelling + "(x), ...)");
  }
  if (op == "addc" || op == "subc" || op == "addsc" || op == "subsc")
    return parse_three_operand(spelling, op, span);
  if (ns.empty() && op == "create")
    fail(span, "unknown op 'pl.create' (pl.tile.create or pl.tensor.create)");
  const bool system = ns == "system";
  const ScalarForm* scalar_operand = system ? nullptr : scalar_form(op);
  const ir::OpDef* def = find_spelled_op(ns, op);
  const std::string_view name = def ? std::string_view(def->name) : op;
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
                            has_attr("name") || has_attr("coalesce");
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
  if (def->name == "gather_row" || def->name == "mgather")
    gather_load_call_args(*def, call_args, spelling);
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
      // gather_row's accumulator is a tile in both namespaces (create_l1 makes a Mat tile).
      const bool accumulator = def->name == "gather_row" && i == 0;
      const bool wrong = ns == "tensor"
                             ? tile && !accumulator
                             : tensor && !is_tensor_parameter(def->name, def->arg_names[i]);
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

}  // namespace pypto::frontend::detail

namespace pypto::frontend {

OpSpelling resolve_op_spelling(std::string_view ns, std::string_view name) {
  using detail::find_spelled_op;
  using Kind = OpSpelling::Kind;
  // The forms parse_op_spelling builds from other ops (parser_op_forms.cpp).
  if (name == "full") return {Kind::Form, ns == "tile" ? "create_tile" : "create_tensor"};
  // ... and the statements and markers read before it (parser_calls.cpp, parser_call_attrs.cpp).
  if ((name == "const" && ns.empty()) || (name == "dim" && ns != "tile") ||
      (name == "extract" && ns == "tile") || (name == "dump_tag" && ns != "tile") ||
      name == "no_dep" || (ns == "system" && (name == "task_dummy" || name == "task_invalid")) ||
      ((name == "max" || name == "min") && (ns.empty() || ns == "tile")) ||
      (name == "alloc" && (ns == "tile" || ns == "tensor"))) {
    return {Kind::Form, ""};
  }
  if (name == "addc" || name == "addsc") return {Kind::Form, "add"};
  if (name == "subc" || name == "subsc") return {Kind::Form, "sub"};
  if (const ir::OpDef* def = find_spelled_op(ns, name)) return {Kind::Op, def->name};
  if (detail::is_unsupported(name)) return {Kind::Unsupported, ""};
  return {Kind::Unknown, ""};
}

}  // namespace pypto::frontend
