// The integrity of a cached program library. The binary cache records the XXH3-128 digest of
// every library it builds next to it (<library>.xxh); nothing is handed to dlopen() before its
// bytes were checked against that digest, because dlopen runs the file's constructors and maps
// it (a truncated file would raise SIGBUS in the caller on first touch).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace pypto::runtime::library_file {

// Where the digest of `library` is recorded.
std::filesystem::path digest_path(const std::filesystem::path& library);

// 32 hex digits: XXH3-128 of `bytes`.
std::string digest_of(std::string_view bytes);

// Makes the freshly built file `library` private to the effective user (mode 0700) and records
// its digest in `digest_file`. Returns an empty string, or what went wrong.
std::string seal(const std::filesystem::path& library, const std::filesystem::path& digest_file);

// An open descriptor of a library file whose bytes were checked; closes on destruction.
class VerifiedFile {
 public:
  VerifiedFile() = default;
  explicit VerifiedFile(int fd) : fd_(fd) {}
  VerifiedFile(VerifiedFile&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  VerifiedFile& operator=(VerifiedFile&& o) noexcept;
  VerifiedFile(const VerifiedFile&) = delete;
  VerifiedFile& operator=(const VerifiedFile&) = delete;
  ~VerifiedFile();
  int fd() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Opens `library` (never following a symlink) and checks that it is a regular file of the
// effective user that nobody else may write, a complete ELF shared object, and that its digest
// equals the one recorded in digest_path(library). On failure the result is not ok() and
// `problem` says why ("No such file or directory" when it does not exist: `missing` is set).
VerifiedFile open_verified(const std::filesystem::path& library, std::string& problem,
                           bool* missing = nullptr, std::string* verified_bytes = nullptr);

// A sealed in-memory copy of `bytes` (memfd: no one can change, shrink or grow it), to load a
// library from: a loaded library maps its file, so the file changing under it (a truncation in
// place) would fault its code, there or in its destructors at exit. Returns the descriptor, or -1
// with `problem` set.
int sealed_copy(const std::string& bytes, const std::string& name, std::string& problem);

}  // namespace pypto::runtime::library_file
