// PyPTO's task scopes and explicit dependencies: `with pl.manual_scope():`, `pl.submit` and
// `pl.spmd_submit` with deps= and predicate=, `with pl.at(..., deps=[...]) as tid:`,
// `with pl.spmd(n, deps=[...], predicate=...) as tid:`, `pl.system.task_dummy`, and arrays of
// TaskIds (`pl.array.create(n, pl.TASK_ID)`, `tids[i] = tid`, `pl.array.update_element`).
// They lower to the scheduling ops of src/ir/task_ops.h: a task_options statement right before
// the kernel call (or the scope that becomes one) it applies to, followed by task_blocks(n) for
// an SPMD launch of n > 1 blocks, and `tid = task_id()` after the call.
#include "parser_state.h"
#include "pto_abi.h"
#include "pypto/ir/task_types.h"

namespace pypto::frontend::detail {

namespace {

ExprPtr no_task(Span span) { return ir::make_node<ir::IntImm>(0, ir::kTaskIdDType, span); }

// The PtoCmpType of a comparison, and of the same comparison with its operands swapped.
std::optional<int64_t> comparison_code(ir::BinaryOp op, bool swapped) {
  switch (op) {
    case ir::BinaryOp::Eq:
      return PTO_CMP_EQ;
    case ir::BinaryOp::Ne:
      return PTO_CMP_NE;
    case ir::BinaryOp::Lt:
      return swapped ? PTO_CMP_GT : PTO_CMP_LT;
    case ir::BinaryOp::Le:
      return swapped ? PTO_CMP_GE : PTO_CMP_LE;
    case ir::BinaryOp::Gt:
      return swapped ? PTO_CMP_LT : PTO_CMP_GT;
    case ir::BinaryOp::Ge:
      return swapped ? PTO_CMP_LE : PTO_CMP_GE;
    default:
      return std::nullopt;
  }
}

// The integer literal `e` is (a negative one is a negation of a literal, or folded already).
std::optional<int64_t> integer_literal(const ExprPtr& e) {
  if (const auto* i = e->as<ir::IntImm>()) return i->value;
  if (const auto* u = e->as<ir::Unary>(); u && u->op == ir::UnaryOp::Neg) {
    if (const auto* i = u->a->as<ir::IntImm>()) return -i->value;
  }
  return std::nullopt;
}

// `tensor[indices]` as the parser writes it (a pl.read, perhaps cast for the comparison).
const ir::Call* element_read(const ExprPtr& e) {
  const auto* call = e->as<ir::Call>();
  if (call && call->call_kind == ir::CallKind::Op && call->callee == "cast" && !call->args.empty())
    call = call->args[0]->as<ir::Call>();
  if (call && call->call_kind == ir::CallKind::Op && call->callee == "read") return call;
  return nullptr;
}

}  // namespace

ExprPtr Parser::parse_dependency_list(std::string_view owner) {
  const Span span = here();
  if (!at(TK::LBracket)) fail_here("deps= takes a list of TaskIds, e.g. deps=[tid]");
  std::vector<ExprPtr> deps;
  std::vector<ir::TypePtr> types;
  auto read_entry = [&] {
    const Span entry_span = here();
    ExprPtr entry;
    if (at(TK::KwNone)) {
      advance();  // PyPTO's "no producer yet": no edge
      entry = no_task(entry_span);
    } else {
      entry = expect_expr(parse_value(), [&] { return "deps= of " + std::string(owner); });
    }
    if (!ir::is_task_id_type(entry->type()) && !ir::is_task_array_type(entry->type())) {
      fail(entry_span,
           "deps= entries must be TaskIds (bound by pl.submit, 'with pl.at(...) as tid', "
           "pl.system.task_dummy or a pl.array of pl.TASK_ID) or None, got " +
               ir::type_to_string(entry->type()));
    }
    types.push_back(entry->type());
    deps.push_back(std::move(entry));
  };
  if (at_list_comprehension()) {  // deps=[tids[i] for i in range(4)]
    parse_list_comprehension(read_entry);
    return ir::make_node<ir::MakeTuple>(std::move(deps), ir::tuple_type(std::move(types)), span);
  }
  advance();
  while (!at(TK::RBracket)) {
    read_entry();
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, "']' to close deps=[...]");
  return ir::make_node<ir::MakeTuple>(std::move(deps), ir::tuple_type(std::move(types)), span);
}

TaskPredicate Parser::parse_task_predicate() {
  const Span span = here();
  Value v = parse_value();
  const auto* cmp = v.kind == Value::Kind::Expr ? v.expr->as<ir::Binary>() : nullptr;
  auto reject = [&] {
    fail(span,
         "predicate= takes one comparison of a tensor element with an integer literal, e.g. "
         "predicate=(count[0, 0] > 0)");
  };
  if (!cmp || !comparison_code(cmp->op, false)) reject();
  const ir::Call* read = element_read(cmp->a);
  std::optional<int64_t> target = integer_literal(cmp->b);
  bool swapped = false;
  if (!read) {
    read = element_read(cmp->b);
    target = integer_literal(cmp->a);
    swapped = true;
  }
  if (!read || !target) reject();
  if (!read->args.at(0)->as<ir::Var>() || !read->args[0]->type()->as<ir::TensorType>()) {
    fail(span, "the predicate's operand must be a named tensor, subscripted to one element");
  }
  TaskPredicate p;
  p.operand = read->args[0];
  p.indices = read->args.at(1);
  p.cmp = *comparison_code(cmp->op, swapped);
  p.target = *target;
  p.span = span;
  return p;
}

StmtPtr Parser::task_options_stmt(ExprPtr deps, const std::optional<TaskPredicate>& predicate,
                                  Span span) {
  if (!deps) deps = ir::make_node<ir::MakeTuple>(std::vector<ExprPtr>{}, ir::tuple_type({}), span);
  std::vector<ExprPtr> args{std::move(deps)};
  ir::Attrs attrs;
  if (predicate) {
    args.push_back(predicate->operand);
    args.push_back(predicate->indices);
    attrs.emplace_back("predicate_cmp", predicate->cmp);
    attrs.emplace_back("predicate_target", predicate->target);
  }
  return ir::make_node<ir::EvalStmt>(
      ir::make_op_call("task_options", std::move(args), std::move(attrs), span), span);
}

StmtPtr Parser::task_blocks_stmt(const ExprPtr& core_num, Span span) {
  // One block is a plain submission; a count known to be below one is refused here (a
  // computed one is checked when the orchestration runs).
  const auto n = ir::as_const_int(core_num);
  if (n && *n == 1) return nullptr;
  const Span at = core_num->span().valid() ? core_num->span() : span;
  if (n && *n < 1) fail(at, "pl.spmd needs at least one block, got core_num=" + std::to_string(*n));
  return ir::make_node<ir::EvalStmt>(ir::make_op_call("task_blocks", {core_num}, {}, at), span);
}

StmtPtr Parser::bind_task_id(const Token& name) {
  check_single_assignment(name);
  ExprPtr id = ir::make_op_call("task_id", {}, {}, span_of(name));
  VarPtr var = bind_var(name.text, id->type(), span_of(name));
  return ir::make_node<ir::AssignStmt>(var, id, span_of(name));
}

void Parser::parse_submit(Block& block, const std::vector<const Token*>& targets) {
  // pl.submit(self.kernel, *args, deps=[...], predicate=(...), ...) and pl.spmd_submit(...,
  // core_num=N): the kernel's results, then its TaskId.
  const Span span = here();
  advance();
  advance();
  const Token& form = advance();
  const bool spmd = form.text == "spmd_submit";
  const std::string label = "pl." + std::string(form.text);
  expect(TK::LParen, "'(' after " + label);
  if (!at_name("self") || peek_token(1).kind != TK::Dot) {
    fail_here(label + "(...) first argument must be a self.<kernel> method reference");
  }
  advance();
  advance();
  const Token& name = expect_name("a function name after 'self.'");
  size_t callee = signatures_.size();
  for (size_t i = 0; i < signatures_.size(); ++i) {
    if (!signatures_[i].specialisation_of && signatures_[i].name == name.text) callee = i;
  }
  if (callee == signatures_.size()) {
    fail(span_of(name), "program has no function '" + std::string(name.text) + "'");
  }
  std::vector<ExprPtr> args;
  std::vector<Span> arg_spans;
  ExprPtr deps;
  std::optional<TaskPredicate> predicate;
  ExprPtr core_num;
  std::vector<std::string> seen;
  while (at(TK::Comma)) {
    advance();
    if (at(TK::RParen)) break;
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      const Token& key = advance();
      advance();
      const std::string k(key.text);
      if (std::find(seen.begin(), seen.end(), k) != seen.end())
        fail(span_of(key), label + " got argument '" + k + "' twice");
      seen.push_back(k);
      if (k == "deps") {
        deps = parse_dependency_list(label);
      } else if (k == "predicate") {
        predicate = parse_task_predicate();
      } else if (k == "core_num" && spmd) {
        core_num = expect_expr(parse_value(), "core_num= of " + label);
      } else if (k == "dumps") {
        parse_dump_list(label);
      } else if (k == "allow_early_resolve" || (k == "sync_start" && spmd)) {
        // Scheduling hints of the NPU's dispatcher: a task still starts only once its
        // dependencies are done, which is all the CPU device honours.
        parse_bool_argument(k);
      } else {
        fail(span_of(key), "unknown argument '" + k + "' of " + label + " (expected deps, " +
                               (spmd ? "core_num, sync_start, " : "") +
                               "predicate, dumps or allow_early_resolve)");
      }
      continue;
    }
    if (!seen.empty()) fail_here("a positional argument of " + label + " after a keyword one");
    arg_spans.push_back(here());
    args.push_back(expect_expr(parse_value(), [&] {
      return "argument " + std::to_string(args.size() + 1) + " of " + label;
    }));
  }
  expect(TK::RParen, "')' to close " + label + "(...)");
  StmtPtr blocks;
  if (spmd) {
    if (!core_num) fail(span, label + " needs core_num=N (the positional slots are the kernel's)");
    blocks = task_blocks_stmt(core_num, span);
  }
  Value call = finish_self_call(callee, std::move(args), arg_spans, {}, span,
                                "self." + std::string(name.text));
  const auto& sig_returns = call.expr->type()->as<ir::TupleType>()
                                ? call.expr->type()->as<ir::TupleType>()->elements.size()
                                : (call.expr->type() ? 1u : 0u);
  if (targets.size() != sig_returns + 1) {
    fail(span_of(*targets[0]), label + "(...) unpacks " + std::to_string(targets.size() - 1) +
                                   " result value(s) but the kernel returns " +
                                   std::to_string(sig_returns) + " (then its TaskId)");
  }
  for (const Token* t : targets) check_assignable(*t);
  block.stmts.push_back(task_options_stmt(deps, predicate, span));
  if (blocks) block.stmts.push_back(blocks);
  const std::vector<const Token*> results(targets.begin(), targets.end() - 1);
  if (results.empty()) {
    block.stmts.push_back(ir::make_node<ir::EvalStmt>(call.expr, span));
  } else {
    bind_targets(block, results, call);
  }
  block.stmts.push_back(bind_task_id(*targets.back()));
}

