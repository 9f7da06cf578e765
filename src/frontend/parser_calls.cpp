// Calls: argument lists, `pl.` members (dtypes, memory spaces, levels, op names), op calls with
// their attributes and type checks, and calls of other functions of the program (self.f(...)).
#include <iterator>

#include "parser_state.h"
#include "pypto/ir/atomic_mode.h"
#include "pypto/ir/system_op_attrs.h"

namespace pypto::frontend::detail {

template <typename Name>
std::vector<CallArg> Parser::parse_call_args(const Name& callee_name, bool allow_strings,
                                             bool allow_attrs_dict) {
  auto callee = [&] { return text_of(callee_name); };
  expect(TK::LParen, [&] { return "'(' after " + callee(); });
  std::vector<CallArg> args;
  bool seen_keyword = false;
  while (!at(TK::RParen)) {
    CallArg arg;
    if (at(TK::Star) || at(TK::DoubleStar)) fail_here("argument unpacking is not supported");
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      arg.keyword_span = here();
      arg.keyword = advance().text;
      advance();
      for (const CallArg& other : args) {
        if (other.keyword == arg.keyword) {
          fail(arg.keyword_span,
               "keyword argument '" + std::string(arg.keyword) + "' repeated in " + callee());
        }
      }
      seen_keyword = true;
    } else if (seen_keyword) {
      fail_here("positional argument follows keyword argument in " + callee());
    }
    if (allow_attrs_dict && arg.keyword == "attrs" && at(TK::LBrace)) {
      arg.value.span = here();
      arg.attrs = parse_call_attrs_dict(callee());
    } else if (arg.keyword == "attrs" && at(TK::LBrace)) {
      // An op call's attrs={...}: the back-end hints PyPTO's passes attach and print (a
      // pipeline stage's "pipeline_membership", "__compiler_*" markers). They schedule the NPU;
      // the CPU device computes the same without them, so they are read and dropped.
      skip_op_hints(callee());
      if (!at(TK::Comma)) break;
      advance();
      continue;
    } else if (allow_attrs_dict && arg.keyword.empty() && at_no_dep_marker()) {
      arg.value = parse_no_dep_marker();
      arg.no_dep = true;
    } else if (allow_strings && at(TK::String) &&
               (peek_token(1).kind == TK::Comma || peek_token(1).kind == TK::RParen)) {
      arg.value.span = here();
      arg.text = string_literal(advance());
    } else {
      arg.value = parse_value();
    }
    if (at(TK::KwFor)) fail_here("generator expressions are not supported");
    args.push_back(std::move(arg));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, [&] { return "')' to close the arguments of " + callee(); });
  return args;
}

// For parser_jit.cpp, which names its callee with a string.
template std::vector<CallArg> Parser::parse_call_args<std::string>(const std::string&, bool, bool);

void Parser::skip_op_hints(const std::string& callee_label) {
  expect(TK::LBrace, "'{' to start the attrs dictionary");
  while (!at(TK::RBrace)) {
    expect(TK::String, "a string key in attrs={...}");
    expect(TK::Colon, "':' after the key in attrs={...}");
    if (!(at(TK::String) || at(TK::KwTrue) || at(TK::KwFalse) || at(TK::Int) || at(TK::Float))) {
      fail_here("the attrs of " + callee_label +
                " are back-end hints: each value must be a string, a number, True or False");
    }
    advance();
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBrace, "'}' to close the attrs dictionary");
}

std::string Parser::string_literal(const Token& t) const {
  std::string_view s = t.text;
  const char quote = s.empty() ? '"' : s.back();
  if (s.empty() || (s.front() != '"' && s.front() != '\'')) {
    fail(span_of(t), "string prefixes (r, b, f) are not supported in the DSL");
  }
  const size_t quotes = s.size() >= 6 && s[1] == quote && s[2] == quote ? 3 : 1;
  s = s.substr(quotes, s.size() - 2 * quotes);
  if (s.find('\\') != std::string_view::npos) {
    fail(span_of(t), "escape sequences in strings are not supported in the DSL");
  }
  return std::string(s);
}

