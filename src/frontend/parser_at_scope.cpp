// The arguments of `with pl.at(...)`: PyPTO's level, role, optimizations, name_hint,
// allow_early_resolve, windowize, deps, no_dep_args and dumps; and `for i in pl.spmd(n, ...)`,
// which takes some of them. The simulated device runs CORE_GROUP scopes as kernels, and the
// scopes of the levels above (hierarchy scopes) as functions of their level; the hints that only
// steer the NPU's scheduling and core split are checked and accepted (they do not change what
// the scope computes); the rest is refused by name.
#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

// pl.SplitMode's members, as PyPTO spells them.
bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                    (ch >= '0' && ch <= '9') || ch == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

void Parser::parse_at_argument(const std::string& key, Span key_span, AtScopeArgs& args,
                               std::string_view callee) {
  if (key == "level") {
    Value v = parse_value();
    if (v.kind != Value::Kind::Level) {
      fail(v.span, "expected a level such as pl.Level.CORE_GROUP, got " +
                       std::string(value_kind_description(v)));
    }
    if (v.level == "AIV" || v.level == "AIC") {
      fail(v.span, "pl.at(level=pl.Level." + std::string(v.level) +
                       ") is not a scope: code for one core kind is a function of type "
                       "pl.FunctionType." +
                       std::string(v.level) + " that a Group calls");
    }
    // CORE_GROUP scopes are kernels; the levels above are hierarchy scopes (a chip's
    // orchestration in a host orchestrator), which OutlineHierarchyScopes makes functions of.
    args.level = std::string(canonical_level(v.level));
  } else if (key == "name_hint") {
    const Span value_span = here();
    if (!at(TK::String)) fail(value_span, "name_hint= takes a string, e.g. name_hint=\"attn\"");
    std::string_view text = advance().text;
    const char quote = text.empty() ? '\0' : text.front();
    if ((quote == '"' || quote == '\'') && text.size() >= 2 && text.back() == quote) {
      text = text.substr(1, text.size() - 2);
    }
    if (!is_identifier(text)) {
      fail(value_span, "name_hint must be a valid identifier (it names the outlined kernel), got " +
                           std::string(text.empty() ? "an empty string" : text));
    }
    args.name_hint = std::string(text);
  } else if (key == "optimizations") {
    parse_at_optimizations();
  } else if (key == "allow_early_resolve" || key == "windowize") {
    // Scheduling and windowing hints of the NPU back end: the CPU device runs each scope's
    // kernel to completion, in program order, so neither changes a result.
    parse_bool_argument(key);
  } else if (key == "role") {
    args.role = parse_role();
    args.role_span = key_span;
    if (args.role == "SubWorker") {
      fail(key_span,
           "a SubWorker is not a scope: declare it as a function, "
           "@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker), and call it");
    }
  } else if (key == "deps") {
    args.deps = parse_dependency_list(callee);
  } else if (key == "dumps") {
    parse_dump_list(std::string(callee));
  } else if (key == "no_dep_args") {
    fail(key_span, std::string(callee) + "(" + key +
                       "=...) is not supported: it lists tensors for the NPU runtime's "
                       "per-argument tracking and dumps");
  } else {
    fail(key_span, "unknown argument '" + key +
                       "' of pl.at (expected level, role, optimizations, name_hint, "
                       "allow_early_resolve, windowize, deps, no_dep_args or dumps)");
  }
}