StmtPtr Parser::parse_manual_scope(Span span, Block* enclosing) {
  // `with pl.manual_scope():` (or pl.scope(mode=pl.ScopeMode.MANUAL)): inside, tasks wait for
  // their explicit deps= only.
  advance();
  advance();
  const Token& form = advance();
  expect(TK::LParen, "'(' after pl." + std::string(form.text));
  if (form.text == "scope") {
    const Span mode_span = here();
    bool manual = false;
    if (at_name("mode") && peek_token(1).kind == TK::Assign) {
      advance();
      advance();
      if (at_name("pl")) {
        advance();
        expect(TK::Dot, "'.' after pl");
      }
      const Token& e = expect_name("pl.ScopeMode");
      if (e.text != "ScopeMode") fail(span_of(e), "expected pl.ScopeMode.MANUAL");
      expect(TK::Dot, "'.' after pl.ScopeMode");
      const Token& m = expect_name("MANUAL or AUTO");
      manual = m.text == "MANUAL";
      if (!manual && m.text != "AUTO") fail(span_of(m), "pl.ScopeMode has AUTO and MANUAL");
    }
    if (!manual) return parse_auto_scope(span, mode_span, enclosing);
  }
  expect(TK::RParen, "')': pl.manual_scope() takes no arguments");
  if (at(TK::KwAs)) fail_here("'with pl.manual_scope() as ...' binds nothing");
  expect(TK::Colon, "':' after the with statement");
  if (in_manual_scope_) fail(span, "a pl.manual_scope cannot be nested in another one");
  in_manual_scope_ = true;
  Block body = parse_block(enclosing ? BlockKind::ScopeEndingABlock : BlockKind::Scope, [&] {
    return "'with' statement on line " + std::to_string(span.line + line_offset_);
  });
  in_manual_scope_ = false;
  auto mode = [&](bool manual) {
    return ir::make_node<ir::EvalStmt>(
        ir::make_op_call("manual_scope", {}, {{"manual", manual}}, span), span);
  };
  const bool ends_with_return = body.ends_with_return;
  std::vector<StmtPtr> stmts{mode(true)};
  for (auto& st : scope_body(std::move(body), enclosing)) stmts.push_back(std::move(st));
  if (!ends_with_return) stmts.push_back(mode(false));
  return ir::make_node<ir::SeqStmts>(std::move(stmts), span);
}

