// Statements: `while` loops (natural and the explicit pl.while_ form with loop-carried values),
// pl.yield_ (the next values of a loop's carried names, or an if's results), and `break` /
// `continue`, which are lowered here to structured control flow.
//
// `break` and `continue` become assignments of a boolean flag of their loop. Once the loop's body
// is parsed, the statements after an exit run only while no flag is set (`if not flag: ...`),
// a loop with `break` also tests its flag before each trip, and a pl.range loop with `break`
// becomes the equivalent while loop. Passes, the interpreter and codegen therefore only ever see
// while, for and if (DESIGN.md, "Loops: while, break, continue").
#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

ExprPtr bool_not(const ExprPtr& e, Span span) {
  return ir::make_node<ir::Unary>(ir::UnaryOp::Not, e, ir::scalar_type(DataType::BOOL), span);
}

StmtPtr assign(const VarPtr& var, ExprPtr value, Span span) {
  return ir::make_node<ir::AssignStmt>(var, std::move(value), span);
}

void flatten_into(const StmtPtr& s, std::vector<StmtPtr>* out) {
  if (!s) return;
  if (const auto* seq = s->as<ir::SeqStmts>()) {
    for (const auto& st : seq->stmts) flatten_into(st, out);
    return;
  }
  out->push_back(s);
}

// A loop with loop-carried values (init_values, or pl.while_'s) and a break or continue: the
// carried values become variables that the body rebinds, the natural form of loop-carried values,
// so that the exits lower as in any loop. `x = x0` before the loop, the yield becomes `x = <next
// value>` (through temporaries, for `pl.yield_(b, a)`), which the exit lowering skips on the trip
// that exits (continue keeps the values, break leaves with them), and after the loop the yield's
// names take the variables' last values.
struct CarriedAsVariables {
  std::vector<StmtPtr> before, after;
  StmtPtr body;
};

CarriedAsVariables carried_as_variables(const std::vector<VarPtr>& iter_args,
                                        const std::vector<ExprPtr>& init_values,
                                        const StmtPtr& body, const std::vector<VarPtr>& return_vars,
                                        Span span) {
  CarriedAsVariables out;
  for (size_t i = 0; i < iter_args.size(); ++i)
    out.before.push_back(assign(iter_args[i], init_values[i], span));
  std::vector<StmtPtr> stmts;
  flatten_into(body, &stmts);
  const auto* yield = stmts.empty() ? nullptr : stmts.back()->as<ir::YieldStmt>();
  if (yield) {
    const std::vector<ExprPtr> values = yield->values;
    const Span yield_span = yield->span();
    stmts.pop_back();
    std::vector<VarPtr> next;
    for (size_t i = 0; i < values.size(); ++i) {
      next.push_back(
          ir::make_var("__next_" + iter_args[i]->name, iter_args[i]->type(), yield_span));
      stmts.push_back(assign(next.back(), values[i], yield_span));
    }
    for (size_t i = 0; i < values.size(); ++i)
      stmts.push_back(assign(iter_args[i], next[i], yield_span));
  }
  for (size_t i = 0; i < return_vars.size(); ++i)
    out.after.push_back(assign(return_vars[i], iter_args[i], span));
  out.body = ir::make_seq(std::move(stmts), span);
  return out;
}

StmtPtr with_carried(CarriedAsVariables&& c, StmtPtr loop, Span span) {
  c.before.push_back(std::move(loop));
  for (auto& s : c.after) c.before.push_back(std::move(s));
  return ir::make_seq(std::move(c.before), span);
}

// Rewrites one loop's body so that nothing after an exit of that loop runs on the trip it
// happened. Exits of loops nested inside were lowered with those loops already.
class ExitLowering {
 public:
  ExitLowering(const LoopContext& loop, Span span) : loop_(loop), span_(span) {}

  // The body: resets the continue flag at the top of each trip, then the guarded statements.
  std::vector<StmtPtr> body(const StmtPtr& body) {
    std::vector<StmtPtr> flat;
    flatten_into(body, &flat);
    std::vector<StmtPtr> out;
    if (loop_.continue_flag)
      out.push_back(assign(loop_.continue_flag, ir::make_bool(false), span_));
    for (auto& s : lower(flat, 0)) out.push_back(std::move(s));
    return out;
  }

