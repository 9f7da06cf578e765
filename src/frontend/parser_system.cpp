// The pl.system ops' argument forms that the registry spells differently, and the located
// "not supported yet" of pl.prefetch.
#include <algorithm>

#include "parser_state.h"

namespace pypto::frontend::detail {

// PyPTO's prefetch ops make handles of their own types (pl.PrefetchAsyncContext, pl.AsyncEvent,
// pl.AsyncSession), which this compiler's IR does not have yet. A prefetch changes no value,
// so a program gives the same results without its prefetch calls.
void Parser::fail_prefetch(Span span) {
  expect(TK::Dot, "'.' after pl.prefetch");
  const Token& op = expect_name("an op name after 'pl.prefetch.'");
  const std::string spelling = "pl.prefetch." + std::string(op.text);
  if (op.text != "make_context" && op.text != "async_prefetch" && op.text != "session" &&
      op.text != "wait") {
    fail(span, "unknown op '" + spelling +
                   "' (pl.prefetch has make_context, async_prefetch, session and wait)");
  }
  fail(span, spelling +
                 " is not supported yet: its handles (pl.PrefetchAsyncContext, pl.AsyncEvent, "
                 "pl.AsyncSession) are not types of this compiler; a GM -> L2 prefetch changes "
                 "no value, so the program computes the same without its pl.prefetch calls");
}

void Parser::system_call_args(const ir::OpDef& def, std::vector<CallArg>& call_args) {
  if (def.name == "system.sync_set" || def.name == "system.sync_wait") event_argument(call_args);
  // Keywords in the op's order, whatever the program's, so that a call prints the same however
  // it was written (`sync_wait(event_id=3, pipe=...)` prints `sync_wait(pipe=..., event_id=3)`).
  auto rank = [&def](const CallArg& a) -> size_t {
    if (a.keyword.empty()) return 0;
    auto at = [&a](const std::vector<std::string>& names) {
      return static_cast<size_t>(std::find(names.begin(), names.end(), a.keyword) - names.begin());
    };
    const size_t arg = at(def.arg_names), attr = at(def.attr_names);
    if (arg < def.arg_names.size()) return 1 + arg;
    if (attr < def.attr_names.size()) return 1 + def.arg_names.size() + attr;
    return 1 + def.arg_names.size() + def.attr_names.size();  // an unknown keyword: reported later
  };
  std::stable_sort(call_args.begin(), call_args.end(),
                   [&rank](const CallArg& a, const CallArg& b) { return rank(a) < rank(b); });
}

void Parser::event_argument(std::vector<CallArg>& call_args) {
  for (CallArg& a : call_args) {
    const bool event = a.keyword == "event_id" || a.keyword == "event" ||
                       (a.keyword.empty() && &a == &call_args.front());
    if (!event || a.text || a.value.kind != Value::Kind::Expr || !a.value.expr) continue;
    const bool constant = a.value.expr->as<ir::IntImm>() != nullptr;
    if (a.keyword.empty()) a.keyword_span = a.value.span;
    a.keyword = constant ? "event_id" : "event";
  }
}

}  // namespace pypto::frontend::detail