Value Parser::parse_pl_member() {
  const Span span = here();
  advance();  // pl
  expect(TK::Dot, "'.' after 'pl' (pl.<op>, pl.FP32, pl.MemorySpace.<space>)");
  // pl.min / pl.max of scalars (PyPTO's spelling for a block's valid length) are min / max.
  if ((at_name("min") || at_name("max")) && peek_token(1).kind == TK::LParen) {
    return parse_min_max();
  }
  const Token& member = expect_name("a name after 'pl.'");
  const std::string_view name = member.text;
  if (auto dtype = ir::dtype_from_name(name)) {
    // pl.FP32.get_byte(): the bytes of one element.
    if (at(TK::Dot) && peek_token(1).text == "get_byte" && peek_token(2).kind == TK::LParen &&
        peek_token(3).kind == TK::RParen) {
      for (int i = 0; i < 4; ++i) advance();
      return expr_value(ir::make_node<ir::IntImm>(ir::dtype_bytes(*dtype), DataType::INT64, span),
                        span);
    }
    Value v;
    v.kind = Value::Kind::DType;
    v.dtype = *dtype;
    v.span = span;
    return v;
  }
  if (name == "TASK_ID" && task_id_dtype_allowed_) {
    // A TaskId is a UINT64 handle here (pypto/ir/task_types.h). Anywhere else (a cast, a
    // tensor's dtype) pl.TASK_ID would silently be UINT64, so it is refused below.
    Value v;
    v.kind = Value::Kind::DType;
    v.dtype = ir::kTaskIdDType;
    v.span = span;
    return v;
  }
  if (name == "system" && at(TK::Dot) && peek_token(1).kind == TK::Name &&
      peek_token(1).text == "task_dummy") {
    advance();
    advance();
    return parse_task_dummy(span);
  }
  if (name == "system" && at(TK::Dot) && peek_token(1).kind == TK::Name &&
      peek_token(1).text == "task_invalid") {
    advance();
    advance();
    return parse_task_invalid(span);
  }
  if (name == "system") {
    expect(TK::Dot, "'.' after pl.system");
    const Token& op = expect_name("an op name after 'pl.system.'");
    return parse_op_spelling(name, op.text, span);
  }
  if (name == "prefetch") fail_prefetch(span);
  // pl.PipeType.MTE2: a pipe of the pl.system flag ops, an integer attribute as in PyPTO's IR.
  if (name == "PipeType") {
    expect(TK::Dot, "'.' after pl.PipeType");
    const Token& item = expect_name("a member of pl.PipeType");
    auto pipe = ir::pipe_type_from_name(item.text);
    if (!pipe) {
      fail(span_of(item), "unknown pipe 'pl.PipeType." + std::string(item.text) +
                              "' (expected MTE1, MTE2, MTE3, M, V, S, FIX or ALL)");
    }
    return expr_value(ir::make_node<ir::IntImm>(*pipe, DataType::INT64, span), span);
  }
  // pl.AUTO: let the compiler choose (pl.reserve_buffer's base=), -1 as in PyPTO.
  if (name == "AUTO") return expr_value(ir::make_node<ir::IntImm>(-1, DataType::INT64, span), span);
  if (name == "array") return parse_task_namespace(name, span);
  if (name == "submit" || name == "spmd_submit") {
    fail(span, "pl." + std::string(name) +
                   "(...) is only allowed as the right-hand side of an assignment: "
                   "'out, tid = pl." +
                   std::string(name) + "(self.kernel, ...)'");
  }
  if (const char* reason = ir::unsupported_dtype_reason(name)) {
    fail(span, "pl." + std::string(name) + " is not supported yet: " + reason);
  }
  if (name == "PadValue") {
    expect(TK::Dot, "'.' after pl.PadValue");
    const Token& item = expect_name("a member of pl.PadValue");
    auto pad = ir::pad_value_from_name(item.text);
    if (!pad) {
      fail(span_of(item), "unknown pad value 'pl.PadValue." + std::string(item.text) +
                              "' (expected zero, min or max)");
    }
    Value v;
    v.span = span;
    v.kind = Value::Kind::Pad;
    v.pad = *pad;
    return v;
  }
  // pl.AtomicType.None_ / pl.AtomicType.Add: the combine mode of a store (the `atomic=` of
  // pl.store and pl.assemble), an integer attribute as in PyPTO's IR: 0 overwrites, 1 adds.
  if (name == "AtomicType") {
    expect(TK::Dot, "'.' after pl.AtomicType");
    const Token& item = expect_name("a member of pl.AtomicType");
    auto mode = ir::atomic_mode_from_name(item.text);
    if (!mode) {
      fail(span_of(item), "unknown atomic type 'pl.AtomicType." + std::string(item.text) +
                              "' (expected None_ or Add)");
    }
    return expr_value(ir::make_node<ir::IntImm>(*mode, DataType::INT64, span), span);
  }
  if (name == "MemorySpace" || name == "Level" || name == "FunctionType") {
    expect(TK::Dot, [&] { return "'.' after pl." + std::string(name); });
    const Token& item = expect_name([&] { return "a member of pl." + std::string(name); });
    Value v;
    v.span = span;
    if (name == "MemorySpace") {
      auto space = ir::memory_space_from_name(item.text);
      if (!space) {
        fail(span_of(item), "unknown memory space 'pl.MemorySpace." + std::string(item.text) +
                                "' (expected DDR, Vec, Mat, Left, Right, Acc, Bias, LeftScale or "
                                "RightScale)");
      }
      v.kind = Value::Kind::Space;
      v.space = *space;
    } else if (name == "Level") {
      if (!is_level_name(item.text)) {
        fail(span_of(item), "unknown level 'pl.Level." + std::string(item.text) + "' (expected " +
                                level_names() + ")");
      }
      v.kind = Value::Kind::Level;
      v.level = item.text;
    } else {
      v.kind = Value::Kind::FuncType;
      auto type = ir::function_type_from_name(item.text);
      if (!type) {
        fail(span_of(item), "unknown function type 'pl.FunctionType." + std::string(item.text) +
                                "' (expected Opaque, Orchestration, InCore, AIC, AIV or Group)");
      }
      v.func_type = *type;
    }
    return v;
  }
  if (name == "range" || name == "unroll") {
    fail(span, "pl." + std::string(name) + "(...) is only allowed as the iterable of a for loop");
  }
  if (name == "yield_") {
    fail(span,
         "pl.yield_ is only allowed as 'x = pl.yield_(...)' at the end of a loop body or "
         "an if branch");
  }
  if (name == "at") fail(span, "pl.at(...) is only allowed in a 'with' statement");
  if (name == "Tensor" || name == "Tile" || name == "Scalar" || name == "Out" || name == "InOut" ||
      name == "MemRef") {
    fail(span, "pl." + std::string(name) + " is a type; types are only allowed in annotations");
  }
  if (name == "tile" || name == "tensor") {
    expect(TK::Dot, [&] { return "'.' after pl." + std::string(name); });
    // pl.tile.max / pl.tile.min are PyPTO's scalar max / min (its tile reductions are row_max,
    // col_max...): the same as pl.max / pl.min.
    if (name == "tile" && (at_name("min") || at_name("max")) && peek_token(1).kind == TK::LParen) {
      return parse_min_max();
    }
    const Token& op =
        expect_name([&] { return "an op name after 'pl." + std::string(name) + ".'"; });
    if (op.text == "MaskPattern") return parse_mask_pattern(span);
    return parse_op_spelling(name, op.text, span);
  }
  if (name == "MaskPattern") return parse_mask_pattern(span);
  return parse_op_spelling({}, name, span);
}