  // `not (break_flag or continue_flag)`: no exit happened yet on this trip.
  ExprPtr no_exit_yet() const {
    ExprPtr exited = loop_.break_flag;
    if (loop_.continue_flag) {
      exited = exited ? ir::make_binary(ir::BinaryOp::Or, exited, loop_.continue_flag, span_)
                      : loop_.continue_flag;
    }
    return bool_not(exited, span_);
  }

 private:
  std::vector<StmtPtr> lower(const std::vector<StmtPtr>& stmts, size_t from) {
    std::vector<StmtPtr> out;
    for (size_t k = from; k < stmts.size(); ++k) {
      const StmtPtr& s = stmts[k];
      if (loop_.exits.count(s.get())) {
        out.push_back(s);
        return out;  // what follows an exit in its block never runs
      }
      const Span* exit = find_exit(s);
      if (!exit) {
        out.push_back(s);
        continue;
      }
      const auto* branch = s->as<ir::IfStmt>();
      if (!branch) {
        throw CompileError(*exit, "'break' and 'continue' cannot leave a 'with pl.at(...)' scope");
      }
      if (!branch->return_vars.empty()) {
        throw CompileError(*exit,
                           "'break' and 'continue' cannot be used in an if whose branches end "
                           "with pl.yield_; assign the variables in the branches instead");
      }
      out.push_back(
          ir::make_node<ir::IfStmt>(branch->cond, lower_block(branch->then_body),
                                    branch->else_body ? lower_block(branch->else_body) : StmtPtr(),
                                    std::vector<VarPtr>{}, branch->span()));
      if (k + 1 < stmts.size()) {
        std::vector<StmtPtr> rest = lower(stmts, k + 1);
        const Span rest_span = stmts[k + 1]->span();
        out.push_back(ir::make_node<ir::IfStmt>(no_exit_yet(), ir::make_seq(std::move(rest)),
                                                StmtPtr(), std::vector<VarPtr>{}, rest_span));
      }
      return out;
    }
    return out;
  }

  StmtPtr lower_block(const StmtPtr& block) {
    std::vector<StmtPtr> flat;
    flatten_into(block, &flat);
    return ir::make_seq(lower(flat, 0), block->span());
  }

  // Where the first exit of this loop inside `s` is written, or null when there is none.
  const Span* find_exit(const StmtPtr& s) const {
    if (!s) return nullptr;
    if (auto it = loop_.exits.find(s.get()); it != loop_.exits.end()) return &it->second;
    if (const auto* seq = s->as<ir::SeqStmts>()) {
      for (const auto& st : seq->stmts)
        if (const Span* e = find_exit(st)) return e;
      return nullptr;
    }
    if (const auto* i = s->as<ir::IfStmt>()) {
      if (const Span* e = find_exit(i->then_body)) return e;
      return find_exit(i->else_body);
    }
    if (const auto* sc = s->as<ir::ScopeStmt>()) return find_exit(sc->body);
    return nullptr;  // a nested loop's exits are its own
  }

  const LoopContext& loop_;
  Span span_;
};

}  // namespace

void Parser::enter_loop(std::string kind, bool allows_exits, bool has_init, Span span) {
  LoopContext loop;
  loop.kind = std::move(kind);
  loop.allows_exits = allows_exits;
  loop.has_init = has_init;
  loop.span = span;
  loops_.push_back(std::move(loop));
}

LoopContext Parser::leave_loop() {
  LoopContext loop = std::move(loops_.back());
  loops_.pop_back();
  return loop;
}

std::vector<StmtPtr> Parser::scope_body(Block&& body, Block* enclosing) {
  if (body.yield) {  // PyPTO's printed form: the scope ends its loop body or if branch
    hoisted_yield_ = std::move(body.stmts.back());
    body.stmts.pop_back();
    enclosing->yield = std::move(body.yield);
    body.yield.reset();
  }
  return std::move(body.stmts);
}

