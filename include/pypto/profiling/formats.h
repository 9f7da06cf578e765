// A profile in the formats of other tools, one .cpp per format:
//
//   to_chrome_trace   Chrome Trace Event JSON (chrome_trace.cpp): opens in Perfetto UI and
//                     chrome://tracing; one track per thread, complete ("X") events in µs.
//   to_folded         folded stacks (folded.cpp): "parse;passes;Simplify 123" per line, the
//                     weight being self time in whole µs, for flamegraph.pl and inferno.
//   to_speedscope     speedscope's evented JSON (speedscope.cpp), one profile per thread.
//   to_html_report    one self-contained interactive page (html_report.cpp, scripts in
//                     src/profiling/html/, drawn with d3): a zoomable timeline with the device
//                     cores' lanes, a collapsible tree of merged stages, a list view and search;
//                     no network access needed. to_html_diff (report_diff.h) is its diff page.
#pragma once

#include <string>
#include <string_view>

#include "pypto/profiling/report.h"

namespace pypto::profiling {

// {"traceEvents": [...], "displayTimeUnit": "ms"}: a process_name and a thread_name metadata
// event ("ph": "M") per thread, then one complete event ("ph": "X", "ts"/"dur" in µs from the
// first stage's start, "pid", "tid", "args" with self time, error, memory, pass statistics) per
// stage. Stages recorded without a thread go to the first thread's track.
std::string to_chrome_trace(const Report& report);

// One "a;b;c <weight>" line per distinct stage path, in first-seen order; the weight is the
// path's summed self time in µs, rounded; paths weighing 0 are left out. Time the roots do not
// cover is the path "(untracked)". The weights add up to total_seconds (in µs, within one per
// line of rounding) plus, where stages ran in parallel, the time they overlapped. ';' in a name
// becomes ',' and line breaks become spaces, since both are separators of the format.
std::string to_folded(const Report& report);

// https://www.speedscope.app/file-format-schema.json, evented profiles in microseconds.
std::string to_speedscope(const Report& report, std::string_view name);

// The HTML page. `title` is shown as its heading.
std::string to_html_report(const Report& report, std::string_view title);

// `document` as text to put inside an HTML <script type="application/json"> element: the same
// JSON with "<", ">", "&", U+2028 and U+2029 written as \u escapes, so that no string in it can
// end the element ("</script>") or start a comment ("<!--") that would swallow the page.
std::string json_for_script(const nlohmann::ordered_json& document);

}  // namespace pypto::profiling
