// Functions defined outside the program class and called by name from its functions:
// a module-level @pl.function is added to the program (once, however many functions call it)
// and called like a method; the body of a @pl.inline or @pl.jit.inline function is expanded at
// each call site, its statements placed before the statement that calls it and its return value
// standing for the call. Helpers come from the file being parsed (parse_module finds them in
// order) or, for a class or jit function parsed on its own, from Python (add_helpers), each with
// its own file, constants and the helpers its own scope sees.
#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

std::string helper_label(const ExternalHelper& h) {
  return (h.kind == HelperKind::Function ? "external function '" : "inline function '") + h.name +
         "'";
}

// What an inline parameter's annotation asks of its argument.
struct InlineParam {
  std::string_view name;
  Span span;
  enum class Want : uint8_t { Anything, AnyTensor, AnyTile, Exact } want = Want::Anything;
  TypePtr type;  // Exact: a tensor or tile of this shape and dtype, or a scalar of this dtype
};

}  // namespace

void Parser::add_helpers(const Helpers& helpers) {
  const size_t first = helpers_.size();
  for (const HelperSource& source : helpers.sources) {
    ExternalHelper h;
    h.name = source.name;
    h.kind = source.kind;
    h.own_tokens = true;
    auto text = helpers.file_texts.find(source.file_name);
    if (text == helpers.file_texts.end()) {
      throw CompileError(
          Span{}, "no text given for '" + source.file_name + "', the file of " + helper_label(h));
    }
    h.file_name = text->first;
    h.file_text = text->second;
    h.first_line = source.first_line;
    // Lines of the program's own file are counted as the program's are, so spans in the IR
    // refer to its text.
    h.line_shift = h.file_name == file_name_ ? line_offset_ : 0;
    h.constants = source.constants;
    for (const auto& [name, index] : source.scope) h.scope.emplace(name, first + index);
    helpers_.push_back(std::move(h));
  }
  for (const auto& [name, index] : helpers.scope) module_scope_[name] = first + index;
}

void Parser::prepare_helper_tokens(ExternalHelper& h) {
  if (h.lexed) return;
  size_t start = 0;
  for (int32_t line = 1; line < h.first_line && start != std::string_view::npos; ++line) {
    start = h.file_text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (h.first_line < 1 || start == std::string_view::npos || start >= h.file_text.size()) {
    throw CompileError(Span{}, helper_label(h) + " is not at line " + std::to_string(h.first_line) +
                                   " of " + std::string(h.file_name) +
                                   " (was the file changed after it was loaded?)");
  }
  LexOptions options;
  options.indented_start = true;
  options.first_statement_only = true;
  const int32_t shift = h.first_line - 1 - h.line_shift;
  try {
    h.tokens = tokenize(h.file_text.substr(start), options);
  } catch (const CompileError& e) {
    Span at = e.span();
    at.line += h.first_line - 1;
    throw support::make_parse_error(h.file_name, h.file_text, 0, CompileError(at, e.what()));
  }
  for (Token& t : h.tokens) t.line += shift;
  h.lexed = true;
  // A function's body may call inline functions, whose locals must not take its names.
  if (h.kind == HelperKind::Function) note_token_names(h.tokens);
}

bool Parser::register_module_helper() {
  const size_t start = pos_;
  std::optional<HelperKind> kind;
  while (at(TK::At)) {
    advance();
    if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).kind == TK::Name) {
      const std::string_view what = peek_token(2).text;
      const TK after = peek_token(3).kind;
      if (what == "function" && (after == TK::Newline || after == TK::LParen)) {
        kind = HelperKind::Function;
      } else if (what == "inline" && after == TK::Newline) {
        kind = HelperKind::Inline;
      } else if (what == "jit" && after == TK::Dot && peek_token(4).text == "inline" &&
                 peek_token(5).kind == TK::Newline) {
        kind = HelperKind::JitInline;
      }
    }
    while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
    if (at(TK::Newline)) advance();
  }
  if (!kind || !at(TK::KwDef) || peek_token(1).kind != TK::Name) {
    pos_ = start;
    return false;
  }
  ExternalHelper h;
  h.name = std::string(peek_token(1).text);
  h.kind = *kind;
  h.start = start;
  h.file_name = file_name_;
  h.file_text = text_;
  module_scope_[h.name] = helpers_.size();  // a later definition of the name replaces it
  helpers_.push_back(std::move(h));
  skip_statement();
  return true;
}

