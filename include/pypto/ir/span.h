#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace pypto::ir {

// A position in the program's source text (1-based). Line 0 means "no position" (IR built by a
// pass rather than parsed).
struct Span {
  int32_t line = 0;
  int32_t col = 0;

  bool valid() const { return line > 0; }
};

// An error in the user's program found anywhere in the pipeline (parser, type checks, passes).
// `what()` is the bare message; frontend/diagnostics.h renders it with file, line, column, the
// source line and a caret.
class CompileError : public std::runtime_error {
 public:
  CompileError(Span span, const std::string& message) : std::runtime_error(message), span_(span) {}
  Span span() const { return span_; }

 private:
  Span span_;
};

}  // namespace pypto::ir
