// `for aiv in pl.split_aiv(2, mode=pl.SplitMode.UP_DOWN):` — a region of a kernel that runs
// once on each of the two AIV (vector) lanes of a cluster, `aiv` being the lane (0 or 1). The
// mode says how the lanes share the region's boundary values: UP_DOWN gives each lane half the
// rows of what pl.aiv_shard reads from the cube, LEFT_RIGHT half the columns, NONE all of it
// (the lanes then split the work themselves by `aiv`).
//
// The region is a ScopeStmt of level SPLIT_AIV whose body starts with
// `aiv = pl.tile.get_subblock_idx()`; the LowerSplitAiv pass turns it into a loop over the lanes.
// A region outside any core scope (pl.at, pl.spmd) or kernel function gets a CORE_GROUP scope of
// its own, so that it becomes a kernel like the body of a pl.at.
#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

// pl.SplitMode's members as the split= attribute of the boundary ops numbers them.
}  // namespace

std::optional<int64_t> split_mode_number(std::string_view name) {
  if (name == "NONE") return 0;
  if (name == "UP_DOWN") return 1;
  if (name == "LEFT_RIGHT") return 2;
  return std::nullopt;
}

const Token& Parser::parse_split_mode() {
  // pl.SplitMode.NAME, or NAME imported from pypto.language.
  if (at_name("pl")) {
    advance();
    expect(TK::Dot, "'.' after pl");
    const Token& enum_name = expect_name("SplitMode after 'pl.'");
    if (enum_name.text != "SplitMode") fail(span_of(enum_name), "expected pl.SplitMode.<mode>");
    expect(TK::Dot, "'.' after pl.SplitMode");
  }
  const Token& name = expect_name("a split mode (NONE, UP_DOWN or LEFT_RIGHT)");
  if (!split_mode_number(name.text)) {
    fail(span_of(name), "unknown split mode '" + std::string(name.text) +
                            "' (pl.SplitMode has NONE, UP_DOWN and LEFT_RIGHT)");
  }
  return name;
}

StmtPtr Parser::parse_split_aiv_loop(Span span, const Token& loop_name) {
  const Span call_span = here();
  advance();  // pl
  advance();  // .
  advance();  // split_aiv
  expect(TK::LParen, "'(' after pl.split_aiv");
  bool has_count = false;
  std::string mode;
  while (!at(TK::RParen)) {
    const Span arg_span = here();
    std::string key = "n";
    if (at(TK::Name) && peek_token(1).kind == TK::Assign) {
      key = std::string(advance().text);
      advance();
    } else if (has_count) {
      fail_here("pl.split_aiv takes one positional argument, the lane count (2)");
    }
    if (key == "n") {
      if (has_count) fail(arg_span, "pl.split_aiv got argument 'n' twice");
      has_count = true;
      const Span value_span = here();
      const int64_t n = parse_constant_int("the lane count of pl.split_aiv");
      if (n != 2) {
        fail(value_span, "pl.split_aiv splits a region over the 2 AIV lanes of a cluster; got " +
                             std::to_string(n) + " (write pl.split_aiv(2, mode=...))");
      }
    } else if (key == "mode") {
      if (!mode.empty()) fail(arg_span, "pl.split_aiv got argument 'mode' twice");
      mode = std::string(parse_split_mode().text);
    } else {
      fail(arg_span, "unknown argument '" + key + "' of pl.split_aiv (expected n, mode)");
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' to close pl.split_aiv(...)");
  if (!has_count) fail(call_span, "pl.split_aiv needs the lane count: pl.split_aiv(2, mode=...)");
  if (mode.empty()) {
    fail(call_span,
         "pl.split_aiv needs mode=: pl.SplitMode.UP_DOWN (rows), LEFT_RIGHT (columns) or NONE");
  }
  expect(TK::Colon, "':' after the for statement");

  // The lane: `aiv = pl.tile.get_subblock_idx()`, the region's first statement.
  const Span lane_span = span_of(loop_name);
  ExprPtr lane_query = ir::make_op_call("get_subblock_idx", {}, {}, lane_span);
  VarPtr lane = bind_var(loop_name.text, lane_query->type(), lane_span);
  const bool in_core_context =
      core_scopes_open_ > 0 || ir::is_kernel(signatures_[current_function_].type);
  split_aiv_modes_.push_back(*split_mode_number(mode));
  Block body;
  {
    const CountedScope core_scope(core_scopes_open_);
    body = parse_block(BlockKind::Scope, [&] {
      return "'for' statement on line " + std::to_string(span.line + line_offset_);
    });
  }
  split_aiv_modes_.pop_back();
  std::vector<StmtPtr> stmts{ir::make_node<ir::AssignStmt>(lane, lane_query, lane_span)};
  for (auto& st : body.stmts) stmts.push_back(std::move(st));
  StmtPtr region = ir::make_node<ir::ScopeStmt>(
      ir::kSplitAivLevel, ir::make_seq(std::move(stmts), span), span, std::string(), mode);
  if (in_core_context) return region;
  return ir::make_node<ir::ScopeStmt>("CORE_GROUP", region, span);
}

void Parser::add_split_aiv_mode(const ir::OpDef& def, ir::Attrs& attrs, Span span) const {
  if (ir::find_attr(attrs, "split")) return;
  if (split_aiv_modes_.empty()) {
    fail(span, "pl." + def.name +
                   " marks a value crossing between the cube and the vector lanes of a "
                   "pl.split_aiv region: use it inside `for aiv in pl.split_aiv(2, mode=...)`");
  }
  const int64_t mode = split_aiv_modes_.back();
  attrs.push_back({"split", mode});
}

}  // namespace pypto::frontend::detail
