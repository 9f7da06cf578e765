// Shapes a profile snapshot (order, parallel flags, total) and renders it as JSON or as the text
// summary.
#include "pypto/profiling/report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

namespace pypto::profiling {

namespace {

// Untracked time worth showing: `parent` minus `covered`, or 0 below the thresholds. Children
// timed on other threads may cover more than their parent; that is not untracked time either.
double shown_untracked(double parent, double covered) {
  const double untracked = parent - covered;
  if (untracked < kMinUntrackedSeconds || untracked < kMinUntrackedShare * parent) return 0.0;
  return untracked;
}

// Sorts one sibling list, flags overlapping siblings and returns the time the list covers.
double arrange_siblings(std::vector<ReportStage>& siblings) {
  std::stable_sort(siblings.begin(), siblings.end(),
                   [](const ReportStage& a, const ReportStage& b) { return a.start < b.start; });
  double covered = 0.0;
  for (std::size_t first = 0; first < siblings.size();) {
    std::size_t last = first;
    double group_end = siblings[first].end();
    // Touching is not overlapping: a stage that starts as the previous one ends ran after it.
    while (last + 1 < siblings.size() && siblings[last + 1].start < group_end) {
      ++last;
      group_end = std::max(group_end, siblings[last].end());
    }
    if (last == first) {
      covered += siblings[first].seconds;  // exact sum when nothing overlaps
    } else {
      for (std::size_t i = first; i <= last; ++i) siblings[i].parallel = true;
      covered += group_end - siblings[first].start;
    }
    first = last + 1;
  }
  for (ReportStage& stage : siblings) {
    const double children_cover = arrange_siblings(stage.children);
    stage.self_seconds = std::max(0.0, stage.seconds - children_cover);
    if (!stage.children.empty()) stage.untracked = shown_untracked(stage.seconds, children_cover);
  }
  return covered;
}

template <typename Json>
Json stage_to_json(const ReportStage& stage, std::uint64_t parent_thread) {
  Json node;
  node["name"] = stage.name;
  node["seconds"] = stage.seconds;
  node["self_seconds"] = stage.self_seconds;
  if (stage.untracked > 0.0) node["untracked_seconds"] = stage.untracked;
  node["start"] = stage.start;
  if (stage.thread != parent_thread && stage.thread != 0) node["thread"] = stage.thread;
  if (stage.failed) node["failed"] = true;
  if (!stage.error.empty()) node["error"] = stage.error;
  if (stage.parallel) node["parallel"] = true;
  if (stage.open) node["open"] = true;
  if (stage.count != 1) node["count"] = stage.count;
  if (stage.repeat) {
    node["min_seconds"] = stage.repeat->min_seconds;
    node["median_seconds"] = stage.repeat->median_seconds;
    node["max_seconds"] = stage.repeat->max_seconds;
  }
  if (stage.memory) {
    node["rss_bytes"] = stage.memory->rss_bytes;
    node["rss_growth_bytes"] = stage.memory->growth_bytes;
  }
  if (stage.pass) {
    Json pass;
    pass["ir_size_before"] = stage.pass->ir_size_before;
    pass["ir_size_after"] = stage.pass->ir_size_after;
    pass["changed"] = stage.pass->changed;
    node["pass"] = std::move(pass);
  }
  Json children = Json::array();
  const std::uint64_t thread = stage.thread != 0 ? stage.thread : parent_thread;
  for (const ReportStage& child : stage.children) {
    children.push_back(stage_to_json<Json>(child, thread));
  }
  node["children"] = std::move(children);
  if (stage.device) node["device"] = device_timeline_to_json(*stage.device);
  return node;
}

template <typename Json>
Json to_json_document(const Report& report) {
  Json document;
  document["total_seconds"] = report.total_seconds;
  if (report.untracked_seconds > 0.0) document["untracked_seconds"] = report.untracked_seconds;
  const std::uint64_t main_thread = report.threads.empty() ? 0 : report.threads.front().id;
  Json stages = Json::array();
  for (const ReportStage& stage : report.stages) {
    stages.push_back(stage_to_json<Json>(stage, main_thread));
  }
  document["stages"] = std::move(stages);
  if (!report.threads.empty()) {
    Json threads = Json::array();
    for (const ThreadIdentity& thread : report.threads) {
      Json entry;
      entry["id"] = thread.id;
      entry["name"] = thread.name;
      threads.push_back(std::move(entry));
    }
    document["threads"] = std::move(threads);
  }
  if (!report.metadata.empty()) {
    Json metadata = Json::object();
    for (const auto& [key, value] : report.metadata) metadata[key] = value;
    document["metadata"] = std::move(metadata);
  }
  return document;
}

}  // namespace

std::string escape_control_characters(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    unsigned code = 0x100;  // none
    if (byte < 0x20 || byte == 0x7F) {
      code = byte;
    } else if (byte == 0xC2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      code = static_cast<unsigned char>(text[++i]);  // C1 control U+0080-U+009F in UTF-8
    }
    if (code == 0x100) {
      out += text[i];
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, code < 0x80 ? "\\x%02x" : "\\u%04x", code);
    out += escaped;
  }
  return out;
}