StmtPtr Parser::parse_spmd_with(Span span) {
  // `with pl.spmd(n, name_hint=..., deps=[...], predicate=(...)) as tid:` is one dispatch: a
  // kernel called in its body, or its body outlined into one.
  advance();
  advance();
  advance();
  AtScopeArgs args;
  std::optional<TaskPredicate> predicate;
  ExprPtr core_num = parse_spmd_arguments(args, &predicate, span);
  const Token* tid = nullptr;
  if (at(TK::KwAs)) {
    advance();
    tid = &expect_name("a name for the TaskId after 'as'");
  } else if (args.deps) {
    fail(span, "pl.spmd() does not accept 'deps=' here: bind the region with 'as tid:'");
  }
  StmtPtr blocks = task_blocks_stmt(core_num, span);
  expect(TK::Colon, "':' after the with statement");
  const CountedScope core_scope(core_scopes_open_);
  Block body = parse_block(BlockKind::Scope, [&] {
    return "'with' statement on line " + std::to_string(span.line + line_offset_);
  });
  // A body that calls one kernel launches it; any other body becomes the launched kernel.
  size_t calls = 0;
  for (const auto& st : body.stmts) {
    const ExprPtr* value = nullptr;
    if (const auto* a = st->as<ir::AssignStmt>()) value = &a->value;
    if (const auto* e = st->as<ir::EvalStmt>()) value = &e->expr;
    const auto* call = value ? (*value)->as<ir::Call>() : nullptr;
    if (call && call->call_kind == ir::CallKind::Function) ++calls;
  }
  std::vector<StmtPtr> stmts{task_options_stmt(args.deps, predicate, span)};
  if (blocks) stmts.push_back(blocks);
  if (calls == 1) {
    for (auto& st : body.stmts) stmts.push_back(std::move(st));
  } else {
    stmts.push_back(ir::make_node<ir::ScopeStmt>(
        args.level, ir::make_seq(std::move(body.stmts), span), span, std::move(args.name_hint)));
  }
  if (tid) stmts.push_back(bind_task_id(*tid));
  return ir::make_node<ir::SeqStmts>(std::move(stmts), span);
}

