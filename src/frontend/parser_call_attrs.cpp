// `self.f(x, y, attrs={"arg_directions": [pl.adir.input, pl.adir.output_existing]})`: the
// attributes PyPTO lets a program write on a call of one of its functions. `arg_directions`
// says how each argument is passed to the task the call submits (ir::ArgDirection); the
// DeriveCallDirections pass keeps such a list, after checking it against what the callee does,
// instead of deriving one. `arg_direction_overrides` (the indices of arguments written
// `pl.no_dep(x)`) keeps the derived directions but passes those arguments as no_dep.
#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

std::string known_markers() {
  std::string list;
  for (int64_t d = 0; d <= static_cast<int64_t>(ir::ArgDirection::Output); ++d) {
    if (!list.empty()) list += ", ";
    list += "pl.adir." + std::string(ir::arg_direction_marker(static_cast<ir::ArgDirection>(d)));
  }
  return list;
}

}  // namespace

// One `pl.adir.<marker>` (or `adir.<marker>` with `from pypto.language import adir`).
int64_t Parser::parse_arg_direction_marker() {
  if (at_name("pl")) {
    advance();
    expect(TK::Dot, "'.' after 'pl' (pl.adir.<marker>)");
  }
  if (!at_name("adir")) {
    fail_here("expected pl.adir.<marker> in arg_directions (" + known_markers() + ")");
  }
  advance();
  expect(TK::Dot, "'.' after 'pl.adir'");
  const Token& marker = expect_name("a direction after 'pl.adir.'");
  auto d = ir::arg_direction_from_marker(marker.text);
  if (!d) {
    fail(span_of(marker), "unknown argument direction 'pl.adir." + std::string(marker.text) +
                              "' (expected " + known_markers() + ")");
  }
  return static_cast<int64_t>(*d);
}

ir::Attrs Parser::parse_call_attrs_dict(const std::string& callee_label) {
  ir::Attrs attrs;
  expect(TK::LBrace, "'{' to start the attrs dictionary");
  while (!at(TK::RBrace)) {
    const Token& key = expect(TK::String, "a string key in attrs={...}");
    const std::string name = string_literal(key);
    for (const auto& other : attrs) {
      if (other.first == name) fail(span_of(key), "duplicate key '" + name + "' in attrs");
    }
    expect(TK::Colon, "':' after the key in attrs={...}");
    if (name == "arg_direction_overrides") {
      attrs.emplace_back(name,
                         parse_constant_int_list("argument indices in arg_direction_overrides"));
      if (!at(TK::Comma)) break;
      advance();
      continue;
    }
    if (name != "arg_directions") {
      fail(span_of(key),
           "call attribute '" + name + "' of " + callee_label +
               " is not supported (a call takes attrs={\"arg_directions\": [pl.adir.<marker>, "
               "...]}; block counts and task dependencies are written with pl.spmd(...) and "
               "pl.submit(..., deps=[...]))");
    }
    expect(TK::LBracket, "'[' to start the list of argument directions");
    std::vector<int64_t> directions;
    while (!at(TK::RBracket)) {
      directions.push_back(parse_arg_direction_marker());
      if (!at(TK::Comma)) break;
      advance();
    }
    expect(TK::RBracket, "']' to close the list of argument directions");
    attrs.emplace_back(name, std::move(directions));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBrace, "'}' to close attrs={...}");
  return attrs;
}

bool Parser::at_no_dep_marker() const {
  // pl.no_dep(x), or PyPTO's own spelling pl.tensor.no_dep(x).
  const size_t skip = at_name("pl") && peek_token(1).kind == TK::Dot &&
                              peek_token(2).text == "tensor" && peek_token(3).kind == TK::Dot
                          ? 2
                          : 0;
  return at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(skip + 2).kind == TK::Name &&
         peek_token(skip + 2).text == "no_dep" && peek_token(skip + 3).kind == TK::LParen;
}

Value Parser::parse_no_dep_marker() {
  advance();  // pl
  advance();  // .
  if (at_name("tensor")) {
    advance();  // tensor
    advance();  // .
  }
  advance();  // no_dep
  expect(TK::LParen, "'(' after pl.no_dep");
  Value v = parse_value();
  expect(TK::RParen, "')' to close pl.no_dep(...) (it marks one argument)");
  return v;
}

void Parser::merge_no_dep_overrides(ir::Attrs& attrs, const std::vector<int64_t>& marked,
                                    Span span) {
  for (auto& [key, value] : attrs) {
    if (key != "arg_direction_overrides") continue;
    auto& list = std::get<std::vector<int64_t>>(value);
    if (list != marked) {
      fail(span,
           "the call's arg_direction_overrides do not name the arguments written "
           "pl.no_dep(...); write one or the other");
    }
    return;
  }
  attrs.emplace_back("arg_direction_overrides", marked);
}

}  // namespace pypto::frontend::detail
