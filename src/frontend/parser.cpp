// The parser's entry points (parse_module, parse_program) and the module and program level:
// skipping what is not a program, module constants, the @pl.program class, function signatures
// and bodies, the check that no function calls itself, and the end-of-statement check and token
// descriptions of syntax errors. The parser state class, shared by every parser_*.cpp file, is
// in parser_state.h.
#include "pypto/frontend/parser.h"

#include "parser_state.h"

namespace pypto::frontend {

namespace detail {

std::vector<ir::ProgramPtr> Parser::parse_module() {
  std::vector<ir::ProgramPtr> programs;
  while (!at(TK::EndOfFile)) {
    if (at(TK::Newline) || at(TK::Dedent) || at(TK::Indent)) {
      advance();
      continue;
    }
    if (at(TK::At)) {
      if (register_module_helper()) continue;
      bool is_program = skip_decorators();
      if (at(TK::KwClass) && is_program) {
        programs.push_back(parse_class());
      } else {
        skip_statement();
      }
      continue;
    }
    if (at(TK::Name) && try_constant_assignment()) continue;
    skip_statement();
  }
  std::string never_assigned;
  for (const auto& [name, assigned] : pinned_) {
    if (!assigned) never_assigned += (never_assigned.empty() ? "'" : ", '") + name + "'";
  }
  if (!never_assigned.empty()) {
    std::string defined;
    for (const auto& [name, value] : constants_) {
      if (!pinned_.count(name)) defined += (defined.empty() ? "" : ", ") + name;
    }
    throw CompileError(Span{}, "cannot override " + never_assigned +
                                   ": the file assigns no such module constant (its constants: " +
                                   (defined.empty() ? "none" : defined) + ")");
  }
  return programs;
}

ir::ProgramPtr Parser::parse_single_program() {
  while (at(TK::Newline)) advance();
  if (at(TK::At)) skip_decorators();
  if (!at(TK::KwClass)) fail_here("expected a class definition ('class Name:')");
  ir::ProgramPtr program = parse_class();
  while (at(TK::Newline) || at(TK::Dedent)) advance();
  if (!at(TK::EndOfFile)) fail_here("unexpected statement after the program class");
  return program;
}

std::string Parser::describe(const Token& t) {
  switch (t.kind) {
    case TK::Name:
      return "name '" + std::string(t.text) + "'";
    case TK::Int:
    case TK::Float:
    case TK::Imaginary:
      return "number " + std::string(t.text);
    case TK::String:
      return "a string";
    case TK::Newline:
    case TK::Indent:
    case TK::Dedent:
    case TK::EndOfFile:
      return std::string(token_kind_description(t.kind));
    default:
      return "'" + std::string(t.text) + "'";
  }
}

void Parser::expect_end_of_statement() {
  if (at(TK::Newline)) {
    advance();
    return;
  }
  if (at(TK::Semicolon)) {
    advance();
    if (at(TK::Newline)) advance();
    return;
  }
  if (at(TK::DoubleStar) || at(TK::At) || at(TK::Amp) || at(TK::Pipe) || at(TK::Caret) ||
      at(TK::LShift) || at(TK::RShift) || at(TK::Tilde)) {
    fail_here("operator '" + std::string(cur().text) + "' is not supported in the DSL");
  }
  if (at(TK::KwIf)) fail_here("conditional expressions ('x if c else y') are not supported");
  if (at(TK::KwIs) || at(TK::KwIn)) {
    fail_here("operator '" + std::string(cur().text) + "' is not supported in the DSL");
  }
  expected("end of line");
}

void Parser::skip_statement() {
  while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
  if (at(TK::Newline)) advance();
  if (at(TK::Indent)) skip_indented_block();
}

void Parser::skip_indented_block() {
  int depth = 0;
  do {
    if (at(TK::Indent)) ++depth;
    if (at(TK::Dedent)) --depth;
    if (at(TK::EndOfFile)) return;
    advance();
  } while (depth > 0);
}

bool Parser::skip_decorators() {
  bool is_program = false;
  while (at(TK::At)) {
    advance();
    if (at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).kind == TK::Name &&
        peek_token(2).text == "program" &&
        (peek_token(3).kind == TK::Newline || peek_token(3).kind == TK::LParen)) {
      // `@pl.program` or `@pl.program(strict_ssa=...)`: the option's check is made per function.
      is_program = true;
    }
    while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
    if (at(TK::Newline)) advance();
  }
  return is_program;
}

bool Parser::try_constant_assignment() {
  std::vector<const Token*> targets;
  if (!parse_assignment_targets(targets)) return false;
  std::vector<std::string_view> names;
  for (const Token* t : targets) names.push_back(t->text);
  size_t rhs = pos_;
  std::vector<std::optional<Constant>> values;
  if (names.size() == 1) {
    if (auto dim = read_dynamic_dim_definition()) values.push_back(std::move(dim));
  }
  if (values.empty()) try {
      std::vector<Value> items;
      items.push_back(parse_value());
      while (at(TK::Comma)) {
        advance();
        if (at(TK::Newline)) break;
        items.push_back(parse_value());
      }
      if (!at(TK::Newline)) throw CompileError(here(), "not a constant assignment");
      if (items.size() == 1 && names.size() > 1 && items[0].kind == Value::Kind::Expr) {
        if (const auto* tuple = items[0].expr->as<ir::MakeTuple>()) {
          std::vector<Value> unpacked;
          for (const auto& e : tuple->elements) unpacked.push_back(expr_value(e, e->span()));
          items = std::move(unpacked);
        }
      }
      if (items.size() > 1 && names.size() == 1) {
        // `SHAPE = 64, 64` binds a tuple.
        std::vector<ExprPtr> elements;
        for (const Value& v : items) {
          if (v.kind != Value::Kind::Expr) throw CompileError(v.span, "not a constant tuple");
          elements.push_back(v.expr);
        }
        items.assign(1,
                     expr_value(ir::make_tuple(std::move(elements), items[0].span), items[0].span));
      }
      if (items.size() == names.size()) {
        for (const Value& v : items) values.push_back(constant_of(v));
      }
    } catch (const CompileError&) {
      values.clear();
    }
  if (values.size() != names.size()) values.assign(names.size(), std::nullopt);
  for (size_t i = 0; i < names.size(); ++i) {
    if (auto pinned = pinned_.find(names[i]); pinned != pinned_.end()) {
      pinned->second = true;  // keeps its pinned value
      continue;
    }
    auto it = constants_.find(names[i]);
    if (values[i]) {
      if (it != constants_.end()) {
        it->second = *values[i];
      } else {
        constants_.emplace(std::string(names[i]), *values[i]);
      }
    } else if (it != constants_.end()) {
      constants_.erase(it);
    }
  }
  pos_ = rhs;
  skip_statement();
  return true;
}

ir::ProgramPtr Parser::parse_class() {
  expect(TK::KwClass, "'class'");
  const Token& name = expect_name("a class name after 'class'");
  if (at(TK::LParen)) fail_here("a program class cannot have base classes");
  expect(TK::Colon, "':' after the class name");
  expect(TK::Newline, [&] { return "a new line after 'class " + std::string(name.text) + ":'"; });
  if (!at(TK::Indent)) expected("an indented class body");
  advance();

  signatures_.clear();
  inline_methods_.clear();
  for (ExternalHelper& h : helpers_) h.signature.reset();  // each program has its own copy
  // First pass: signatures only, so that functions may call functions defined after them.
  while (!at(TK::Dedent) && !at(TK::EndOfFile)) {
    if (at(TK::Newline)) {
      advance();
      continue;
    }
    if (at(TK::String)) {  // docstring
      advance();
      expect_end_of_statement();
      continue;
    }
    if (at(TK::KwPass)) {
      advance();
      expect_end_of_statement();
      continue;
    }
    if (at(TK::At)) {
      if (!register_inline_method()) parse_function_signature();
      continue;
    }
    if (at(TK::Indent)) fail_here("unexpected indent");
    if (at(TK::KwDef)) {
      fail_here("method '" + std::string(peek_token(1).text) +
                "' needs a @pl.function decorator, e.g. "
                "@pl.function(type=pl.FunctionType.InCore)");
    }
    fail_here("expected a @pl.function method in program class '" + std::string(name.text) +
              "', got " + describe(cur()));
  }
  if (at(TK::Dedent)) advance();
  const size_t end = pos_;

  calls_.assign(signatures_.size(), {});
  std::vector<ir::FunctionPtr> functions;
  functions.reserve(signatures_.size());
  // External functions called by the methods are added to signatures_ as they are met, and
  // parsed after the methods.
  // Templates (signatures with dynamic dimensions) are not functions themselves: calls add
  // their specialisations, which are read here like the rest.
  // The entry, when it is a template, is specialised on the tensors the program runs with once
  // the other functions are read.
  std::vector<ir::FunctionPtr> by_signature;
  size_t next = 0;
  auto read_functions = [&] {
    for (; next < signatures_.size(); ++next) {
      current_function_ = next;
      const FunctionSignature& sig = signatures_[next];
      if (sig.is_template) {
        by_signature.emplace_back();
      } else {
        by_signature.push_back(read_function_body(next));
      }
    }
  };
  read_functions();
  if (specialise_entry()) read_functions();
  check_recursion();
  check_unspecialised_templates();
  // In the order of the source: a template's specialisations where it is written.
  for (size_t i = 0; i < signatures_.size(); ++i) {
    const FunctionSignature& sig = signatures_[i];
    if (sig.specialisation_of) continue;
    if (!sig.is_template) functions.push_back(by_signature[i]);
    for (size_t s : sig.specialisations) functions.push_back(by_signature[s]);
  }
  pos_ = end;

  if (!source_) {
    auto info = std::make_shared<ir::SourceInfo>();
    info->file_name = std::string(file_name_);
    info->text = std::string(text_);
    info->line_offset = line_offset_;
    source_ = std::move(info);
  }
  return ir::make_node<ir::Program>(std::string(name.text), std::move(functions), source_);
}

void Parser::parse_function_signature(bool is_method, const DynamicBindings* bindings) {
  FunctionSignature sig;
  sig.decl_start = pos_;
  sig.is_method = is_method;
  // A first reading records where dynamic dimensions are named; a specialisation's reading
  // gives them its extents. Neither sees the variables of a body being parsed.
  std::vector<DynamicDimUse> dynamic_uses;
  std::vector<size_t> first_shapes;
  const DynamicBindings* saved_bindings = dynamic_bindings_;
  std::vector<DynamicDimUse>* saved_uses = dynamic_uses_;
  auto saved_vars = std::move(vars_);
  auto saved_constants = std::move(local_constants_);
  vars_.clear();
  local_constants_.clear();
  dynamic_bindings_ = bindings;
  dynamic_uses_ = bindings ? nullptr : &dynamic_uses;
  struct Restore {
    Parser& p;
    const DynamicBindings* bindings;
    std::vector<DynamicDimUse>* uses;
    decltype(vars_)& vars;
    decltype(local_constants_)& constants;
    ~Restore() {
      p.dynamic_bindings_ = bindings;
      p.dynamic_uses_ = uses;
      p.vars_ = std::move(vars);
      p.local_constants_ = std::move(constants);
    }
  } restore{*this, saved_bindings, saved_uses, saved_vars, saved_constants};
  bool has_function_decorator = false;
  while (at(TK::At)) {
    Span deco_span = here();
    advance();
    if (!(at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == "function")) {
      fail(deco_span, "unsupported decorator on a program method (expected @pl.function)");
    }
    advance();
    advance();
    if (has_function_decorator) fail(deco_span, "duplicate @pl.function decorator");
    has_function_decorator = true;
    parse_function_decorator(sig);
    expect(TK::Newline, "end of line after the decorator");
  }
  expect(TK::KwDef, "'def' after @pl.function");
  const Token& name = expect_name("a function name after 'def'");
  sig.name = std::string(name.text);
  sig.span = span_of(name);
  for (const auto& other : signatures_) {
    if (!bindings && other.name == sig.name) {
      fail(sig.span, "duplicate function '" + sig.name + "' (first defined on line " +
                         std::to_string(other.span.line + line_offset_) + ")");
    }
  }
  expect(TK::LParen, "'(' after the function name");
  // A host sub-worker is Python the host runs: PyPTO writes it without `self`.
  sig.attrs.host_python = is_method && !at_name("self") && sig.attrs.role == "SubWorker" &&
                          is_above_chip_level(sig.attrs.level);
  // A method's `self` is dropped, as PyPTO drops it; a method written without it (PyPTO's
  // printed passes do) takes its parameters as written.
  const bool has_self = is_method && !sig.attrs.host_python && at_name("self");
  if (has_self) advance();
  std::unordered_map<std::string_view, bool> seen;
  // The parameters after `self` each follow a comma; the first of a function without it does not.
  bool after_first = has_self;
  while (after_first ? at(TK::Comma) : !at(TK::RParen)) {
    if (after_first) {
      advance();
      if (at(TK::RParen)) break;
    }
    after_first = true;
    if (at(TK::Star) || at(TK::DoubleStar)) {
      fail_here("variadic parameters are not supported");
    }
    const Token& pname = expect_name("a parameter name");
    if (pname.text == "self") {
      fail(span_of(pname), "'self' must be the first parameter of '" + sig.name + "'");
    }
    if (!seen.emplace(pname.text, true).second) {
      fail(span_of(pname), "duplicate parameter '" + std::string(pname.text) + "'");
    }
    if (!at(TK::Colon)) {
      fail_here("parameter '" + std::string(pname.text) +
                "' needs a type annotation, e.g. 'x: pl.Tensor[[64, 64], pl.FP32]'");
    }
    advance();
    ir::ParamDirection direction = ir::ParamDirection::In;
    const size_t shapes_before = shapes_read_;
    // A kernel's tensor parameter may declare a partial valid region (parser_valid_shapes.cpp).
    reading_any_param_ = true;
    reading_kernel_param_ = sig.type == ir::FunctionType::InCore ||
                            sig.type == ir::FunctionType::Opaque ||
                            sig.type == ir::FunctionType::AIC || sig.type == ir::FunctionType::AIV;
    current_param_valid_.clear();
    TypePtr type;
    try {
      type = parse_param_type(direction);
    } catch (...) {
      reading_any_param_ = reading_kernel_param_ = false;
      throw;
    }
    reading_any_param_ = reading_kernel_param_ = false;
    finish_param_valid_shape(sig, pname.text);
    // Its own shape, when its type has one, is the first shape read for it.
    first_shapes.push_back(shapes_read_ > shapes_before ? shapes_before + 1 : 0);
    if (at(TK::Assign)) fail_here("default parameter values are not supported");
    sig.params.push_back(
        ir::Param{ir::make_var(std::string(pname.text), type, span_of(pname)), direction});
  }
  expect(TK::RParen, "')' after the parameters");
  if (at(TK::Arrow)) {
    advance();
    if (at(TK::KwNone)) {
      advance();
    } else {
      TypePtr ret = parse_type();
      if (const auto* tuple = ret->as<ir::TupleType>()) {
        sig.return_types = tuple->elements;
      } else {
        sig.return_types.push_back(ret);
      }
    }
  } else {
    sig.returns_from_body = !sig.attrs.host_python;  // a host sub-worker returns nothing here
  }
  expect(TK::Colon, "':' after function signature");
  sig.body_start = pos_;
  skip_block_body(
      [&] { return "function definition on line " + std::to_string(name.line + line_offset_); });
  if (bindings) {
    sig.bindings = *bindings;
  } else {
    note_dynamic_dims(sig, dynamic_uses, first_shapes);
  }
  signatures_.push_back(std::move(sig));
}

template <typename What>
void Parser::skip_block_body(const What& owner) {
  if (at(TK::Newline)) {
    advance();
    if (!at(TK::Indent)) expected("an indented block after " + text_of(owner));
    skip_indented_block();
    return;
  }
  while (!at(TK::Newline) && !at(TK::EndOfFile)) advance();
  if (at(TK::Newline)) advance();
}

// For parser_jit.cpp, which names the block's owner with a string.
template void Parser::skip_block_body<std::string>(const std::string&);

ir::FunctionPtr Parser::read_function_body(size_t index) {
  FunctionSignature& sig = signatures_[index];
  if (sig.body) return sig.body;  // read early, for a caller that needed its return types
  sig.body_in_progress = true;
  current_function_ = index;
  if (sig.attrs.host_python) {
    // Its body is Python the host runs (the Python package keeps the function): the IR has its
    // signature, which the host orchestrator's calls are checked against.
    sig.body =
        std::make_shared<const ir::Function>(sig.name, sig.type, sig.params, sig.return_types,
                                             ir::make_seq({}, sig.span), sig.span, sig.attrs);
  } else {
    sig.body = sig.helper ? in_helper_source(*sig.helper, [&] { return parse_function_body(sig); })
                          : parse_function_body(sig);
  }
  sig.body_in_progress = false;
  return sig.body;
}

void Parser::read_returns_of(size_t callee, Span call_span) {
  FunctionSignature& sig = signatures_[callee];
  if (!sig.returns_from_body || sig.body) return;
  if (sig.body_in_progress) {
    fail(call_span, "'" + sig.name +
                        "' is called before its return type is known (the call is inside its "
                        "own body); annotate it: def " +
                        sig.name + "(...) -> pl.Tensor[...]");
  }
  BodyState caller = take_body_state();
  read_function_body(callee);
  restore_body_state(std::move(caller));
}

Parser::BodyState Parser::take_body_state() {
  BodyState s{pos_,
              current_function_,
              std::move(vars_),
              std::move(var_uses_),
              std::move(local_constants_),
              std::move(loops_),
              std::move(inline_stmts_),
              return_types_,
              inferred_returns_,
              returns_known_,
              strict_ssa_,
              in_manual_scope_,
              dynamic_bindings_};
  vars_.clear();
  var_uses_.clear();
  local_constants_.clear();
  loops_.clear();
  inline_stmts_.clear();
  in_manual_scope_ = false;
  return s;
}

void Parser::restore_body_state(BodyState&& s) {
  pos_ = s.pos;
  current_function_ = s.function;
  vars_ = std::move(s.vars);
  var_uses_ = std::move(s.var_uses);
  local_constants_ = std::move(s.local_constants);
  loops_ = std::move(s.loops);
  inline_stmts_ = std::move(s.inline_stmts);
  return_types_ = s.return_types;
  inferred_returns_ = s.inferred_returns;
  returns_known_ = s.returns_known;
  strict_ssa_ = s.strict_ssa;
  in_manual_scope_ = s.in_manual_scope;
  dynamic_bindings_ = s.dynamic_bindings;
}

ir::FunctionPtr Parser::parse_function_body(FunctionSignature& sig) {
  vars_.clear();
  local_constants_.clear();
  dynamic_bindings_ = sig.specialisation_of ? &sig.bindings : nullptr;
  for (const auto& p : sig.params) vars_[p.var->name] = p.var;
  return_types_ = &sig.return_types;
  // Without an annotation the first return statement gives the types.
  inferred_returns_ = sig.returns_from_body ? &sig.return_types : nullptr;
  returns_known_ = false;
  // A callee's body may be read in the middle of its caller's (to learn its return types): the
  // caller's blocks come back after it.
  struct RestoreSsa {
    Parser& p;
    bool strict;
    decltype(ssa_blocks_) blocks;
    ~RestoreSsa() {
      p.strict_ssa_ = strict;
      p.ssa_blocks_ = std::move(blocks);
    }
  } restore_ssa{*this, strict_ssa_, std::move(ssa_blocks_)};
  strict_ssa_ = sig.attrs.strict_ssa;
  ssa_blocks_.clear();
  SsaBlock function_block(*this);
  for (const auto& p : sig.params) ssa_blocks_.back().emplace_back(p.var->name, p.var->span().line);
  pos_ = sig.body_start;
  Block body = parse_block(BlockKind::Function, "function definition");
  inferred_returns_ = nullptr;
  if (!sig.returns_from_body && !sig.return_types.empty() && !body.ends_with_return) {
    fail(sig.span, "function '" + sig.name +
                       "' declares a return type but does not end with a "
                       "return statement");
  }
  dynamic_bindings_ = nullptr;
  return ir::make_node<ir::Function>(sig.name, sig.type, sig.params, sig.return_types,
                                     ir::make_seq(std::move(body.stmts), sig.span), sig.span,
                                     sig.attrs);
}

void Parser::check_recursion() {
  // Depth-first search over the call graph; a call to a function on the current path closes a
  // cycle.
  std::vector<int> state(signatures_.size(), 0);  // 0 new, 1 on path, 2 done
  std::vector<size_t> path;
  std::function<void(size_t)> visit = [&](size_t f) {
    state[f] = 1;
    path.push_back(f);
    for (const CallSite& call : calls_[f]) {
      if (state[call.callee] == 1) {
        std::string cycle;
        bool in_cycle = false;
        for (size_t g : path) {
          if (g == call.callee) in_cycle = true;
          if (in_cycle) cycle += "'" + signatures_[g].name + "' -> ";
        }
        cycle += "'" + signatures_[call.callee].name + "'";
        if (call.callee == f) {
          fail(call.span,
               "function '" + signatures_[f].name + "' calls itself; recursion is not supported");
        }
        fail(call.span, "recursive call cycle " + cycle + "; recursion is not supported");
      }
      if (state[call.callee] == 0) visit(call.callee);
    }
    path.pop_back();
    state[f] = 2;
  };
  for (size_t f = 0; f < signatures_.size(); ++f) {
    if (state[f] == 0) visit(f);
  }
}

}  // namespace detail

