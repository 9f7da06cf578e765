// Tokenizer for the Python subset the DSL is written in.
//
// It follows Python's rules for the parts the DSL and the surrounding module use: INDENT/DEDENT
// from leading whitespace (tabs and spaces must be used consistently, as in Python), NEWLINE at
// the end of each logical line, implicit line joining inside brackets, backslash continuation,
// comments, string literals (with prefixes and triple quotes), numbers (0x/0o/0b, underscores,
// floats such as 1.0, 1e-5, .5) and every Python operator. Tokens point into the source text
// (no copies), so the text must outlive them.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace pypto::frontend {

enum class TokenKind : uint8_t {
  Name,
  Int,
  Float,
  Imaginary,
  String,
  Newline,
  Indent,
  Dedent,
  EndOfFile,
  // Keywords the parser looks at; every other Python keyword is a Name.
  KwDef,
  KwClass,
  KwReturn,
  KwFor,
  KwIn,
  KwIf,
  KwElif,
  KwElse,
  KwWith,
  KwPass,
  KwWhile,
  KwBreak,
  KwContinue,
  KwAnd,
  KwOr,
  KwNot,
  KwIs,
  KwTrue,
  KwFalse,
  KwNone,
  KwImport,
  KwFrom,
  KwAs,
  KwLambda,
  // Operators and delimiters.
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Dot,
  Semicolon,
  At,
  Assign,
  Arrow,
  Plus,
  Minus,
  Star,
  Slash,
  DoubleSlash,
  Percent,
  DoubleStar,
  EqEq,
  NotEq,
  Less,
  LessEq,
  Greater,
  GreaterEq,
  Tilde,
  Amp,
  Pipe,
  Caret,
  LShift,
  RShift,
  AugAssign,  // += -= *= ... (the text tells which)
  Walrus,     // :=
  Ellipsis,   // ...
};

// How a token kind is named in "expected X, got Y" messages: "':'", "name", "end of line".
std::string_view token_kind_description(TokenKind kind);

struct Token {
  TokenKind kind;
  int32_t line;           // 1-based, relative to the tokenized text
  int32_t col;            // 1-based byte column
  std::string_view text;  // the token's characters (empty for NEWLINE/INDENT/DEDENT/EOF)
};

struct LexOptions {
  // Accept a text whose first statement is indented (a class taken out of a function body by
  // inspect.getsource): that indentation becomes the outermost level, so columns stay those of
  // the original file.
  bool indented_start = false;
  // Stop once the first statement's block has ended: the first line after it that is indented
  // no deeper than the statement is neither tokenized nor checked. Lets a class be parsed from
  // its header to the end of its file without reading past the class.
  bool first_statement_only = false;
};

// Tokenizes `text`. Throws ir::CompileError at the first malformed token or inconsistent
// indentation. The result always ends with NEWLINE (when there was any token), the DEDENTs
// closing open blocks, and END_OF_FILE.
std::vector<Token> tokenize(std::string_view text, LexOptions options = {});

}  // namespace pypto::frontend
