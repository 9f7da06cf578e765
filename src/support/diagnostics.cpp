#include "pypto/support/diagnostics.h"

namespace pypto::support {

namespace {

// The text of 1-based line `line` of `text`, without its line break; empty when out of range.
std::string_view source_line_of(std::string_view text, int32_t line) {
  if (line < 1) return {};
  size_t start = 0;
  for (int32_t l = 1; l < line; ++l) {
    size_t nl = text.find_first_of("\r\n", start);
    if (nl == std::string_view::npos) return {};
    start = nl + 1;
    if (text[nl] == '\r' && start < text.size() && text[start] == '\n') ++start;
  }
  size_t end = text.find_first_of("\r\n", start);
  if (end == std::string_view::npos) end = text.size();
  return text.substr(start, end - start);
}

// Spaces under every character before the column, keeping tabs so the caret lines up however
// the terminal expands them. Columns count characters (as the lexer does): a UTF-8 continuation
// byte adds nothing, so the caret sits under the right character of a line with non-ASCII text.
std::string caret_line(std::string_view source_line, int32_t col) {
  std::string out;
  const size_t width = col > 1 ? static_cast<size_t>(col - 1) : 0;
  out.reserve(width + 1);
  size_t chars = 0;
  for (size_t i = 0; chars < width && i <= source_line.size(); ++i) {
    if (i < source_line.size() && (static_cast<unsigned char>(source_line[i]) & 0xC0) == 0x80) {
      continue;
    }
    out += (i < source_line.size() && source_line[i] == '\t') ? '\t' : ' ';
    ++chars;
  }
  out += '^';
  return out;
}

}  // namespace

std::string render_diagnostic(std::string_view file_name, std::string_view text,
                              int32_t line_offset, Span span, std::string_view message) {
  std::string out(file_name.empty() ? std::string_view("<string>") : file_name);
  if (!span.valid()) {
    out += ": error: ";
    out += message;
    return out;
  }
  out +=
      ':' + std::to_string(span.line + line_offset) + ':' + std::to_string(span.col) + ": error: ";
  out += message;
  std::string_view line = source_line_of(text, span.line);
  if (!line.empty()) {
    out += '\n';
    out += line;
    out += '\n';
    out += caret_line(line, span.col);
  }
  return out;
}

std::string render_diagnostic(const SourceInfo& source, Span span, std::string_view message) {
  return render_diagnostic(source.file_name, source.text, source.line_offset, span, message);
}

std::string render_diagnostic(const SourceInfo& source, const CompileError& error) {
  return render_diagnostic(source, error.span(), error.what());
}

ParseError make_parse_error(std::string_view file_name, std::string_view text, int32_t line_offset,
                            const CompileError& error) {
  Span span = error.span();
  std::string rendered = render_diagnostic(file_name, text, line_offset, span, error.what());
  return ParseError(span, error.what(), std::string(file_name),
                    span.valid() ? span.line + line_offset : 0,
                    std::string(source_line_of(text, span.line)), std::move(rendered));
}

}  // namespace pypto::support
