// Compile profiler: records how long each stage of the pipeline takes, as a tree of stages.
//
// Library code marks a stage with a scope object:
//
//   pypto::profiling::ScopedStage stage("passes");                       // literal name
//   pypto::profiling::ScopedStage stage([&] { return "kernel_codegen:" + func.name(); });  // lazy
//
// With no profiler current on the thread a stage costs one thread-local load and a branch: no
// clock read, no allocation, and the lazy name is never built. With a profiler current it costs
// two CLOCK_MONOTONIC reads and an append to a flat record buffer.
//
// Entry points (ir.compile, run, pl.program) call get_active_profiler(), which also honours the
// PYPTO_COMPILE_PROFILING environment variable; stage boundaries never read the environment.
//
// Total: a profiler used as a context (enter()/exit(), ProfilerActivation, Python's `with`) is a
// profiling session, and its total is the wall time spent inside it, stages or not, so time no
// stage accounts for shows up as `(untracked)` instead of vanishing. A profiler never entered
// (records added from outside, explicit ScopedStage(&p, ...)) totals the time its root stages
// cover.
//
// Threads: a profiler's records are appended without locks by the one thread that owns it (the
// first thread that enters it, binds it or opens a stage in it). Stages opened on any other
// thread while the profiler is current there, and records passed to add_stage_record(), take a
// mutex and are attached under the stage the owner has open at that moment. Reports (to_dict,
// summary, ...) read the owner's buffer: take them on the owner thread, or after the owner has
// stopped recording (e.g. after joining it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <time.h>

#include <nlohmann/json_fwd.hpp>

#if defined(__GNUC__) || defined(__clang__)
#define PYPTO_INITIAL_EXEC_TLS __attribute__((tls_model("initial-exec")))
#else
#define PYPTO_INITIAL_EXEC_TLS
#endif