// pl.tile.MaskPattern.P0101 ... P1111: the column pattern of pl.gather / pl.scatter's mask forms,
// an integer 1 to 7 as in PyPTO.
Value Parser::parse_mask_pattern(Span span) {
  static constexpr std::string_view kPatterns[] = {"P0101", "P1010", "P0001", "P0010",
                                                   "P0100", "P1000", "P1111"};
  expect(TK::Dot, "'.' after MaskPattern");
  const Token& item = expect_name("a member of MaskPattern");
  for (size_t k = 0; k < std::size(kPatterns); ++k) {
    if (item.text == kPatterns[k]) {
      return expr_value(
          ir::make_node<ir::IntImm>(static_cast<int64_t>(k + 1), DataType::INT64, span), span);
    }
  }
  fail(span_of(item), "unknown mask pattern 'MaskPattern." + std::string(item.text) +
                          "' (expected P0101, P1010, P0001, P0010, P0100, P1000 or P1111)");
}

std::optional<ir::AttrValue> Parser::attr_value(const Value& v) {
  switch (v.kind) {
    case Value::Kind::DType:
      return ir::AttrValue(v.dtype);
    case Value::Kind::Space:
      return ir::AttrValue(v.space);
    case Value::Kind::Pad:
      return ir::AttrValue(v.pad);
    case Value::Kind::Level:
    case Value::Kind::FuncType:
    case Value::Kind::TileLayout:
    case Value::Kind::TensorLayout:
      return std::nullopt;
    case Value::Kind::Expr:
      break;
  }
  const ExprPtr& e = v.expr;
  if (const auto* i = e->as<ir::IntImm>()) return ir::AttrValue(i->value);
  if (const auto* f = e->as<ir::FloatImm>()) return ir::AttrValue(f->value);
  if (const auto* b = e->as<ir::BoolImm>()) return ir::AttrValue(b->value);
  if (const auto* t = e->as<ir::MakeTuple>()) {
    std::vector<int64_t> ints;
    ints.reserve(t->elements.size());
    for (const auto& el : t->elements) {
      const auto* i = el->as<ir::IntImm>();
      if (!i) return std::nullopt;
      ints.push_back(i->value);
    }
    return ir::AttrValue(std::move(ints));
  }
  // Arithmetic of constants (size=SLOT * 4): its value.
  if (auto folded = fold_constant(e).exact(); folded && folded->kind == ir::Scalar::Kind::Int) {
    return ir::AttrValue(folded->i);
  }
  return std::nullopt;
}

