// Stage-by-stage comparison of two profiles.
#include "pypto/profiling/report_diff.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

namespace pypto::profiling {

namespace {

struct PathTimes {
  std::vector<std::string> order;
  std::unordered_map<std::string, double> seconds;
};

void collect(const std::vector<ReportStage>& stages, const std::string& prefix, PathTimes& out) {
  for (const ReportStage& stage : stages) {
    std::string path = prefix.empty() ? stage.name : prefix + ";" + stage.name;
    auto [it, added] = out.seconds.try_emplace(path, 0.0);
    if (added) out.order.push_back(path);
    it->second += stage.seconds;
    collect(stage.children, path, out);
  }
}

}  // namespace

double StageDiff::change_percent() const {
  if (!base || !now || *base <= 0.0) return 0.0;
  return 100.0 * (*now - *base) / *base;
}

bool ReportDiff::regressed() const {
  return std::any_of(stages.begin(), stages.end(), [](const StageDiff& s) { return s.regressed; });
}

ReportDiff diff_reports(const Report& base, const Report& now, const DiffOptions& options) {
  PathTimes before, after;
  collect(base.stages, "", before);
  collect(now.stages, "", after);
  ReportDiff diff;
  diff.base_total = base.total_seconds;
  diff.new_total = now.total_seconds;
  auto add = [&](const std::string& path) {
    StageDiff stage;
    stage.path = path;
    if (auto it = before.seconds.find(path); it != before.seconds.end()) stage.base = it->second;
    if (auto it = after.seconds.find(path); it != after.seconds.end()) stage.now = it->second;
    if (stage.base && stage.now) {
      const double slower = *stage.now - *stage.base;
      stage.regressed =
          slower >= options.min_seconds && slower > *stage.base * options.threshold_percent / 100.0;
    }
    diff.stages.push_back(std::move(stage));
  };
  for (const std::string& path : before.order) add(path);
  for (const std::string& path : after.order) {
    if (!before.seconds.count(path)) add(path);
  }
  return diff;
}

std::string format_diff(const ReportDiff& diff, const DiffOptions& options) {
  std::size_t width = 5;
  std::vector<std::string> shown_paths;  // names from a file, made safe for a terminal
  shown_paths.reserve(diff.stages.size());
  for (const StageDiff& stage : diff.stages) {
    shown_paths.push_back(escape_control_characters(stage.path));
    width = std::max(width, shown_paths.back().size());
  }
  auto row = [&](const std::string& path, const std::string& base, const std::string& now,
                 const std::string& change, const char* note) {
    char line[64];
    std::string out = path;
    out.resize(width + 2, ' ');
    std::snprintf(line, sizeof line, "%10s %10s %9s", base.c_str(), now.c_str(), change.c_str());
    out += line;
    if (*note != '\0') out += std::string("  ") + note;
    return out + "\n";
  };
  auto percent = [](double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%+.1f%%", value);
    return std::string(text);
  };
  std::string out = row("stage", "base", "new", "change", "");
  const double total_change =
      diff.base_total > 0.0 ? 100.0 * (diff.new_total - diff.base_total) / diff.base_total : 0.0;
  out += row("(total)", format_duration(diff.base_total), format_duration(diff.new_total),
             percent(total_change), "");
  std::size_t regressions = 0;
  for (std::size_t i = 0; i < diff.stages.size(); ++i) {
    const StageDiff& stage = diff.stages[i];
    const char* note = stage.regressed ? "REGRESSED"
                       : !stage.base   ? "only in new"
                       : !stage.now    ? "only in base"
                                       : "";
    regressions += stage.regressed ? 1 : 0;
    out += row(shown_paths[i], stage.base ? format_duration(*stage.base) : "-",
               stage.now ? format_duration(*stage.now) : "-",
               stage.base && stage.now ? percent(stage.change_percent()) : "", note);
  }
  char summary[160];
  std::snprintf(summary, sizeof summary,
                "\n%zu stage(s) regressed (slower by more than %g%% and by at least %s)\n",
                regressions, options.threshold_percent,
                format_duration(options.min_seconds).c_str());
  return out + summary;
}

}  // namespace pypto::profiling
