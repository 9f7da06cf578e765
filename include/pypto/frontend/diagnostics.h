// Rendering of errors in a user's program, the same way for every stage:
//
//   softmax.py:21:19: error: expected Tile, got Tensor in argument 1 of pl.add
//           e = pl.add(x, t)
//                      ^
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "pypto/ir/program.h"
#include "pypto/ir/span.h"

namespace pypto::frontend {

// `span` is relative to `text`; the reported line is span.line + line_offset (the text of a
// class taken out of a file starts at line_offset + 1 of that file). Without a valid span the
// result is "file: error: message".
std::string render_diagnostic(std::string_view file_name, std::string_view text,
                              int32_t line_offset, ir::Span span, std::string_view message);
std::string render_diagnostic(const ir::SourceInfo& source, ir::Span span,
                              std::string_view message);
// An error thrown by any stage, rendered against the program's source.
std::string render_diagnostic(const ir::SourceInfo& source, const ir::CompileError& error);

// A rendered error in program text. what() stays the bare message (as for every CompileError);
// rendered() is the full diagnostic with the source line and caret. line() is the line in the
// file (line_offset applied), col() the 1-based column.
class ParseError : public ir::CompileError {
 public:
  ParseError(ir::Span span, const std::string& message, std::string file_name, int32_t line,
             std::string source_line, std::string rendered)
      : ir::CompileError(span, message),
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
                            const ir::CompileError& error);

}  // namespace pypto::frontend
