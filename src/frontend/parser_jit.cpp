// @pl.jit functions: finding them in a file, reading their shape-less signatures, specialising
// the entry on the arguments of a call (tensor parameters get the arguments' shapes and dtypes,
// scalar parameters become constants of the body), and specialising the @pl.jit.incore helpers
// it calls on the types of their arguments. The result is the IR a hand-written @pl.program
// would give: the entry is the Orchestration function, each helper an InCore function, and the
// `with pl.at(level=pl.Level.CORE_GROUP)` scopes are left for OutlineIncoreScopes.
#include <limits>

#include "parser_state.h"
#include "pypto/ir/printer.h"

namespace pypto::frontend::detail {

namespace {

// What the function's parameter annotation may be, for messages.
constexpr const char* kJitParamTypes =
    "pl.Tensor, pl.Out[pl.Tensor], pl.InOut[pl.Tensor], pl.Scalar[dtype] or a dtype such as "
    "pl.INT32";

}  // namespace

std::optional<JitKind> Parser::read_jit_decorator() {
  advance();  // @
  std::optional<JitKind> kind;
  if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).kind == TK::Name &&
      peek_token(2).text == "jit") {
    if (peek_token(3).kind == TK::Newline) {
      kind = JitKind::Entry;
    } else if (peek_token(3).kind == TK::Dot && peek_token(4).text == "incore" &&
               peek_token(5).kind == TK::Newline) {
      kind = JitKind::Incore;
    } else if (peek_token(3).kind == TK::Dot && peek_token(4).text == "host" &&
               peek_token(5).kind == TK::Newline) {
      kind = JitKind::Host;
    }
  }
  while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
  if (at(TK::Newline)) advance();
  return kind;
}

std::vector<JitFunctionSource> Parser::list_jit_functions(Constants* module_constants) {
  std::vector<JitFunctionSource> found;
  while (!at(TK::EndOfFile)) {
    if (at(TK::Newline) || at(TK::Dedent) || at(TK::Indent)) {
      advance();
      continue;
    }
    if (at(TK::At)) {
      const int32_t first_line = cur().line + line_offset_;
      std::optional<JitKind> kind;
      while (at(TK::At)) {
        if (auto k = read_jit_decorator()) kind = k;
      }
      if (kind && at(TK::KwDef) && peek_token(1).kind == TK::Name) {
        found.push_back(JitFunctionSource{std::string(peek_token(1).text), *kind, first_line});
      }
      skip_statement();
      continue;
    }
    if (at(TK::Name) && try_constant_assignment()) continue;
    skip_statement();
  }
  if (module_constants) *module_constants = constants_;
  return found;
}

// Whether the bracketed type arguments starting `ahead` tokens on name a pl.dynamic dimension;
// `*end` is then the offset of the token after the closing bracket.
bool Parser::jit_annotation_is_dynamic(size_t ahead, size_t* end) const {
  int depth = 0;
  bool dynamic = false;
  for (size_t i = ahead;; ++i) {
    const Token& t = peek_token(i);
    if (t.kind == TK::EndOfFile || t.kind == TK::Newline) return false;
    if (t.kind == TK::LBracket) ++depth;
    if (t.kind == TK::RBracket && --depth == 0) {
      *end = i + 1;
      return dynamic;
    }
    if (t.kind == TK::Name) {
      auto c = constants_.find(t.text);
      dynamic = dynamic || (c != constants_.end() && std::holds_alternative<DynamicDim>(c->second));
    }
  }
}