bool Parser::register_inline_method() {
  // `@pl.function(type=pl.FunctionType.Inline)`, or `Spmd` with `attrs={"core_num": N}`: the
  // decorator's line names the kind.
  bool is_inline = false, is_spmd = false;
  std::optional<int64_t> core_num;
  const Span decorator_span = here();
  for (size_t ahead = 0;
       peek_token(ahead).kind != TK::Newline && peek_token(ahead).kind != TK::EndOfFile; ++ahead) {
    const bool kind =
        peek_token(ahead).text == "FunctionType" && peek_token(ahead + 1).kind == TK::Dot;
    is_inline = is_inline || (kind && peek_token(ahead + 2).text == "Inline");
    is_spmd = is_spmd || (kind && peek_token(ahead + 2).text == "Spmd");
    if (peek_token(ahead).kind == TK::String && string_literal(peek_token(ahead)) == "core_num" &&
        peek_token(ahead + 1).kind == TK::Colon && peek_token(ahead + 2).kind == TK::Int) {
      core_num = std::stoll(std::string(peek_token(ahead + 2).text));
    }
  }
  if (!is_inline && !is_spmd) return false;
  if (is_spmd && (!core_num || *core_num < 1)) {
    fail(decorator_span,
         "a pl.FunctionType.Spmd function needs attrs={\"core_num\": N}, N >= 1: the number of "
         "blocks its kernel is launched over");
  }
  const size_t start = pos_;
  while (at(TK::At)) {
    while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
    if (at(TK::Newline)) advance();
  }
  if (!at(TK::KwDef) || peek_token(1).kind != TK::Name) expected("'def' after @pl.function");
  ExternalHelper h;
  h.name = std::string(peek_token(1).text);
  h.kind = HelperKind::Inline;
  h.spmd_blocks = is_spmd ? core_num : std::nullopt;
  h.start = start;
  h.file_name = file_name_;
  h.file_text = text_;
  if (inline_methods_.count(h.name) ||
      std::any_of(signatures_.begin(), signatures_.end(),
                  [&](const auto& s) { return s.name == h.name; })) {
    fail(span_of(peek_token(1)), "duplicate function '" + h.name + "'");
  }
  inline_methods_[h.name] = helpers_.size();
  helpers_.push_back(std::move(h));
  skip_statement();
  return true;
}

std::optional<size_t> Parser::find_helper(std::string_view name) const {
  auto it = scope_->find(name);
  if (it == scope_->end()) return std::nullopt;
  return it->second;
}

Value Parser::parse_helper_call(size_t helper, const Token& name) {
  if (helpers_[helper].kind != HelperKind::Function) return expand_inline_call(helper, name);
  if (!jit_functions_.empty()) {
    fail(span_of(name), "'" + std::string(name.text) +
                            "' is a @pl.function; a @pl.jit function calls @pl.jit.incore and "
                            "@pl.jit.inline helpers");
  }
  return parse_external_function_call(helper, name);
}

Value Parser::parse_external_function_call(size_t helper, const Token& name) {
  const Span span = span_of(name);
  ExternalHelper& h = helpers_[helper];
  for (const FunctionSignature& other : signatures_) {
    if (other.name != h.name || other.helper == helper) continue;
    if (other.helper) {
      fail(span, "conflicting external functions named '" + h.name +
                     "': the program calls two different @pl.function functions of that "
                     "name; rename one of them");
    }
    fail(span, "external function '" + h.name + "' conflicts with the program's function '" +
                   h.name + "' (line " + std::to_string(other.span.line + line_offset_) +
                   "); rename one of them");
  }
  if (!h.signature) {
    const size_t index = signatures_.size();
    in_helper_source(helper, [&] { parse_function_signature(/*is_method=*/false); });
    signatures_.back().helper = helper;
    calls_.emplace_back();
    h.signature = index;
  }
  size_t callee = *h.signature;
  const std::string label = "'" + std::string(name.text) + "'";
  std::vector<CallArg> call_args = parse_call_args(label);
  std::vector<ExprPtr> args;
  for (const CallArg& a : call_args) {
    if (!a.keyword.empty()) fail(a.keyword_span, label + " takes positional arguments");
    args.push_back(expect_expr(
        a.value, [&] { return "argument " + std::to_string(args.size() + 1) + " of " + label; }));
  }
  if (args.size() != signatures_[callee].params.size()) {
    fail(span, label + " takes " + std::to_string(signatures_[callee].params.size()) +
                   " argument(s), got " + std::to_string(args.size()));
  }
  std::vector<Span> arg_spans;
  for (const CallArg& a : call_args) arg_spans.push_back(a.value.span);
  if (signatures_[callee].is_template) callee = specialise_call(callee, args, arg_spans, span);
  read_returns_of(callee, span);
  const FunctionSignature& sig = signatures_[callee];
  // Leading parameters for valid-region names take their values from the arguments.
  const size_t leading = sig.valid_symbols.size();
  for (size_t i = 0; i < args.size(); ++i) {
    const TypePtr& want = sig.params[leading + i].var->type();
    if (!argument_fits(want, args[i]->type())) {
      fail(call_args[i].value.span, "expected " + ir::type_to_string(want) + ", got " +
                                        ir::type_to_string(args[i]->type()) + " in argument " +
                                        std::to_string(i + 1) + " of " + label);
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
                                            ir::Attrs{}, type, span),
                    span);
}

