// The HTML profile pages as generated text: one self-contained file with d3 and the page scripts
// inline, the profile (or diff) as JSON data that no name can break out of, and markers filled
// once. What the pages do in a browser is tested in tests/python/test_profile_report_browser.py.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "pypto/profiling/formats.h"
#include "pypto/profiling/profile_file.h"
#include "pypto/profiling/report.h"
#include "pypto/profiling/report_diff.h"

namespace pypto::profiling {
namespace {

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// The text of <script type="application/json" id="<id>">.
std::string json_element(const std::string& page, const std::string& id) {
  const std::string open = "<script type=\"application/json\" id=\"" + id + "\">";
  const std::size_t begin = page.find(open);
  EXPECT_NE(begin, std::string::npos) << "no element " << id;
  if (begin == std::string::npos) return "{}";
  const std::size_t data = begin + open.size();
  return page.substr(data, page.find("</script>", data) - data);
}

// Names that would end the data's <script> element, open a comment that swallows the page, or
// end a JavaScript line in an old engine, if they were pasted into the page as they are.
const std::vector<std::string> kHostileNames = {"<!--<script>alert(1)</script>",
                                                "</script><b>x</b>",
                                                "a\xE2\x80\xA8"
                                                "b\xE2\x80\xA9"
                                                "c",
                                                "/*PYPTO_D3*/", "&lt;&amp;\"'"};

Report hostile_report() {
  json stages = json::array();
  double start = 100.0;
  for (const std::string& name : kHostileNames) {
    stages.push_back({{"name", name},
                      {"seconds", 0.25},
                      {"start", start},
                      {"error", name},
                      {"failed", true},
                      {"children", json::array()}});
    start += 0.25;
  }
  stages[0]["device"] = {{"cores", 1},
                         {"begin", 100.0},
                         {"end", 100.1},
                         {"task_fields", {"kernel", "core", "start", "end", "waited_on"}},
                         {"tasks", {{kHostileNames[1], 0, 100.0, 100.1, -1}}}};
  json thread = json::object();
  thread["id"] = 1u;  // unsigned, as a parsed file has it
  thread["name"] = kHostileNames[1];
  json document = json::object();
  document["total_seconds"] = 2.0;
  document["metadata"] = json::object({{"program", kHostileNames[0]}});
  document["threads"] = json::array({thread});
  document["stages"] = stages;
  return report_from_json(document, "hostile");
}

TEST(HtmlJson, EscapesWhatCouldEndTheScriptElementAndRoundTrips) {
  const json document = {{"a", "</script><!--<script>&>"}, {"b", "x\xE2\x80\xA8y\xE2\x80\xA9z"}};
  const std::string text = json_for_script(document);
  for (const char* raw : {"<", ">", "&", "\xE2\x80\xA8", "\xE2\x80\xA9"}) {
    EXPECT_EQ(text.find(raw), std::string::npos) << raw << " in " << text;
  }
  EXPECT_NE(text.find("\\u003c/script\\u003e"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u2028"), std::string::npos) << text;
  EXPECT_EQ(json::parse(text), document);
}

TEST(HtmlReport, IsOneSelfContainedPageWithD3AndTheProfileAsData) {
  Report report;
  ReportStage stage;
  stage.name = "compile";
  stage.start = 5.0;
  stage.seconds = 0.5;
  stage.self_seconds = 0.5;
  report.stages.push_back(stage);
  report.total_seconds = 0.5;
  const std::string page = to_html_report(report, "PyPTO compile profile: p.json");

  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("d3js.org v"), std::string::npos) << "d3 is not embedded";
  EXPECT_NE(page.find("pp.timeline = function"), std::string::npos);
  EXPECT_NE(page.find("pp.mergeStages = function"), std::string::npos);
  EXPECT_EQ(page.find("pp.meta.kind !== \"diff\""), std::string::npos);  // diff.js
  // Nothing is fetched: no external script, style sheet or frame.
  for (const char* external : {"<script src", "<link", "<iframe", "@import", "src=\"http"}) {
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  }
  // Every marker was filled.
  EXPECT_EQ(page.find("/*PYPTO_"), std::string::npos);
  EXPECT_NE(page.find("<title>PyPTO compile profile: p.json</title>"), std::string::npos);

  EXPECT_EQ(json::parse(json_element(page, "profile")),
            json::parse(dump_json(report_to_ordered_json(report), -1)));
  const json meta = json::parse(json_element(page, "meta"));
  EXPECT_EQ(meta["kind"], "report");
  EXPECT_EQ(meta["title"], "PyPTO compile profile: p.json");
}

TEST(HtmlReport, HostileNamesStayDataAndAddNoMarkup) {
  const std::string page = to_html_report(hostile_report(), "t <i>x</i>");
  // The page's own script elements, and no others: a name cannot open or end one, nor start a
  // comment (the shell's description is the page's only comment).
  const Report plain;
  const std::string empty = to_html_report(plain, "t");
  EXPECT_EQ(count(page, "</script"), count(empty, "</script"));
  EXPECT_EQ(count(page, "<script"), count(empty, "<script"));
  EXPECT_EQ(count(page, "<!--"), 1u);
  EXPECT_EQ(count(page, "<b>"), 0u);
  EXPECT_EQ(count(page, "\xE2\x80\xA8"), 0u);
  // The title is text in <title>, and data in the meta element.
  EXPECT_NE(page.find("<title>t &lt;i&gt;x&lt;/i&gt;</title>"), std::string::npos);

  // Markers are filled once, in the shell only: a stage named like one keeps its name, and the
  // page does not gain a second copy of d3.
  EXPECT_EQ(count(page, "d3js.org v"), 1u);
  const json data = json::parse(json_element(page, "profile"));
  std::vector<std::string> names;
  for (const json& stage : data["stages"]) names.push_back(stage["name"]);
  EXPECT_EQ(names, kHostileNames);
  EXPECT_EQ(data["stages"][0]["device"]["tasks"][0][0], kHostileNames[1]);
  EXPECT_EQ(data["threads"][0]["name"], kHostileNames[1]);
}

TEST(HtmlDiff, CarriesBothSidesPerPathAndTheThresholds) {
  Report base = hostile_report(), now = hostile_report();
  now.stages[1].seconds = 1.0;  // slower by 0.75 s: regressed at the default thresholds
  now.stages.pop_back();        // only in base
  DiffOptions options;
  const ReportDiff diff = diff_reports(base, now, options);
  const std::string page = to_html_diff(diff, options, "a.json", "b<1>.json");

  EXPECT_EQ(count(page, "/*PYPTO_"), 1u);  // the stage named so, in the data
  EXPECT_NE(page.find("pp.meta.kind !== \"diff\""), std::string::npos);
  EXPECT_EQ(page.find("pp.timeline = function"), std::string::npos);
  EXPECT_EQ(count(page, "<!--"), 1u);
  EXPECT_EQ(count(page, "<b>"), 0u);
  EXPECT_NE(page.find("b&lt;1&gt;.json</title>"), std::string::npos);

  const json data = json::parse(json_element(page, "profile"));
  EXPECT_EQ(data["base"]["name"], "a.json");
  EXPECT_EQ(data["new"]["name"], "b<1>.json");
  EXPECT_EQ(data["threshold_percent"], options.threshold_percent);
  ASSERT_EQ(data["stages"].size(), kHostileNames.size());
  EXPECT_EQ(data["stages"][1]["path"], kHostileNames[1]);
  EXPECT_EQ(data["stages"][1]["base"], 0.25);
  EXPECT_EQ(data["stages"][1]["new"], 1.0);
  EXPECT_EQ(data["stages"][1]["regressed"], true);
  EXPECT_TRUE(data["stages"].back()["new"].is_null());
  EXPECT_EQ(json::parse(json_element(page, "meta"))["kind"], "diff");
}

}  // namespace
}  // namespace pypto::profiling
