// The `@pl.function` decorator of a program method: the function's kind and its attributes, in
// every form PyPTO accepts (`@pl.function`, `@pl.function(type=..., level=..., role=...,
// attrs={...}, strict_ssa=..., auto_scope=...)`).
#include <array>

#include "parser_state.h"

namespace pypto::frontend::detail {

namespace {

// pl.Level's members, aliases included (PyPTO names one level several ways: HOST and NODE).
constexpr std::array<std::string_view, 17> kLevels = {
    "AIV",       "AIC",   "CORE_GROUP", "CHIP_DIE", "L2CACHE",   "CHIP",
    "PROCESSOR", "UMA",   "HOST",       "NODE",     "CLUSTER_0", "POD",
    "CLUSTER_1", "CLOS1", "CLUSTER_2",  "CLOS2",    "GLOBAL"};

constexpr std::array<std::string_view, 2> kRoles = {"Orchestrator", "SubWorker"};

template <size_t N>
std::string member_list(const std::array<std::string_view, N>& names) {
  std::string s;
  for (size_t i = 0; i < N; ++i)
    s += (i ? (i + 1 == N ? " or " : ", ") : "") + std::string(names[i]);
  return s;
}

}  // namespace

bool is_level_name(std::string_view name) {
  for (std::string_view l : kLevels)
    if (l == name) return true;
  return false;
}

std::string level_names() { return member_list(kLevels); }

bool is_above_chip_level(std::string_view level) {
  // HOST (alias NODE) and every level after it in kLevels.
  for (size_t i = 0; i < kLevels.size(); ++i)
    if (kLevels[i] == level) return i >= 8;
  return false;
}

std::string_view canonical_level(std::string_view level) {
  // PyPTO's readability aliases, each the same level as the name it stands for.
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kAliases = {{
      {"L2CACHE", "CHIP_DIE"},
      {"PROCESSOR", "CHIP"},
      {"UMA", "CHIP"},
      {"NODE", "HOST"},
      {"POD", "CLUSTER_0"},
      {"CLOS1", "CLUSTER_1"},
      {"CLOS2", "CLUSTER_2"},
  }};
  for (const auto& [alias, name] : kAliases)
    if (alias == level) return name;
  return level;
}

std::string Parser::parse_role() {
  const Token& member = parse_enum_member("Role");
  if (member.text != kRoles[0] && member.text != kRoles[1]) {
    fail(span_of(member), "unknown role 'pl.Role." + std::string(member.text) + "' (expected " +
                              member_list(kRoles) + ")");
  }
  return std::string(member.text);
}

// `pl.<Enum>.<member>` at the cursor; returns the member's token.
const Token& Parser::parse_enum_member(std::string_view enum_name) {
  if (!(at_name("pl") && peek_token(1).kind == TK::Dot && peek_token(2).text == enum_name &&
        peek_token(3).kind == TK::Dot)) {
    expected("pl." + std::string(enum_name) + ".<member>");
  }
  advance();
  advance();
  advance();
  advance();
  return expect_name([&] { return "a member of pl." + std::string(enum_name); });
}

ir::FunctionType Parser::parse_function_kind() {
  const Token& member = parse_enum_member("FunctionType");
  auto type = ir::function_type_from_name(member.text);
  if (!type) {
    fail(span_of(member), "unknown function type 'pl.FunctionType." + std::string(member.text) +
                              "' (expected Opaque, Orchestration, InCore, AIC, AIV or Group)");
  }
  return *type;
}

bool Parser::parse_bool_argument(std::string_view key) {
  if (at(TK::KwTrue) || at(TK::KwFalse)) return advance().kind == TK::KwTrue;
  expected("True or False for " + std::string(key) + "=");
}

void Parser::parse_func_attr(BlockKind kind) {
  // `pl.func_attr({...})` in a body: the same attributes as @pl.function(attrs={...}), given
  // by the body (PyPTO's spelling for attributes that name the function's own values).
  const Span span = here();
  advance();  // pl
  advance();  // .
  advance();  // func_attr
  if (kind != BlockKind::Function || inline_frame_) {
    fail(span, "pl.func_attr({...}) belongs at the top level of a function's body");
  }
  expect(TK::LParen, "'(' after pl.func_attr");
  parse_function_attrs_dict(signatures_[current_function_].attrs);
  expect(TK::RParen, "')' to close pl.func_attr({...})");
}

// attrs={"key": value, ...}: each value is kept as the text it was written as. Its meaning is
// for PyPTO's hardware back end (core split modes, dispatch hints); it does not change what a
// function computes on the simulated device.
void Parser::parse_function_attrs_dict(ir::FunctionAttrs& attrs) {
  expect(TK::LBrace, "'{' to start the attrs dictionary");
  while (!at(TK::RBrace)) {
    const Token& key = expect(TK::String, "a string key in attrs={...}");
    std::string key_text(key.text.substr(1, key.text.size() >= 2 ? key.text.size() - 2 : 0));
    for (const auto& [other, value] : attrs.extra) {
      if (other == key_text) fail(span_of(key), "duplicate key '" + key_text + "' in attrs");
    }
    expect(TK::Colon, "':' after the key in attrs={...}");
    // The value: tokens up to the next ',' or '}' outside brackets.
    const Token& first = cur();
    const Token* last = nullptr;
    int depth = 0;
    while (!at(TK::EndOfFile) && !at(TK::Newline)) {
      if (depth == 0 && (at(TK::Comma) || at(TK::RBrace))) break;
      if (at(TK::LParen) || at(TK::LBracket) || at(TK::LBrace)) ++depth;
      if (at(TK::RParen) || at(TK::RBracket) || at(TK::RBrace)) --depth;
      last = &advance();
    }
    if (!last) {
      fail(span_of(first), "expected a value for '" + key_text + "' in attrs");
    }
    if (at(TK::Newline) || at(TK::EndOfFile)) expected("'}' to close attrs={...}");
    // Tokens view the source text, so the value's text is the range from the first to the last.
    const char* begin = first.text.data();
    const char* end = last->text.data() + last->text.size();
    attrs.extra.emplace_back(std::move(key_text), std::string(begin, end));
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RBrace, "'}' to close attrs={...}");
}

void Parser::parse_function_decorator(FunctionSignature& sig) {
  // At `function` of `@pl.function`.
  advance();
  if (!at(TK::LParen)) return;  // bare @pl.function: Opaque
  advance();
  std::vector<std::string_view> seen;
  while (!at(TK::RParen)) {
    if (!(at(TK::Name) && peek_token(1).kind == TK::Assign)) {
      // PyPTO also accepts the kind as the one positional argument:
      // @pl.function(pl.FunctionType.InCore).
      if (seen.empty() && at_name("pl")) {
        sig.type = parse_function_kind();
        seen.push_back("type");
        if (!at(TK::Comma)) break;
        advance();
        continue;
      }
      expected("a keyword argument of pl.function (type=pl.FunctionType.InCore)");
    }
    const Token& key = advance();
    advance();
    for (std::string_view s : seen) {
      if (s == key.text) fail(span_of(key), "duplicate argument '" + std::string(key.text) + "'");
    }
    seen.push_back(key.text);
    if (key.text == "type") {
      sig.type = parse_function_kind();
    } else if (key.text == "level") {
      const Token& member = parse_enum_member("Level");
      if (!is_level_name(member.text)) {
        fail(span_of(member), "unknown level 'pl.Level." + std::string(member.text) +
                                  "' (expected " + level_names() + ")");
      }
      sig.attrs.level = std::string(member.text);
    } else if (key.text == "role") {
      sig.attrs.role = parse_role();
    } else if (key.text == "attrs") {
      parse_function_attrs_dict(sig.attrs);
    } else if (key.text == "strict_ssa") {
      sig.attrs.strict_ssa = parse_bool_argument(key.text);
    } else if (key.text == "auto_scope") {
      sig.attrs.auto_scope = parse_bool_argument(key.text);
    } else if (key.text == "external_source") {
      fail(span_of(key),
           "pl.function(external_source=...) (a kernel written in C++ for the hardware) is not "
           "supported: the simulated device runs kernels compiled from the program");
    } else {
      fail(span_of(key), "unknown argument '" + std::string(key.text) +
                             "' of pl.function (expected type, level, role, attrs, strict_ssa "
                             "or auto_scope)");
    }
    if (!at(TK::Comma)) break;
    advance();
  }
  expect(TK::RParen, "')' after the arguments of pl.function");
}

}  // namespace pypto::frontend::detail