void Parser::note_token_names(const std::vector<Token>& tokens) {
  for (const Token& t : tokens) {
    if (t.kind == TK::Name) taken_names_.emplace(t.text);
  }
}

std::string Parser::fresh_inline_name(std::string_view name) {
  if (!token_names_noted_) {
    // Every name the program's own code may bind: an inline local never shares one.
    note_token_names(tokens_);
    token_names_noted_ = true;
  }
  std::string candidate(name);
  for (int n = 1; taken_names_.count(candidate); ++n) {
    candidate = std::string(name) + "_" + std::to_string(n);
  }
  taken_names_.insert(candidate);
  return candidate;
}

VarPtr Parser::bind_inline_local(std::string_view name, const TypePtr& type, Span span) {
  auto& aliased = inline_frame_->aliased_params;
  auto alias = std::find(aliased.begin(), aliased.end(), name);
  auto it = vars_.find(name);
  if (it != vars_.end() && alias == aliased.end()) {  // a local of the body already
    if (!same_shape_dtype(it->second->type(), type)) {
      fail(span, "cannot rebind '" + std::string(name) + "' of type " +
                     ir::type_to_string(it->second->type()) + " to a value of type " +
                     ir::type_to_string(type) + " (a variable keeps its shape and dtype)");
    }
    return it->second;
  }
  // New, or a parameter that still stands for the caller's variable: assigning it must not
  // change the caller's.
  if (alias != aliased.end()) aliased.erase(alias);
  VarPtr var = ir::make_var(fresh_inline_name(name), type, span);
  const std::string& key = synthesized_names_.emplace_back(name);
  vars_.erase(name);
  vars_.emplace(key, var);
  return var;
}

