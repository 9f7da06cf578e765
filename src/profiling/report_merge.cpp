// merge_repeated_stages(): one stage for many that repeat the same path (report.h).
#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pypto/profiling/report.h"

namespace pypto::profiling {

namespace {

// May this stage be merged with others of its shape? Failures and open stages are individual
// facts that a sum would hide.
bool mergeable(const ReportStage& stage) {
  if (stage.failed || stage.open) return false;
  return std::all_of(stage.children.begin(), stage.children.end(), mergeable);
}

// The tree of names below and including `stage`, as one string: stages merge only with stages
// of the same shape, so their children can be merged position by position. Names are
// length-prefixed so that no name can imitate the punctuation.
void append_shape(std::string& out, const ReportStage& stage) {
  out += std::to_string(stage.name.size());
  out += ':';
  out += stage.name;
  out += '(';
  for (const ReportStage& child : stage.children) append_shape(out, child);
  out += ')';
}

// The durations of the stages a merged stage stands for, by the stage they merged into. A stage
// with no entry stands for itself alone. Keyed by address: moving a stage moves its children's
// storage along, so only the stage's own entry needs re-keying when it moves (rekey()).
using Durations = std::unordered_map<const ReportStage*, std::vector<double>>;

std::vector<double> take_durations(const ReportStage& stage, Durations& durations) {
  auto it = durations.find(&stage);
  if (it == durations.end()) return {stage.seconds};
  std::vector<double> values = std::move(it->second);
  durations.erase(it);
  return values;
}

void rekey(const ReportStage& from, const ReportStage& to, Durations& durations) {
  auto node = durations.extract(&from);
  if (node.empty()) return;
  node.key() = &to;
  durations.insert(std::move(node));
}

// Adds `other` (same shape as `into`) to `into`, child by child.
void add_stage(ReportStage& into, ReportStage& other, Durations& durations) {
  std::vector<double> theirs = take_durations(other, durations);
  std::vector<double> mine = take_durations(into, durations);
  mine.insert(mine.end(), theirs.begin(), theirs.end());
  durations[&into] = std::move(mine);
  into.count += other.count;
  into.seconds += other.seconds;
  into.self_seconds += other.self_seconds;
  into.untracked += other.untracked;
  into.parallel = into.parallel || other.parallel;
  // One run's device timeline does not describe the sum of many: each run's is in its own
  // run's report.
  into.device.reset();
  for (std::size_t i = 0; i < into.children.size(); ++i) {
    add_stage(into.children[i], other.children[i], durations);
  }
}

double median(std::vector<double>& values) {
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle)) +
          upper) /
         2.0;
}

void set_spreads(ReportStage& stage, Durations& durations) {
  if (auto it = durations.find(&stage); it != durations.end()) {
    std::vector<double>& values = it->second;
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    stage.repeat = ReportStage::Spread{*low, 0.0, *high};
    stage.repeat->median_seconds = median(values);
  }
  for (ReportStage& child : stage.children) set_spreads(child, durations);
}

// Merges repeated siblings of `stages`, then the children of what is left. Iterative over the
// levels (a work list), so a deep tree cannot exhaust the stack.
void merge_levels(std::vector<ReportStage>& top, std::size_t min_repeats, Durations& durations) {
  std::vector<std::vector<ReportStage>*> pending{&top};
  while (!pending.empty()) {
    std::vector<ReportStage>& stages = *pending.back();
    pending.pop_back();
    // Shapes first: only those that repeat at least `min_repeats` times merge.
    std::vector<std::string> shapes(stages.size());
    std::unordered_map<std::string_view, std::size_t> repeats;
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (!mergeable(stages[i])) continue;
      append_shape(shapes[i], stages[i]);
      ++repeats[shapes[i]];
    }
    std::unordered_map<std::string_view, std::size_t> first_of_shape;  // shape -> index in `kept`
    std::vector<ReportStage> kept;
    kept.reserve(stages.size());  // no reallocation: `durations` holds addresses in it
    for (std::size_t i = 0; i < stages.size(); ++i) {
      ReportStage& stage = stages[i];
      if (shapes[i].empty() || repeats[shapes[i]] < min_repeats) {
        rekey(stage, kept.emplace_back(std::move(stage)), durations);
        continue;
      }
      auto [it, added] = first_of_shape.try_emplace(shapes[i], kept.size());
      if (added) {
        rekey(stage, kept.emplace_back(std::move(stage)), durations);
      } else {
        add_stage(kept[it->second], stage, durations);
      }
    }
    stages = std::move(kept);
    for (ReportStage& stage : stages) pending.push_back(&stage.children);
  }
}

}  // namespace

void merge_repeated_stages(Report& report, std::size_t min_repeats) {
  Durations durations;
  merge_levels(report.stages, std::max<std::size_t>(min_repeats, 2), durations);
  for (ReportStage& stage : report.stages) set_spreads(stage, durations);
}

}  // namespace pypto::profiling
