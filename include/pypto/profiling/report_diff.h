// Comparing two profiles stage by stage (`pypto profile diff`), e.g. in CI against a baseline.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pypto/profiling/report.h"

namespace pypto::profiling {

struct DiffOptions {
  // A stage regressed when it got slower by more than threshold_percent of its base time AND by
  // at least min_seconds: small stages jitter by large percentages, large ones by large amounts.
  double threshold_percent = 25.0;
  double min_seconds = 0.005;
};

struct StageDiff {
  std::string path;            // "compile;passes;Simplify": names from the root, ';'-joined
  std::optional<double> base;  // summed wall time of the stages with that path; none: absent
  std::optional<double> now;
  bool regressed = false;
  // (now - base) / base in percent; 0 when either side is absent or base is 0.
  double change_percent() const;
};

struct ReportDiff {
  double base_total = 0.0;
  double new_total = 0.0;
  std::vector<StageDiff> stages;  // in the order of the base profile, then stages only new has
  bool regressed() const;
};

// Stages are matched by path; stages sharing a path (a pass run twice, `verify` after every
// pass) are summed.
ReportDiff diff_reports(const Report& base, const Report& now, const DiffOptions& options);

// A table: path, base time, new time, change; regressions marked "REGRESSED", and a last line
// saying how many stages regressed beyond the thresholds.
std::string format_diff(const ReportDiff& diff, const DiffOptions& options);

// The diff as one self-contained HTML page (html_report.cpp): per stage path the base time,
// the new time, the change and the ratio, sorted by the size of the change, with a chart of the
// largest changes. `base_name` and `new_name` (the files) label the two sides.
std::string to_html_diff(const ReportDiff& diff, const DiffOptions& options,
                         std::string_view base_name, std::string_view new_name);

}  // namespace pypto::profiling
