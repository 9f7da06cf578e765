// PyPTO's spellings around the L1 gather and the selective dump: pl.gather_row's positional
// transpose, pl.tile.mgather's positional coalesce, and pl.tensor.dump_tag, which the parser
// consumes (it makes no IR).
#include "parser_state.h"

namespace pypto::frontend::detail {

void Parser::gather_load_call_args(const ir::OpDef& def, std::vector<CallArg>& call_args,
                                   const std::string&) {
  if (def.name == "mgather") {
    // mgather(mem, idx, coalesce="row", *, ..., scratch=None): the third positional argument is
    // coalesce (the registry's third argument is the Mat element form's scratch tensor).
    size_t positional = 0;
    for (CallArg& a : call_args) {
      if (!a.keyword.empty() || positional++ != 2) continue;
      a.keyword = "coalesce";
      a.keyword_span = a.value.span;
    }
    return;
  }
  if (def.name != "gather_row") return;
  // gather_row(dst, src, dst_offset, src_offset, shapes, transpose=False, *, valid_shape=None):
  // the sixth positional argument is transpose (the registry's sixth argument is valid_shape).
  size_t positional = 0;
  for (CallArg& a : call_args) {
    if (!a.keyword.empty()) continue;
    if (positional++ != 5) continue;
    a.keyword = "transpose";
    a.keyword_span = a.value.span;
  }
}

// pl.dump_tag(t) marks tensor t for PyPTO's partial argument dump (enable_dump_args=1): the
// tasks after it that take t dump it. This device's argument dump (RunConfig.enable_dump_args,
// docs/runtime-dfx.md) has no partial level: it dumps every tensor argument of every task or
// none, so the tag has nothing to narrow. It is checked as PyPTO checks it (one tensor, outside
// kernels) and then dropped, as PyPTO drops it once recorded.
Value Parser::parse_dump_tag(const std::string& spelling, Span span) {
  if (!at(TK::LParen)) fail(span, "op '" + spelling + "' must be called");
  std::vector<CallArg> call_args = parse_call_args(spelling);
  if (call_args.size() != 1 ||
      (!call_args[0].keyword.empty() && call_args[0].keyword != "tensor")) {
    fail(span, spelling + " takes one tensor: " + spelling + "(t)");
  }
  const CallArg& a = call_args[0];
  ExprPtr e = expect_expr(a.value, [&] { return "the argument of " + spelling; });
  if (!e->type() || !e->type()->as<ir::TensorType>()) {
    fail(a.value.span, spelling + " takes a tensor, got " + ir::type_to_string(e->type()));
  }
  if (ir::is_kernel(signatures_[current_function_].type) || core_scopes_open_ > 0) {
    fail(span, spelling +
                   " marks a tensor for the argument dump of the tasks that take it: write it in "
                   "an orchestration function, outside kernels and pl.at scopes");
  }
  dump_tag_parsed_ = true;
  return expr_value(e, span);
}

// `dumps=[t, ...]` of pl.submit and pl.at: the explicit form of pl.dump_tag for one task
// launch. Checked (a list of tensors) and dropped for the same reason.
void Parser::parse_dump_list(const std::string& owner) {
  expect(TK::LBracket, "'[' to start the list of dumps= of " + owner);
  while (!at(TK::RBracket)) {
    Value v = parse_value();
    ExprPtr e = expect_expr(v, [&] { return "dumps= of " + owner; });
    if (!e->type() || !e->type()->as<ir::TensorType>()) {
      fail(v.span, "dumps= of " + owner + " lists tensors, got " + ir::type_to_string(e->type()));
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBracket, "']' to close the list of dumps= of " + owner);
}

}  // namespace pypto::frontend::detail