namespace {

// Terminal columns taken by UTF-8 text: one per code point ("µ" is two bytes, one column).
std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

void pad_right(std::string& out, std::string_view text, std::size_t width) {
  out += text;
  for (std::size_t w = display_width(text); w < width; ++w) out += ' ';
}

void pad_left(std::string& out, std::string_view text, std::size_t width) {
  for (std::size_t w = display_width(text); w < width; ++w) out += ' ';
  out += text;
}

constexpr std::size_t kIndentPerDepth = 2;
constexpr std::size_t kMinNameColumn = 34;  // the seed layout's column for short names
constexpr std::size_t kDurationColumn = 7;

// One line of the summary: a stage, or the leaf stages of one sibling list that share a name
// (the `verify` and `dump` after every pass), folded into one line at the first one's place.
struct SummaryLine {
  const ReportStage* first = nullptr;  // its children follow the line (none when folded)
  std::size_t count = 0;
  double seconds = 0.0;
  bool parallel = false;
  bool failed = false;
  bool open = false;
  std::string_view error;  // the first error of its stages

  std::string label() const {
    if (count == 1) return escape_control_characters(first->name);
    return escape_control_characters(first->name) + " (" + std::to_string(count) + "\u00d7)";
  }
};

// Lines of one sibling list, in its order. Stages with children and names that occur once stay
// lines of their own; a folded line sums the times and shows a flag any of its stages has.
std::vector<SummaryLine> fold_siblings(const std::vector<ReportStage>& siblings) {
  std::vector<SummaryLine> lines;
  lines.reserve(siblings.size());
  std::unordered_map<std::string_view, std::size_t> leaf_lines;  // name -> index in `lines`
  for (const ReportStage& stage : siblings) {
    std::size_t index = lines.size();
    // A stage with a device timeline keeps its own line: its core lines follow it.
    if (stage.children.empty() && !stage.device)
      index = leaf_lines.try_emplace(stage.name, index).first->second;
    if (index == lines.size())
      lines.push_back(SummaryLine{&stage, 0, 0.0, false, false, false, {}});
    SummaryLine& line = lines[index];
    line.count += static_cast<std::size_t>(stage.count);
    line.seconds += stage.seconds;
    line.parallel = line.parallel || stage.parallel;
    line.failed = line.failed || stage.failed;
    line.open = line.open || stage.open;
    if (line.error.empty()) line.error = stage.error;
  }
  return lines;
}

std::size_t widest_label(const std::vector<ReportStage>& stages, std::size_t indent) {
  std::size_t widest = 0;
  for (const SummaryLine& line : fold_siblings(stages)) {
    widest = std::max({widest, indent + display_width(line.label()),
                       widest_label(line.first->children, indent + kIndentPerDepth)});
  }
  return widest;
}

constexpr std::string_view kUntrackedLabel = "(untracked)";

// "<indent><label>   <duration>  (<percent of total>)", without the flags and the newline.
void append_line_head(std::string& out, std::size_t indent, std::string_view label,
                      std::size_t name_column, double seconds, double total) {
  pad_right(out, std::string(indent, ' ') + std::string(label), name_column);
  pad_left(out, format_duration(seconds), kDurationColumn);
  char percent[32];
  std::snprintf(percent, sizeof percent, "  (%4.1f%%)",
                total > 0.0 ? 100.0 * seconds / total : 0.0);
  out += percent;
}

// The first line of an error: the message itself (the lines after it show the source). Kept
// whole: it ends the stage's line, so its length moves no column, and its end is often the
// useful part ("... (capacity 196608 bytes, 0 already in use)").
std::string_view first_line(std::string_view error) { return error.substr(0, error.find('\n')); }

void append_flags(std::string& out, const SummaryLine& line) {
  if (line.parallel) out += "  [parallel]";
  if (line.failed) {
    out += line.error.empty()
               ? "  [failed]"
               : "  [failed: " + escape_control_characters(first_line(line.error)) + "]";
  }
  if (line.open) out += "  [open]";
  // One merged stage (merge_repeated_stages): the spread of the durations it stands for.
  if (const auto& repeat = line.first->repeat;
      repeat && line.count == static_cast<std::size_t>(line.first->count)) {
    out += "  min " + format_duration(repeat->min_seconds) + " median " +
           format_duration(repeat->median_seconds) + " max " + format_duration(repeat->max_seconds);
  }
  if (line.count != 1) return;  // statistics of one stage, not of a folded line
  if (const auto& pass = line.first->pass) {
    out += "  ir " + std::to_string(pass->ir_size_before);
    out += pass->changed ? "\u2192" + std::to_string(pass->ir_size_after) : std::string(" =");
  }
  if (const auto& memory = line.first->memory) {
    out += "  rss " + format_bytes(memory->rss_bytes) + " " +
           (memory->growth_bytes >= 0 ? "+" : "") + format_bytes(memory->growth_bytes);
  }
}

// Lines of one sibling list; `untracked` is the time their parent has that they do not cover.
// `depth_left`: how many levels below these are shown (-1: all).
void append_lines(std::string& out, const std::vector<ReportStage>& stages, double untracked,
                  std::size_t indent, std::size_t name_column, double total, double min_seconds,
                  int depth_left = -1) {
  for (const SummaryLine& line : fold_siblings(stages)) {
    if (line.seconds < min_seconds) continue;
    append_line_head(out, indent, line.label(), name_column, line.seconds, total);
    append_flags(out, line);
    out += '\n';
    if (depth_left != 0) {
      append_lines(out, line.first->children, line.first->untracked, indent + kIndentPerDepth,
                   name_column, total, min_seconds, depth_left - 1);
    }
    // After the children, which partition the stage's time: the cores' busy shares are of the
    // device's own span, not parts of the stage.
    if (line.first->device) {
      for (const std::string& core : format_core_utilisation(*line.first->device)) {
        out += std::string(indent + kIndentPerDepth, ' ') + core + '\n';
      }
    }
  }
  if (untracked > 0.0 && untracked >= min_seconds) {
    append_line_head(out, indent, kUntrackedLabel, name_column, untracked, total);
    out += '\n';
  }
}

}  // namespace

