// Rendering of errors in a user's program, the same way for every stage:
//
//   softmax.py:21:19: error: expected Tile, got Tensor in argument 1 of pl.add
//           e = pl.add(x, t)
//                      ^
//
// The error types every layer throws for a mistake in the user's program live here too, so that
// the parser, the passes, codegen and the driver report them the same way.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pypto::support {

// A position in the program's source text (1-based). Line 0 means "no position" (IR built by a
// pass rather than parsed).
struct Span {
  int32_t line = 0;
  int32_t col = 0;

  bool valid() const { return line > 0; }
};

// Where a program came from, for diagnostics: errors found by any stage are rendered against it.
struct SourceInfo {
  std::string file_name;    // e.g. "softmax.py", or "<string>"
  std::string text;         // the text the spans refer to
  int32_t line_offset = 0;  // added to span lines when printing (class source inside a file)
};

// An error in the user's program found anywhere in the pipeline (parser, type checks, passes,
// codegen). `what()` is the bare message; render_diagnostic() adds file, line, column, the
// source line and a caret.
class CompileError : public std::runtime_error {
 public:
  CompileError(Span span, const std::string& message) : std::runtime_error(message), span_(span) {}
  Span span() const { return span_; }

 private:
  Span span_;
};

// `span` is relative to `text`; the reported line is span.line + line_offset (the text of a
// class taken out of a file starts at line_offset + 1 of that file). Without a valid span the
// result is "file: error: message".
std::string render_diagnostic(std::string_view file_name, std::string_view text,
                              int32_t line_offset, Span span, std::string_view message);
std::string render_diagnostic(const SourceInfo& source, Span span, std::string_view message);
// An error thrown by any stage, rendered against the program's source.
std::string render_diagnostic(const SourceInfo& source, const CompileError& error);

// A rendered error in program text. what() stays the bare message (as for every CompileError);
// rendered() is the full diagnostic with the source line and caret. line() is the line in the
// file (line_offset applied), col() the 1-based column.
class ParseError : public CompileError {
 public:
  ParseError(Span span, const std::string& message, std::string file_name, int32_t line,
             std::string source_line, std::string rendered)
      : CompileError(span, message),
        file_name_(std::move(file_name)),
        line_(line),
        source_line_(std::move(source_line)),
        rendered_(std::move(rendered)) {}

  const std::string& file_name() const { return file_name_; }
  int32_t line() const { return line_; }
  int32_t col() const { return span().col; }
  const std::string& source_line() const { return source_line_; }  // without the line break
  const std::string& rendered() const { return rendered_; }

 private:
  std::string file_name_;
  int32_t line_;
  std::string source_line_;
  std::string rendered_;
};

// Builds the ParseError for a CompileError raised while handling `text`.
ParseError make_parse_error(std::string_view file_name, std::string_view text, int32_t line_offset,
                            const CompileError& error);

}  // namespace pypto::support
