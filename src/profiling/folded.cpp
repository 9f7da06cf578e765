// Folded stacks ("a;b;c 123" per line), the input format of flamegraph.pl and inferno.
#include <cmath>
#include <unordered_map>

#include "pypto/profiling/formats.h"

namespace pypto::profiling {

namespace {

std::string frame_name(std::string_view name) {
  std::string frame(name);
  for (char& c : frame) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return frame;
}

struct FoldedLines {
  std::vector<std::string> order;
  std::unordered_map<std::string, double> seconds;

  void add(const std::string& path, double self) {
    auto [it, added] = seconds.try_emplace(path, 0.0);
    if (added) order.push_back(path);
    it->second += self;
  }
};

void fold(const std::vector<ReportStage>& stages, const std::string& prefix, FoldedLines& lines) {
  for (const ReportStage& stage : stages) {
    const std::string path =
        prefix.empty() ? frame_name(stage.name) : prefix + ";" + frame_name(stage.name);
    lines.add(path, stage.self_seconds);
    fold(stage.children, path, lines);
  }
}

}  // namespace

std::string to_folded(const Report& report) {
  FoldedLines lines;
  fold(report.stages, "", lines);
  if (report.untracked_seconds > 0.0) lines.add("(untracked)", report.untracked_seconds);
  std::string out;
  for (const std::string& path : lines.order) {
    const long long weight = std::llround(lines.seconds[path] * 1e6);
    if (weight <= 0) continue;
    out += path;
    out += ' ';
    out += std::to_string(weight);
    out += '\n';
  }
  return out;
}

}  // namespace pypto::profiling