ExprPtr Parser::parse_op_call(const ir::OpDef& def, Span span, const std::string& spelling) {
  const size_t uses_mark = var_uses_.size();
  // The attributes whose values are strings (gemv's acc_phase="final"); elsewhere a string
  // literal is an error where it stands.
  const bool string_attrs =
      std::find(def.attr_names.begin(), def.attr_names.end(), "acc_phase") != def.attr_names.end();
  std::vector<CallArg> call_args = parse_call_args(spelling, string_attrs);
  return bind_op_call(def, span, spelling, std::move(call_args), uses_mark);
}

namespace {

// pl.tensor.view(t[, shape], layout=L) that changes t's layout between ND and DN: the same
// memory read in the other order, which is t with its last two dimensions swapped (PyPTO's
// ND/DN alias): the transpose view of t. nullptr when L is t's own layout (a plain view).
ExprPtr view_with_layout(const std::vector<ExprPtr>& args, const Value& layout, Span span,
                         const std::string& spelling) {
  const auto* tt = args.empty() ? nullptr : args[0]->type()->as<ir::TensorType>();
  if (!tt) return nullptr;  // the type rule names what it takes
  const std::string written = "pl.TensorLayout." + std::string(layout.level);
  const auto target = ir::tensor_layout_from_name(layout.level);
  const ir::TensorLayout source = tt->view ? tt->view->layout : ir::TensorLayout::ND;
  auto flat = [](ir::TensorLayout l) {
    return l == ir::TensorLayout::ND || l == ir::TensorLayout::DN;
  };
  if (!target || !flat(*target) || !flat(source)) {
    throw CompileError(layout.span, written + " in " + spelling +
                                        " is not supported: a view changes a tensor's layout "
                                        "between pl.TensorLayout.ND and DN only");
  }
  if (*target == source) return nullptr;
  if (args.size() > 2 && args[2]) {
    throw CompileError(args[2]->span(), "valid_shape of " + spelling +
                                            " with a layout change is not supported: the "
                                            "view is the whole tensor read in the other order");
  }
  // A DN view of [.., R, C] over packed memory is the transpose of the row-major [.., C, R]
  // over it: ND to DN reshapes (to the shape asked for, its last two extents swapped) and
  // transposes; DN to ND transposes back to the row-major order and reshapes.
  const ir::MakeTuple* shape = args.size() > 1 && args[1] ? args[1]->as<ir::MakeTuple>() : nullptr;
  if (args.size() > 1 && args[1] && !shape) {
    throw CompileError(args[1]->span(), "the shape of " + spelling + " with a layout change " +
                                            "must be a list of extents");
  }
  const size_t n = shape ? shape->elements.size() : tt->shape.size();
  if (n < 2 || tt->shape.size() < 2) {
    const std::string got = tt->shape.size() < 2
                                ? "a tensor of shape " + ir::shape_to_string(tt->shape)
                                : "a view of " + std::to_string(n) + " dimension(s)";
    throw CompileError(layout.span,
                       spelling + " between ND and DN needs 2 or more dimensions, got " + got);
  }
  auto transpose = [&](ExprPtr x, size_t rank) {
    return ir::make_op_call("transpose",
                            {std::move(x), ir::make_int(static_cast<int64_t>(rank - 2)),
                             ir::make_int(static_cast<int64_t>(rank - 1))},
                            {}, span);
  };
  if (*target == ir::TensorLayout::DN) {
    ExprPtr rows = args[0];
    if (shape) {
      std::vector<ExprPtr> swapped = shape->elements;
      std::swap(swapped[n - 2], swapped[n - 1]);
      rows =
          ir::make_op_call("reshape", {rows, ir::make_tuple(std::move(swapped), span)}, {}, span);
    }
    return transpose(rows, n);
  }
  ExprPtr rows = transpose(args[0], tt->shape.size());
  return shape ? ir::make_op_call("reshape", {rows, args[1]}, {}, span) : rows;
}

}  // namespace

