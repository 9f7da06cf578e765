// A snapshot of a profile as a tree, and its two output forms: the JSON document and the text
// summary of pipeline_profile.{json,txt}.
//
// Rules, applied by finalize_report():
// - Siblings are listed by start time (ties keep recording order).
// - Siblings whose time ranges overlap (stages that ran on several threads at once) are flagged
//   `parallel`. Each keeps its own wall time, so parallel children may add up to more than their
//   parent; the summary marks them `[parallel]` instead of pretending they were sequential.
// - The time a sibling list covers is the sum of its durations when they ran one after the
//   other; a group of overlapping siblings counts once, as its span.
// - total_seconds is the time covered by the root stages, or, for a profiler that was entered,
//   the union of its session intervals and its root stages (CompileProfiler::total_seconds).
//   Percentages are of total_seconds.
// - Time a parent has that its children do not cover is `untracked`: a stage with children
//   carries it, and the report carries total_seconds minus what the roots cover. It is kept only
//   from kMinUntrackedSeconds and kMinUntrackedShare of the parent up (0 otherwise), so that
//   clock-read gaps between back-to-back stages do not clutter the report.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pypto/profiling/device_timeline.h"
#include "pypto/profiling/profiler.h"

namespace pypto::profiling {

struct ReportStage {
  std::string name;
  double start = 0.0;    // seconds on the now_seconds() clock
  double seconds = 0.0;  // wall time of this stage
  // Wall time no child covers (overlapping children count once): seconds minus the children's
  // coverage, never negative. Unlike `untracked` it has no threshold.
  double self_seconds = 0.0;
  bool failed = false;  // left by an exception
  bool parallel = false;
  bool open = false;         // still running when the snapshot was taken
  double untracked = 0.0;    // time no child covers; 0 when below the thresholds or a leaf
  std::uint64_t thread = 0;  // ThreadIdentity::id of the thread it ran on; 0: unknown
  std::string error;         // why it failed, when known
  std::optional<StageMemory> memory;
  std::optional<PassStats> pass;
  std::vector<ReportStage> children;
  // The tasks the simulated device ran in this stage (device_timeline.h); null for other stages.
  std::shared_ptr<const DeviceTimeline> device;
  // How many stages of the same path this one stands for (merge_repeated_stages()): `seconds`,
  // `self_seconds` and `untracked` are then their sums, `start` the first one's, and `repeat`
  // gives the spread of their durations.
  std::int64_t count = 1;
  struct Spread {
    double min_seconds = 0.0;
    double median_seconds = 0.0;
    double max_seconds = 0.0;
  };
  std::optional<Spread> repeat;  // set when count > 1

