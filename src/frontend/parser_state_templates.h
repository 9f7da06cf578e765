// Private to src/frontend: the definitions of Parser's member templates (parser_state.h), kept
// apart so that the class declaration stays readable.
#pragma once

#include <optional>

#include "parser_state.h"

namespace pypto::frontend::detail {

template <typename What>
Block Parser::parse_block(BlockKind kind, const What& owner) {
  DepthGuard guard(*this);
  // The function's own block is opened with its parameters (parse_function_body).
  std::optional<SsaBlock> ssa_block;
  if (kind != BlockKind::Function) ssa_block.emplace(*this);
  Block block;
  if (!at(TK::Newline)) {  // one-line body: `if c: x = 1`
    parse_simple_line(block, kind);
    return block;
  }
  advance();
  if (!at(TK::Indent)) expected("an indented block after " + text_of(owner));
  advance();
  while (!at(TK::Dedent) && !at(TK::EndOfFile)) {
    if (block.yield) {
      fail_here("pl.yield_ must be the last statement of its block");
    }
    parse_statement(block, kind);
  }
  if (at(TK::Dedent)) advance();
  return block;
}

// Reading a helper's own tokens happens in its file: tokens_, the text and the scope are swapped
// for the helper's while `body` runs, and an error found there is rendered against the helper's
// file (ParseError passes through the caller's handlers unchanged).
template <typename F>
auto Parser::in_helper_source(size_t helper, F&& body) {
  ExternalHelper& h = helpers_[helper];
  const size_t saved_pos = pos_;
  const HelperScope* saved_scope = scope_;
  if (!h.own_tokens) {  // in the parser's own token stream: only the position changes
    pos_ = h.start;
    struct Restore {
      Parser& p;
      size_t pos;
      ~Restore() { p.pos_ = pos; }
    } restore{*this, saved_pos};
    return body();
  }
  prepare_helper_tokens(h);
  std::swap(tokens_, h.tokens);
  std::swap(constants_, h.constants);
  const std::string_view saved_text = text_;
  const std::string_view saved_file = file_name_;
  const int32_t saved_offset = line_offset_;
  text_ = h.file_text;
  file_name_ = h.file_name;
  line_offset_ = h.line_shift;
  scope_ = &h.scope;
  pos_ = 0;
  struct Restore {
    Parser& p;
    ExternalHelper& h;
    size_t pos;
    const HelperScope* scope;
    std::string_view text, file;
    int32_t offset;
    ~Restore() {
      std::swap(p.tokens_, h.tokens);
      std::swap(p.constants_, h.constants);
      p.pos_ = pos;
      p.scope_ = scope;
      p.text_ = text;
      p.file_name_ = file;
      p.line_offset_ = offset;
    }
  } restore{*this, h, saved_pos, saved_scope, saved_text, saved_file, saved_offset};
  try {
    return body();
  } catch (const ParseError&) {
    throw;
  } catch (const CompileError& e) {
    Span at = e.span();
    if (at.line != 0 || at.col != 0) at.line += h.line_shift;  // a line of the helper's file
    throw support::make_parse_error(h.file_name, h.file_text, 0, CompileError(at, e.what()));
  }
}

}  // namespace pypto::frontend::detail