void Parser::parse_yield(Block& block, BlockKind kind, const std::vector<const Token*>& targets) {
  const Span span = here();
  if (kind != BlockKind::LoopWithIterArgs && kind != BlockKind::IfBranch &&
      kind != BlockKind::ScopeEndingABlock) {
    fail(span, kind == BlockKind::Loop
                   ? "pl.yield_ in a loop without init_values (write 'for i, (x,) in "
                     "pl.range(n, init_values=(x0,))')"
                   : "pl.yield_ is only allowed at the end of a loop body or an if branch");
  }
  // `x = (pl.yield_(...))`: the value may be written in parentheses (to break a long line).
  const bool parenthesized = at(TK::LParen);
  if (parenthesized) advance();
  advance();
  advance();
  advance();
  expect(TK::LParen, "'(' after pl.yield_");
  YieldInfo info;
  info.span = span;
  while (!at(TK::RParen)) {
    Value v = parse_value();
    info.values.push_back(expect_expr(v, "an argument of pl.yield_"));
    info.value_spans.push_back(v.span);
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl.yield_(...)");
  if (parenthesized) expect(TK::RParen, "')' to close the parenthesized pl.yield_(...)");
  if (info.values.size() != targets.size()) {
    fail(span, "pl.yield_ gives " + std::to_string(info.values.size()) + " value(s) but " +
                   std::to_string(targets.size()) + " name(s) are assigned");
  }
  for (const Token* t : targets) {
    info.names.push_back(t->text);
    info.name_spans.push_back(span_of(*t));
  }
  block.stmts.push_back(ir::make_node<ir::YieldStmt>(info.values, span));
  block.yield = std::move(info);
}

StmtPtr Parser::parse_loop_exit() {
  const Token& t = advance();
  const Span span = span_of(t);
  const bool is_break = t.kind == TK::KwBreak;
  const std::string word = is_break ? "'break'" : "'continue'";
  if (loops_.empty()) fail(span, word + " outside a loop");
  LoopContext& loop = loops_.back();
  if (!loop.allows_exits) {
    fail(span, word + " is only allowed when the innermost loop is a pl.range or while loop; " +
                   "here it is a " + loop.kind + " loop");
  }
  VarPtr& flag = is_break ? loop.break_flag : loop.continue_flag;
  if (!flag) {
    flag = ir::make_var(is_break ? "__break" : "__continue", ir::scalar_type(DataType::BOOL),
                        loop.span);
  }
  StmtPtr s = assign(flag, ir::make_bool(true, span), span);
  loop.exits.emplace(s.get(), span);
  return s;
}

StmtPtr Parser::lower_for_exits(const LoopContext& loop,
                                const std::shared_ptr<const ir::ForStmt>& f) {
  if (loop.exits.empty()) return f;
  const Span span = f->span();
  if (!f->iter_args.empty()) {
    CarriedAsVariables c =
        carried_as_variables(f->iter_args, f->init_values, f->body, f->return_vars, span);
    auto plain = ir::make_node<ir::ForStmt>(f->loop_var, f->start, f->stop, f->step, f->for_kind,
                                            std::vector<VarPtr>{}, std::vector<ExprPtr>{}, c.body,
                                            std::vector<VarPtr>{}, span);
    return with_carried(std::move(c), lower_for_exits(loop, plain), span);
  }
  ExitLowering lowering(loop, span);
  std::vector<StmtPtr> body = lowering.body(f->body);
  if (!loop.break_flag) {
    return ir::make_node<ir::ForStmt>(f->loop_var, f->start, f->stop, f->step, f->for_kind,
                                      f->iter_args, f->init_values,
                                      ir::make_seq(std::move(body), span), f->return_vars, span);
  }
  // `for i in pl.range(start, stop, step)` with a break: i = start; while i < stop (i > stop for
  // a negative step) and not broken: ...; i += step unless broken. The bounds are read once,
  // as pl.range reads them.
  std::vector<StmtPtr> out;
  const VarPtr& i = f->loop_var;
  out.push_back(assign(i, f->start, span));
  auto once = [&](const ExprPtr& e, const char* name) -> ExprPtr {
    if (ir::as_const_int(e)) return e;
    VarPtr v = ir::make_var(name, e->type(), span);
    out.push_back(assign(v, e, span));
    return v;
  };
  ExprPtr stop = once(f->stop, "__stop");
  ExprPtr step = once(f->step, "__step");
  out.push_back(assign(loop.break_flag, ir::make_bool(false, span), span));
  using ir::BinaryOp;
  ExprPtr in_range;
  if (auto c = ir::as_const_int(step)) {
    in_range = ir::make_binary(*c > 0 ? BinaryOp::Lt : BinaryOp::Gt, i, stop, span);
  } else {
    ExprPtr zero = ir::make_int(0, span);
    in_range = ir::make_binary(
        BinaryOp::Or,
        ir::make_binary(BinaryOp::And, ir::make_binary(BinaryOp::Gt, step, zero, span),
                        ir::make_binary(BinaryOp::Lt, i, stop, span), span),
        ir::make_binary(BinaryOp::And, ir::make_binary(BinaryOp::Lt, step, zero, span),
                        ir::make_binary(BinaryOp::Gt, i, stop, span), span),
        span);
  }
  ExprPtr cond = ir::make_binary(BinaryOp::And, in_range, bool_not(loop.break_flag, span), span);
  body.push_back(
      ir::make_node<ir::IfStmt>(bool_not(loop.break_flag, span),
                                assign(i, ir::make_binary(BinaryOp::Add, i, step, span), span),
                                StmtPtr(), std::vector<VarPtr>{}, span));
  out.push_back(ir::make_node<ir::WhileStmt>(cond, std::vector<VarPtr>{}, std::vector<ExprPtr>{},
                                             ir::make_seq(std::move(body), span),
                                             std::vector<VarPtr>{}, span));
  return ir::make_seq(std::move(out), span);
}

StmtPtr Parser::lower_while_exits(const LoopContext& loop,
                                  const std::shared_ptr<const ir::WhileStmt>& w) {
  if (loop.exits.empty()) return w;
  const Span span = w->span();
  if (!w->iter_args.empty()) {
    CarriedAsVariables c =
        carried_as_variables(w->iter_args, w->init_values, w->body, w->return_vars, span);
    auto plain =
        ir::make_node<ir::WhileStmt>(w->cond, std::vector<VarPtr>{}, std::vector<ExprPtr>{}, c.body,
                                     std::vector<VarPtr>{}, span);
    return with_carried(std::move(c), lower_while_exits(loop, plain), span);
  }
  ExitLowering lowering(loop, span);
  StmtPtr body = ir::make_seq(lowering.body(w->body), span);
  if (!loop.break_flag) {
    return ir::make_node<ir::WhileStmt>(w->cond, w->iter_args, w->init_values, body, w->return_vars,
                                        span);
  }
  std::vector<StmtPtr> out;
  out.push_back(assign(loop.break_flag, ir::make_bool(false, span), span));
  ExprPtr cond = ir::make_binary(ir::BinaryOp::And, w->cond, bool_not(loop.break_flag, span), span);
  out.push_back(
      ir::make_node<ir::WhileStmt>(cond, w->iter_args, w->init_values, body, w->return_vars, span));
  return ir::make_seq(std::move(out), span);
}

StmtPtr Parser::parse_while() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();  // 'while'
  Value c = parse_value();
  ExprPtr cond = expect_expr(c, "a while condition");
  if (!cond->type() || !cond->type()->as<ir::ScalarType>()) {
    fail(c.span, "expected a scalar condition, got " + ir::type_to_string(cond->type()));
  }
  expect(TK::Colon, "':' after the while condition");
  enter_loop("while", /*allows_exits=*/true, /*has_init=*/false, span);
  Block body = parse_block(BlockKind::Loop, [&] {
    return "'while' statement on line " + std::to_string(span.line + line_offset_);
  });
  const LoopContext loop = leave_loop();
  if (at(TK::KwElse)) fail_here("'while ... else' is not supported");
  return lower_while_exits(
      loop, ir::make_node<ir::WhileStmt>(cond, std::vector<VarPtr>{}, std::vector<ExprPtr>{},
                                         ir::make_seq(std::move(body.stmts), span),
                                         std::vector<VarPtr>{}, span));
}