Value Parser::parse_task_namespace(std::string_view ns, Span span) {
  expect(TK::Dot, "'.' after pl." + std::string(ns));
  const Token& op = expect_name("an op name after 'pl." + std::string(ns) + ".'");
  const std::string label = "pl." + std::string(ns) + "." + std::string(op.text);
  task_id_dtype_allowed_ = ns == "array" && op.text == "create";
  std::vector<CallArg> call_args = parse_call_args(label);
  task_id_dtype_allowed_ = false;
  auto positional = [&](size_t i, const char* what) -> const Value& {
    if (i >= call_args.size() || !call_args[i].keyword.empty())
      fail(span, label + " needs " + what + " as argument " + std::to_string(i + 1));
    return call_args[i].value;
  };
  if (ns == "system" && op.text == "task_dummy") {
    fail(span, "internal: pl.system.task_dummy is parsed with its deps");
  }
  if (ns == "array" && op.text == "create") {
    if (call_args.size() != 2) fail(span, label + " takes a size and an element type");
    ExprPtr size = expect_expr(positional(0, "the number of slots"), label);
    const Value& dtype = call_args[1].value;
    // An array of TaskIds (an orchestration's) or of integers (a kernel's scalar array, read
    // and written by element: arr[i], arr[i] = v): a one-dimensional tensor either way.
    if (dtype.kind != Value::Kind::DType ||
        (dtype.dtype != ir::kTaskIdDType && !ir::is_integer(dtype.dtype))) {
      fail(dtype.span, label + " holds TaskIds or integers: write " + label +
                           "(n, pl.TASK_ID) or " + label + "(n, pl.INT32)");
    }
    // A literal, a module constant or arithmetic on them (pl.array.create(layers * width, ...)).
    const ir::ScalarFold slots = fold_constant(size);
    if (!slots.exact() || slots.value->kind != ir::Scalar::Kind::Int || slots.value->i <= 0)
      fail(call_args[0].value.span, "the size of " + label + " must be a positive constant");
    ExprPtr shape = ir::make_tuple({ir::make_int(slots.value->i, span)}, span);
    return expr_value(ir::make_op_call("create_tensor", {shape}, {{"dtype", dtype.dtype}}, span),
                      span);
  }
  if (ns == "array" && op.text == "update_element") {
    if (call_args.size() != 3) fail(span, label + " takes the array, a slot and a TaskId");
    std::vector<ExprPtr> args;
    for (size_t i = 0; i < 3; ++i) args.push_back(expect_expr(positional(i, "a value"), label));
    return expr_value(ir::make_op_call("task_array_set", std::move(args), {}, span), span);
  }
  fail(span_of(op), label +
                        " is not supported (TaskId arrays support pl.array.create(n, "
                        "pl.TASK_ID) and pl.array.update_element; pl.system has task_dummy)");
}

