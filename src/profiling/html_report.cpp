// The HTML pages of `pypto profile html` and `pypto profile diff --html`: the page shell
// (html/page.html) filled with the page's data, its scripts and the d3 library, all embedded at
// build time (cmake/HtmlReport.cmake), so that a page is one file that works offline.
//
// Safety: every name from a profile reaches the page as JSON data inside a <script
// type="application/json"> element (escaped below so that it cannot end or hide that element),
// and the scripts put it into the document as text nodes and attribute values only, never as
// markup. The one other place is the <title>, HTML-escaped.
#include <nlohmann/json.hpp>

#include "pypto/profiling/formats.h"
#include "pypto/profiling/report_diff.h"

namespace pypto::profiling {

// Generated from src/profiling/html/ and d3.min.js by cmake/HtmlReport.cmake.
extern const char kHtmlPage[];
extern const char kHtmlStyle[];
extern const char kHtmlD3[];
extern const char kHtmlCommonJs[];
extern const char kHtmlTimelineJs[];
extern const char kHtmlTreeJs[];
extern const char kHtmlReportJs[];
extern const char kHtmlDiffJs[];

namespace {

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

struct Slot {
  std::string_view marker;  // "/*PYPTO_DATA*/" in page.html
  std::string_view text;
};

// Replaces each marker of `page` by its text in one pass over the page, so that text put in
// (a stage name, a script) is never searched for markers itself.
std::string fill(std::string_view page, const std::vector<Slot>& slots) {
  std::string out;
  std::size_t at = 0;
  while (true) {
    const std::size_t marker = page.find("/*PYPTO_", at);
    if (marker == std::string_view::npos) break;
    const std::size_t end = page.find("*/", marker + 2);
    if (end == std::string_view::npos) break;
    const std::string_view name = page.substr(marker, end + 2 - marker);
    out.append(page.substr(at, marker - at));
    bool known = false;
    for (const Slot& slot : slots) {
      if (slot.marker == name) {
        out.append(slot.text);
        known = true;
      }
    }
    if (!known) out.append(name);  // a comment that only looks like a marker
    at = marker + name.size();
  }
  out.append(page.substr(at));
  return out;
}

std::string page(std::string_view kind, std::string_view title, const nlohmann::ordered_json& data,
                 const std::string& scripts) {
  nlohmann::ordered_json meta;
  meta["kind"] = kind;
  meta["title"] = title;
  const std::string meta_json = json_for_script(meta);
  const std::string data_json = json_for_script(data);
  const std::string title_html = escape_html(title);
  return fill(kHtmlPage, {{"/*PYPTO_TITLE*/", title_html},
                          {"/*PYPTO_STYLE*/", kHtmlStyle},
                          {"/*PYPTO_META*/", meta_json},
                          {"/*PYPTO_DATA*/", data_json},
                          {"/*PYPTO_D3*/", kHtmlD3},
                          {"/*PYPTO_SCRIPT*/", scripts}});
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

}  // namespace

std::string json_for_script(const nlohmann::ordered_json& document) {
  std::string text = dump_json(document, -1);
  // Inside <script>, the HTML parser looks for "</script" and, after "<!--", for "<script";
  // "<" occurs in JSON only inside strings, where "\u003c" is the same character. ">" and "&"
  // go too, so the text is inert in any HTML context. U+2028 and U+2029 are valid in JSON
  // strings but ended a line in JavaScript before ES2019: as escapes they are safe in both.
  replace_all(text, "<", "\\u003c");
  replace_all(text, ">", "\\u003e");
  replace_all(text, "&", "\\u0026");
  replace_all(text, "\xE2\x80\xA8", "\\u2028");
  replace_all(text, "\xE2\x80\xA9", "\\u2029");
  return text;
}

std::string to_html_report(const Report& report, std::string_view title) {
  const std::string scripts =
      std::string(kHtmlCommonJs) + kHtmlTimelineJs + kHtmlTreeJs + kHtmlReportJs;
  return page("report", title, report_to_ordered_json(report), scripts);
}

std::string to_html_diff(const ReportDiff& diff, const DiffOptions& options,
                         std::string_view base_name, std::string_view new_name) {
  nlohmann::ordered_json data;
  data["base"] = {{"name", base_name}, {"total_seconds", diff.base_total}};
  data["new"] = {{"name", new_name}, {"total_seconds", diff.new_total}};
  data["threshold_percent"] = options.threshold_percent;
  data["min_seconds"] = options.min_seconds;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const StageDiff& stage : diff.stages) {
    nlohmann::ordered_json row;
    row["path"] = stage.path;
    row["base"] = stage.base ? nlohmann::ordered_json(*stage.base) : nullptr;
    row["new"] = stage.now ? nlohmann::ordered_json(*stage.now) : nullptr;
    row["regressed"] = stage.regressed;
    stages.push_back(std::move(row));
  }
  data["stages"] = std::move(stages);
  const std::string scripts = std::string(kHtmlCommonJs) + kHtmlDiffJs;
  return page("diff",
              "PyPTO profile diff: " + std::string(base_name) + " \u2192 " + std::string(new_name),
              data, scripts);
}

}  // namespace pypto::profiling
