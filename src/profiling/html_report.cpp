// The HTML report: the page template (html_report_template.html, embedded at build time by
// cmake/EmbedText.cmake) with the title and the profile's JSON filled in.
#include <nlohmann/json.hpp>

#include "pypto/profiling/formats.h"

namespace pypto::profiling {

extern const char kHtmlReportTemplate[];  // generated: html_report_template.cpp

namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

std::string escape_html(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string to_html_report(const Report& report, std::string_view title) {
  std::string data = dump_json(report_to_ordered_json(report), -1);
  // Inside <script>, "</" could end the element early; "<\/" is the same JSON string.
  replace_all(data, "</", "<\\/");
  std::string page = kHtmlReportTemplate;
  replace_all(page, "/*PYPTO_TITLE*/", escape_html(title));
  replace_all(page, "/*PYPTO_PROFILE*/", data);
  return page;
}

}  // namespace pypto::profiling