  double end() const noexcept { return start + seconds; }
};

struct Report {
  double total_seconds = 0.0;
  double untracked_seconds = 0.0;  // total_seconds not covered by the root stages (see above)
  // The profiler's sessions from the first one's start to the last one's end (now_seconds()),
  // when it was entered; both 0 otherwise. A process-wide profile's session is the process.
  double session_begin = 0.0;
  double session_end = 0.0;
  std::vector<ReportStage> stages;
  // The threads stages ran on, the recording (owner) thread first; names for timelines.
  std::vector<ThreadIdentity> threads;
  // What produced the profile, in the order given (a driver session fills it: pypto version,
  // program, compiler and flags, binary cache hit or miss, workers). "metadata" in the JSON and
  // one line under the summary's total; empty for a bare profiler.
  std::vector<std::pair<std::string, std::string>> metadata;
};

// A [begin, end) time range in seconds on the now_seconds() clock.
struct Interval {
  double begin = 0.0;
  double end = 0.0;
};

inline constexpr double kMinUntrackedSeconds = 10e-6;
inline constexpr double kMinUntrackedShare = 0.01;

// Merges sibling stages that repeat the same path: same name and the same tree of child names
// below them (the stages of one cached @pl.jit call, made again on every call). The first keeps
// its place and stands for all (count, summed times, min/median/max of their durations; their
// children merged the same way, position by position). Stages that failed or are still open
// stay as they are. What a merged stage cannot sum is the first stage's (pass statistics,
// memory), except device timelines: a merged stage has none (each run's report has its own).
// A shape repeated fewer than `min_repeats` times among its siblings stays as it is. Used for
// the process-wide profile's exit report (kExitReportMinRepeats), whose size then grows with
// the kinds of work a long session did, not with the number of calls.
void merge_repeated_stages(Report& report, std::size_t min_repeats = 2);
inline constexpr std::size_t kExitReportMinRepeats = 10;

// Converts a record built elsewhere; an open record (end == 0.0) measures up to `now`.
ReportStage to_report_stage(const StageRecord& record, double now);

// Orders siblings, flags parallel ones, computes the total and the untracked time (see the rules
// above). `sessions`: when the profiler was entered; empty for one never entered.
Report finalize_report(std::vector<ReportStage> roots, std::vector<Interval> sessions = {});

// {"total_seconds", ["untracked_seconds"], "stages": [{"name", "seconds", "self_seconds",
//  ["untracked_seconds"], "start", ["thread"], ["error"], ["rss_bytes", "rss_growth_bytes"],
//  ["pass": {"ir_size_before", "ir_size_after", "changed"}], optional flags, ["device"],
//  "children"}],
//  ["threads": [{"id", "name"}]], ["metadata": {key: text}]}. A stage's "thread" is given where it
//  differs from its parent's (for a root: from the first entry of "threads").
// "device" is device_timeline_to_json().
nlohmann::json report_to_json(const Report& report);
// The same document with keys in reading order (name, seconds, ...), for files and Python.
nlohmann::ordered_json report_to_ordered_json(const Report& report);
// Serialises with `indent` spaces (negative: one line); invalid UTF-8 in names is replaced.
std::string dump_json(const nlohmann::ordered_json& document, int indent);

// The seed layout: header, rule, "Total:", then one aligned line per stage, except that sibling
// leaf stages sharing a name (the `verify` and `dump` after every pass) are folded into one line
// at the first one's place: "verify (11×)" with their summed time and percentage. Stages with
// children are never folded. The JSON document keeps every stage. Untracked time is an
// "(untracked)" line after the children of its stage (after the roots for the report's own).
// A stage with a device timeline is followed by one utilisation line per simulated core.
// Each stage line may end with columns: "[parallel]", "[failed: <first line of the error>]",
// "[open]", the pass statistics "ir 412→398" ("ir 412 =" when the pass left the IR unchanged)
// and the memory "rss 95.3MB +91.2MB".
std::string format_summary(const Report& report);

struct SummaryOptions {
  double min_percent = 0.0;  // hide stages (tree) or names (list) below this share of the total
  int max_depth = -1;        // tree: levels shown (1: the top level only); -1: all
};
std::string format_summary(const Report& report, const SummaryOptions& options);

// The report of a process-wide profile (PYPTO_COMPILE_PROFILING), printed at exit: the tree of
// format_summary, only its top level when `top_level_only` (each run printed its own tree when it
// ended), and the time outside the stages named by when it passed instead of one "(untracked)":
// before the first stage (the interpreter starting, imports), between stages (the program's own
// work) and after the last one (until exit).
std::string format_process_summary(const Report& report, bool top_level_only);

// The list view: one line per stage name, over the whole tree, with the number of stages of that
// name, their summed wall time, their summed self time and the self time's share of the total,
// sorted by self time (largest first). Names whose stages ran in parallel are marked so, since
// their wall times overlap.
std::string format_summary_list(const Report& report, const SummaryOptions& options = {});

// "95.3MB", "812KB", "-1.20GB": bytes in the unit that keeps three significant digits.
std::string format_bytes(std::int64_t bytes);
// Three significant digits in the unit that fits: "812ns", "81.2µs", "12.3ms", "2.85s".
std::string format_duration(double seconds);

// `text` (a stage name, an error, a metadata value from a profile file) safe to print on a
// terminal: control characters (all of C0, newline and tab included, DEL, and the C1 range
// U+0080-U+009F) become visible escapes such as "\x1b", so a name cannot move the cursor, ring
// the bell, clear the screen or overwrite earlier output with a carriage return.
std::string escape_control_characters(std::string_view text);

// Writes dir/pipeline_profile.txt (format_summary) and dir/pipeline_profile.json, creating dir;
// each file appears complete or not at all. Throws ProfilerError.
void write_report(const Report& report, const std::filesystem::path& dir);

// Writes `contents` to the output `path` (support::write_output_file): "-" is standard output; a
// regular file is replaced through a temporary and a rename, so a reader never sees a partial
// file; a symlink, FIFO or device is written through, never replaced; parent folders are
// created. Throws ProfilerError.
void write_output_file(const std::filesystem::path& path, std::string_view contents);

}  // namespace pypto::profiling