ReportStage to_report_stage(const StageRecord& record, double now) {
  ReportStage stage;
  stage.name = record.name;
  stage.start = record.start;
  stage.open = record.end == 0.0;
  stage.seconds = (stage.open ? now : record.end) - record.start;
  stage.failed = record.failed;
  stage.error = record.error;
  stage.thread = record.thread.id;
  stage.children.reserve(record.children.size());
  for (const StageRecord& child : record.children) {
    stage.children.push_back(to_report_stage(child, now));
  }
  return stage;
}

Report finalize_report(std::vector<ReportStage> roots, std::vector<Interval> sessions) {
  Report report;
  report.stages = std::move(roots);
  const double covered = arrange_siblings(report.stages);
  report.total_seconds = covered;
  if (sessions.empty()) return report;  // never entered: the roots are the whole profile

  // Measure of the union of the sessions and the roots: a root recorded outside every session
  // (an explicit ScopedStage(&profiler, ...)) still counts, and is not counted twice.
  sessions.reserve(sessions.size() + report.stages.size());
  for (const ReportStage& stage : report.stages) sessions.push_back({stage.start, stage.end()});
  std::sort(sessions.begin(), sessions.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  double united = 0.0;
  Interval run = sessions.front();
  for (const Interval& next : sessions) {
    if (next.begin > run.end) {
      united += run.end - run.begin;
      run = next;
    } else {
      run.end = std::max(run.end, next.end);
    }
  }
  united += run.end - run.begin;
  report.session_begin = sessions.front().begin;
  for (const Interval& interval : sessions)
    report.session_end = std::max(report.session_end, interval.end);
  // max(): rounding must not put the total below what the roots cover exactly.
  report.total_seconds = std::max(united, covered);
  report.untracked_seconds = shown_untracked(report.total_seconds, covered);
  return report;
}

nlohmann::json report_to_json(const Report& report) {
  return to_json_document<nlohmann::json>(report);
}

nlohmann::ordered_json report_to_ordered_json(const Report& report) {
  return to_json_document<nlohmann::ordered_json>(report);
}

std::string dump_json(const nlohmann::ordered_json& document, int indent) {
  return document.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::string format_duration(double seconds) {
  if (std::isnan(seconds)) return "nan";
  if (seconds < 0.0) return "-" + format_duration(-seconds);
  struct Unit {
    double scale;
    const char* suffix;
  };
  static constexpr Unit kUnits[] = {{1e-9, "ns"}, {1e-6, "\u00b5s"}, {1e-3, "ms"}, {1.0, "s"}};
  constexpr std::size_t kLast = std::size(kUnits) - 1;
  std::size_t unit = kLast;
  while (unit > 0 && seconds < kUnits[unit].scale) --unit;
  double value = seconds / kUnits[unit].scale;
  // 999.7µs would print as "1000µs": move it up to "1.00ms".
  if (value >= 999.5 && unit < kLast) value = seconds / kUnits[++unit].scale;

  char text[48];
  if (value < 0.9995) {
    std::snprintf(text, sizeof text, "%.3g%s", value, kUnits[unit].suffix);  // below 1ns
  } else {
    const int decimals = value < 9.995 ? 2 : value < 99.95 ? 1 : 0;
    std::snprintf(text, sizeof text, "%.*f%s", decimals, value, kUnits[unit].suffix);
  }
  return text;
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes < 0) return "-" + format_bytes(-bytes);
  static constexpr const char* kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 999.5 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  const int decimals = unit == 0 ? 0 : value < 9.995 ? 2 : value < 99.95 ? 1 : 0;
  std::snprintf(text, sizeof text, "%.*f%s", decimals, value, kUnits[unit]);
  return text;
}

namespace {

std::string summary_header(const Report& report) {
  std::string out = "PyPTO Compile Profile\n======================\nTotal: ";
  out += format_duration(report.total_seconds);
  out += "\n";
  // "pypto 0.1.0 | program AddProgram | ...": what produced these times, on one line.
  for (std::size_t i = 0; i < report.metadata.size(); ++i) {
    out += i == 0 ? "" : " | ";
    out += escape_control_characters(report.metadata[i].first) + " " +
           escape_control_characters(report.metadata[i].second);
  }
  out += report.metadata.empty() ? "\n" : "\n\n";
  return out;
}

double min_seconds_of(const Report& report, const SummaryOptions& options) {
  return options.min_percent > 0.0 ? report.total_seconds * options.min_percent / 100.0 : 0.0;
}

struct NameTotals {
  std::string_view name;
  std::size_t count = 0;
  double seconds = 0.0;
  double self_seconds = 0.0;
  bool parallel = false;
  bool failed = false;
};

void add_name_totals(const std::vector<ReportStage>& stages,
                     std::unordered_map<std::string_view, std::size_t>& index,
                     std::vector<NameTotals>& rows) {
  for (const ReportStage& stage : stages) {
    auto [it, added] = index.try_emplace(stage.name, rows.size());
    if (added) rows.push_back(NameTotals{stage.name, 0, 0.0, 0.0, false, false});
    NameTotals& row = rows[it->second];
    row.count += stage.count;
    row.seconds += stage.seconds;
    row.self_seconds += stage.self_seconds;
    row.parallel = row.parallel || stage.parallel;
    row.failed = row.failed || stage.failed;
    add_name_totals(stage.children, index, rows);
  }
}

}  // namespace

std::string format_summary_list(const Report& report, const SummaryOptions& options) {
  std::string out = summary_header(report);
  std::vector<NameTotals> rows;
  std::unordered_map<std::string_view, std::size_t> index;
  add_name_totals(report.stages, index, rows);
  if (report.untracked_seconds > 0.0) {
    rows.push_back(NameTotals{kUntrackedLabel, 1, report.untracked_seconds,
                              report.untracked_seconds, false, false});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const NameTotals& a, const NameTotals& b) {
    return a.self_seconds > b.self_seconds;
  });
  if (rows.empty()) return out + "  (no stages recorded)\n";
  std::size_t name_column = kMinNameColumn;
  std::vector<std::string> shown_names;  // escaped once, for the column width and the lines
  shown_names.reserve(rows.size());
  for (const NameTotals& row : rows) {
    shown_names.push_back(escape_control_characters(row.name));
    name_column = std::max(name_column, kIndentPerDepth + display_width(shown_names.back()) + 2);
  }
  pad_right(out, "  name", name_column);
  out += "count     total      self   self%\n";
  const double min_seconds = min_seconds_of(report, options);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const NameTotals& row = rows[i];
    if (row.self_seconds < min_seconds) continue;
    pad_right(out, std::string(kIndentPerDepth, ' ') + shown_names[i], name_column);
    pad_left(out, std::to_string(row.count), 5);
    pad_left(out, format_duration(row.seconds), 10);
    pad_left(out, format_duration(row.self_seconds), 10);
    char percent[32];
    std::snprintf(
        percent, sizeof percent, "  %5.1f%%",
        report.total_seconds > 0.0 ? 100.0 * row.self_seconds / report.total_seconds : 0.0);
    out += percent;
    if (row.parallel) out += "  [parallel]";
    if (row.failed) out += "  [failed]";
    out += '\n';
  }
  return out;
}

