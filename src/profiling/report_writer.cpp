// Writes profile reports to disk through support::write_file_atomically; failures become
// ProfilerError with the path, the OS reason and what to do.
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
  throw ProfilerError(what + " '" + error.path().string() + "': " + error.reason() + ". " + advice,
                      error.path(), error.error_number());
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  try {
    support::write_file_atomically(path, contents);
  } catch (const support::FileError& e) {
    fail("cannot write the compile profile file", e, kFileAdvice);
  }
}

void CompileProfiler::to_json_file(const std::filesystem::path& path, int indent) const {
  write_file_atomically(path, to_json(indent));
}

void write_report(const Report& report, const std::filesystem::path& dir) {
  try {
    support::create_folders(dir);
  } catch (const support::FileError& e) {
    fail("cannot create the compile profile folder", e, kFolderAdvice);
  }
  write_file_atomically(dir / "pipeline_profile.txt", format_summary(report));
  write_file_atomically(dir / "pipeline_profile.json",
                        dump_json(report_to_ordered_json(report), 2) + "\n");
}

void CompileProfiler::write_report(const std::filesystem::path& dir) const {
  profiling::write_report(report(), dir);
}

}  // namespace pypto::profiling