void Parser::parse_jit_value_type(JitParam& p) {
  const Span start = here();
  const bool distributed =
      at_name("pld") && peek_token(1).kind == TK::Dot && peek_token(2).text == "DistributedTensor";
  if (distributed) {
    p.is_tensor = true;
    size_t end = 0;
    if (peek_token(3).kind == TK::LBracket && jit_annotation_is_dynamic(3, &end)) {
      // A window shape naming pl.dynamic dimensions: the argument gives every extent.
      for (size_t i = 0; i < end; ++i) advance();
      return;
    }
    p.annotated = parse_distributed_tensor_type();
    return;
  }
  if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "Tensor") {
    p.is_tensor = true;
    if (peek_token(3).kind == TK::LBracket) {
      // A shape given anyway: the argument must have it, but for its pl.dynamic dimensions,
      // which take the argument's extents.
      std::vector<DynamicDimUse> uses;
      std::vector<DynamicDimUse>* saved_uses = dynamic_uses_;
      dynamic_uses_ = &uses;
      const size_t first_shape = shapes_read_ + 1;
      p.annotated = parse_type();
      dynamic_uses_ = saved_uses;
      bool composite = false;  // a dimension computed from more than one name (NR * SIZE)
      for (const DynamicDimUse& use : uses) {
        if (use.shape == first_shape)
          p.dynamic_dims.push_back(DynamicDimAt{use.dim, use.name, use.scale, use.offset});
        else
          composite = true;
      }
      // Its extents cannot be checked before a call fixes the names: the argument gives them.
      if (composite) p.annotated = nullptr;
    } else {
      advance();
      advance();
      advance();
    }
    return;
  }
  if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "Scalar") {
    p.scalar_dtype = parse_type()->as<ir::ScalarType>()->dtype;
    return;
  }
  if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "Tile") {
    fail(start, std::string("a jit parameter is a tensor or a scalar (tiles live inside kernels): "
                            "expected ") +
                    kJitParamTypes);
  }
  Value v = parse_value();
  if (v.kind != Value::Kind::DType) {
    fail(v.span, std::string("expected ") + kJitParamTypes +
                     " as the type of a jit parameter, got " +
                     std::string(value_kind_description(v)));
  }
  p.scalar_dtype = v.dtype;
}

void Parser::parse_jit_param_type(JitParam& p) {
  const Span start = here();
  if (at_name("pl") && peek_token(1).kind == TK::Dot &&
      (peek_token(2).text == "Out" || peek_token(2).text == "InOut")) {
    p.direction = peek_token(2).text == "Out" ? ir::ParamDirection::Out : ir::ParamDirection::InOut;
    advance();
    advance();
    advance();
    expect(TK::LBracket, "'[' after pl.Out / pl.InOut");
    parse_jit_value_type(p);
    expect(TK::RBracket, "']' to close pl.Out[...] / pl.InOut[...]");
    if (!p.is_tensor) {
      fail(start, "pl.Out[...] and pl.InOut[...] take a tensor: pl.Out[pl.Tensor]");
    }
    return;
  }
  parse_jit_value_type(p);
}

