#include "pypto/frontend/lexer.h"

#include <cstdio>
#include <string>

#include "pypto/ir/span.h"

namespace pypto::frontend {

namespace {

using ir::CompileError;
using ir::Span;

bool is_name_start(unsigned char c) {
  // Bytes >= 0x80 belong to non-ASCII identifiers, which Python allows.
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool is_name_char(unsigned char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

TokenKind keyword_kind(std::string_view s) {
  // Dispatch on the first letter keeps the common case (an ordinary name) to one or two compares.
  switch (s[0]) {
    case 'a':
      if (s == "and") return TokenKind::KwAnd;
      if (s == "as") return TokenKind::KwAs;
      break;
    case 'b':
      if (s == "break") return TokenKind::KwBreak;
      break;
    case 'c':
      if (s == "class") return TokenKind::KwClass;
      if (s == "continue") return TokenKind::KwContinue;
      break;
    case 'd':
      if (s == "def") return TokenKind::KwDef;
      break;
    case 'e':
      if (s == "elif") return TokenKind::KwElif;
      if (s == "else") return TokenKind::KwElse;
      break;
    case 'f':
      if (s == "for") return TokenKind::KwFor;
      if (s == "from") return TokenKind::KwFrom;
      break;
    case 'i':
      if (s == "if") return TokenKind::KwIf;
      if (s == "in") return TokenKind::KwIn;
      if (s == "is") return TokenKind::KwIs;
      if (s == "import") return TokenKind::KwImport;
      break;
    case 'l':
      if (s == "lambda") return TokenKind::KwLambda;
      break;
    case 'n':
      if (s == "not") return TokenKind::KwNot;
      break;
    case 'o':
      if (s == "or") return TokenKind::KwOr;
      break;
    case 'p':
      if (s == "pass") return TokenKind::KwPass;
      break;
    case 'r':
      if (s == "return") return TokenKind::KwReturn;
      break;
    case 'w':
      if (s == "with") return TokenKind::KwWith;
      if (s == "while") return TokenKind::KwWhile;
      break;
    case 'F':
      if (s == "False") return TokenKind::KwFalse;
      break;
    case 'N':
      if (s == "None") return TokenKind::KwNone;
      break;
    case 'T':
      if (s == "True") return TokenKind::KwTrue;
      break;
    default:
      break;
  }
  return TokenKind::Name;
}

// Python compares indentation twice, with tabs as 8 columns and as 1 column; when the two
// comparisons disagree the indentation depends on the tab size and is rejected.
struct Indent {
  int32_t tab8 = 0;
  int32_t tab1 = 0;
};

class Lexer {
 public:
  Lexer(std::string_view text, LexOptions options) : text_(text), options_(options) {}

  std::vector<Token> run() {
    tokens_.reserve(text_.size() / 3 + 16);
    indents_.push_back(Indent{});
    bool first_line = true;
    while (pos_ < text_.size() && !stopped_) {
      if (at_line_start_ && bracket_depth() == 0 && !continuation_) {
        if (!handle_indentation(first_line)) continue;  // blank or comment-only line
        first_line = false;
      }
      at_line_start_ = false;
      continuation_ = false;
      lex_token();
    }
    if (bracket_depth() > 0) {
      const Token& open = brackets_.back();
      fail(open.line, open.col, "'" + std::string(open.text) + "' was never closed");
    }
    if (continuation_) fail(line_, col(), "unexpected end of file after line continuation");
    if (!tokens_.empty() && tokens_.back().kind != TokenKind::Newline) {
      push(TokenKind::Newline, line_, col(), {});
    }
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(TokenKind::Dedent, line_, col(), {});
    }
    push(TokenKind::EndOfFile, line_, col(), {});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(int32_t line, int32_t column, const std::string& message) const {
    throw CompileError(Span{line, column}, message);
  }

  int32_t col() const { return column_at(pos_); }
  // Columns count characters, not bytes: a UTF-8 continuation byte (10xxxxxx) does not start
  // one. The count resumes from the last position asked for on the line, so lexing a long line
  // stays linear.
  int32_t column_at(size_t pos) const {
    if (col_cache_line_start_ != line_start_ || pos < col_cache_pos_) {
      col_cache_line_start_ = line_start_;
      col_cache_pos_ = line_start_;
      col_cache_col_ = 1;
    }
    for (; col_cache_pos_ < pos && col_cache_pos_ < text_.size(); ++col_cache_pos_) {
      if ((static_cast<unsigned char>(text_[col_cache_pos_]) & 0xC0) != 0x80) ++col_cache_col_;
    }
    return col_cache_col_;
  }
  size_t bracket_depth() const { return brackets_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  void push(TokenKind kind, int32_t line, int32_t column, std::string_view text) {
    tokens_.push_back(Token{kind, line, column, text});
  }

  void new_line(size_t after) {
    ++line_;
    pos_ = after;
    line_start_ = after;
    at_line_start_ = true;
  }

  // Consumes a line break at pos_ ("\n", "\r\n" or "\r").
  void consume_line_break() {
    size_t after = pos_ + 1;
    if (text_[pos_] == '\r' && after < text_.size() && text_[after] == '\n') ++after;
    new_line(after);
  }

  // Measures the leading whitespace of a line and emits INDENT/DEDENT. Returns false (having
  // consumed the line) when the line holds no token.
  bool handle_indentation(bool first_line) {
    Indent ind;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ') {
        ++ind.tab8;
        ++ind.tab1;
      } else if (c == '\t') {
        ind.tab8 = (ind.tab8 / 8 + 1) * 8;
        ++ind.tab1;
      } else if (c == '\f') {
        ind = Indent{};
      } else {
        break;
      }
      ++pos_;
    }
    if (pos_ >= text_.size()) return false;
    char c = text_[pos_];
    if (c == '#') {
      while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
      if (pos_ < text_.size()) consume_line_break();
      return false;
    }
    if (c == '\n' || c == '\r') {
      consume_line_break();
      return false;
    }
    if (c == '\\' && (peek(1) == '\n' || peek(1) == '\r')) {
      // A continuation on an otherwise empty line: the logical line starts on the next one.
      ++pos_;
      consume_line_break();
      return false;
    }
    if (first_line && options_.indented_start) {
      indents_.back() = ind;
      return true;
    }
    if (options_.first_statement_only && indents_.size() > 1 && ind.tab8 <= indents_.front().tab8) {
      stopped_ = true;  // the first statement's block has ended
      return false;
    }
    const Indent& top = indents_.back();
    if (ind.tab8 == top.tab8) {
      if (ind.tab1 != top.tab1) inconsistent_tabs();
      return true;
    }
    if (ind.tab8 > top.tab8) {
      // An indent where no block starts is the parser's "unexpected indent": it can first report
      // what is missing on the line before (e.g. the ':' of a block header).
      if (ind.tab1 <= top.tab1) inconsistent_tabs();
      indents_.push_back(ind);
      push(TokenKind::Indent, line_, col(), {});
      return true;
    }
    while (indents_.size() > 1 && ind.tab8 < indents_.back().tab8) {
      indents_.pop_back();
      push(TokenKind::Dedent, line_, col(), {});
    }
    if (ind.tab8 != indents_.back().tab8) {
      fail(line_, col(), "unindent does not match any outer indentation level");
    }
    if (ind.tab1 != indents_.back().tab1) inconsistent_tabs();
    return true;
  }

  [[noreturn]] void inconsistent_tabs() const {
    fail(line_, col(), "inconsistent use of tabs and spaces in indentation");
  }

  void lex_token() {
    const char c = text_[pos_];
    const int32_t line = line_;
    const int32_t column = col();
    switch (c) {
      case ' ':
      case '\t':
      case '\f':
        ++pos_;
        return;
      case '#':
        while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
        return;
      case '\n':
      case '\r':
        if (bracket_depth() == 0) push(TokenKind::Newline, line, column, {});
        consume_line_break();
        return;
      case '\\':
        if (peek(1) == '\n' || peek(1) == '\r') {
          ++pos_;
          consume_line_break();
          continuation_ = true;
          return;
        }
        if (pos_ + 1 >= text_.size()) fail(line, column, "unexpected end of file after '\\'");
        fail(line, column, "unexpected character after line continuation character");
      case '"':
      case '\'':
        lex_string(pos_);
        return;
      default:
        break;
    }
    if (is_digit(c) || (c == '.' && is_digit(peek(1)))) {
      lex_number();
      return;
    }
    if (is_name_start(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() && is_name_char(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      // String prefixes: r"", b'', f"", rb"", ...
      if (pos_ < text_.size() && (text_[pos_] == '"' || text_[pos_] == '\'') && pos_ - start <= 2 &&
          is_string_prefix(text_.substr(start, pos_ - start))) {
        lex_string(start);
        return;
      }
      std::string_view name = text_.substr(start, pos_ - start);
      push(keyword_kind(name), line, column, name);
      return;
    }
    lex_operator(line, column);
  }

  static bool is_string_prefix(std::string_view p) {
    for (char ch : p) {
      switch (ch) {
        case 'r':
        case 'R':
        case 'b':
        case 'B':
        case 'u':
        case 'U':
        case 'f':
        case 'F':
          break;
        default:
          return false;
      }
    }
    return true;
  }

  void lex_string(size_t start) {
    const int32_t line = line_;
    const int32_t column = column_at(start);
    const char quote = text_[pos_];
    const bool triple = peek(1) == quote && peek(2) == quote;
    pos_ += triple ? 3 : 1;
    while (true) {
      if (pos_ >= text_.size()) {
        fail(line, column,
             triple ? "unterminated triple-quoted string literal" : "unterminated string literal");
      }
      char c = text_[pos_];
      if (c == '\\') {
        if (pos_ + 1 < text_.size() && (text_[pos_ + 1] == '\n' || text_[pos_ + 1] == '\r')) {
          ++pos_;
          consume_line_break();
          at_line_start_ = false;
        } else {
          pos_ += 2;
        }
        continue;
      }
      if (c == '\n' || c == '\r') {
        if (!triple) fail(line, column, "unterminated string literal");
        consume_line_break();
        at_line_start_ = false;
        continue;
      }
      if (c == quote) {
        if (!triple) {
          ++pos_;
          break;
        }
        if (peek(1) == quote && peek(2) == quote) {
          pos_ += 3;
          break;
        }
      }
      ++pos_;
    }
    if (pos_ > text_.size()) pos_ = text_.size();
    push(TokenKind::String, line, column, text_.substr(start, pos_ - start));
  }

  // Digits with single underscores between them, as Python allows ("1_000").
  void digits(bool (*accept)(char)) {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (accept(c)) {
        ++pos_;
      } else if (c == '_' && pos_ + 1 < text_.size() && accept(text_[pos_ + 1])) {
        pos_ += 2;
      } else {
        break;
      }
    }
  }

  void lex_number() {
    const int32_t line = line_;
    const int32_t column = col();
    const size_t start = pos_;
    TokenKind kind = TokenKind::Int;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X' || peek(1) == 'o' || peek(1) == 'O' ||
                          peek(1) == 'b' || peek(1) == 'B')) {
      char base = static_cast<char>(peek(1) | 0x20);
      pos_ += 2;
      if (peek() == '_') ++pos_;
      size_t digits_start = pos_;
      if (base == 'x') {
        digits(is_hex_digit);
      } else if (base == 'o') {
        digits([](char ch) { return ch >= '0' && ch <= '7'; });
      } else {
        digits([](char ch) { return ch == '0' || ch == '1'; });
      }
      if (pos_ == digits_start) fail(line, column, "invalid number literal: missing digits");
    } else {
      digits(is_digit);
      if (peek() == '.') {
        ++pos_;
        kind = TokenKind::Float;
        digits(is_digit);
      }
      if (peek() == 'e' || peek() == 'E') {
        size_t mark = pos_;
        ++pos_;
        if (peek() == '+' || peek() == '-') ++pos_;
        if (!is_digit(peek())) {
          pos_ = mark;
          fail(line_, col(), "invalid number literal: missing exponent digits");
        }
        digits(is_digit);
        kind = TokenKind::Float;
      }
      if (peek() == 'j' || peek() == 'J') {
        ++pos_;
        kind = TokenKind::Imaginary;
      }
    }
    if (pos_ < text_.size() && is_name_char(static_cast<unsigned char>(text_[pos_]))) {
      fail(line_, col(), "invalid number literal");
    }
    push(kind, line, column, text_.substr(start, pos_ - start));
  }

  void open_bracket(TokenKind kind, int32_t line, int32_t column) {
    push(kind, line, column, text_.substr(pos_, 1));
    brackets_.push_back(tokens_.back());
    ++pos_;
  }

  void close_bracket(TokenKind kind, char open, int32_t line, int32_t column) {
    const char close = text_[pos_];
    if (brackets_.empty()) fail(line, column, std::string("unmatched '") + close + "'");
    const Token& top = brackets_.back();
    if (top.text[0] != open) {
      fail(line, column,
           std::string("closing parenthesis '") + close + "' does not match opening parenthesis '" +
               std::string(top.text) + "' on line " + std::to_string(top.line));
    }
    brackets_.pop_back();
    push(kind, line, column, text_.substr(pos_, 1));
    ++pos_;
  }

  void lex_operator(int32_t line, int32_t column) {
    const char c = text_[pos_];
    const char n1 = peek(1);
    const char n2 = peek(2);
    auto op = [&](TokenKind kind, size_t len) {
      push(kind, line, column, text_.substr(pos_, len));
      pos_ += len;
    };
    switch (c) {
      case '(':
        return open_bracket(TokenKind::LParen, line, column);
      case '[':
        return open_bracket(TokenKind::LBracket, line, column);
      case '{':
        return open_bracket(TokenKind::LBrace, line, column);
      case ')':
        return close_bracket(TokenKind::RParen, '(', line, column);
      case ']':
        return close_bracket(TokenKind::RBracket, '[', line, column);
      case '}':
        return close_bracket(TokenKind::RBrace, '{', line, column);
      case ',':
        return op(TokenKind::Comma, 1);
      case ';':
        return op(TokenKind::Semicolon, 1);
      case '~':
        return op(TokenKind::Tilde, 1);
      case ':':
        return n1 == '=' ? op(TokenKind::Walrus, 2) : op(TokenKind::Colon, 1);
      case '.':
        return n1 == '.' && n2 == '.' ? op(TokenKind::Ellipsis, 3) : op(TokenKind::Dot, 1);
      case '@':
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::At, 1);
      case '=':
        return n1 == '=' ? op(TokenKind::EqEq, 2) : op(TokenKind::Assign, 1);
      case '!':
        if (n1 == '=') return op(TokenKind::NotEq, 2);
        break;
      case '+':
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Plus, 1);
      case '-':
        if (n1 == '>') return op(TokenKind::Arrow, 2);
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Minus, 1);
      case '%':
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Percent, 1);
      case '&':
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Amp, 1);
      case '|':
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Pipe, 1);
      case '^':
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Caret, 1);
      case '*':
        if (n1 == '*')
          return n2 == '=' ? op(TokenKind::AugAssign, 3) : op(TokenKind::DoubleStar, 2);
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Star, 1);
      case '/':
        if (n1 == '/')
          return n2 == '=' ? op(TokenKind::AugAssign, 3) : op(TokenKind::DoubleSlash, 2);
        return n1 == '=' ? op(TokenKind::AugAssign, 2) : op(TokenKind::Slash, 1);
      case '<':
        if (n1 == '<') return n2 == '=' ? op(TokenKind::AugAssign, 3) : op(TokenKind::LShift, 2);
        return n1 == '=' ? op(TokenKind::LessEq, 2) : op(TokenKind::Less, 1);
      case '>':
        if (n1 == '>') return n2 == '=' ? op(TokenKind::AugAssign, 3) : op(TokenKind::RShift, 2);
        return n1 == '=' ? op(TokenKind::GreaterEq, 2) : op(TokenKind::Greater, 1);
      default:
        break;
    }
    unsigned char uc = static_cast<unsigned char>(c);
    if (uc < 0x20 || uc == 0x7f) {
      char buf[8];
      snprintf(buf, sizeof buf, "0x%02x", uc);
      fail(line, column, std::string("invalid character ") + buf + " in source");
    }
    fail(line, column, std::string("invalid character '") + c + "'");
  }

  std::string_view text_;
  LexOptions options_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  mutable size_t col_cache_line_start_ = 0;
  mutable size_t col_cache_pos_ = 0;
  mutable int32_t col_cache_col_ = 1;
  int32_t line_ = 1;
  bool at_line_start_ = true;
  bool stopped_ = false;  // LexOptions::first_statement_only reached its end
  bool continuation_ = false;
  std::vector<Indent> indents_;
  std::vector<Token> brackets_;
  std::vector<Token> tokens_;
};

}  // namespace

