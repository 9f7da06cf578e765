#include "library_file.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "pypto/support/file_io.h"

namespace pypto::runtime::library_file {
namespace fs = std::filesystem;

namespace {

// Larger than any program library; a bigger file is not one of ours.
constexpr off_t kMaxLibraryBytes = off_t{1} << 30;

// Reads all of a regular file opened as `fd`, which must belong to the effective user and be
// writable by nobody else. Returns false with `problem` set.
bool read_private_file(int fd, std::string& bytes, std::string& problem) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    problem = std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
    return false;
  }
  if (st.st_uid != ::geteuid()) {
    problem =
        "owned by uid " + std::to_string(st.st_uid) + ", not by uid " + std::to_string(::geteuid());
    return false;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    problem = "writable by other users";
    return false;
  }
  if (st.st_size > kMaxLibraryBytes) {
    problem = "too large (" + std::to_string(st.st_size) + " bytes)";
    return false;
  }
  bytes.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      problem = std::strerror(errno);
      return false;
    }
    if (n == 0) break;  // shrank while we read
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return true;
}

int open_no_follow(const fs::path& path) {
  int fd;
  while ((fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 && errno == EINTR) {
  }
  return fd;
}

// A 64-bit ELF shared object whose header tables lie inside the file: a truncated library
// fails here even before its digest is compared.
std::string elf_problem(std::string_view bytes) {
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    return "not an ELF file";
  }
  Elf64_Ehdr h;
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_type != ET_DYN) return "not a 64-bit shared object";
  const auto ends_inside = [&](uint64_t offset, uint64_t count, uint64_t entry) {
    return offset <= bytes.size() && count * entry <= bytes.size() - offset;
  };
  if (!ends_inside(h.e_phoff, h.e_phnum, h.e_phentsize) ||
      !ends_inside(h.e_shoff, h.e_shnum, h.e_shentsize)) {
    return "truncated (its ELF header describes " +
           std::to_string(std::max<uint64_t>(h.e_phoff + uint64_t{h.e_phnum} * h.e_phentsize,
                                             h.e_shoff + uint64_t{h.e_shnum} * h.e_shentsize)) +
           " bytes, the file has " + std::to_string(bytes.size()) + ")";
  }
  return {};
}

}  // namespace

fs::path digest_path(const fs::path& library) { return library.string() + ".xxh"; }

std::string digest_of(std::string_view bytes) {
  XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                static_cast<unsigned long long>(h.low64));
  return buf;
}

std::string seal(const fs::path& library, const fs::path& digest_file) {
  // The compiler created the file under the process umask; the cache trusts only what the
  // effective user alone can write.
  if (::chmod(library.c_str(), 0700) != 0) return std::strerror(errno);
  VerifiedFile file(open_no_follow(library));
  if (!file.ok()) return std::strerror(errno);
  std::string bytes, problem;
  if (!read_private_file(file.fd(), bytes, problem)) return problem;
  if (std::string elf = elf_problem(bytes); !elf.empty()) return "the compiler's output is " + elf;
  try {
    support::write_file_atomically(digest_file, digest_of(bytes) + "\n");
  } catch (const support::FileError& e) {
    return e.what();
  }
  return {};
}

VerifiedFile& VerifiedFile::operator=(VerifiedFile&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

VerifiedFile::~VerifiedFile() {
  if (fd_ >= 0) ::close(fd_);
}

VerifiedFile open_verified(const fs::path& library, std::string& problem, bool* missing,
                           std::string* verified_bytes) {
  if (missing) *missing = false;
  VerifiedFile file(open_no_follow(library));
  if (!file.ok()) {
    if (missing) *missing = errno == ENOENT;
    problem = errno == ELOOP ? "a symbolic link" : std::strerror(errno);
    return {};
  }
  std::string bytes;
  if (!read_private_file(file.fd(), bytes, problem)) return {};
  if (problem = elf_problem(bytes); !problem.empty()) return {};

  VerifiedFile digest(open_no_follow(digest_path(library)));
  std::string recorded;
  if (!digest.ok()) {
    problem = "its digest '" + digest_path(library).string() + "' cannot be read (" +
              std::strerror(errno) + ")";
    return {};
  }
  if (!read_private_file(digest.fd(), recorded, problem)) {
    problem = "its digest '" + digest_path(library).string() + "' is " + problem;
    return {};
  }
  while (!recorded.empty() && (recorded.back() == '\n' || recorded.back() == ' ')) {
    recorded.pop_back();
  }
  if (recorded != digest_of(bytes)) {
    problem = "its content does not match the digest recorded when it was built";
    return {};
  }
  if (verified_bytes) *verified_bytes = std::move(bytes);
  return file;
}

int sealed_copy(const std::string& bytes, const std::string& name, std::string& problem) {
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) {
    problem = std::string("memfd_create: ") + std::strerror(errno);
    return -1;
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      problem = std::string("writing its in-memory copy: ") + std::strerror(errno);
      ::close(fd);
      return -1;
    }
    done += static_cast<size_t>(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    problem = std::string("sealing its in-memory copy: ") + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace pypto::runtime::library_file