ExprPtr Parser::bind_op_call(const ir::OpDef& def, Span span, const std::string& spelling,
                             std::vector<CallArg> call_args, size_t uses_mark) {
  auto callee = [&spelling] { return spelling; };
  std::vector<ExprPtr> args;
  std::vector<Span> arg_spans;
  ir::Attrs attrs;
  size_t positional = 0;
  std::optional<Value> view_layout;  // pl.tensor.view's layout=
  for (CallArg& a : call_args) {
    if (a.text) {
      // Only an attribute takes a string, by keyword or by its position after the arguments.
      std::string key(a.keyword);
      if (key.empty() && positional >= def.arg_names.size() &&
          positional - def.arg_names.size() < def.attr_names.size()) {
        key = def.attr_names[positional - def.arg_names.size()];
      }
      if (key.empty() ||
          std::find(def.attr_names.begin(), def.attr_names.end(), key) == def.attr_names.end()) {
        fail(a.value.span, "a string is not a valid argument of " + callee() +
                               (a.keyword.empty() ? "" : " ('" + std::string(a.keyword) + "')"));
      }
      if (a.keyword.empty()) ++positional;
      attrs.emplace_back(key, ir::AttrValue(*a.text));
      continue;
    }
    if (def.name == "view" && a.value.kind == Value::Kind::TensorLayout &&
        (a.keyword.empty() ? positional == def.arg_names.size() : a.keyword == "layout")) {
      view_layout = a.value;  // a layout change reads the elements in another order (below)
      if (a.keyword.empty()) ++positional;
      continue;
    }
    if (a.value.kind == Value::Kind::TileLayout || a.value.kind == Value::Kind::TensorLayout) {
      accept_layout_argument(def, a.keyword, a.value, positional, spelling);
      if (a.keyword.empty()) ++positional;
      continue;
    }
    if (a.keyword.empty()) {
      if (positional < def.arg_names.size()) {
        args.push_back(expect_expr(a.value, [&] {
          return "argument " + std::to_string(positional + 1) + " of " + callee();
        }));
        ++positional;
        continue;
      }
      // Python-style: extra positional arguments fill the attributes in order.
      size_t attr_index = positional - def.arg_names.size();
      if (attr_index >= def.attr_names.size()) {
        fail(a.value.span, callee() + " takes at most " +
                               std::to_string(def.arg_names.size() + def.attr_names.size()) +
                               " arguments, got " + std::to_string(positional + 1) + " or more");
      }
      a.keyword = def.attr_names[attr_index];
      a.keyword_span = a.value.span;
      ++positional;
    }
    // PyPTO's pl.tile.load spells valid_shapes in the singular.
    if (def.name == "load" && a.keyword == "valid_shape") a.keyword = "valid_shapes";
    a.keyword = canonical_keyword(def, a.keyword);
    auto arg_it = std::find(def.arg_names.begin(), def.arg_names.end(), a.keyword);
    if (arg_it != def.arg_names.end()) {
      size_t index = static_cast<size_t>(arg_it - def.arg_names.begin());
      if (index < args.size() && args[index]) {
        fail(a.keyword_span, callee() + " got argument '" + std::string(a.keyword) + "' twice");
      }
      if (args.size() <= index) args.resize(index + 1);
      args[index] = expect_expr(
          a.value, [&] { return "argument '" + std::string(a.keyword) + "' of " + callee(); });
      continue;
    }
    if (std::find(def.attr_names.begin(), def.attr_names.end(), a.keyword) ==
        def.attr_names.end()) {
      std::string valid;
      for (const auto& n : def.arg_names) valid += (valid.empty() ? "" : ", ") + n;
      for (const auto& n : def.attr_names) valid += (valid.empty() ? "" : ", ") + n;
      fail(a.keyword_span, "unknown keyword argument '" + std::string(a.keyword) + "' of " +
                               callee() +
                               (valid.empty() ? "" : " (expected one of: " + valid + ")"));
    }
    for (const auto& [k, unused] : attrs) {
      (void)unused;
      if (k == a.keyword) {
        fail(a.keyword_span, callee() + " got attribute '" + std::string(a.keyword) + "' twice");
      }
    }
    auto value = attr_value(a.value);
    if (!value) {
      fail(a.value.span, "attribute '" + std::string(a.keyword) + "' of " + callee() +
                             " must be a constant (a number, a dtype, a memory space or a list "
                             "of integers)");
    }
    attrs.emplace_back(std::string(a.keyword), std::move(*value));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i]) {
      fail(span, callee() + " is missing argument '" + def.arg_names[i] + "'");
    }
  }
  if (args.size() < def.min_args) {
    fail(span, callee() + " takes at least " + std::to_string(def.min_args) + " argument(s), got " +
                   std::to_string(args.size()) + " (missing '" + def.arg_names[args.size()] + "')");
  }
  // pl.read(t, i): a single index is PyPTO's flat form, the element at position i of `t` in
  // row-major order (its indices along each dimension, for a tile or tensor of rank > 1).
  if ((def.name == "read" || def.name == "write") && args.size() >= 2 && args[1] &&
      args[1]->type() && args[1]->type()->as<ir::ScalarType>()) {
    args[1] = ir::make_tuple(flat_index_to_indices(args[0], args[1]), args[1]->span());
  }
  // Elementwise ops on two tensors of different dtypes compute in the wider one, as PyPTO's
  // tensor ops promote (an FP32 accumulator plus a BF16 matmul result is FP32): the narrower
  // operand is cast first. Tiles keep their strict rule, as in PyPTO.
  if (def.category == ir::OpCategory::ElementwiseBinary && args.size() >= 2) {
    const auto* a = args[0]->type()->as<ir::TensorType>();
    const auto* b = args[1]->type()->as<ir::TensorType>();
    if (a && b && a->dtype != b->dtype && ir::is_float(a->dtype) == ir::is_float(b->dtype) &&
        a->dtype != ir::DataType::BOOL && b->dtype != ir::DataType::BOOL &&
        ir::dtype_bytes(a->dtype) != ir::dtype_bytes(b->dtype)) {
      const bool widen_a = ir::dtype_bytes(b->dtype) > ir::dtype_bytes(a->dtype);
      ExprPtr& narrow = args[widen_a ? 0 : 1];
      const ir::DataType wide = widen_a ? b->dtype : a->dtype;
      narrow = ir::make_op_call("cast", {narrow}, {{"target_type", wide}}, narrow->span());
    }
  }
  if (view_layout) {
    try {
      if (ExprPtr flipped = view_with_layout(args, *view_layout, span, spelling)) return flipped;
    } catch (const CompileError& e) {
      throw CompileError(use_site(e.span(), uses_mark), e.what());
    }
  }
  // A load of a kernel parameter that declares a partial valid region reads within it.
  if (def.name == "load") intersect_load_with_param_valid(args, span);
  if (def.name == "aiv_shard" || def.name == "aic_gather") add_split_aiv_mode(def, attrs, span);
  // A window of a 2-D tile with a valid_shape: a tile's valid region is a run-time property of
  // its value, which pl.tile.set_validshape gives the window (a tensor's stays the view's
  // metadata, and a region that is the whole window says nothing).
  const auto* sliced_tile = def.name == "slice" && args.size() > 3 && args[0]->type()
                                ? args[0]->type()->as<ir::TileType>()
                                : nullptr;
  const auto* valid = sliced_tile ? args[3]->as<ir::MakeTuple>() : nullptr;
  if (valid && sliced_tile->shape.size() == 2 && valid->elements.size() == 2) {
    std::vector<ExprPtr> extents = valid->elements;
    args.resize(3);
    try {
      ExprPtr window = ir::make_op_call("slice", std::move(args), std::move(attrs), span);
      const auto& shape = window->type()->as<ir::TileType>()->shape;
      bool whole = true;
      for (size_t d = 0; d < 2; ++d) {
        const auto* n = extents[d]->as<ir::IntImm>();
        whole = whole && n && n->value == shape[d];
      }
      if (whole) return window;
      return ir::make_op_call("set_validshape", {window, extents[0], extents[1]}, {}, span);
    } catch (const CompileError& e) {
      throw CompileError(use_site(e.span(), uses_mark), e.what());
    }
  }
  try {
    return ir::make_op_call(def.name, std::move(args), std::move(attrs), span);
  } catch (const CompileError& e) {
    throw CompileError(use_site(e.span(), uses_mark), e.what());
  }
}

