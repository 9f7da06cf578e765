// Statements: blocks, assignments (plain, annotated, tuple and pl.yield_), return, for loops over
// pl.range / pl.unroll with loop-carried values, if/else, and `with pl.at(...)` scopes.
#include <cstdio>

#include <utility>

#include "parser_state.h"
#include "pypto/ir/printer.h"

namespace pypto::frontend::detail {

void Parser::parse_simple_line(Block& block, BlockKind kind) {
  while (true) {
    if (block.yield) fail_here("pl.yield_ must be the last statement of its block");
    if (at(TK::KwFor) || at(TK::KwIf) || at(TK::KwWith) || at(TK::KwWhile) || at(TK::KwDef) ||
        at(TK::KwClass)) {
      fail_here("a compound statement cannot follow ':' on the same line");
    }
    parse_simple_statement(block, kind, /*allow_semicolon=*/true);
    if (at(TK::Newline) || at(TK::EndOfFile) || at(TK::Dedent)) break;
  }
  if (at(TK::Newline)) advance();
}

void Parser::parse_statement_body(Block& block, BlockKind kind) {
  block.ends_with_return = false;
  switch (cur().kind) {
    case TK::KwFor:
      block.stmts.push_back(at_explicit_while() ? parse_explicit_while() : parse_for());
      return;
    case TK::KwWhile:
      block.stmts.push_back(parse_while());
      return;
    case TK::KwIf:
      block.stmts.push_back(parse_if());
      return;
    case TK::KwWith:
      block.stmts.push_back(parse_with(
          kind == BlockKind::LoopWithIterArgs || kind == BlockKind::IfBranch ? &block : nullptr));
      if (hoisted_yield_) block.stmts.push_back(std::exchange(hoisted_yield_, nullptr));
      return;
    case TK::KwDef:
      fail_here("nested function definitions are not supported");
    case TK::KwClass:
      fail_here("class definitions are not supported inside a function");
    case TK::KwElif:
    case TK::KwElse:
      fail_here("'" + std::string(cur().text) + "' without a matching 'if'");
    case TK::Indent:
      fail_here("unexpected indent");
    case TK::At:
      fail_here("decorators are not supported inside a function");
    default:
      parse_simple_statement(block, kind, /*allow_semicolon=*/true);
      if (at(TK::Newline)) advance();
      return;
  }
}

bool Parser::at_pl_member(size_t ahead, std::string_view member) const {
  const Token& a = peek_token(ahead);
  return a.kind == TK::Name && a.text == "pl" && peek_token(ahead + 1).kind == TK::Dot &&
         peek_token(ahead + 2).kind == TK::Name && peek_token(ahead + 2).text == member;
}

void Parser::parse_simple_statement_body(Block& block, BlockKind kind, bool allow_semicolon) {
  block.ends_with_return = false;
  var_uses_.clear();
  const Span start = here();
  switch (cur().kind) {
    case TK::KwPass:
      advance();
      break;
    case TK::KwReturn:
      block.stmts.push_back(parse_return());
      block.ends_with_return = true;
      break;
    case TK::KwBreak:
    case TK::KwContinue:
      block.stmts.push_back(parse_loop_exit());
      break;
    case TK::String:
      if (peek_token(1).kind == TK::Newline || peek_token(1).kind == TK::Semicolon) {
        advance();  // docstring
        break;
      }
      fail_here("string literals are not supported in the DSL");
    default:
      if (at(TK::KwImport) || at(TK::KwFrom)) fail_here("imports are not allowed in a function");
      if (at_pl_member(0, "yield_")) {
        fail_here(
            "the result of pl.yield_ must be assigned: 'x = pl.yield_(...)' names the "
            "values the loop or if produces");
      }
      if (at(TK::Name) && peek_token(1).kind == TK::Colon) {
        parse_annotated_assignment(block, kind);
        break;
      }
      if (at(TK::Name) && (peek_token(1).kind == TK::Assign || peek_token(1).kind == TK::Comma)) {
        if (parse_assignment(block, kind)) break;
      }
      if (at(TK::LParen) && peek_token(1).kind == TK::Name &&
          (peek_token(2).kind == TK::Comma || peek_token(2).kind == TK::RParen)) {
        if (parse_assignment(block, kind)) break;
      }
      if (at(TK::Name) && peek_token(1).kind == TK::LBracket && try_subscript_assignment(block)) {
        break;
      }
      if (at(TK::Name) && peek_token(1).kind == TK::Dot && try_bind_dynamic(block)) break;
      if (at_pl_member(0, "func_attr")) {
        parse_func_attr(kind);
        break;
      }
      if (at_pl_member(0, "static_print") || at_pl_member(0, "static_assert")) {
        parse_static_check();
        break;
      }
      parse_expression_statement(block, start);
      break;
  }
  if (!at(TK::Semicolon) || !allow_semicolon) {
    if (!at(TK::Newline) && !at(TK::EndOfFile) && !at(TK::Dedent)) expect_end_of_statement();
    return;
  }
  advance();
}

void Parser::parse_static_check() {
  // pl.static_print(...) prints while the program is parsed (string labels as written, a value
  // as its name or constant and its type); pl.static_assert(cond[, "message"]) fails the parse
  // when a condition known then is false. Neither adds anything to the program.
  const Span span = here();
  advance();  // pl
  advance();  // .
  const std::string what(advance().text);
  expect(TK::LParen, "'(' after pl." + what);
  std::vector<std::string> parts;
  std::vector<std::pair<ExprPtr, Span>> values;
  std::optional<std::string> label;  // static_assert's message
  while (!at(TK::RParen)) {
    if (at(TK::String)) {
      parts.push_back(string_literal(advance()));
      label = parts.back();
    } else {
      const Span at_value = here();
      Value v = parse_value();
      ExprPtr e = expect_expr(v, "an argument of pl." + what);
      values.emplace_back(e, at_value);
      // A name as itself, a constant as its value (`16 * 2` is 32), anything else as written.
      const auto* var = e->as<ir::Var>();
      std::string text = var ? var->name : ir::print_expr(e);
      const ir::ScalarFold c = fold_constant(e);
      if (!var && c.exact()) {
        const ir::Scalar& s = *c.value;
        text = s.kind == ir::Scalar::Kind::Bool  ? (s.b ? "True" : "False")
               : s.kind == ir::Scalar::Kind::Int ? std::to_string(s.i)
                                                 : ir::print_expr(ir::make_float(s.f));
      }
      parts.push_back(text + ": " + ir::type_to_string(e->type()));
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl." + what + "(...)");
  if (what == "static_print") {
    if (parts.empty()) fail(span, "pl.static_print needs at least one argument");
    std::string line = "static_print [" + std::string(file_name_) + ":" +
                       std::to_string(span.line + line_offset_) + "]:";
    for (const std::string& p : parts) line += " " + p;
    line += "\n";
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
    return;
  }
  if (values.size() != 1 || parts.size() > 2) {
    fail(span, "pl.static_assert takes a condition and an optional message string");
  }
  const ir::ScalarFold c = fold_constant(values[0].first);
  if (!c.exact()) {
    fail(values[0].second,
         "pl.static_assert needs a condition known when the program is parsed (constants and "
         "shapes)");
  }
  const bool holds = c.value->is_float() ? c.value->f != 0.0 : c.value->as_int() != 0;
  if (!holds) fail(span, "static assertion failed" + (label ? ": " + *label : std::string()));
}

void Parser::parse_expression_statement(Block& block, Span start) {
  dump_tag_parsed_ = false;
  Value v = parse_value();
  if (dump_tag_parsed_) return;  // pl.dump_tag(t): a marker, not a statement
  if (at(TK::Assign)) fail(start, "cannot assign to an expression (expected a name)");
  if (at(TK::AugAssign)) {
    fail_here("augmented assignment '" + std::string(cur().text) +
              "' is not supported; write 'x = x " +
              std::string(cur().text.substr(0, cur().text.size() - 1)) + " ...'");
  }
  // A call whose value is not a call of the IR is evaluated and dropped, as in Python: an
  // Inline function's result (the call has put its body into this block already) or a value
  // such as pl.const(0). A bare name or literal on its own line is refused as a likely slip.
  const bool written_as_call = pos_ > 0 && tokens_[pos_ - 1].kind == TK::RParen;
  if (v.kind != Value::Kind::Expr || (!v.expr->as<ir::Call>() && !written_as_call)) {
    fail(start, "expected a call or an assignment; an expression statement has no effect");
  }
  if (!v.expr->as<ir::Call>()) return;
  // `pl.write(x, [i, j], v)` and `pl.assemble(t, part, offsets)` of a tensor t as statements
  // write into x or t: the name is rebound to the written value, which is what the statement
  // means in a program of values.
  const auto* call = v.expr->as<ir::Call>();
  const bool writes_first = call->call_kind == ir::CallKind::Op && !call->args.empty() &&
                            (call->callee == "write" ||
                             (call->callee == "assemble" && call->args[0]->type() &&
                              call->args[0]->type()->as<ir::TensorType>()));
  if (writes_first) {
    if (const auto* target = call->args[0]->as<ir::Var>()) {
      VarPtr var = bind_var(target->name, v.expr->type(), start);
      block.stmts.push_back(ir::make_node<ir::AssignStmt>(var, v.expr, start));
      return;
    }
  }
  block.stmts.push_back(ir::make_node<ir::EvalStmt>(v.expr, start));
}

bool Parser::parse_assignment_targets(std::vector<const Token*>& targets) {
  const size_t start = pos_;
  // `(x,) = ...` and `(x, y) = ...` name the same targets as `x, = ...` and `x, y = ...`.
  const bool parenthesized = at(TK::LParen);
  if (parenthesized) advance();
  while (true) {
    if (!at(TK::Name)) break;
    targets.push_back(&advance());
    if (!at(TK::Comma)) break;
    advance();
    if (at(TK::Assign)) break;
  }
  if (parenthesized) {
    if (at(TK::RParen)) {
      advance();
    } else {
      targets.clear();
    }
  }
  if (targets.empty() || !at(TK::Assign)) {
    targets.clear();
    pos_ = start;
    return false;
  }
  advance();
  return true;
}

bool Parser::parse_assignment(Block& block, BlockKind kind) {
  std::vector<const Token*> targets;
  if (!parse_assignment_targets(targets)) return false;
  for (const Token* t : targets) check_assignable(*t);
  if (at_yield()) {
    parse_yield(block, kind, targets);
    return true;
  }
  if (at_pl_member(0, "submit") || at_pl_member(0, "spmd_submit")) {
    parse_submit(block, targets);
    return true;
  }
  if (targets.size() == 1 && at(TK::KwNone)) {
    parse_no_task_assignment(block, *targets[0]);
    return true;
  }
  Value v = parse_value();
  if (at(TK::Comma)) {
    fail_here("assigning several values at once is not supported; assign them one by one");
  }
  if (at(TK::Assign)) fail_here("chained assignment is not supported");
  ExprPtr value = expect_expr(v, "the right-hand side of an assignment");
  const auto* tuple = value->type() ? value->type()->as<ir::TupleType>() : nullptr;
  if (targets.size() > 1 && (!tuple || tuple->elements.size() != targets.size())) {
    fail(v.span, "cannot unpack a value of type " + ir::type_to_string(value->type()) + " into " +
                     std::to_string(targets.size()) + " names");
  }
  bind_targets(block, targets, v);
  return true;
}

// Binds one name to `v`, or several to the elements of a tuple value: `x, y = call` is sugar for
// a tuple variable and one element access per name.
void Parser::bind_targets(Block& block, const std::vector<const Token*>& targets, const Value& v) {
  const ExprPtr& value = v.expr;
  for (const Token* t : targets) check_single_assignment(*t);
  auto bind_one = [&](const Token& target, const ExprPtr& item) {
    const bool first = !lookup_var(target.text);
    VarPtr var = bind_var(target.text, item->type(), span_of(target));
    block.stmts.push_back(ir::make_node<ir::AssignStmt>(var, item, span_of(target)));
    note_bound_value(var, item);
    if (first) note_local_constant(target, var, item);
  };
  if (targets.size() == 1) {
    bind_one(*targets[0], value);
    return;
  }
  if (const auto* literal = value->as<ir::MakeTuple>()) {
    // `M, N = x.shape`: each name takes its element; no tuple variable is needed.
    for (size_t i = 0; i < targets.size(); ++i) bind_one(*targets[i], literal->elements[i]);
    return;
  }
  std::string tuple_name = "_tuple";
  for (const Token* t : targets) tuple_name += "_" + std::string(t->text);
  synthesized_names_.push_back(std::move(tuple_name));
  Span first = span_of(*targets[0]);
  VarPtr tuple_var = bind_var(synthesized_names_.back(), value->type(), first);
  block.stmts.push_back(ir::make_node<ir::AssignStmt>(tuple_var, value, first));
  for (size_t i = 0; i < targets.size(); ++i) {
    Span s = span_of(*targets[i]);
    ExprPtr item = ir::make_tuple_get_item(tuple_var, static_cast<int64_t>(i), s);
    VarPtr var = bind_var(targets[i]->text, item->type(), s);
    block.stmts.push_back(ir::make_node<ir::AssignStmt>(var, item, s));
  }
}

void Parser::parse_annotated_assignment(Block& block, BlockKind kind) {
  const Token& name = advance();
  check_assignable(name);
  advance();  // ':'
  if (at_ptr_binding()) {
    parse_ptr_binding(name);
    return;
  }
  const Span annotation_span = here();
  // A local's shape may name run-time extents (`[q_tile, valid_len]`): the value gives them.
  runtime_dims_allowed_ = true;
  TypePtr annotated;
  runtime_valid_shape_.reset();
  try {
    annotated = parse_type();
  } catch (...) {
    runtime_dims_allowed_ = false;
    runtime_valid_shape_.reset();
    throw;
  }
  runtime_dims_allowed_ = false;
  if (!at(TK::Assign))
    expected("'=' and a value after the annotation of '" + std::string(name.text) + "'");
  advance();
  if (at_yield()) {
    // `v: T = pl.yield_(x)` at the end of an if branch or a loop body: the annotation states the
    // type of the value the if or the loop produces, which is the yielded value's.
    parse_yield(block, kind, {&name});
    const ExprPtr& yielded = block.yield->values.front();
    if (!same_shape_dtype(annotated, yielded->type()) &&
        !argument_fits(annotated, yielded->type())) {
      fail(annotation_span, "'" + std::string(name.text) + "' is annotated " +
                                ir::type_to_string(annotated) + " but pl.yield_ gives " +
                                ir::type_to_string(yielded->type()));
    }
    return;
  }
  value_annotation_ = annotated;
  Value v;
  try {
    v = parse_value();
  } catch (...) {
    value_annotation_ = nullptr;
    throw;
  }
  value_annotation_ = nullptr;
  ExprPtr value = expect_expr(v, "the right-hand side of an assignment");
  check_runtime_valid_shape(value);
  TypePtr var_type;
  value = refine(value, annotated, annotation_span, var_type);
  auto existing = lookup_var(name.text);
  if (existing && !ir::types_equal(existing->type(), var_type) &&
      !same_shape_dtype(existing->type(), var_type)) {
    fail(span_of(name), "cannot rebind '" + std::string(name.text) + "' of type " +
                            ir::type_to_string(existing->type()) + " to a value of type " +
                            ir::type_to_string(var_type) +
                            " (a variable keeps its shape and dtype)");
  }
  check_single_assignment(name);
  VarPtr var = bind_var(name.text, var_type, span_of(name));
  block.stmts.push_back(ir::make_node<ir::AssignStmt>(var, value, span_of(name)));
  note_bound_value(var, value);
  if (!existing) note_local_constant(name, var, value);
}

void Parser::check_single_assignment(const Token& name) {
  if (!strict_ssa_ || ssa_blocks_.empty()) return;
  auto& bound = ssa_blocks_.back();
  for (const auto& [bound_name, line] : bound) {
    if (bound_name != name.text) continue;
    fail(span_of(name), "'" + std::string(name.text) +
                            "' is assigned again in its block of a function with strict_ssa=True "
                            "(first bound on line " +
                            std::to_string(line + line_offset_) +
                            "); give each value its own name");
  }
  bound.emplace_back(name.text, span_of(name).line);
}

StmtPtr Parser::parse_return() {
  const Span span = here();
  advance();
  std::vector<ExprPtr> values;
  std::vector<Span> value_spans;
  if (!at(TK::Newline) && !at(TK::Semicolon) && !at(TK::EndOfFile)) {
    while (true) {
      Value v = parse_value();
      values.push_back(expect_expr(v, "a return value"));
      value_spans.push_back(v.span);
      if (!at(TK::Comma)) break;
      advance();
      if (at(TK::Newline)) break;
    }
  }
  // `return (a, b)` returns two values, as `return a, b` does.
  if (values.size() == 1) {
    if (const auto* tuple = values[0]->as<ir::MakeTuple>()) {
      const Span whole = value_spans[0];
      values = tuple->elements;
      value_spans.assign(values.size(), whole);
    }
  }
  // `return self.f(...)` of a function returning several values returns each of them: the call
  // is bound once, before the return, and its elements returned.
  if (values.size() == 1 && return_types_->size() > 1) {
    const auto* tuple_type = values[0]->type() ? values[0]->type()->as<ir::TupleType>() : nullptr;
    if (tuple_type && tuple_type->elements.size() == return_types_->size()) {
      VarPtr whole = ir::make_var(synthesized_names_.emplace_back("_returned"), values[0]->type(),
                                  value_spans[0]);
      inline_stmts_.push_back(ir::make_node<ir::AssignStmt>(whole, values[0], value_spans[0]));
      values.clear();
      for (size_t i = 0; i < tuple_type->elements.size(); ++i)
        values.push_back(ir::make_tuple_get_item(whole, static_cast<int64_t>(i), value_spans[0]));
      value_spans.assign(values.size(), value_spans[0]);
    }
  }
  if (inferred_returns_ && !returns_known_) {  // a jit function: its first return types it
    for (const ExprPtr& v : values) inferred_returns_->push_back(v->type());
    returns_known_ = true;
  }
  const auto& expected_types = *return_types_;
  if (values.size() != expected_types.size()) {
    fail(span, "return gives " + std::to_string(values.size()) +
                   " value(s) but the function declares " + std::to_string(expected_types.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (!same_shape_dtype(expected_types[i], values[i]->type())) {
      fail(value_spans[i], "return value " + std::to_string(i + 1) + " has type " +
                               ir::type_to_string(values[i]->type()) +
                               " but the function returns " +
                               ir::type_to_string(expected_types[i]));
    }
  }
  return ir::make_node<ir::ReturnStmt>(std::move(values), span);
}

StmtPtr Parser::parse_for() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();
  const Token& loop_name = expect_name("a loop variable name after 'for'");
  check_assignable(loop_name);
  std::vector<const Token*> carried;
  if (at(TK::Comma)) {
    advance();
    bool parenthesized = at(TK::LParen);
    if (parenthesized) advance();
    while (at(TK::Name)) {
      carried.push_back(&advance());
      if (!at(TK::Comma)) break;
      advance();
    }
    if (carried.empty()) expected("the names of the loop-carried values");
    if (parenthesized) expect(TK::RParen, "')' after the loop-carried names");
  }
  expect(TK::KwIn, "'in' after the loop target");
  if (at_pl_member(0, "spmd")) {
    if (!carried.empty()) fail(span_of(*carried[0]), "a pl.spmd loop carries no values");
    return parse_spmd_loop(span, loop_name);
  }
  if (at_pl_member(0, "split_aiv")) {
    if (!carried.empty()) fail(span_of(*carried[0]), "a pl.split_aiv region carries no values");
    return parse_split_aiv_loop(span, loop_name);
  }
  ir::ForKind for_kind = ir::ForKind::Sequential;
  if (at_pl_member(0, "range")) {
    for_kind = ir::ForKind::Sequential;
  } else if (at_pl_member(0, "unroll")) {
    for_kind = ir::ForKind::Unroll;
  } else if (at_pl_member(0, "parallel")) {
    for_kind = ir::ForKind::Parallel;
  } else if (at_pl_member(0, "pipeline")) {
    // Software pipelining (stage=N copies of the body in flight) is a schedule of the NPU; the
    // loop computes what pl.range does, and is one.
    for_kind = ir::ForKind::Sequential;
  } else {
    expected(
        "pl.range(...), pl.parallel(...), pl.pipeline(...), pl.unroll(...), pl.spmd(...) or "
        "pl.split_aiv(...) after 'in'");
  }
  const Span iterator_span = here();
  const std::string_view range_kind = peek_token(2).text;
  auto range_name = [range_kind] { return "pl." + std::string(range_kind); };
  advance();
  advance();
  advance();
  expect(TK::LParen, [&] { return "'(' after " + range_name(); });
  std::vector<ExprPtr> bounds;
  std::vector<Span> bound_spans;
  std::vector<ExprPtr> init_values;
  Span init_span;
  bool has_init = false;
  const bool is_pipeline = range_kind == "pipeline";
  bool has_stage = false;
  while (!at(TK::RParen)) {
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      const Token& key = advance();
      advance();
      if (is_pipeline && key.text == "stage") {
        if (has_stage) fail(span_of(key), "pl.pipeline got argument 'stage' twice");
        const Span value_span = here();
        if (parse_constant_int("stage") <= 0) {
          fail(value_span, "pl.pipeline stage must be a positive integer");
        }
        has_stage = true;
        if (!at(TK::Comma)) break;
        advance();
        continue;
      }
      if (key.text != "init_values") {
        fail(span_of(key),
             "unknown argument '" + std::string(key.text) + "' of " + range_name() +
                 (is_pipeline ? " (expected stage=, init_values=)" : " (expected init_values=)"));
      }
      has_init = true;
      init_span = here();
      init_values = parse_init_values();
    } else {
      if (has_init || has_stage) {
        fail_here(std::string("positional argument after ") +
                  (has_init ? "init_values=" : "stage="));
      }
      Value v = parse_value();
      ExprPtr e = expect_expr(v, [&] { return "a bound of " + range_name(); });
      if (!e->type() || !e->type()->as<ir::ScalarType>() ||
          ir::is_float(e->type()->as<ir::ScalarType>()->dtype)) {
        fail(v.span, "expected an integer scalar in " + range_name() + ", got " +
                         ir::type_to_string(e->type()));
      }
      bounds.push_back(e);
      bound_spans.push_back(v.span);
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, [&] { return "')' to close " + range_name() + "(...)"; });
  if (is_pipeline && !has_stage) {
    fail(iterator_span, "pl.pipeline needs stage=N (a positive integer)");
  }
  if (bounds.empty() || bounds.size() > 3) {
    fail(span, range_name() +
                   " takes 1 to 3 positional arguments (stop | start, stop | start, "
                   "stop, step), got " +
                   std::to_string(bounds.size()));
  }
  ExprPtr start = bounds.size() >= 2 ? bounds[0] : ir::make_int(0);
  ExprPtr stop = bounds.size() >= 2 ? bounds[1] : bounds[0];
  ExprPtr step = bounds.size() == 3 ? bounds[2] : ir::make_int(1);
  if (auto s = ir::as_const_int(step); s && *s == 0) {
    fail(bound_spans[2], range_name() + " step must not be zero");
  }
  if (has_init && carried.empty()) {
    fail(init_span,
         "init_values needs a 'for i, (x, ...) in' target naming the loop-carried "
         "values");
  }
  if (!has_init && !carried.empty()) {
    fail(span_of(*carried[0]), "loop-carried names need init_values=(...) in " + range_name());
  }
  if (init_values.size() != carried.size()) {
    fail(init_span, "init_values has " + std::to_string(init_values.size()) +
                        " value(s) but the loop names " + std::to_string(carried.size()));
  }
  expect(TK::Colon, "':' after the for statement");
  binding_loop_index_ = true;
  VarPtr loop_var = bind_var(loop_name.text, ir::scalar_type(DataType::INT64), span_of(loop_name));
  binding_loop_index_ = false;
  std::vector<VarPtr> iter_args;
  for (size_t i = 0; i < carried.size(); ++i) {
    iter_args.push_back(bind_var(carried[i]->text, init_values[i]->type(), span_of(*carried[i])));
  }
  enter_loop(range_name(), for_kind == ir::ForKind::Sequential, has_init, span);
  Block body = parse_block(has_init ? BlockKind::LoopWithIterArgs : BlockKind::Loop, [&] {
    return "'for' statement on line " + std::to_string(span.line + line_offset_);
  });
  const LoopContext loop = leave_loop();
  std::vector<VarPtr> return_vars;
  if (has_init) {
    if (!body.yield) {
      fail(span,
           "a loop with init_values must end with 'x = pl.yield_(...)' giving the next "
           "values of the loop-carried names");
    }
    const YieldInfo& y = *body.yield;
    if (y.values.size() != iter_args.size()) {
      fail(y.span, "pl.yield_ gives " + std::to_string(y.values.size()) +
                       " value(s) but the loop carries " + std::to_string(iter_args.size()));
    }
    for (size_t i = 0; i < y.values.size(); ++i) {
      if (!same_shape_dtype(iter_args[i]->type(), y.values[i]->type())) {
        fail(y.value_spans[i], "pl.yield_ value " + std::to_string(i + 1) + " has type " +
                                   ir::type_to_string(y.values[i]->type()) +
                                   " but the loop-carried value has type " +
                                   ir::type_to_string(iter_args[i]->type()));
      }
      return_vars.push_back(bind_var(y.names[i], iter_args[i]->type(), y.name_spans[i]));
    }
  }
  return lower_for_exits(
      loop, ir::make_node<ir::ForStmt>(
                loop_var, start, stop, step, for_kind, std::move(iter_args), std::move(init_values),
                ir::make_seq(std::move(body.stmts), span), std::move(return_vars), span));
}

std::vector<ExprPtr> Parser::parse_init_values() {
  TK close;
  if (at(TK::LParen)) {
    close = TK::RParen;
  } else if (at(TK::LBracket)) {
    close = TK::RBracket;
  } else {
    expected("a tuple of initial values, e.g. init_values=(x0,)");
  }
  advance();
  std::vector<ExprPtr> values;
  while (!at(close)) {
    Value v = parse_value();
    values.push_back(expect_expr(v, "an initial value"));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(close, close == TK::RParen ? "')' to close init_values" : "']' to close init_values");
  return values;
}

StmtPtr Parser::parse_if() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();  // 'if' or 'elif'
  Value c = parse_value();
  ExprPtr cond = expect_expr(c, "an if condition");
  if (!cond->type() || !cond->type()->as<ir::ScalarType>()) {
    fail(c.span, "expected a scalar condition, got " + ir::type_to_string(cond->type()));
  }
  expect(TK::Colon, "':' after the if condition");
  auto owner = [&] { return "'if' statement on line " + std::to_string(span.line + line_offset_); };
  Block then_block = parse_block(BlockKind::IfBranch, owner);
  std::optional<Block> else_block;
  bool else_is_elif = false;
  if (at(TK::KwElif)) {
    else_is_elif = true;
    Block b;
    b.stmts.push_back(parse_if());
    else_block = std::move(b);
  } else if (at(TK::KwElse)) {
    advance();
    expect(TK::Colon, "':' after 'else'");
    else_block = parse_block(BlockKind::IfBranch, [&] {
      return "'else' on line " + std::to_string(span.line + line_offset_);
    });
  }
  std::vector<VarPtr> return_vars;
  const bool else_yields = else_block && else_block->yield;
  if (then_block.yield || else_yields) {
    if (else_is_elif) {
      fail(span, "pl.yield_ in an if/elif chain is not supported; nest if/else instead");
    }
    if (!then_block.yield || !else_yields) {
      fail(then_block.yield ? then_block.yield->span : span,
           "when one branch of an if ends with pl.yield_, both branches (if and else) must");
    }
    const YieldInfo& t = *then_block.yield;
    const YieldInfo& e = *else_block->yield;
    if (t.names != e.names) {
      fail(e.span, "both branches of an if must assign pl.yield_ to the same names");
    }
    for (size_t i = 0; i < t.values.size(); ++i) {
      if (!same_shape_dtype(t.values[i]->type(), e.values[i]->type())) {
        fail(e.value_spans[i], "pl.yield_ value " + std::to_string(i + 1) + " has type " +
                                   ir::type_to_string(e.values[i]->type()) +
                                   " in the else branch but " +
                                   ir::type_to_string(t.values[i]->type()) + " in the if");
      }
      return_vars.push_back(bind_var(t.names[i], t.values[i]->type(), t.name_spans[i]));
    }
  }
  StmtPtr else_body = else_block ? ir::make_seq(std::move(else_block->stmts), span) : StmtPtr();
  return ir::make_node<ir::IfStmt>(cond, ir::make_seq(std::move(then_block.stmts), span),
                                   std::move(else_body), std::move(return_vars), span);
}

StmtPtr Parser::parse_with(Block* enclosing) {
  DepthGuard guard(*this);
  const Span span = here();
  advance();
  if (at_pl_member(0, "spmd")) return parse_spmd_with(span);
  if (at_pl_member(0, "manual_scope") || at_pl_member(0, "scope"))
    return parse_manual_scope(span, enclosing);
  if (at_pl_member(0, "cluster")) {
    // `with pl.cluster():` co-schedules the cube and vector kernels of its body on one cluster
    // of the NPU. The CPU device has no clusters: the body is launched as written.
    advance();
    advance();
    advance();
    expect(TK::LParen, "'(' after pl.cluster");
    expect(TK::RParen, "')': pl.cluster() takes no arguments");
    expect(TK::Colon, "':' after the with statement");
    Block body = parse_block(BlockKind::Scope, [&] {
      return "'with' statement on line " + std::to_string(span.line + line_offset_);
    });
    return ir::make_seq(std::move(body.stmts), span);
  }
  if (!at_pl_member(0, "at")) {
    expected("pl.at(level=pl.Level.CORE_GROUP), pl.spmd(n) or pl.manual_scope() after 'with'");
  }
  advance();
  advance();
  advance();
  expect(TK::LParen, "'(' after pl.at");
  AtScopeArgs args;
  size_t positional = 0;
  std::vector<std::string> seen;
  while (!at(TK::RParen)) {
    std::string key;
    Span key_span = here();
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      key = std::string(advance().text);
      advance();
    } else {
      // pl.at(level, role): PyPTO's positional order.
      if (positional >= 2) fail_here("pl.at takes at most 2 positional arguments (level, role)");
      key = positional++ == 0 ? "level" : "role";
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      fail(key_span, "pl.at got argument '" + key + "' twice");
    }
    seen.push_back(key);
    parse_at_argument(key, key_span, args);
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl.at(...)");
  if (args.level.empty()) fail(span, "pl.at needs a level: pl.at(level=pl.Level.CORE_GROUP)");
  if (args.level != "CORE_GROUP") return parse_hierarchy_scope(span, std::move(args));
  if (!args.role.empty()) {
    fail(args.role_span,
         "pl.at(role=...) belongs to hierarchy scopes (levels above CORE_GROUP); a CORE_GROUP "
         "scope is a kernel and has no role");
  }
  // `as tid` names the scope's task; deps= orders it after other tasks (parser_tasks.cpp).
  const Token* tid = nullptr;
  if (at(TK::KwAs)) {
    advance();
    tid = &expect_name("a name for the TaskId after 'as'");
  }
  expect(TK::Colon, "':' after the with statement");
  const CountedScope core_scope(core_scopes_open_);
  Block body = parse_block(BlockKind::Scope, [&] {
    return "'with' statement on line " + std::to_string(span.line + line_offset_);
  });
  StmtPtr scope = ir::make_node<ir::ScopeStmt>(
      args.level, ir::make_seq(std::move(body.stmts), span), span, std::move(args.name_hint));
  if (!tid && !args.deps) return scope;
  std::vector<StmtPtr> stmts{task_options_stmt(args.deps, std::nullopt, span), scope};
  if (tid) stmts.push_back(bind_task_id(*tid));
  return ir::make_node<ir::SeqStmts>(std::move(stmts), span);
}

}  // namespace pypto::frontend::detail
