#include "pypto/driver/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <regex>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "pypto/driver/run_config.h"
#include "pypto/support/environment.h"
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
  const char* env = support::read_environment(support::EnvironmentVariable::PYPTO_PROG_BUILD_DIR);
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

int keep_outputs(int configured) {
  // The table's environment default (PYPTO_KEEP_OUTPUTS), as for a run's RunConfig: the one
  // reader of the environment is driver::with_environment_defaults.
  RunConfig config;
  config.keep_outputs = configured;
  config = with_environment_defaults(config);
  return std::max(config.keep_outputs, 0);
}

namespace {

// The fixed-width timestamp of default output directory names: names sort in time order.
const std::regex& stamp_pattern() {
  static const std::regex pattern(R"(_\d{8}_\d{6}_\d{6})");
  return pattern;
}

int open_lock_file(const fs::path& path) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

int lock(int fd, int operation) {
  int result;
  do {
    result = ::flock(fd, operation);
  } while (result != 0 && errno == EINTR);
  return result;
}

// After locking: is `fd` still the file at `path`? Retention unlinks the lock file of a folder
// it removed, so a lock won on an unlinked file protects nothing.
bool still_linked(int fd, const fs::path& path) {
  struct stat open_file, named;
  return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 &&
         open_file.st_dev == named.st_dev && open_file.st_ino == named.st_ino;
}

// Removes `dir` unless a run holds its lease.
void remove_unleased(const fs::path& dir) {
  const fs::path lease = output_dir_lease_path(dir);
  const int fd = open_lock_file(lease);
  if (fd < 0) return;  // no lock file can be made here, so no lease can be checked: leave it
  if (lock(fd, LOCK_EX | LOCK_NB) != 0 || !still_linked(fd, lease)) {
    ::close(fd);
    return;  // in use by a run (or being removed by another process's retention)
  }
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  ::unlink(lease.c_str());  // still locked: a run waiting for it sees the unlink and starts over
  ::close(fd);
}

}  // namespace

fs::path output_dir_lease_path(const fs::path& dir) {
  fs::path name = dir.filename();
  if (name.empty()) name = dir.parent_path().filename();  // "out/" names "out"
  return dir.parent_path() / ("." + name.string() + ".lease");
}

bool is_default_output_dir_name(const std::string& name) {
  static const std::regex pattern(R"(.+_\d{8}_\d{6}_\d{6})");
  return std::regex_match(name, pattern);
}

OutputDirLease OutputDirLease::acquire(const fs::path& dir) {
  OutputDirLease lease;
  const fs::path path = output_dir_lease_path(dir);
  std::error_code ec;
  if (!path.parent_path().empty()) fs::create_directories(path.parent_path(), ec);
  // Each try either wins a lock on the lock file that is there, or finds that retention removed
  // the folder while we waited; a few tries are plenty (each removal is one folder).
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = open_lock_file(path);
    if (fd < 0) return lease;
    if (lock(fd, LOCK_SH) == 0 && still_linked(fd, path)) {
      lease.fd_ = fd;
      lease.path_ = path;
      return lease;
    }
    ::close(fd);
  }
  return lease;
}

OutputDirLease::~OutputDirLease() {
  if (fd_ < 0) return;
  // The last holder removes the lock file, so kept folders do not collect them. Someone who
  // opened it meanwhile finds it unlinked once locked, and makes a new one (still_linked()).
  if (lock(fd_, LOCK_EX | LOCK_NB) == 0 && still_linked(fd_, path_)) ::unlink(path_.c_str());
  ::close(fd_);
}

OutputDirLease::OutputDirLease(OutputDirLease&& other) noexcept
    : fd_(other.fd_), path_(std::move(other.path_)) {
  other.fd_ = -1;
}

OutputDirLease& OutputDirLease::operator=(OutputDirLease&& other) noexcept {
  if (this != &other) {
    OutputDirLease released(std::move(*this));  // gives up the lease held so far
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

void remove_old_output_dirs(const fs::path& new_dir, const std::string& program_name, int keep) {
  if (keep <= 0) return;
  std::vector<fs::path> dirs;
  std::error_code ec;
  fs::path root = new_dir.parent_path().empty() ? fs::path(".") : new_dir.parent_path();
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() <= program_name.size() || name.compare(0, program_name.size(), program_name))
      continue;
    if (!std::regex_match(name.substr(program_name.size()), stamp_pattern())) continue;
    std::error_code type_ec;
    if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) dirs.push_back(it->path());
  }
  std::sort(dirs.begin(), dirs.end());
  // The new directory counts as one of the kept, wherever its name sorts.
  const std::string new_name = new_dir.filename().string();
  std::size_t kept_others = static_cast<std::size_t>(keep - 1);
  std::vector<fs::path> others;
  for (const auto& d : dirs)
    if (d.filename().string() != new_name) others.push_back(d);
  if (others.size() <= kept_others) return;
  for (std::size_t i = 0; i < others.size() - kept_others; ++i) remove_unleased(others[i]);
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