void Parser::parse_jit_signature() {
  JitSignature sig;
  std::optional<JitKind> kind;
  while (at(TK::At)) {
    const Span deco = here();
    kind = read_jit_decorator();
    if (!kind) fail(deco, "unsupported decorator (expected @pl.jit or @pl.jit.incore)");
  }
  if (!kind) expected("@pl.jit or @pl.jit.incore before the function");
  sig.kind = *kind;
  expect(TK::KwDef, "'def' after the decorator");
  const Token& name = expect_name("a function name after 'def'");
  sig.name = std::string(name.text);
  sig.span = span_of(name);
  for (const JitSignature& other : jit_functions_) {
    if (other.name == sig.name) {
      fail(sig.span, "duplicate jit function '" + sig.name + "' (first defined on line " +
                         std::to_string(other.span.line) + ")");
    }
  }
  expect(TK::LParen, "'(' after the function name");
  while (!at(TK::RParen)) {
    if (at(TK::Star) || at(TK::DoubleStar)) fail_here("variadic parameters are not supported");
    const Token& pname = expect_name("a parameter name");
    for (const JitParam& other : sig.params) {
      if (other.name == pname.text) {
        fail(span_of(pname), "duplicate parameter '" + std::string(pname.text) + "'");
      }
    }
    if (!at(TK::Colon)) {
      fail_here("parameter '" + std::string(pname.text) +
                "' needs a type annotation: " + kJitParamTypes);
    }
    advance();
    JitParam p;
    p.name = pname.text;
    p.span = span_of(pname);
    parse_jit_param_type(p);
    if (at(TK::Assign)) fail_here("default parameter values are not supported");
    sig.params.push_back(std::move(p));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' after the parameters");
  if (at(TK::Arrow)) {
    // The result types follow from the body's return statement; the annotation is not read.
    int brackets = 0;
    while (!at(TK::EndOfFile) && !(brackets == 0 && at(TK::Colon))) {
      if (at(TK::LBracket) || at(TK::LParen)) ++brackets;
      if (at(TK::RBracket) || at(TK::RParen)) --brackets;
      advance();
    }
  }
  expect(TK::Colon, "':' after the function signature");
  sig.body_start = pos_;
  skip_block_body("function definition on line " + std::to_string(name.line + line_offset_));
  jit_functions_.push_back(std::move(sig));
}

Constant Parser::jit_scalar_constant(const JitParam& p, const Constant& value) const {
  const std::string what = "parameter '" + std::string(p.name) + "' (" +
                           std::string(ir::dtype_name(p.scalar_dtype)) + ")";
  if (const auto* i = std::get_if<int64_t>(&value)) {
    if (ir::is_float(p.scalar_dtype)) return Constant(static_cast<double>(*i));
    if (p.scalar_dtype == DataType::BOOL)
      fail(p.span, what + " takes True or False, got an integer");
    if (p.scalar_dtype == DataType::INT32 &&
        (*i < std::numeric_limits<int32_t>::min() || *i > std::numeric_limits<int32_t>::max())) {
      fail(p.span, what + " cannot hold " + std::to_string(*i));
    }
    return value;
  }
  if (std::holds_alternative<double>(value)) {
    if (!ir::is_float(p.scalar_dtype)) fail(p.span, what + " takes an integer, got a float");
    return value;
  }
  if (std::holds_alternative<bool>(value)) {
    if (p.scalar_dtype != DataType::BOOL) fail(p.span, what + " got a bool");
    return value;
  }
  fail(p.span, what + " takes a number, got a dtype");
}

ir::FunctionPtr Parser::parse_jit_body(size_t signature) {
  const FunctionSignature sig = signatures_[signature];
  vars_.clear();
  local_constants_.clear();
  for (const auto& p : sig.params) vars_[p.var->name] = p.var;
  std::vector<TypePtr> returns;
  return_types_ = &returns;
  inferred_returns_ = &returns;
  returns_known_ = false;
  current_function_ = signature;
  pos_ = sig.body_start;
  // The entry's pl.dynamic dimensions have the extents of this call's arguments.
  dynamic_bindings_ = jit_dynamic_bindings_.empty() ? nullptr : &jit_dynamic_bindings_;
  Block body = parse_block(BlockKind::Function, "function definition");
  dynamic_bindings_ = nullptr;
  inferred_returns_ = nullptr;
  return_types_ = nullptr;
  signatures_[signature].return_types = returns;
  return ir::make_node<ir::Function>(sig.name, sig.type, sig.params, std::move(returns),
                                     ir::make_seq(std::move(body.stmts), sig.span), sig.span);
}

bool Parser::try_bind_dynamic(Block&) {
  // `x.bind_dynamic(dim, D)` in a @pl.jit function: dimension `dim` of parameter x is the
  // pl.dynamic dimension D. A specialisation has the argument's extents, so the statement only
  // checks itself and gives D that extent (where an annotation did not already).
  if (!at(TK::Name) || peek_token(1).kind != TK::Dot || peek_token(2).text != "bind_dynamic" ||
      peek_token(3).kind != TK::LParen) {
    return false;
  }
  const Token& name = advance();
  advance();
  advance();
  advance();
  const std::string what = std::string(name.text) + ".bind_dynamic(dim, pl.dynamic name)";
  if (jit_functions_.empty())
    fail(span_of(name),
         what + " belongs to @pl.jit functions, which specialise on their arguments");
  auto var = vars_.find(name.text);
  const auto* tensor = var != vars_.end() && var->second->type()
                           ? var->second->type()->as<ir::TensorType>()
                           : nullptr;
  if (!tensor) fail(span_of(name), what + ": '" + std::string(name.text) + "' is not a tensor");
  const Span dim_span = here();
  if (!at(TK::Int) || cur().text.size() > 3)
    fail_here(what + ": the dimension must be a small integer literal");
  const int64_t dim = std::stoll(std::string(advance().text));
  if (dim < 0 || dim >= static_cast<int64_t>(tensor->shape.size())) {
    fail(dim_span, what + ": '" + std::string(name.text) + "' has " +
                       std::to_string(tensor->shape.size()) + " dimensions");
  }
  expect(TK::Comma, "',' and a pl.dynamic name after the dimension");
  const Token& dyn = expect_name("a pl.dynamic name");
  auto constant = constants_.find(dyn.text);
  if (constant == constants_.end() || !std::holds_alternative<DynamicDim>(constant->second))
    fail(span_of(dyn), "'" + std::string(dyn.text) + "' is not a pl.dynamic dimension");
  expect(TK::RParen, "')' to close " + std::string(name.text) + ".bind_dynamic(...)");
  const std::string& dynamic_name = std::get<DynamicDim>(constant->second).name;
  const int64_t extent = tensor->shape[static_cast<size_t>(dim)];
  auto bound = jit_dynamic_bindings_.find(dynamic_name);
  if (bound != jit_dynamic_bindings_.end() && bound->second != extent) {
    fail(span_of(name), what + ": dimension " + std::to_string(dim) + " of '" +
                            std::string(name.text) + "' is " + std::to_string(extent) + ", but " +
                            dynamic_name + " is " + std::to_string(bound->second) +
                            " in this call");
  }
  jit_dynamic_bindings_.emplace(dynamic_name, extent);
  dynamic_bindings_ = &jit_dynamic_bindings_;
  return true;
}

std::optional<size_t> Parser::find_jit_helper(std::string_view name) const {
  for (size_t i = 0; i < jit_functions_.size(); ++i) {
    if (jit_functions_[i].name == name) return i;
  }
  return std::nullopt;
}

Value Parser::parse_jit_helper_call(size_t helper, const Token& name) {
  const Span span = span_of(name);
  JitSignature& h = jit_functions_[helper];
  // A @pl.jit.host orchestrator dispatches @pl.jit functions (per-device orchestrations) to its
  // ranks with device=r; anything else calls @pl.jit.incore kernels only.
  const bool dispatch = h.kind == JitKind::Entry && jit_host_entry_;
  if (h.kind == JitKind::Host) {
    fail(span, "'" + h.name + "' is a @pl.jit.host orchestrator; call it from Python");
  }
  if (h.kind == JitKind::Entry && !dispatch) {
    fail(span, "'" + h.name +
                   "' is a @pl.jit function; a @pl.jit function calls @pl.jit.incore helpers and "
                   "pl ops only (a @pl.jit.host orchestrator dispatches it with device=r)");
  }
  auto label = [&h] { return "'" + h.name + "'"; };
  std::vector<CallArg> call_args = parse_call_args(label());
  std::vector<ExprPtr> args;
  ExprPtr device;
  for (const CallArg& a : call_args) {
    if (dispatch && a.keyword == "device") {
      device = expect_expr(a.value, [&] { return "device= of " + label(); });
      continue;
    }
    if (!a.keyword.empty()) {
      fail(a.keyword_span, "@pl.jit.incore helper " + label() + " takes positional arguments");
    }
    args.push_back(expect_expr(
        a.value, [&] { return "argument " + std::to_string(args.size() + 1) + " of " + label(); }));
  }
  if (args.size() != h.params.size()) {
    fail(span, label() + " takes " + std::to_string(h.params.size()) + " argument(s), got " +
                   std::to_string(args.size()));
  }
  std::vector<TypePtr> types;
  for (size_t i = 0; i < args.size(); ++i) {
    const JitParam& p = h.params[i];
    const TypePtr& given = args[i]->type();
    auto where = [&] {
      return " in argument " + std::to_string(i + 1) + " ('" + std::string(p.name) + "') of " +
             label();
    };
    if (p.is_tensor) {
      const auto* tensor = given->as<ir::TensorType>();
      if (!tensor) {
        fail(call_args[i].value.span,
             "expected a tensor, got " + ir::type_to_string(given) + where());
      }
      TypePtr type = ir::tensor_type(tensor->shape, tensor->dtype);
      if (p.annotated && !same_shape_dtype(p.annotated, type)) {
        fail(call_args[i].value.span, "expected " + ir::type_to_string(p.annotated) + ", got " +
                                          ir::type_to_string(type) + where());
      }
      types.push_back(std::move(type));
    } else {
      TypePtr want = ir::scalar_type(p.scalar_dtype);
      if (!argument_fits(want, given)) {
        fail(call_args[i].value.span, "expected " + ir::type_to_string(want) + ", got " +
                                          ir::type_to_string(given) + where());
      }
      types.push_back(std::move(want));
    }
  }
  if (h.in_progress) {
    fail(span, label() +
                   " calls itself (directly or through other helpers); recursion is not "
                   "supported");
  }
  if (!h.signature) {
    // First call: the helper is specialised on these argument types and parsed now, since its
    // return statement types this call.
    FunctionSignature sig;
    sig.name = h.name;
    sig.type = dispatch ? ir::FunctionType::Orchestration : ir::FunctionType::InCore;
    sig.span = h.span;
    sig.body_start = h.body_start;
    for (size_t i = 0; i < types.size(); ++i) {
      sig.params.push_back(
          ir::Param{ir::make_var(std::string(h.params[i].name), types[i], h.params[i].span),
                    h.params[i].direction});
    }
    const size_t index = signatures_.size();
    signatures_.push_back(std::move(sig));
    calls_.emplace_back();
    h.signature = index;
    h.first_call = span;
    h.in_progress = true;
    // The caller's body state, restored once the helper is parsed.
    BodyState caller = take_body_state();
    const bool saved_host = jit_host_entry_;
    jit_host_entry_ = false;  // the dispatched function calls kernels
    jit_helper_functions_.push_back(parse_jit_body(index));
    jit_host_entry_ = saved_host;
    restore_body_state(std::move(caller));
    h.in_progress = false;
  } else {
    const FunctionSignature& sig = signatures_[*h.signature];
    for (size_t i = 0; i < types.size(); ++i) {
      if (!same_shape_dtype(sig.params[i].var->type(), types[i])) {
        fail(call_args[i].value.span,
             "argument " + std::to_string(i + 1) + " of " + label() + " is " +
                 ir::type_to_string(types[i]) + " here but " +
                 ir::type_to_string(sig.params[i].var->type()) + " in its first call (line " +
                 std::to_string(h.first_call.line) +
                 "); a @pl.jit.incore helper has one specialisation per program, so give every "
                 "call the same shapes");
      }
    }
  }
  const FunctionSignature& sig = signatures_[*h.signature];
  TypePtr type =
      sig.return_types.size() == 1 ? sig.return_types[0] : ir::tuple_type(sig.return_types);
  ExprPtr call = ir::make_node<ir::Call>(ir::CallKind::Function, sig.name, std::move(args),
                                         ir::Attrs{}, type, span);
  // Without device= a dispatch runs on rank 0 (the host plan's rule, driver/host_plan.cpp).
  if (device) call = with_device(call, device, span);
  return expr_value(call, span);
}

ir::ProgramPtr Parser::parse_jit_program(std::string_view entry, const JitArguments& arguments) {
  while (!at(TK::EndOfFile)) {
    if (at(TK::Newline) || at(TK::Dedent) || at(TK::Indent)) {
      advance();
      continue;
    }
    parse_jit_signature();
  }
  std::optional<size_t> found = find_jit_helper(entry);
  if (!found) {
    throw CompileError(Span{}, "no @pl.jit function named '" + std::string(entry) + "'");
  }
  const JitSignature& e = jit_functions_[*found];
  jit_host_entry_ = e.kind == JitKind::Host;
  if (e.kind == JitKind::Incore) {
    fail(e.span, "'" + e.name +
                     "' is a @pl.jit.incore helper; it runs when a @pl.jit function "
                     "calls it");
  }
  FunctionSignature sig;
  sig.name = e.name;
  sig.type = ir::FunctionType::Orchestration;
  sig.span = e.span;
  sig.body_start = e.body_start;
  for (const JitParam& p : e.params) {
    auto it = arguments.find(p.name);
    if (it == arguments.end()) {
      fail(p.span,
           "the specialisation gives no argument for parameter '" + std::string(p.name) + "'");
    }
    if (p.is_tensor) {
      const auto* t = std::get_if<JitTensorArgument>(&it->second);
      if (!t) fail(p.span, "parameter '" + std::string(p.name) + "' is a tensor; got a scalar");
      if (t->shape.empty())
        fail(p.span, "the tensor for '" + std::string(p.name) + "' has no dimensions");
      for (int64_t d : t->shape) {
        if (d <= 0) {
          fail(p.span, "the tensor for '" + std::string(p.name) + "' has shape " +
                           ir::shape_to_string(t->shape) + "; dimensions must be positive");
        }
      }
      if (!ir::shape_bytes(t->shape, t->dtype)) {
        fail(p.span, "the tensor for '" + std::string(p.name) + "' is too large");
      }
      TypePtr type = ir::tensor_type(t->shape, t->dtype);
      TypePtr annotated = p.annotated;
      if (annotated && !p.dynamic_dims.empty()) {
        std::vector<int64_t> shape = annotated->as<ir::TensorType>()->shape;
        for (const DynamicDimAt& d : p.dynamic_dims) {
          if (d.dim >= shape.size() || d.dim >= t->shape.size()) continue;
          shape[d.dim] = t->shape[d.dim];
          // The first parameter's extent gives the name its value.
          jit_dynamic_bindings_.emplace(d.name,
                                        solve_dynamic_dim(d, t->shape[d.dim], p.span, sig.name));
        }
        annotated = ir::tensor_type(shape, annotated->as<ir::TensorType>()->dtype);
      }
      if (annotated && !same_shape_dtype(annotated, type)) {
        fail(p.span, "parameter '" + std::string(p.name) + "' is declared " +
                         ir::type_to_string(p.annotated) + " but the argument is " +
                         ir::type_to_string(type));
      }
      sig.params.push_back(ir::Param{ir::make_var(std::string(p.name), type, p.span), p.direction});
    } else {
      const auto* c = std::get_if<Constant>(&it->second);
      if (!c) fail(p.span, "parameter '" + std::string(p.name) + "' is a scalar; got a tensor");
      constants_[std::string(p.name)] = jit_scalar_constant(p, *c);
    }
  }
  for (const auto& [name, unused] : arguments) {
    (void)unused;
    bool known = false;
    for (const JitParam& p : e.params) known = known || p.name == name;
    if (!known) {
      fail(e.span, "the specialisation gives an argument for '" + name +
                       "', which is not a "
                       "parameter of '" +
                       e.name + "'");
    }
  }
  signatures_.push_back(std::move(sig));
  calls_.emplace_back();
  ir::FunctionPtr entry_function = parse_jit_body(signatures_.size() - 1);
  if (jit_host_entry_) {
    ir::FunctionAttrs attrs = entry_function->attrs;
    attrs.level = "HOST";
    attrs.role = "Orchestrator";
    const ir::Function& f = *entry_function;
    entry_function = ir::make_node<ir::Function>(f.name, f.type, f.params, f.return_types, f.body,
                                                 f.span, std::move(attrs));
  }

  auto info = std::make_shared<ir::SourceInfo>();
  info->file_name = std::string(file_name_);
  info->text = std::string(text_);
  info->line_offset = line_offset_;
  // Helpers first, in the order of their first calls, then the entry: the layout of a
  // hand-written program whose kernels precede main.
  std::vector<ir::FunctionPtr> functions = std::move(jit_helper_functions_);
  functions.push_back(std::move(entry_function));
  return ir::make_node<ir::Program>(e.name, std::move(functions), std::move(info));
}

}  // namespace pypto::frontend::detail
