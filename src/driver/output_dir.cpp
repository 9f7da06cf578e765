#include "pypto/driver/output_dir.h"

#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <system_error>

#include "pypto/support/file_io.h"

namespace pypto::driver {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& path, const std::string& reason) {
  throw CompileOutputError(
      "cannot " + what + " '" + path.string() + "': " + reason + " (choose a writable output_dir)",
      path);
}

}  // namespace

fs::path default_output_dir(const std::string& program_name) {
  const char* env = std::getenv("PYPTO_PROG_BUILD_DIR");
  std::string root = env && *env ? env : "build_output";
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm local{};
  time_t seconds = tv.tv_sec;
  ::localtime_r(&seconds, &local);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d%02d%02d_%02d%02d%02d_%06ld", local.tm_year + 1900,
                local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec,
                static_cast<long>(tv.tv_usec));
  return fs::path(root) / (program_name + "_" + stamp);
}

void prepare_output_dir(const fs::path& dir) {
  if (const std::string& text = dir.native(); text.find('\0') != std::string::npos) {
    // The OS would see the path only up to the NUL and write somewhere else.
    std::string shown;
    for (char c : text) shown += c == '\0' ? std::string("\\0") : std::string(1, c);
    throw CompileOutputError(
        "cannot use the output directory '" + shown + "': the path contains a NUL character", dir);
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("create the output directory", dir, ec.message());
  if (!fs::is_directory(dir, ec)) fail("use the output directory", dir, "not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail("write to the output directory", dir, std::strerror(errno));
}

void write_output_files(const fs::path& dir, const std::vector<OutputFile>& files) {
  std::vector<fs::path> written;
  try {
    for (const auto& file : files) {
      fs::path target = dir / file.relative_path;
      support::write_file_atomically(target, file.contents);
      written.push_back(target);
    }
  } catch (const support::FileError& e) {
    std::error_code ignored;
    for (const auto& p : written) fs::remove(p, ignored);
    fail("write", e.path(), e.reason());
  }
}

}  // namespace pypto::driver