namespace {

using detail::Parser;
using ir::CompileError;
using ir::Span;

template <typename F>
auto run_reporting_errors(std::string_view text, std::string_view file_name, int32_t line_offset,
                          F&& body) {
  try {
    return body();
  } catch (const ParseError&) {
    throw;
  } catch (const CompileError& e) {
    throw make_parse_error(file_name, text, line_offset, e);
  } catch (const std::bad_alloc&) {
    throw make_parse_error(file_name, text, line_offset,
                           CompileError(Span{}, "out of memory while parsing"));
  } catch (const std::exception&) {
    // A failure inside a checker is still reported as an error in the program, never as the raw
    // text of a C++ exception.
    throw make_parse_error(file_name, text, line_offset,
                           CompileError(Span{}, "internal compiler error while parsing"));
  }
}

}  // namespace

std::vector<ir::ProgramPtr> parse_module(std::string_view text, std::string_view file_name,
                                         const Constants& constants, const Constants& pinned) {
  return run_reporting_errors(text, file_name, 0, [&] {
    Parser parser(text, file_name, constants, 0, LexOptions{});
    parser.pin_constants(pinned);
    return parser.parse_module();
  });
}

ir::ProgramPtr parse_program(std::string_view text, std::string_view file_name,
                             const Constants& constants, int32_t line_offset, bool rest_of_file,
                             const Helpers& helpers,
                             const std::vector<EntryTensor>& entry_tensors) {
  return run_reporting_errors(text, file_name, line_offset, [&] {
    LexOptions lex_options;
    lex_options.indented_start = true;
    lex_options.first_statement_only = rest_of_file;
    Parser parser(text, file_name, constants, line_offset, lex_options);
    parser.add_helpers(helpers);
    parser.set_entry_tensors(entry_tensors);
    return parser.parse_single_program();
  });
}

