#include "pypto/codegen/source_writer.h"

namespace pypto::codegen {

SourceWriter& SourceWriter::line(std::string_view text) {
  if (!text.empty()) out_.append(static_cast<size_t>(depth_) * 2, ' ');
  out_.append(text);
  out_.push_back('\n');
  return *this;
}

void SourceWriter::open(std::string_view text) {
  std::string header(text);
  header += header.empty() ? "{" : " {";
  line(header);
  ++depth_;
}

void SourceWriter::close(std::string_view closing) {
  dedent();
  line(closing);
}

void SourceWriter::block(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    line(text.substr(pos, end - pos));
    pos = end + 1;
  }
}

}  // namespace pypto::codegen
