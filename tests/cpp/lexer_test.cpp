#include "pypto/frontend/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/ir/span.h"

namespace pypto::frontend {
namespace {

using TK = TokenKind;

std::vector<TK> kinds(const std::vector<Token>& tokens) {
  std::vector<TK> out;
  for (const auto& t : tokens) out.push_back(t.kind);
  return out;
}

ir::CompileError lex_error(const std::string& text, LexOptions options = {}) {
  try {
    tokenize(text, options);
  } catch (const ir::CompileError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a lexer error for: " << text;
  return ir::CompileError({}, "");
}

TEST(Lexer, IndentAndDedentFollowBlocks) {
  auto tokens = tokenize("if x:\n    y\n    if z:\n        w\nv\n");
  EXPECT_EQ(kinds(tokens),
            (std::vector<TK>{TK::KwIf, TK::Name, TK::Colon, TK::Newline, TK::Indent, TK::Name,
                             TK::Newline, TK::KwIf, TK::Name, TK::Colon, TK::Newline, TK::Indent,
                             TK::Name, TK::Newline, TK::Dedent, TK::Dedent, TK::Name, TK::Newline,
                             TK::EndOfFile}));
}

TEST(Lexer, BlankAndCommentLinesDoNotChangeIndentation) {
  auto tokens = tokenize("def f():\n\n    # comment\n  \n    x = 1  # trailing\n");
  EXPECT_EQ(kinds(tokens), (std::vector<TK>{TK::KwDef, TK::Name, TK::LParen, TK::RParen, TK::Colon,
                                            TK::Newline, TK::Indent, TK::Name, TK::Assign, TK::Int,
                                            TK::Newline, TK::Dedent, TK::EndOfFile}));
}

TEST(Lexer, ColumnsAndLinesAreOneBased) {
  auto tokens = tokenize("a = b\n  \nc(d,  e)\n");
  ASSERT_GE(tokens.size(), 10u);
  EXPECT_EQ(tokens[0].line, 1);
  EXPECT_EQ(tokens[0].col, 1);
  EXPECT_EQ(tokens[2].text, "b");
  EXPECT_EQ(tokens[2].col, 5);
  EXPECT_EQ(tokens[4].text, "c");
  EXPECT_EQ(tokens[4].line, 3);
  EXPECT_EQ(tokens[8].text, "e");
  EXPECT_EQ(tokens[8].col, 7);
}

TEST(Lexer, ImplicitJoiningInsideBrackets) {
  auto tokens = tokenize("f(a,\n      b,\n  [c,\n d])\nx\n");
  EXPECT_EQ(kinds(tokens),
            (std::vector<TK>{TK::Name, TK::LParen, TK::Name, TK::Comma, TK::Name, TK::Comma,
                             TK::LBracket, TK::Name, TK::Comma, TK::Name, TK::RBracket, TK::RParen,
                             TK::Newline, TK::Name, TK::Newline, TK::EndOfFile}));
  EXPECT_EQ(tokens[9].line, 4);
  EXPECT_EQ(tokens[9].col, 2);
}

TEST(Lexer, BackslashContinuationJoinsLines) {
  auto tokens = tokenize("x = 1 + \\\n        2\ny\n");
  EXPECT_EQ(kinds(tokens), (std::vector<TK>{TK::Name, TK::Assign, TK::Int, TK::Plus, TK::Int,
                                            TK::Newline, TK::Name, TK::Newline, TK::EndOfFile}));
  EXPECT_EQ(tokens[4].line, 2);
  EXPECT_EQ(tokens[4].col, 9);
}

TEST(Lexer, Numbers) {
  auto tokens = tokenize("0x1F 1_000 0o17 0b101 1.0 1e-5 .5 2. 3E+2 7j\n");
  std::vector<std::pair<TK, std::string>> expected = {
      {TK::Int, "0x1F"},   {TK::Int, "1_000"},   {TK::Int, "0o17"}, {TK::Int, "0b101"},
      {TK::Float, "1.0"},  {TK::Float, "1e-5"},  {TK::Float, ".5"}, {TK::Float, "2."},
      {TK::Float, "3E+2"}, {TK::Imaginary, "7j"}};
  ASSERT_GE(tokens.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(tokens[i].kind, expected[i].first) << i;
    EXPECT_EQ(tokens[i].text, expected[i].second) << i;
  }
}

TEST(Lexer, MalformedNumbersAreErrors) {
  auto e = lex_error("x = 1e+\n");
  EXPECT_EQ(e.span().line, 1);
  EXPECT_EQ(e.span().col, 6);
  EXPECT_NE(std::string(e.what()).find("exponent"), std::string::npos);
  auto e2 = lex_error("x = 0x\n");
  EXPECT_NE(std::string(e2.what()).find("missing digits"), std::string::npos);
  auto e3 = lex_error("x = 12abc\n");
  EXPECT_NE(std::string(e3.what()).find("invalid number literal"), std::string::npos);
}

TEST(Lexer, StringsWithPrefixesQuotesAndTripleQuotes) {
  auto tokens = tokenize("a = 'x\\'y'\nb = rb\"z\"\nc = f'{a}'\n\"\"\"doc\nstring\"\"\"\nd\n");
  std::vector<std::string> strings;
  for (const auto& t : tokens) {
    if (t.kind == TK::String) strings.push_back(std::string(t.text));
  }
  EXPECT_EQ(strings,
            (std::vector<std::string>{"'x\\'y'", "rb\"z\"", "f'{a}'", "\"\"\"doc\nstring\"\"\""}));
  EXPECT_EQ(tokens.back().kind, TK::EndOfFile);
  // The name after the two-line docstring is on line 6.
  EXPECT_EQ(tokens[tokens.size() - 3].text, "d");
  EXPECT_EQ(tokens[tokens.size() - 3].line, 6);
}

TEST(Lexer, UnterminatedStringsReportTheirStart) {
  auto e = lex_error("x = 1\ny = 'abc\n");
  EXPECT_EQ(e.span().line, 2);
  EXPECT_EQ(e.span().col, 5);
  EXPECT_NE(std::string(e.what()).find("unterminated string literal"), std::string::npos);
  auto e2 = lex_error("s = \"\"\"never closed\n\n");
  EXPECT_NE(std::string(e2.what()).find("unterminated triple-quoted"), std::string::npos);
}

TEST(Lexer, Operators) {
  auto tokens = tokenize("a // b ** c -> d != e <= f >= g == h += i //= j := k ... @\n");
  std::vector<TK> ops;
  for (const auto& t : tokens) {
    if (t.kind != TK::Name && t.kind != TK::Newline && t.kind != TK::EndOfFile) {
      ops.push_back(t.kind);
    }
  }
  EXPECT_EQ(ops, (std::vector<TK>{TK::DoubleSlash, TK::DoubleStar, TK::Arrow, TK::NotEq, TK::LessEq,
                                  TK::GreaterEq, TK::EqEq, TK::AugAssign, TK::AugAssign, TK::Walrus,
                                  TK::Ellipsis, TK::At}));
}

TEST(Lexer, KeywordsAreRecognized) {
  auto tokens = tokenize("for i in x: pass\n");
  EXPECT_EQ(kinds(tokens), (std::vector<TK>{TK::KwFor, TK::Name, TK::KwIn, TK::Name, TK::Colon,
                                            TK::KwPass, TK::Newline, TK::EndOfFile}));
}

TEST(Lexer, UnindentMustMatchAnOuterLevel) {
  auto e = lex_error("if a:\n        b\n    c\n");
  EXPECT_EQ(e.span().line, 3);
  EXPECT_EQ(e.span().col, 5);
  EXPECT_NE(std::string(e.what()).find("unindent does not match any outer indentation level"),
            std::string::npos);
}

TEST(Lexer, IndentWithoutBlockIsLeftToTheParser) {
  // The parser reports it, after checking the line before (a missing ':' is the better error).
  auto tokens = tokenize("a = 1\n    b = 2\n");
  EXPECT_EQ(kinds(tokens),
            (std::vector<TK>{TK::Name, TK::Assign, TK::Int, TK::Newline, TK::Indent, TK::Name,
                             TK::Assign, TK::Int, TK::Newline, TK::Dedent, TK::EndOfFile}));
  EXPECT_EQ(tokens[4].line, 2);
  EXPECT_EQ(tokens[4].col, 5);
}

TEST(Lexer, TabsAndSpacesMustBeConsistent) {
  // One tab equals 8 spaces with tab size 8 but not with tab size 1: ambiguous.
  auto e = lex_error("if a:\n\tb\n        c\n");
  EXPECT_EQ(e.span().line, 3);
  EXPECT_NE(std::string(e.what()).find("inconsistent use of tabs and spaces"), std::string::npos);
  // Tabs used consistently are fine.
  EXPECT_NO_THROW(tokenize("if a:\n\tb\n\tif c:\n\t\td\n"));
}

TEST(Lexer, BracketsMustMatch) {
  auto e = lex_error("f(a, b]\n");
  EXPECT_EQ(e.span().col, 7);
  EXPECT_NE(std::string(e.what()).find("does not match opening parenthesis '('"),
            std::string::npos);
  auto e2 = lex_error("x = (1,\n  2\n");
  EXPECT_EQ(e2.span().line, 1);
  EXPECT_EQ(e2.span().col, 5);
  EXPECT_NE(std::string(e2.what()).find("'(' was never closed"), std::string::npos);
  auto e3 = lex_error("x)\n");
  EXPECT_NE(std::string(e3.what()).find("unmatched ')'"), std::string::npos);
}

TEST(Lexer, InvalidCharacters) {
  auto e = lex_error("x = a $ b\n");
  EXPECT_EQ(e.span().col, 7);
  EXPECT_NE(std::string(e.what()).find("invalid character '$'"), std::string::npos);
  auto e2 = lex_error("x = a \\ b\n");
  EXPECT_NE(std::string(e2.what()).find("after line continuation"), std::string::npos);
}

TEST(Lexer, IndentedStartKeepsOriginalColumns) {
  auto tokens = tokenize("    class A:\n        x\n    y\n", LexOptions{true});
  EXPECT_EQ(tokens[0].kind, TK::KwClass);
  EXPECT_EQ(tokens[0].col, 5);
  EXPECT_EQ(kinds(tokens),
            (std::vector<TK>{TK::KwClass, TK::Name, TK::Colon, TK::Newline, TK::Indent, TK::Name,
                             TK::Newline, TK::Dedent, TK::Name, TK::Newline, TK::EndOfFile}));
  auto e = lex_error("    a\n  b\n", LexOptions{true});
  EXPECT_NE(std::string(e.what()).find("unindent does not match"), std::string::npos);
}

TEST(Lexer, MissingFinalNewlineStillEndsTheLine) {
  auto tokens = tokenize("if a:\n    b");
  EXPECT_EQ(kinds(tokens), (std::vector<TK>{TK::KwIf, TK::Name, TK::Colon, TK::Newline, TK::Indent,
                                            TK::Name, TK::Newline, TK::Dedent, TK::EndOfFile}));
}

TEST(Lexer, CrLfLineEndings) {
  auto tokens = tokenize("a\r\nif b:\r\n    c\r\n");
  EXPECT_EQ(tokens[2].kind, TK::KwIf);
  EXPECT_EQ(tokens[2].line, 2);
  EXPECT_EQ(tokens[7].text, "c");
  EXPECT_EQ(tokens[7].line, 3);
  EXPECT_EQ(tokens[7].col, 5);
}

}  // namespace
}  // namespace pypto::frontend
