#pragma once

#include <string>
#include <string_view>

namespace pypto::codegen {

// Accumulates C++ source text line by line with two-space indentation.
class SourceWriter {
 public:
  // Appends one line at the current indentation (an empty `text` gives an empty line).
  SourceWriter& line(std::string_view text = {});
  // `text {` and indents; close() dedents and writes `}` (or `closing`).
  void open(std::string_view text);
  void close(std::string_view closing = "}");
  void indent() { ++depth_; }
  void dedent() {
    if (depth_ > 0) --depth_;
  }
  // Appends text that is already laid out (several lines), each line indented.
  void block(std::string_view text);

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
  int depth_ = 0;
};

}  // namespace pypto::codegen