bool Parser::at_explicit_while() const {
  if (peek_token(1).kind == TK::LParen) return true;
  size_t ahead = 1;
  while (peek_token(ahead).kind == TK::Name && peek_token(ahead + 1).kind == TK::Comma) ahead += 2;
  if (peek_token(ahead).kind != TK::Name || peek_token(ahead + 1).kind != TK::KwIn) return false;
  return at_pl_member(ahead + 2, "while_");
}

StmtPtr Parser::parse_explicit_while() {
  DepthGuard guard(*this);
  const Span span = here();
  advance();  // 'for'
  // `for (x, y) in pl.while_(...)` or, without the parentheses, `for x, y in pl.while_(...)`.
  const bool parenthesized = at(TK::LParen);
  if (parenthesized) advance();
  std::vector<const Token*> carried;
  while (at(TK::Name)) {
    carried.push_back(&advance());
    if (!at(TK::Comma)) break;
    advance();
  }
  if (carried.empty()) expected("the names of the loop-carried values");
  if (parenthesized) expect(TK::RParen, "')' after the loop-carried names");
  expect(TK::KwIn, "'in' after the loop target");
  if (!at_pl_member(0, "while_")) {
    expected("pl.while_(init_values=(...)) after 'for (names) in' (pl.range takes 'for i, (...)')");
  }
  advance();
  advance();
  advance();
  expect(TK::LParen, "'(' after pl.while_");
  if (!(at(TK::Name) && cur().text == "init_values" && peek_token(1).kind == TK::Assign)) {
    expected("init_values=(...) in pl.while_");
  }
  advance();
  advance();
  const Span init_span = here();
  std::vector<ExprPtr> init_values = parse_init_values();
  if (at(TK::Comma)) advance();
  expect(TK::RParen, "')' to close pl.while_(...)");
  if (init_values.size() != carried.size()) {
    fail(init_span, "init_values has " + std::to_string(init_values.size()) +
                        " value(s) but the loop names " + std::to_string(carried.size()));
  }
  expect(TK::Colon, "':' after the for statement");
  std::vector<VarPtr> iter_args;
  for (size_t i = 0; i < carried.size(); ++i) {
    check_assignable(*carried[i]);
    iter_args.push_back(bind_var(carried[i]->text, init_values[i]->type(), span_of(*carried[i])));
  }
  // The body: `pl.cond(<condition>)` first, then the statements, then `x = pl.yield_(...)`.
  if (!at(TK::Newline)) fail_here("the body of a pl.while_ loop starts on a new line with pl.cond");
  advance();
  if (!at(TK::Indent)) expected("an indented block after the pl.while_ header");
  advance();
  if (!at_pl_member(0, "cond"))
    expected("pl.cond(<condition>) as the first statement of pl.while_");
  advance();
  advance();
  advance();
  expect(TK::LParen, "'(' after pl.cond");
  Value c = parse_value();
  ExprPtr cond = expect_expr(c, "the condition of pl.cond");
  if (!cond->type() || !cond->type()->as<ir::ScalarType>()) {
    fail(c.span, "expected a scalar condition, got " + ir::type_to_string(cond->type()));
  }
  expect(TK::RParen, "')' to close pl.cond(...)");
  if (at(TK::Newline)) advance();
  enter_loop("pl.while_", /*allows_exits=*/true, /*has_init=*/true, span);
  SsaBlock ssa_block(*this);
  Block body;
  while (!at(TK::Dedent) && !at(TK::EndOfFile)) {
    if (body.yield) fail_here("pl.yield_ must be the last statement of its block");
    parse_statement(body, BlockKind::LoopWithIterArgs);
  }
  if (at(TK::Dedent)) advance();
  const LoopContext loop = leave_loop();
  if (!body.yield) {
    fail(span,
         "a pl.while_ loop must end with 'x = pl.yield_(...)' giving the next values of the "
         "loop-carried names");
  }
  const YieldInfo& y = *body.yield;
  if (y.values.size() != iter_args.size()) {
    fail(y.span, "pl.yield_ gives " + std::to_string(y.values.size()) +
                     " value(s) but the loop carries " + std::to_string(iter_args.size()));
  }
  std::vector<VarPtr> return_vars;
  for (size_t i = 0; i < y.values.size(); ++i) {
    if (!same_shape_dtype(iter_args[i]->type(), y.values[i]->type())) {
      fail(y.value_spans[i], "pl.yield_ value " + std::to_string(i + 1) + " has type " +
                                 ir::type_to_string(y.values[i]->type()) +
                                 " but the loop-carried value has type " +
                                 ir::type_to_string(iter_args[i]->type()));
    }
    return_vars.push_back(bind_var(y.names[i], iter_args[i]->type(), y.name_spans[i]));
  }
  return lower_while_exits(
      loop, ir::make_node<ir::WhileStmt>(cond, std::move(iter_args), std::move(init_values),
                                         ir::make_seq(std::move(body.stmts), span),
                                         std::move(return_vars), span));
}

}  // namespace pypto::frontend::detail
