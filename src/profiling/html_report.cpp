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
  // The JSON sits in a <script> element, whose text the HTML parser scans for "</script" and,
  // after "<!--", for "<script" (which would then swallow the rest of the page). "<" occurs in
  // JSON only inside strings, where "\u003c" is the same character: with no "<" left, no stage
  // name can end or hide the element.
  replace_all(data, "<", "\\u003c");
  std::string page = kHtmlReportTemplate;
  replace_all(page, "/*PYPTO_TITLE*/", escape_html(title));
  replace_all(page, "/*PYPTO_PROFILE*/", data);
  return page;
}

}  // namespace pypto::profiling