Value Parser::parse_task_dummy(Span span) {
  // pl.system.task_dummy(deps=[...]): a barrier task, one TaskId for all of `deps`.
  expect(TK::LParen, "'(' after pl.system.task_dummy");
  if (!at_name("deps") || peek_token(1).kind != TK::Assign)
    fail_here("pl.system.task_dummy takes deps=[...]");
  advance();
  advance();
  ExprPtr deps = parse_dependency_list("pl.system.task_dummy");
  if (at(TK::Comma)) advance();
  expect(TK::RParen, "')' to close pl.system.task_dummy(...)");
  return expr_value(ir::make_op_call("task_dummy", {deps}, {}, span), span);
}

StmtPtr Parser::parse_auto_scope(Span span, Span mode_span, Block* enclosing) {
  // `with pl.scope():` (mode AUTO): a block in which the runtime infers dependencies, as it
  // does everywhere outside a manual scope, so it is the block itself. PyPTO places these
  // scopes itself unless the function says auto_scope=False, and refuses them in a manual
  // scope; so does this parser, for programs to mean the same in both.
  expect(TK::RParen, "')': pl.scope() takes only mode=");
  if (at(TK::KwAs)) fail_here("'with pl.scope() as ...' binds nothing");
  expect(TK::Colon, "':' after the with statement");
  const FunctionSignature& sig = signatures_[current_function_];
  if (sig.attrs.auto_scope.value_or(true)) {
    fail(mode_span,
         "a hand-placed AUTO 'with pl.scope()' needs @pl.function(auto_scope=False): the "
         "compiler places AUTO scopes itself otherwise (pl.scope(mode=pl.ScopeMode.MANUAL) is "
         "always allowed)");
  }
  if (in_manual_scope_) fail(mode_span, "an AUTO scope cannot be nested in a manual scope");
  Block body = parse_block(enclosing ? BlockKind::ScopeEndingABlock : BlockKind::Scope, [&] {
    return "'with' statement on line " + std::to_string(span.line + line_offset_);
  });
  return ir::make_node<ir::SeqStmts>(scope_body(std::move(body), enclosing), span);
}

Value Parser::parse_task_invalid(Span span) {
  // pl.system.task_invalid(): the TaskId naming no task, what `prev = None` binds.
  expect(TK::LParen, "'(' after pl.system.task_invalid");
  expect(TK::RParen, "')': pl.system.task_invalid() takes no arguments");
  return expr_value(no_task(span), span);
}

void Parser::parse_no_task_assignment(Block& block, const Token& name) {
  // `prev = None`: a TaskId that names no task yet (PyPTO's seed of a loop-carried dependency
  // chain); as a deps= entry it adds no edge.
  const Span span = here();
  advance();  // None
  if (!at(TK::Newline) && !at(TK::Semicolon) && !at(TK::EndOfFile) && !at(TK::Dedent))
    fail(span, "None is only supported alone on the right of '=' (a TaskId naming no task yet)");
  if (auto existing = lookup_var(name.text); existing && !ir::is_task_id_type(existing->type())) {
    fail(span_of(name), "cannot rebind '" + std::string(name.text) + "' of type " +
                            ir::type_to_string(existing->type()) +
                            " to None (None is a TaskId naming no task)");
  }
  check_single_assignment(name);
  ExprPtr value = no_task(span);
  VarPtr var = bind_var(name.text, value->type(), span_of(name));
  block.stmts.push_back(ir::make_node<ir::AssignStmt>(var, value, span_of(name)));
}

bool Parser::try_task_array_store(Block& block, const VarPtr& array, const Token& name) {
  // `tids[i] = tid`: tids = pl.array.update_element(tids, i, tid).
  advance();  // the name
  const Span span = here();
  advance();  // [
  ExprPtr index = expect_expr(parse_value(), "the slot of a TaskId array");
  expect(TK::RBracket, "']': a TaskId array has one index");
  expect(TK::Assign, "'=' after the slot of a TaskId array");
  ExprPtr tid = expect_expr(parse_value(), "the right-hand side of an assignment");
  check_single_assignment(name);
  ExprPtr value = ir::make_op_call("task_array_set", {array, index, tid}, {}, span);
  VarPtr target = bind_var(name.text, value->type(), span_of(name));
  block.stmts.push_back(ir::make_node<ir::AssignStmt>(target, value, span_of(name)));
  return true;
}

}  // namespace pypto::frontend::detail