std::vector<ExprPtr> Parser::flat_index_to_indices(const ExprPtr& shaped, const ExprPtr& flat) {
  const std::vector<int64_t>* shape = nullptr;
  if (const auto* t = shaped ? shaped->type()->as<ir::TensorType>() : nullptr) shape = &t->shape;
  if (const auto* t = shaped ? shaped->type()->as<ir::TileType>() : nullptr) shape = &t->shape;
  if (!shape || shape->size() <= 1 || ir::has_dynamic_extent(*shape)) return {flat};
  const Span span = flat->span();
  std::vector<ExprPtr> indices;
  int64_t inner = 1;  // elements of the dimensions after d
  for (size_t d = shape->size(); d-- > 0;) {
    ExprPtr index =
        inner == 1 ? flat
                   : ir::make_binary(ir::BinaryOp::FloorDiv, flat, ir::make_int(inner, span), span);
    if (d > 0) {
      index = ir::make_binary(ir::BinaryOp::Mod, index, ir::make_int((*shape)[d], span), span);
    }
    indices.insert(indices.begin(), index);
    inner *= (*shape)[d];
  }
  return indices;
}

Value Parser::parse_self_call() {
  const Span span = here();
  advance();  // self
  if (!at(TK::Dot)) {
    fail(span, "'self' can only be used to call a function of the program: self.<name>(...)");
  }
  advance();
  const Token& name = expect_name("a function name after 'self.'");
  if (auto it = inline_methods_.find(name.text); it != inline_methods_.end()) {
    if (!at(TK::LParen))
      fail(span, "function 'self." + std::string(name.text) + "' must be called");
    return expand_inline_call(it->second, name);
  }
  size_t callee = signatures_.size();
  for (size_t i = 0; i < signatures_.size(); ++i) {
    if (!signatures_[i].specialisation_of && signatures_[i].name == name.text) callee = i;
  }
  if (callee == signatures_.size()) {
    fail(span_of(name), "program has no function '" + std::string(name.text) + "'");
  }
  if (!at(TK::LParen)) fail(span, "function 'self." + std::string(name.text) + "' must be called");
  const std::string label_text = "self." + signatures_[callee].name;
  auto label = [&label_text] { return label_text; };
  std::vector<CallArg> call_args =
      parse_call_args(label, /*allow_strings=*/false, /*allow_attrs_dict=*/true);
  std::vector<ExprPtr> args;
  ir::Attrs attrs;
  ExprPtr device;
  for (CallArg& a : call_args) {
    if (a.keyword.empty()) {
      args.push_back(expect_expr(a.value, [&] {
        return "argument " + std::to_string(args.size() + 1) + " of " + label();
      }));
      continue;
    }
    if (a.keyword == "device") {  // a host orchestrator's dispatch (parser_distributed.cpp)
      device = expect_expr(a.value, [&] { return "device= of " + label(); });
      continue;
    }
    if (a.attrs) {  // attrs={"arg_directions": [pl.adir.<marker>, ...]}
      for (auto& attr : *a.attrs) attrs.push_back(std::move(attr));
      continue;
    }
    fail(a.keyword_span, "unknown keyword argument '" + std::string(a.keyword) + "' of " + label() +
                             " (program functions take positional arguments, and "
                             "attrs={\"arg_directions\": [pl.adir.<marker>, ...]})");
  }
  std::vector<int64_t> no_dep;  // pl.no_dep(x) arguments
  for (size_t i = 0; i < call_args.size() && i < args.size(); ++i)
    if (call_args[i].no_dep) no_dep.push_back(static_cast<int64_t>(i));
  if (!no_dep.empty()) merge_no_dep_overrides(attrs, no_dep, span);
  if (const auto* overrides = ir::find_attr(attrs, "arg_direction_overrides")) {
    for (int64_t i : std::get<std::vector<int64_t>>(*overrides)) {
      if (i < 0 || i >= static_cast<int64_t>(args.size())) {
        fail(span, "arg_direction_overrides of " + label() + " names argument " +
                       std::to_string(i) + ", which it does not have (it passes " +
                       std::to_string(args.size()) + ")");
      }
    }
  }
  if (const auto* dirs = ir::find_attr(attrs, "arg_directions")) {
    const size_t n = std::get<std::vector<int64_t>>(*dirs).size();
    if (n != args.size()) {
      fail(span, label() + " passes " + std::to_string(args.size()) + " argument(s) but its " +
                     "arg_directions name " + std::to_string(n) + " (one direction per argument)");
    }
  }
  std::vector<Span> arg_spans;
  for (size_t i = 0; i < args.size(); ++i) arg_spans.push_back(call_args[i].value.span);
  Value call =
      finish_self_call(callee, std::move(args), arg_spans, std::move(attrs), span, label_text);
  if (device) call.expr = with_device(call.expr, device, span);
  return call;
}