std::string format_summary(const Report& report) { return format_summary(report, {}); }

std::string format_process_summary(const Report& report, bool top_level_only) {
  std::string out = summary_header(report);
  if (report.stages.empty()) out += "  (no stages recorded)\n";
  // When the time outside the stages passed: before the first, between them, after the last.
  double first = report.session_end, last = report.session_begin, covered = 0.0;
  for (const ReportStage& stage : report.stages) {
    first = std::min(first, stage.start);
    last = std::max(last, stage.end());
  }
  for (const ReportStage& stage : report.stages) covered += stage.seconds;  // roots: no overlap
  const bool timed = report.session_end > report.session_begin && !report.stages.empty();
  const double before = timed ? std::max(0.0, first - report.session_begin) : 0.0;
  const double after = timed ? std::max(0.0, report.session_end - last) : 0.0;
  const double between =
      timed ? std::max(0.0, report.total_seconds - covered - before - after) : 0.0;
  const std::pair<std::string_view, double> outside[] = {
      {"(before the first stage: start-up, imports)", before},
      {"(between stages: the program's own work)", between},
      {"(after the last stage: until exit)", after}};
  std::size_t name_column = std::max(kMinNameColumn, widest_label(report.stages, kIndentPerDepth));
  for (const auto& [label, seconds] : outside)
    name_column = std::max(name_column, kIndentPerDepth + label.size());
  name_column += 2;
  append_lines(out, report.stages, timed ? 0.0 : report.untracked_seconds, kIndentPerDepth,
               name_column, report.total_seconds, 0.0, top_level_only ? 0 : -1);
  for (const auto& [label, seconds] : outside) {
    if (seconds < kMinUntrackedSeconds) continue;
    append_line_head(out, kIndentPerDepth, label, name_column, seconds, report.total_seconds);
    out += '\n';
  }
  return out;
}

std::string format_summary(const Report& report, const SummaryOptions& options) {
  std::string out = summary_header(report);
  if (report.stages.empty()) out += "  (no stages recorded)\n";
  if (report.stages.empty() && report.untracked_seconds == 0.0) return out;
  const std::size_t name_column =
      std::max({kMinNameColumn, widest_label(report.stages, kIndentPerDepth),
                kIndentPerDepth + kUntrackedLabel.size()}) +
      2;
  append_lines(out, report.stages, report.untracked_seconds, kIndentPerDepth, name_column,
               report.total_seconds, min_seconds_of(report, options),
               options.max_depth > 0 ? options.max_depth - 1 : -1);
  return out;
}

}  // namespace pypto::profiling