// The arguments of `pl.spmd(n, name_hint=..., ...)`, after its name: the number of blocks
// (returned), the pl.at arguments into `args`, and `predicate=` into `predicate` (the `with`
// form; the `for` form passes null and refuses it).
ExprPtr Parser::parse_spmd_arguments(AtScopeArgs& args, std::optional<TaskPredicate>* predicate,
                                     Span span) {
  expect(TK::LParen, "'(' after pl.spmd");
  args.level = "CORE_GROUP";
  ExprPtr core_num;
  std::vector<std::string> seen;
  while (!at(TK::RParen)) {
    const Span key_span = here();
    std::string key = "core_num";
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      key = std::string(advance().text);
      advance();
    } else if (core_num) {
      fail_here("pl.spmd takes one positional argument, the number of blocks");
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      fail(key_span, "pl.spmd got argument '" + key + "' twice");
    }
    seen.push_back(key);
    if (key == "core_num") {
      Value v = parse_value();
      core_num = expect_expr(v, "the number of blocks of pl.spmd");
      const auto* scalar = core_num->type() ? core_num->type()->as<ir::ScalarType>() : nullptr;
      if (!scalar || ir::is_float(scalar->dtype)) {
        fail(v.span,
             "expected an integer scalar in pl.spmd, got " + ir::type_to_string(core_num->type()));
      }
    } else if (key == "sync_start") {
      // All blocks starting together matters to the NPU's scheduler only.
      parse_bool_argument(key);
    } else if (key == "name_hint" || key == "optimizations" || key == "deps" ||
               key == "allow_early_resolve") {
      parse_at_argument(key, key_span, args, "pl.spmd");
    } else if (key == "predicate" && predicate) {
      *predicate = parse_task_predicate();
    } else if (key == "predicate") {
      fail(key_span,
           "pl.spmd(predicate=...) is not supported: guard the loop with an if statement");
    } else {
      fail(key_span, "unknown argument '" + key +
                         "' of pl.spmd (expected core_num, sync_start, name_hint, optimizations, "
                         "deps, allow_early_resolve or predicate)");
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl.spmd(...)");
  if (!core_num) fail(span, "pl.spmd needs the number of blocks: pl.spmd(4)");
  return core_num;
}

StmtPtr Parser::parse_spmd_loop(Span span, const Token& loop_name) {
  // `for i in pl.spmd(n, name_hint=..., ...)`: the body is a kernel run once per block i in
  // [0, n). Here that is one SPMD launch of n blocks (task_options, task_blocks) of a
  // `with pl.at(CORE_GROUP)` scope of the body, which OutlineIncoreScopes turns into the kernel;
  // inside, `i = pl.tile.get_block_idx()`.
  const Span iterator_span = here();
  advance();
  advance();
  advance();
  AtScopeArgs args;
  ExprPtr core_num = parse_spmd_arguments(args, nullptr, iterator_span);
  if (args.deps) {
    fail(iterator_span,
         "pl.spmd() does not accept 'deps=' here: write 'with pl.spmd(n, deps=[...]) as tid:'");
  }
  StmtPtr blocks = task_blocks_stmt(core_num, iterator_span);
  expect(TK::Colon, "':' after the for statement");
  const Span index_span = span_of(loop_name);
  VarPtr block = bind_var(loop_name.text, ir::scalar_type(DataType::INT64), index_span);
  const CountedScope core_scope(core_scopes_open_);
  Block body = parse_block(BlockKind::Scope, [&] {
    return "'for' statement on line " + std::to_string(span.line + line_offset_);
  });
  std::vector<StmtPtr> kernel_stmts{ir::make_node<ir::AssignStmt>(
      block, ir::make_op_call("get_block_idx", {}, {}, index_span), index_span)};
  for (auto& st : body.stmts) kernel_stmts.push_back(std::move(st));
  std::vector<StmtPtr> stmts{task_options_stmt(nullptr, std::nullopt, span)};
  if (blocks) stmts.push_back(std::move(blocks));
  stmts.push_back(ir::make_node<ir::ScopeStmt>(
      args.level, ir::make_seq(std::move(kernel_stmts), span), span, std::move(args.name_hint)));
  return ir::make_node<ir::SeqStmts>(std::move(stmts), span);
}

// optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]: how the NPU
// splits the scope's kernel over its vector cores and sizes the cross-core pipe. The CPU device
// runs the kernel whole, so the entries are checked and have no effect.
void Parser::parse_at_optimizations() {
  expect(TK::LBracket,
         "'[' to start the optimizations list, e.g. [pl.split(pl.SplitMode.UP_DOWN)]");
  while (!at(TK::RBracket)) {
    const Span entry_span = here();
    const bool is_split = at_pl_member(0, "split");
    if (!is_split && !at_pl_member(0, "cross_core_slot")) {
      fail(entry_span,
           "expected pl.split(pl.SplitMode...) or pl.cross_core_slot(slot_num=N) in "
           "optimizations=[...]");
    }
    advance();
    advance();
    advance();
    expect(TK::LParen, is_split ? "'(' after pl.split" : "'(' after pl.cross_core_slot");
    bool has_mode = false;
    while (!at(TK::RParen)) {
      if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
        const Token& key = advance();
        advance();
        if (key.text != "slot_num" && !(is_split && key.text == "mode")) {
          fail(span_of(key), "unknown argument '" + std::string(key.text) + "' of pl." +
                                 (is_split ? "split (expected mode, slot_num)"
                                           : "cross_core_slot (expected slot_num)"));
        }
        if (key.text == "slot_num") {
          const Span value_span = here();
          if (parse_constant_int("slot_num") <= 0) {
            fail(value_span, "slot_num must be a positive integer");
          }
          if (!at(TK::Comma)) break;
          advance();
          continue;
        }
      } else if (!is_split || has_mode) {
        fail_here(is_split ? "pl.split takes one mode: pl.split(pl.SplitMode.UP_DOWN)"
                           : "pl.cross_core_slot takes slot_num=N");
      }
      parse_split_mode();
      has_mode = true;
      if (!at(TK::Comma)) break;
      advance();
    }
    expect(TK::RParen, "')' to close the optimization entry");
    if (is_split && !has_mode)
      fail(entry_span, "pl.split needs a mode: pl.split(pl.SplitMode.UP_DOWN)");
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, "']' to close optimizations=[...]");
}

// `with pl.at(level=pl.Level.CHIP, role=pl.Role.Orchestrator):` and the other levels above
// CORE_GROUP: a block of the enclosing orchestrator that runs one level down the machine.
// OutlineHierarchyScopes makes it a function of that level and role; the cores it uses are the
// CORE_GROUP scopes and kernel calls inside it.
StmtPtr Parser::parse_hierarchy_scope(Span span, AtScopeArgs args) {
  if (ir::is_kernel(signatures_[current_function_].type) || core_scopes_open_ > 0) {
    fail(span, "pl.at(level=pl.Level." + args.level +
                   ") inside a kernel: a hierarchy scope belongs in an orchestrator, and a kernel "
                   "already runs on one core");
  }
  if (args.deps) {
    fail(span, "pl.at(level=pl.Level." + args.level +
                   ", deps=...): a hierarchy scope runs in its orchestrator's program order; "
                   "deps= orders CORE_GROUP tasks");
  }
  if (at(TK::KwAs)) {
    fail_here("'as' names the task of a CORE_GROUP scope; a hierarchy scope (pl.Level." +
              args.level + ") is a call of its own function, not a task");
  }
  expect(TK::Colon, "':' after the with statement");
  Block body = parse_block(BlockKind::Scope, [&] {
    return "'with' statement on line " + std::to_string(span.line + line_offset_);
  });
  return ir::make_node<ir::ScopeStmt>(args.level, ir::make_seq(std::move(body.stmts), span), span,
                                      std::move(args.name_hint), std::string{},
                                      std::move(args.role));
}

}  // namespace pypto::frontend::detail