Value Parser::finish_self_call(size_t callee, std::vector<ExprPtr> args,
                               const std::vector<Span>& arg_spans, ir::Attrs attrs, Span span,
                               const std::string& label_text) {
  auto label = [&label_text] { return label_text; };
  if (args.size() != signatures_[callee].params.size()) {
    fail(span, label() + " takes " + std::to_string(signatures_[callee].params.size()) +
                   " argument(s), got " + std::to_string(args.size()));
  }
  if (signatures_[callee].is_template) callee = specialise_call(callee, args, arg_spans, span);
  read_returns_of(callee, span);
  const FunctionSignature& sig = signatures_[callee];
  // Leading parameters for valid-region names take their values from the arguments.
  const size_t leading = sig.valid_symbols.size();
  for (size_t i = 0; i < args.size(); ++i) {
    const TypePtr& want = sig.params[leading + i].var->type();
    if (!argument_fits(want, args[i]->type())) {
      fail(arg_spans[i], "expected " + ir::type_to_string(want) + ", got " +
                             ir::type_to_string(args[i]->type()) + " in argument " +
                             std::to_string(i + 1) + " of " + label());
    }
  }
  if (leading) {
    std::vector<ExprPtr> values = valid_symbol_arguments(sig, args, arg_spans, span);
    args.insert(args.begin(), values.begin(), values.end());
  }
  calls_[current_function_].push_back(CallSite{callee, span});
  TypePtr type =
      sig.return_types.size() == 1 ? sig.return_types[0] : ir::tuple_type(sig.return_types);
  return expr_value(ir::make_node<ir::Call>(ir::CallKind::Function, sig.name, std::move(args),
                                            std::move(attrs), type, span),
                    span);
}

}  // namespace pypto::frontend::detail
