// Writes profile reports through support::write_output_file; failures become
// ProfilerError with the path, the OS reason and what to do.
#include <cerrno>

#include <nlohmann/json.hpp>

#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"
#include "pypto/support/file_io.h"

namespace pypto::profiling {

namespace {

constexpr const char* kFolderAdvice = "Choose a folder you can write to.";
constexpr const char* kFileAdvice = "Check that the folder is writable and the disk is not full.";

// "<what> '<path>': <reason>. <advice>"
[[noreturn]] void fail(const std::string& what, const support::FileError& error,
                       const std::string& advice) {
  std::string message = what + " '" + error.path().string() + "': " + error.reason() + ".";
  if (!advice.empty()) message += " " + advice;
  throw ProfilerError(message, error.path(), error.error_number());
}

}  // namespace

void write_output_file(const std::filesystem::path& path, std::string_view contents) {
  try {
    support::write_output_file(path, contents);
  } catch (const support::FileError& e) {
    // A folder named as the file: the reason already says what to do.
    fail("cannot write the compile profile file", e, e.error_number() == EISDIR ? "" : kFileAdvice);
  }
}

void CompileProfiler::to_json_file(const std::filesystem::path& path, int indent) const {
  write_output_file(path, to_json(indent));
}

void write_report(const Report& report, const std::filesystem::path& dir) {
  try {
    support::create_folders(dir);
  } catch (const support::FileError& e) {
    fail("cannot create the compile profile folder", e, kFolderAdvice);
  }
  write_output_file(dir / "pipeline_profile.txt", format_summary(report));
  write_output_file(dir / "pipeline_profile.json",
                    dump_json(report_to_ordered_json(report), 2) + "\n");
}

void CompileProfiler::write_report(const std::filesystem::path& dir) const {
  profiling::write_report(report(), dir);
}

}  // namespace pypto::profiling
