// A session is one compile or one run, seen from the user's side: the one place that decides
// which profiler records it, where its output goes, how its errors read and when its report is
// written. The CLI and the Python bindings open a session and call compile() or run() in it;
// nothing else chooses a profiler or writes a report.
//
//   driver::Session session(/*profiling_requested=*/true);
//   session.open_output_dir("", program->name);
//   driver::compile(session, program, options);
//   session.write_report();        // <out>/report/pipeline_profile.{txt,json}, once
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "pypto/driver/output_dir.h"
#include "pypto/ir/program.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::driver {

class Session {
 public:
  // Chooses the profiler once, for the whole session: the one current on this thread (a
  // CompileProfiler the caller entered, or the process-wide one of PYPTO_COMPILE_PROFILING);
  // otherwise, when `profiling_requested`, a profiler of the session's own; otherwise none. The
  // chosen profiler is current on this thread until the session ends, so every stage below
  // (including those of worker threads handed the profiler) lands in it.
  explicit Session(bool profiling_requested);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  profiling::CompileProfiler* profiler() const noexcept { return profiler_; }
  bool profiling() const noexcept { return profiler_ != nullptr; }
  // True when the environment variable switched profiling on for the whole process.
  bool process_wide_profiling() const noexcept;

  // The output directory: `requested`, or default_output_dir(program_name) when it is empty;
  // created and checked. Chosen once: later calls return the first choice. Throws
  // CompileOutputError.
  const std::filesystem::path& open_output_dir(const std::string& requested,
                                               const std::string& program_name);
  const std::filesystem::path& output_dir() const noexcept { return output_dir_; }
  // How many default output directories per program a default directory chosen by
  // open_output_dir leaves (driver::keep_outputs: -1 asks $PYPTO_KEEP_OUTPUTS; 0 keeps all).
  void set_keep_outputs(int keep) noexcept { keep_outputs_ = keep; }

  // Describes the session's work in its report's metadata (Report::metadata); a key set twice
  // keeps its first place and takes the new value. The session starts with the pypto version.
  void set_metadata(const std::string& key, std::string value);

  // This session's profile: everything its own profiler recorded, or, in a profiler it shares
  // with its caller, the stages that started after the session began (with their children).
  profiling::Report report() const;

  // Gives the message of a failure (as shown to the user) to the profile's failed stages, which
  // then carry it as "error" in the JSON and in the summary.
  void record_error(const std::string& message);

  // Writes <output_dir>/report/pipeline_profile.{txt,json} from one snapshot of report(). Only
  // the first call writes; without a profiler or an output directory it does nothing. Throws
  // profiling::ProfilerError.
  void write_report();

 private:
  std::unique_ptr<profiling::CompileProfiler> own_profiler_;
  profiling::CompileProfiler* profiler_;
  profiling::ProfilerActivation activation_;
  // Where the shared profiler stood when the session began: report() builds only what came
  // after, so a call's report costs the same on the 100,000th call as on the first.
  profiling::CompileProfiler::Mark start_mark_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::filesystem::path output_dir_;
  OutputDirLease output_dir_lease_;  // keeps other processes' retention off output_dir_
  int keep_outputs_ = -1;
  bool report_written_ = false;
};

// The message of the exception being handled, ready for the user: errors in the program are
// rendered against its source (file:line:col, the line and a caret), parse errors as the parser
// rendered them, everything else by its own message. Call it inside a catch block.
std::string describe_current_exception(const ir::Program* program);

}  // namespace pypto::driver