namespace {

// The tokens of the jit functions, each lexed from its first line to the end of its block, with
// lines counted from the top of the file, one after the other.
std::vector<Token> jit_function_tokens(std::string_view file_text,
                                       const std::vector<JitFunctionSource>& functions) {
  std::vector<Token> all;
  for (const JitFunctionSource& f : functions) {
    size_t start = 0;
    for (int32_t line = 1; line < f.first_line; ++line) {
      start = file_text.find('\n', start);
      if (start == std::string_view::npos) break;
      ++start;
    }
    if (f.first_line < 1 || start == std::string_view::npos || start >= file_text.size()) {
      throw CompileError(Span{}, "function '" + f.name + "' is not at line " +
                                     std::to_string(f.first_line) +
                                     " of the file (was the file changed after it was loaded?)");
    }
    LexOptions options;
    options.indented_start = true;
    options.first_statement_only = true;
    std::vector<Token> tokens;
    try {
      tokens = tokenize(file_text.substr(start), options);
    } catch (const CompileError& e) {
      Span at = e.span();
      at.line += f.first_line - 1;
      throw CompileError(at, e.what());
    }
    for (Token& t : tokens) t.line += f.first_line - 1;
    if (!tokens.empty() && tokens.back().kind == TokenKind::EndOfFile) tokens.pop_back();
    all.insert(all.end(), tokens.begin(), tokens.end());
  }
  const int32_t last_line = all.empty() ? 1 : all.back().line + 1;
  all.push_back(Token{TokenKind::EndOfFile, last_line, 1, {}});
  return all;
}

}  // namespace

std::vector<JitFunctionSource> find_jit_functions(std::string_view file_text,
                                                  std::string_view file_name,
                                                  Constants* module_constants) {
  return run_reporting_errors(file_text, file_name, 0, [&] {
    Parser parser(file_text, file_name, {}, 0, LexOptions{});
    return parser.list_jit_functions(module_constants);
  });
}

ir::ProgramPtr parse_jit(std::string_view file_text, std::string_view file_name,
                         const std::vector<JitFunctionSource>& functions, std::string_view entry,
                         const JitArguments& arguments, const Constants& constants,
                         const Helpers& helpers) {
  return run_reporting_errors(file_text, file_name, 0, [&] {
    Parser parser(file_text, file_name, constants, 0, jit_function_tokens(file_text, functions));
    parser.add_helpers(helpers);
    return parser.parse_jit_program(entry, arguments);
  });
}

}  // namespace pypto::frontend
