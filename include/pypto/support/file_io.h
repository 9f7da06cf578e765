// Writing files that are complete or absent, never half written: reports, generated sources,
// golden data and cached binaries all go through here.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pypto::support {

// A file or folder could not be created or written. what() is "cannot <action> '<path>':
// <reason>"; callers that know what the user should do add it to their own message.
class FileError : public std::runtime_error {
 public:
  // `reason` empty: strerror(error_number).
  FileError(const std::string& action, std::filesystem::path path, int error_number,
            std::string reason = {});
  const std::filesystem::path& path() const noexcept { return path_; }
  int error_number() const noexcept { return error_number_; }  // errno; 0 when there is none
  // Why it failed: the OS's reason, or which folder could not be created and why.
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::filesystem::path path_;
  int error_number_;
  std::string reason_;
};

// Creates `folder` and its parents. Throws FileError.
void create_folders(const std::filesystem::path& folder);

// Writes the concatenation of `pieces` to `path`: into a fresh temporary file in the same folder
// (created with O_EXCL under an unpredictable name, so an existing file or symlink there is
// never followed), then renamed over `path`. A reader sees the old file or the whole new one.
// Parent folders are created. The file gets mode 0644. Throws FileError; no temporary is left.
void write_file_atomically(const std::filesystem::path& path,
                           std::initializer_list<std::string_view> pieces);
inline void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  write_file_atomically(path, {contents});
}

// Writes an output the user named (`-o FILE`, a report path, a trace path), replacing only what
// it may replace:
//   "-"                          standard output (C stdio's buffer is flushed first);
//   a new path or a regular file replaced as write_file_atomically() does (temporary + rename);
//   a symlink, FIFO, device node  opened and written through, never renamed over: the link, the
//   or socket                    pipe or the device stays what it was (`-o /dev/stdout`,
//                                `-o /dev/null`, a FIFO another process reads, a link into a
//                                shared folder);
//   a folder                     refused (FileError, EISDIR).
// Throws FileError; a failed atomic replacement leaves no temporary behind.
void write_output_file(const std::filesystem::path& path,
                       std::initializer_list<std::string_view> pieces);
inline void write_output_file(const std::filesystem::path& path, std::string_view contents) {
  write_output_file(path, {contents});
}

// The same for bulk data that is rewritten run after run (a run's golden .npy files): an existing
// `path` is removed before the new file takes its name, so a reader sees the old file, no file,
// or the whole new one, never a partial one. Renamed over an existing file, ext4 (by default,
// its auto_da_alloc) starts writing the new file to disk at once; the disk's work then falls into
// whatever runs next (a run's device launch, 0.02-0.03 ms of the 512³ matmul's) and every run's
// data reaches the disk. Removed first, data replaced before the kernel writes it back is never
// written at all (the git history of bench/README.md, "Golden files that do not go to the disk").
void write_bulk_file(const std::filesystem::path& path,
                     std::initializer_list<std::string_view> pieces);

}  // namespace pypto::support