std::string_view token_kind_description(TokenKind kind) {
  switch (kind) {
    case TokenKind::Name:
      return "name";
    case TokenKind::Int:
      return "integer";
    case TokenKind::Float:
      return "float";
    case TokenKind::Imaginary:
      return "imaginary number";
    case TokenKind::String:
      return "string";
    case TokenKind::Newline:
      return "end of line";
    case TokenKind::Indent:
      return "indent";
    case TokenKind::Dedent:
      return "dedent";
    case TokenKind::EndOfFile:
      return "end of file";
    case TokenKind::KwDef:
      return "'def'";
    case TokenKind::KwClass:
      return "'class'";
    case TokenKind::KwReturn:
      return "'return'";
    case TokenKind::KwFor:
      return "'for'";
    case TokenKind::KwIn:
      return "'in'";
    case TokenKind::KwIf:
      return "'if'";
    case TokenKind::KwElif:
      return "'elif'";
    case TokenKind::KwElse:
      return "'else'";
    case TokenKind::KwWith:
      return "'with'";
    case TokenKind::KwPass:
      return "'pass'";
    case TokenKind::KwWhile:
      return "'while'";
    case TokenKind::KwBreak:
      return "'break'";
    case TokenKind::KwContinue:
      return "'continue'";
    case TokenKind::KwAnd:
      return "'and'";
    case TokenKind::KwOr:
      return "'or'";
    case TokenKind::KwNot:
      return "'not'";
    case TokenKind::KwIs:
      return "'is'";
    case TokenKind::KwTrue:
      return "'True'";
    case TokenKind::KwFalse:
      return "'False'";
    case TokenKind::KwNone:
      return "'None'";
    case TokenKind::KwImport:
      return "'import'";
    case TokenKind::KwFrom:
      return "'from'";
    case TokenKind::KwAs:
      return "'as'";
    case TokenKind::KwLambda:
      return "'lambda'";
    case TokenKind::LParen:
      return "'('";
    case TokenKind::RParen:
      return "')'";
    case TokenKind::LBracket:
      return "'['";
    case TokenKind::RBracket:
      return "']'";
    case TokenKind::LBrace:
      return "'{'";
    case TokenKind::RBrace:
      return "'}'";
    case TokenKind::Comma:
      return "','";
    case TokenKind::Colon:
      return "':'";
    case TokenKind::Dot:
      return "'.'";
    case TokenKind::Semicolon:
      return "';'";
    case TokenKind::At:
      return "'@'";
    case TokenKind::Assign:
      return "'='";
    case TokenKind::Arrow:
      return "'->'";
    case TokenKind::Plus:
      return "'+'";
    case TokenKind::Minus:
      return "'-'";
    case TokenKind::Star:
      return "'*'";
    case TokenKind::Slash:
      return "'/'";
    case TokenKind::DoubleSlash:
      return "'//'";
    case TokenKind::Percent:
      return "'%'";
    case TokenKind::DoubleStar:
      return "'**'";
    case TokenKind::EqEq:
      return "'=='";
    case TokenKind::NotEq:
      return "'!='";
    case TokenKind::Less:
      return "'<'";
    case TokenKind::LessEq:
      return "'<='";
    case TokenKind::Greater:
      return "'>'";
    case TokenKind::GreaterEq:
      return "'>='";
    case TokenKind::Tilde:
      return "'~'";
    case TokenKind::Amp:
      return "'&'";
    case TokenKind::Pipe:
      return "'|'";
    case TokenKind::Caret:
      return "'^'";
    case TokenKind::LShift:
      return "'<<'";
    case TokenKind::RShift:
      return "'>>'";
    case TokenKind::AugAssign:
      return "augmented assignment";
    case TokenKind::Walrus:
      return "':='";
    case TokenKind::Ellipsis:
      return "'...'";
  }
  return "token";
}

std::vector<Token> tokenize(std::string_view text, LexOptions options) {
  return Lexer(text, options).run();
}

}  // namespace pypto::frontend
