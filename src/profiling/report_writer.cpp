// Writes profile reports to disk: folders are created, files are replaced atomically, failures
// become ProfilerError with the path and the OS reason.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace pypto::profiling {

namespace {

constexpr const char* kFolderAdvice = "Choose a folder you can write to.";
constexpr const char* kFileAdvice = "Check that the folder is writable and the disk is not full.";

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int error,
                       const std::string& advice) {
  throw ProfilerError(what + " '" + path.string() + "': " + std::strerror(error) + ". " + advice,
                      path, error);
}

// Returns 0 or the errno value.
int create_folder(const std::filesystem::path& folder) {
  if (folder.empty()) return 0;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  return error ? error.value() : 0;
}

std::filesystem::path temporary_name(const std::filesystem::path& path) {
  // Unique per process and call, so concurrent writers of the same report never share a file.
  static std::atomic<unsigned> counter{0};
  std::filesystem::path temp = path;
  temp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return temp;
}

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  if (const int error = create_folder(path.parent_path())) {
    fail("cannot write the compile profile file '" + path.string() + "': cannot create the folder",
         path.parent_path(), error, kFolderAdvice);
  }
  const std::filesystem::path temp = temporary_name(path);

  std::FILE* file = std::fopen(temp.c_str(), "wb");
  if (file == nullptr) fail("cannot write the compile profile file", path, errno, kFileAdvice);
  const bool written = std::fwrite(contents.data(), 1, contents.size(), file) == contents.size();
  int error = written ? 0 : errno;
  if (std::fclose(file) != 0 && error == 0) error = errno;
  if (!written || error != 0) {
    std::remove(temp.c_str());
    fail("cannot write the compile profile file", path, error != 0 ? error : EIO, kFileAdvice);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    error = errno;
    std::remove(temp.c_str());
    fail("cannot write the compile profile file", path, error, kFileAdvice);
  }
}

void CompileProfiler::to_json_file(const std::filesystem::path& path, int indent) const {
  write_file_atomically(path, to_json(indent));
}

void CompileProfiler::write_report(const std::filesystem::path& dir) const {
  const Report snapshot = report();
  if (const int error = create_folder(dir)) {
    fail("cannot create the compile profile folder", dir, error, kFolderAdvice);
  }
  write_file_atomically(dir / "pipeline_profile.txt", format_summary(snapshot));
  write_file_atomically(dir / "pipeline_profile.json",
                        dump_json(report_to_ordered_json(snapshot), 2) + "\n");
}

}  // namespace pypto::profiling