Value Parser::expand_inline_call(size_t helper, const Token& name) {
  const Span span = span_of(name);
  ExternalHelper& h = helpers_[helper];
  const std::string label = "inline function '" + h.name + "'";
  if (h.expanding) {
    fail(span, label +
                   " calls itself (directly or through other inline functions); recursion "
                   "is not supported");
  }
  std::vector<CallArg> call_args = parse_call_args(label);
  std::vector<ExprPtr> args;
  for (const CallArg& a : call_args) {
    if (!a.keyword.empty()) fail(a.keyword_span, label + " takes positional arguments");
    args.push_back(expect_expr(
        a.value, [&] { return "argument " + std::to_string(args.size() + 1) + " of " + label; }));
  }

  // Its signature, read in its own source.
  std::vector<InlineParam> params;
  size_t body_start = 0;
  in_helper_source(helper, [&] {
    while (at(TK::At)) skip_statement();
    expect(TK::KwDef, "'def' after the decorator");
    expect_name("a function name after 'def'");
    expect(TK::LParen, "'(' after the function name");
    if (at_name("self")) {  // an Inline method of the program
      advance();
      if (at(TK::Comma)) advance();
    }
    while (!at(TK::RParen)) {
      if (at(TK::Star) || at(TK::DoubleStar)) fail_here("variadic parameters are not supported");
      const Token& pname = expect_name("a parameter name");
      InlineParam p;
      p.name = pname.text;
      p.span = span_of(pname);
      if (at(TK::Colon)) {
        advance();
        if (at_name("pl") && peek_token(1).kind == TK::Dot &&
            (peek_token(2).text == "Out" || peek_token(2).text == "InOut") &&
            peek_token(3).kind == TK::LBracket) {
          for (int i = 0; i < 4; ++i) advance();  // an inline body writes what it is given
        }
        const bool bare = at_name("pl") && peek_token(1).kind == TK::Dot &&
                          (peek_token(2).text == "Tensor" || peek_token(2).text == "Tile") &&
                          peek_token(3).kind != TK::LBracket && peek_token(3).kind != TK::LParen;
        if (bare) {
          p.want = peek_token(2).text == "Tensor" ? InlineParam::Want::AnyTensor
                                                  : InlineParam::Want::AnyTile;
          for (int i = 0; i < 3; ++i) advance();
        } else if (at_name("pl") && peek_token(1).kind == TK::Dot &&
                   (peek_token(2).text == "Tensor" || peek_token(2).text == "Tile" ||
                    peek_token(2).text == "Scalar")) {
          p.want = InlineParam::Want::Exact;
          p.type = parse_type();
        } else {
          Value v = parse_value();
          if (v.kind != Value::Kind::DType) {
            fail(v.span,
                 "expected a type (pl.Tensor[...], pl.Tile[...], pl.Scalar[...] or a "
                 "dtype) as the annotation of parameter '" +
                     std::string(p.name) + "'");
          }
          p.want = InlineParam::Want::Exact;
          p.type = ir::scalar_type(v.dtype);
        }
        if (at(TK::RBracket)) advance();  // the ']' of pl.Out[...] / pl.InOut[...]
      }
      if (at(TK::Assign)) fail_here("default parameter values are not supported");
      params.push_back(std::move(p));
      if (!at(TK::Comma)) break;
      advance();
    }
    expect(TK::RParen, "')' after the parameters");
    if (at(TK::Arrow)) {  // the result is the return statement's value: not read
      int brackets = 0;
      while (!at(TK::EndOfFile) && !(brackets == 0 && at(TK::Colon))) {
        if (at(TK::LBracket) || at(TK::LParen)) ++brackets;
        if (at(TK::RBracket) || at(TK::RParen)) --brackets;
        advance();
      }
    }
    expect(TK::Colon, "':' after the function signature");
    body_start = pos_;
  });

  if (args.size() != params.size()) {
    std::string names;
    for (const InlineParam& p : params) names += (names.empty() ? "" : ", ") + std::string(p.name);
    fail(span, label + " takes " + std::to_string(params.size()) + " argument(s) (" + names +
                   "), got " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const InlineParam& p = params[i];
    const TypePtr& given = args[i]->type();
    auto where = [&] {
      return " in argument " + std::to_string(i + 1) + " ('" + std::string(p.name) + "') of " +
             label;
    };
    const Span at_arg = call_args[i].value.span;
    if (p.want == InlineParam::Want::AnyTensor && !given->as<ir::TensorType>()) {
      fail(at_arg, "expected a tensor, got " + ir::type_to_string(given) + where());
    }
    if (p.want == InlineParam::Want::AnyTile && !given->as<ir::TileType>()) {
      fail(at_arg, "expected a tile, got " + ir::type_to_string(given) + where());
    }
    if (p.want == InlineParam::Want::Exact) {
      const bool fits = p.type->as<ir::ScalarType>() ? argument_fits(p.type, given)
                                                     : same_shape_dtype(p.type, given);
      if (!fits) {
        fail(at_arg, "expected " + ir::type_to_string(p.type) + ", got " +
                         ir::type_to_string(given) + where());
      }
    }
  }

  // The body, parsed in a fresh name scope whose parameters stand for the arguments.
  std::vector<StmtPtr> stmts;
  ExprPtr result;
  auto saved_vars = std::move(vars_);
  auto saved_uses = std::move(var_uses_);
  auto saved_pending = std::move(inline_stmts_);
  const auto* saved_returns = return_types_;
  auto* saved_inferred = inferred_returns_;
  const bool saved_known = returns_known_;
  InlineFrame* saved_frame = inline_frame_;
  const Constants saved_constants = constants_;
  auto saved_local_constants = std::move(local_constants_);
  vars_.clear();
  local_constants_.clear();
  var_uses_.clear();
  inline_stmts_.clear();
  InlineFrame frame;
  std::vector<TypePtr> returns;
  h.expanding = true;
  try {
    in_helper_source(helper, [&] {
      for (size_t i = 0; i < params.size(); ++i) {
        const std::string key(params[i].name);
        constants_.erase(key);
        if (auto c = to_constant(fold_constant(args[i]).exact())) {
          constants_[key] = *c;  // a constant stays one (it may size a shape)
        } else if (VarPtr var = std::dynamic_pointer_cast<const ir::Var>(args[i])) {
          vars_[synthesized_names_.emplace_back(key)] = var;
          frame.aliased_params.push_back(key);
        } else {
          VarPtr v = ir::make_var(fresh_inline_name(key), args[i]->type(), params[i].span);
          stmts.push_back(ir::make_node<ir::AssignStmt>(v, args[i], span));
          vars_[synthesized_names_.emplace_back(key)] = v;
        }
      }
      inline_frame_ = &frame;
      return_types_ = &returns;
      inferred_returns_ = &returns;
      returns_known_ = false;
      pos_ = body_start;
      Block body = parse_block(BlockKind::Function, "function definition");
      if (!body.ends_with_return || body.stmts.empty()) {
        fail(span_of(tokens_[body_start > 0 ? body_start - 1 : 0]),
             label + " must end with a return statement: its value is the value of the call");
      }
      const auto* ret = body.stmts.back()->as<ir::ReturnStmt>();
      for (size_t i = 0; i + 1 < body.stmts.size(); ++i) {
        if (body.stmts[i]->as<ir::ReturnStmt>()) {
          fail(body.stmts[i]->span(), "a return in " + label + " must be its last statement");
        }
      }
      if (!ret || ret->values.empty()) {
        fail(body.stmts.back()->span(), label + " returns no value; the call needs one");
      }
      result = ret->values.size() == 1 ? ret->values[0] : ir::make_tuple(ret->values, span);
      body.stmts.pop_back();
      for (auto& s : body.stmts) stmts.push_back(std::move(s));
    });
  } catch (...) {
    h.expanding = false;
    throw;
  }
  h.expanding = false;
  vars_ = std::move(saved_vars);
  var_uses_ = std::move(saved_uses);
  inline_stmts_ = std::move(saved_pending);
  return_types_ = saved_returns;
  inferred_returns_ = saved_inferred;
  returns_known_ = saved_known;
  inline_frame_ = saved_frame;
  constants_ = saved_constants;
  local_constants_ = std::move(saved_local_constants);
  if (h.spmd_blocks) {
    // A Spmd function is an SPMD dispatch of the kernel it calls: `with pl.spmd(core_num):`
    // around its body.
    inline_stmts_.push_back(task_options_stmt(nullptr, std::nullopt, span));
    if (StmtPtr blocks = task_blocks_stmt(ir::make_int(*h.spmd_blocks, span), span))
      inline_stmts_.push_back(std::move(blocks));
  }
  for (auto& s : stmts) inline_stmts_.push_back(std::move(s));
  return expr_value(result, span);
}

// The statements of the inline calls in a statement go before it, in the block it is in.
void Parser::parse_statement(Block& block, BlockKind kind) {
  auto outer = std::move(inline_stmts_);
  inline_stmts_.clear();
  const size_t first = block.stmts.size();
  parse_statement_body(block, kind);
  block.stmts.insert(block.stmts.begin() + static_cast<std::ptrdiff_t>(first),
                     std::make_move_iterator(inline_stmts_.begin()),
                     std::make_move_iterator(inline_stmts_.end()));
  inline_stmts_ = std::move(outer);
}

void Parser::parse_simple_statement(Block& block, BlockKind kind, bool allow_semicolon) {
  auto outer = std::move(inline_stmts_);
  inline_stmts_.clear();
  const size_t first = block.stmts.size();
  parse_simple_statement_body(block, kind, allow_semicolon);
  block.stmts.insert(block.stmts.begin() + static_cast<std::ptrdiff_t>(first),
                     std::make_move_iterator(inline_stmts_.begin()),
                     std::make_move_iterator(inline_stmts_.end()));
  inline_stmts_ = std::move(outer);
}

}  // namespace pypto::frontend::detail