namespace pypto::profiling {

struct Report;          // report.h
struct DeviceTimeline;  // device_timeline.h

// CLOCK_MONOTONIC: the clock behind std::chrono::steady_clock and Python's time.perf_counter()
// on Linux, so records timed in Python line up with records timed here. Read directly rather than
// through steady_clock::now(), which is one more out-of-line call on the enabled stage path.
inline std::int64_t now_ns() noexcept {
  timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// Seconds on the same time line as time.perf_counter().
inline double now_seconds() noexcept { return static_cast<double>(now_ns()) / 1e9; }

// A report could not be written. The message names the path, the OS reason and what to do.
class ProfilerError : public std::runtime_error {
 public:
  ProfilerError(const std::string& message, std::filesystem::path path, int error_number);
  const std::filesystem::path& path() const noexcept { return path_; }
  // The errno value behind the failure, 0 when there is none.
  int error_number() const noexcept { return error_number_; }

 private:
  std::filesystem::path path_;
  int error_number_;
};

// The OS thread a stage ran on: its kernel thread id and a name for timelines.
struct ThreadIdentity {
  std::uint64_t id = 0;  // 0: unknown (a record then belongs to the thread of its parent)
  std::string name;
};

// The calling thread: gettid(), and the name given by name_this_thread(), else "main" for the
// process's first thread and "thread <id>" for others. Costs a system call: call it once per
// thread or per record, never per stage boundary.
ThreadIdentity this_thread_identity();
// Names the calling thread in timelines (Chrome trace tracks); any length. An empty name forgets
// it: a thread that ends should, since thread ids are reused.
void name_this_thread(std::string name);

// Resident memory of the process, for stages of a profiler with memory tracking on.
struct StageMemory {
  std::int64_t rss_bytes = 0;     // resident set size when the stage ended
  std::int64_t growth_bytes = 0;  // rss at the end minus rss at the start (negative: shrank)
};

// Resident set size of the process in bytes (one pread() of /proc/self/statm through a file
// kept open), or -1 when it cannot be read.
std::int64_t resident_memory_bytes() noexcept;

// What a pass run did to the IR (ir::count_nodes before and after); recorded only when profiling.
struct PassStats {
  std::int64_t ir_size_before = 0;
  std::int64_t ir_size_after = 0;
  bool changed = false;
};

// A stage timed elsewhere (a worker thread, Python), handed to add_stage_record().
struct StageRecord {
  std::string name;
  double start = 0.0;  // seconds on the now_seconds() clock
  double end = 0.0;    // 0.0 while the stage is still running
  std::vector<StageRecord> children;
  bool failed = false;
  std::string error;      // why it failed, when known
  ThreadIdentity thread;  // id 0: the thread of the stage it is attached under

  // end - start; a record still running measures up to now.
  double duration() const noexcept { return (end != 0.0 ? end : now_seconds()) - start; }
};

class CompileProfiler {
 public:
  CompileProfiler();
  // memory: also sample resident memory at each stage's start and end (StageMemory), at the
  // price of two /proc reads per stage (figures in bench/README.md).
  explicit CompileProfiler(bool memory);
  ~CompileProfiler();
  CompileProfiler(const CompileProfiler&) = delete;
  CompileProfiler& operator=(const CompileProfiler&) = delete;

  // The profiler current on this thread, or nullptr.
  static CompileProfiler* current() noexcept { return t_current_; }

  // Makes this profiler current on the calling thread; exit() restores the one current before.
  // Calls nest, also for the same profiler. exit() returns false (and does nothing) when this
  // profiler was not entered on the calling thread.
  void enter();
  bool exit();

  // Split form of ScopedStage for callbacks. The name is copied. end_stage() closes the innermost
  // open stage (and is a no-op when none is open).
  void begin_stage(std::string name);
  void end_stage(bool failed = false, std::string error = {});

  // Gives `message` (what went wrong, as shown to the user) to every failed stage that has no
  // message yet: scopes left by an exception know that it failed, not why; the code that catches
  // the exception does. Call it on the owner thread.
  void record_error(const std::string& message);

  bool tracks_memory() const noexcept { return memory_; }

  // Inserts a record tree built elsewhere as a child of the stage open at this moment (at the
  // root when none is). Safe to call from any thread, concurrently.
  void add_stage_record(StageRecord record);
  // Attaches the device swimlane of a run to the stage open at this moment (the `execute` stage
  // of a run), where reports carry it as that stage's "device". A timeline attached with no stage
  // open is dropped: it belongs to no stage. Safe to call from any thread.
  void attach_device_timeline(DeviceTimeline timeline);

  // Pre-sizes the record buffer so that the first `stages` stages never reallocate it.
  void reserve(std::size_t stages);
  // Starts the profile over: drops every record and the session time measured so far. Inside a
  // session (entered and not yet exited) the session restarts at the clear(), so the total counts
  // only what follows it, as for a profiler entered at that moment; outside one the profiler is
  // as new (a never-entered total) until it is entered again. Scopes still open keep running but
  // their end is ignored.
  void clear();

  // True for the one process-wide profiler made by get_active_profiler() from the environment.
  bool is_process_wide() const noexcept { return process_wide_; }

  // A snapshot of the tree; stages still open measure up to now. See report.h for the rules
  // (sibling order, parallel siblings, total).
  Report report() const;

  // A point in the recording, for report_since(): how many records, attached records and device
  // timelines there were. Take it on the owner thread.
  struct Mark {
    std::size_t records = 0;
    std::size_t attached = 0;
    std::size_t timelines = 0;
    std::uint32_t generation = 0;  // a clear() since makes the mark mean "from the start"
  };
  Mark mark() const;
  // The stages recorded since `mark` (with their children), as roots; stages open at the mark
  // are left out, their later children lifted to the root. Costs what was recorded since the
  // mark, not what came before: a driver session sharing a long-lived profiler (the process-wide
  // one) reports each call in constant time. The total is the time the roots cover.
  Report report_since(const Mark& mark) const;
  // Wall time of the profiling session: from the outermost enter() (or ProfilerActivation) to
  // its matching exit, measured up to now while still entered. A profiler entered again after a
  // full exit adds the new session; the time between sessions, when nobody used it, is not part
  // of the profile. Root stages timed outside every session (ScopedStage(&p, ...) while not
  // entered) add the part of their time no session covers. For a profiler never entered: the
  // sum of the root stages' durations, root stages that overlap in time counting once (their
  // span).
  double total_seconds() const;
  // {"total_seconds": s, ["untracked_seconds"], "stages": [{"name", "seconds",
  //  ["untracked_seconds"], "children", "start", ["failed"], ["parallel"], ["open"]}, ...]}
  nlohmann::json to_dict() const;
  // Negative indent: one line.
  std::string to_json(int indent = 2) const;
  // Writes to_json() to `path`, creating parent folders; throws ProfilerError.
  void to_json_file(const std::filesystem::path& path, int indent = 2) const;
  std::string summary() const;
  // Writes the profile as Chrome Trace Event JSON (formats.h) to `path`, creating parent
  // folders; the file appears complete or not at all. Throws ProfilerError.
  void to_chrome_trace(const std::filesystem::path& path) const;
  // Writes dir/pipeline_profile.txt and dir/pipeline_profile.json (creating dir) from one
  // snapshot; each file appears complete or not at all. Throws ProfilerError.
  void write_report(const std::filesystem::path& dir) const;

 private:
  friend class ScopedStage;
  friend class ProfilerActivation;
  friend CompileProfiler* get_active_profiler();

  // Identifies an open stage for ScopedStage. The generation tells a stage opened before clear()
  // from a later one that reuses its index.
  struct Token {
    std::int32_t index = -1;
    std::uint32_t generation = 0;
  };
  // 32 bytes: two records per cache line.
  struct Record {
    const char* name;  // a literal, or an entry of the interned-name set
    std::uint32_t name_size;
    std::int32_t parent;  // -1 at the root
    std::int64_t start_ns;
    std::int64_t end_ns;  // kOpen while running
  };
  struct Shared;  // mutex-guarded state of the slow paths
  // Resident memory at a record's start and end (memory tracking only; parallel to records_).
  struct RssSample {
    std::int64_t start;
    std::int64_t end;
  };

  static constexpr std::int64_t kOpen = INT64_MIN;
  static constexpr std::int32_t kForeignStage = -2;

  // `name` must outlive the profiler.
  Token open_stage(std::string_view name);
  Token open_owned_stage(std::string name);
  void close_stage(Token token, bool failed) noexcept;
  void set_pass_stats(Token token, const PassStats& stats) noexcept;
  void sample_close_memory(std::int32_t index) noexcept;
  bool owned_by_this_thread() noexcept {
    return __builtin_expect(owner_.load(std::memory_order_relaxed) == &t_thread_tag_, 1) ||
           claim_ownership();
  }
  bool claim_ownership() noexcept;
  Token open_foreign_stage(std::string name);
  void close_foreign_stage(bool failed) noexcept;
  void bind_to_this_thread() noexcept;
  // report() (`partial` false: everything, with the session total) and report_since().
  Report build_report(const Mark& mark, bool partial) const;
  // Session bookkeeping for enter()/exit() and ProfilerActivation; callers hold shared_->mutex.
  void begin_session_locked(std::int64_t now) noexcept;
  // A session from `since` (a now_ns() time) to the end of the process (the process-wide
  // profiler's).
  void begin_lasting_session(std::int64_t since) noexcept;
  void end_session_locked(std::int64_t now) noexcept;

  std::vector<Record> records_;
  std::vector<std::int32_t> failed_;  // indices of failed records; failures are rare
  std::vector<RssSample> rss_;        // memory tracking only
  bool memory_ = false;
  std::atomic<std::int32_t> open_top_{-1};  // innermost open record; read by other threads
  std::atomic<const void*> owner_{nullptr};
  std::uint32_t generation_ = 0;
  bool process_wide_ = false;
  std::unique_ptr<Shared> shared_;

  // Read by every stage boundary. Code compiled into a shared object (the Python extension)
  // would otherwise reach a thread_local through a __tls_get_addr call; initial-exec makes it one
  // load at a fixed offset from the thread pointer. The cost is a few bytes of the static TLS
  // block that the C library reserves for libraries loaded with dlopen().
  PYPTO_INITIAL_EXEC_TLS static inline thread_local CompileProfiler* t_current_ = nullptr;
  // Its address identifies the calling thread more cheaply than std::this_thread::get_id().
  static inline thread_local char t_thread_tag_ = 0;
};

// Times the enclosing scope as a stage of the current profiler (or of an explicit one).
//
//   ScopedStage s("passes");                  // literal: stored as a view, never copied
//   ScopedStage s([&] { return "pass:" + n; }); // lazy: the callable runs only when profiling
//   ScopedStage s(&profiler, "codegen");      // into a given profiler, current or not
//
// A std::string argument does not compile: a view of it could outlive it; use the lazy form.
// A scope left by an exception is closed and marked failed.
class ScopedStage {
 public:
  template <std::size_t N>
  explicit ScopedStage(const char (&literal)[N]) noexcept
      : ScopedStage(CompileProfiler::current(), std::string_view(literal, N - 1)) {}
  // `static_name` must outlive the profiler.
  explicit ScopedStage(std::string_view static_name) noexcept
      : ScopedStage(CompileProfiler::current(), static_name) {}
  ScopedStage(CompileProfiler* profiler, std::string_view static_name) noexcept {
    if (__builtin_expect(profiler != nullptr, 0)) start(profiler, static_name);
  }
  template <typename MakeName,
            std::enable_if_t<std::is_invocable_r_v<std::string, MakeName&>, int> = 0>
  explicit ScopedStage(MakeName&& make_name)
      : ScopedStage(CompileProfiler::current(), std::forward<MakeName>(make_name)) {}
  template <typename MakeName,
            std::enable_if_t<std::is_invocable_r_v<std::string, MakeName&>, int> = 0>
  ScopedStage(CompileProfiler* profiler, MakeName&& make_name) {
    if (__builtin_expect(profiler != nullptr, 0)) start_owned(profiler, make_name());
  }
  ScopedStage(const std::string&) = delete;
  ScopedStage(std::string&&) = delete;
  ScopedStage(const ScopedStage&) = delete;
  ScopedStage& operator=(const ScopedStage&) = delete;

  ~ScopedStage() {
    if (__builtin_expect(profiler_ != nullptr, 0)) finish();
  }

  // Closes the stage before the scope ends; the destructor then does nothing.
  void end(bool failed = false) noexcept;
  // Attaches pass statistics to this stage, open or already ended; no-op when not profiling.
  void set_pass_stats(const PassStats& stats) noexcept;

 private:
  void start(CompileProfiler* profiler, std::string_view name) noexcept;
  void start_owned(CompileProfiler* profiler, std::string name);
  void finish() noexcept;

  CompileProfiler* profiler_ = nullptr;
  CompileProfiler* recorded_in_ = nullptr;  // kept after end() for set_pass_stats()
  CompileProfiler::Token token_;
  int uncaught_ = 0;
};

// Makes `profiler` current on this thread for the scope and restores the previous one after.
// Like enter()/exit(), the scope is part of the profiler's session (see total_seconds()), so the
// profiler must outlive the activation.
// A null profiler leaves the current one in place, so entry points can write
// `ProfilerActivation activation(get_active_profiler());` unconditionally.
class ProfilerActivation {
 public:
  explicit ProfilerActivation(CompileProfiler* profiler) noexcept;
  ~ProfilerActivation();
  ProfilerActivation(const ProfilerActivation&) = delete;
  ProfilerActivation& operator=(const ProfilerActivation&) = delete;

 private:
  CompileProfiler* previous_;
  CompileProfiler* profiler_;  // null: nothing to undo
};

// True when PYPTO_COMPILE_PROFILING is 1, true or yes (any case, surrounding blanks ignored).
// Read on every call.
bool profiling_enabled_by_env() noexcept;
// The same test for PYPTO_COMPILE_PROFILING_MEMORY: profilers the library creates (the
// process-wide one, a session's own) then track memory.
bool memory_tracking_enabled_by_env() noexcept;

// The process-wide profiler if get_active_profiler() has created it, else nullptr.
CompileProfiler* process_profiler() noexcept;

// The exit report of PYPTO_COMPILE_PROFILING: when the process-wide profiler exists, prints its
// summary to stderr and, when PYPTO_COMPILE_PROFILING_DIR is set, writes
// pipeline_profile.{txt,json} there. Runs once per process (later calls do nothing), so both an
// atexit hook and an explicit call may ask for it. A file that cannot be written is reported on
// stderr, never thrown.
void write_exit_report() noexcept;

// Notes that a run's own profile tree was printed (run() with PYPTO_COMPILE_PROFILING prints one
// when it ends): the exit report then repeats only the top level of the process's profile.
void note_run_profile_shown() noexcept;

// The profiler current on this thread. Otherwise, when profiling_enabled_by_env(), the one
// process-wide profiler (created on first use), made current on the calling thread. Otherwise
// nullptr. When the variable is switched off, a thread bound to the process-wide profiler is
// unbound and gets nullptr.
CompileProfiler* get_active_profiler();

}  // namespace pypto::profiling
