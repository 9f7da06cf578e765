#include "pypto/support/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace pypto::support {

namespace fs = std::filesystem;

namespace {

std::string os_reason(int error_number) {
  return std::strerror(error_number != 0 ? error_number : EIO);
}

}  // namespace

FileError::FileError(const std::string& action, fs::path path, int error_number, std::string reason)
    : std::runtime_error("cannot " + action + " '" + path.string() +
                         "': " + (reason.empty() ? os_reason(error_number) : reason)),
      path_(std::move(path)),
      error_number_(error_number),
      reason_(reason.empty() ? os_reason(error_number) : std::move(reason)) {}

void create_folders(const fs::path& folder) {
  if (folder.empty()) return;
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec) throw FileError("create the folder", folder, ec.value());
  if (!fs::is_directory(folder, ec)) throw FileError("create the folder", folder, ENOTDIR);
}

namespace {

// Writes all of `data`, retrying short writes and EINTR. Returns 0 or the errno value.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// Removes the temporary a write could not finish with and reports the error for `path`.
[[noreturn]] void discard_temporary(const std::string& temp, const fs::path& path, int error) {
  ::unlink(temp.c_str());
  throw FileError("write", path, error);
}

// The first step of both ways of writing a file: the pieces into a fresh temporary next to
// `path`, closed. Returns its name; throws FileError, leaving no temporary behind.
std::string write_temporary(const fs::path& path, std::initializer_list<std::string_view> pieces) {
  try {
    create_folders(path.parent_path());
  } catch (const FileError& e) {
    throw FileError("write", path, e.error_number(),
                    "cannot create the folder '" + e.path().string() + "': " + e.reason());
  }
  // mkstemp picks an unpredictable name and creates it with O_EXCL, so a file or symlink that
  // someone else planted under a guessable name is never opened.
  std::string temp = path.string() + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw FileError("write", path, errno);
  int error = ::fchmod(fd, 0644) == 0 ? 0 : errno;
  for (std::string_view piece : pieces) {
    if (error == 0) error = write_all(fd, piece);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) discard_temporary(temp, path, error);
  return temp;
}

void rename_into_place(const std::string& temp, const fs::path& path) {
  if (std::rename(temp.c_str(), path.c_str()) != 0) discard_temporary(temp, path, errno);
}

}  // namespace

void write_file_atomically(const fs::path& path, std::initializer_list<std::string_view> pieces) {
  rename_into_place(write_temporary(path, pieces), path);
}

namespace {

// Opens an existing non-regular `path` (following a symlink) and writes `pieces` into it, the way
// a shell's `>` does: O_TRUNC empties a regular file behind a link and is ignored by pipes and
// devices.
void write_through(const fs::path& path, std::initializer_list<std::string_view> pieces) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw FileError("write", path, errno);
  int error = 0;
  for (std::string_view piece : pieces) {
    if (error == 0) error = write_all(fd, piece);
  }
  if (::close(fd) != 0 && error == 0 && errno != EINTR) error = errno;
  if (error != 0) throw FileError("write", path, error);
}

}  // namespace

void write_output_file(const fs::path& path, std::initializer_list<std::string_view> pieces) {
  if (path == "-") {
    std::fflush(stdout);  // what the program printed before comes first
    int error = 0;
    for (std::string_view piece : pieces) {
      if (error == 0) error = write_all(STDOUT_FILENO, piece);
    }
    if (error != 0) throw FileError("write", "standard output", error);
    return;
  }
  struct stat info;
  if (::lstat(path.c_str(), &info) != 0) {
    if (errno != ENOENT) throw FileError("write", path, errno);
    write_file_atomically(path, pieces);  // a new file
    return;
  }
  if (S_ISDIR(info.st_mode)) {
    throw FileError("write", path, EISDIR, "it is a folder; name a file inside it");
  }
  if (S_ISREG(info.st_mode)) {
    write_file_atomically(path, pieces);
    return;
  }
  // A symlink (to anything), FIFO, character or block device, or socket: not ours to replace.
  write_through(path, pieces);
}

void write_bulk_file(const fs::path& path, std::initializer_list<std::string_view> pieces) {
  const std::string temp = write_temporary(path, pieces);
  // Removed rather than renamed over (see file_io.h). ENOENT: there was no old file.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) discard_temporary(temp, path, errno);
  rename_into_place(temp, path);
}

}  // namespace pypto::support
