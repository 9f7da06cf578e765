#include "pypto/runtime/program_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "library_file.h"
#include "madvise_populate.h"
#include "pypto/runtime/errors.h"

namespace pypto::runtime {

namespace {

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "unknown dynamic loader error";
}

// What the loader knows our libraries by. A library is loaded from the descriptor its bytes were
// checked through, as /proc/self/fd/N, so that no rename of the file between the check and the
// load can swap it. But the loader also matches a new dlopen() with the names earlier ones used,
// and descriptor numbers are reused: a still-loaded library opened as /proc/self/fd/N, and any
// other name that reached it, answers for a later, different file opened as N. So every handle
// we load is recorded with the file (device, inode) it is, and a name that already answers with
// another file is not used (the descriptor is duplicated to a higher number instead).
class LoadedFiles {
 public:
  struct Identity {
    dev_t dev;
    ino_t ino;
    bool operator==(const Identity& o) const { return dev == o.dev && ino == o.ino; }
  };

  // dlopen()s the file open as `fd` (identity `file`) under a name that reaches it. Returns the
  // handle, or null (dlerror() says why) after dlopen failed.
  void* open(int fd, Identity file, std::string& problem) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<library_file::VerifiedFile> duplicates;  // closed when done
    constexpr int kAttempts = 16;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      const std::string name = "/proc/self/fd/" + std::to_string(fd);
      // RTLD_NOLOAD: what the name reaches now, without loading anything.
      if (void* existing = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {
        auto it = handles_.find(existing);
        const bool same = it != handles_.end() && it->second == file;
        ::dlclose(existing);
        if (!same) {
          const int higher = ::fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
          if (higher < 0) break;
          duplicates.emplace_back(higher);
          fd = higher;
          continue;
        }
      }
      // RTLD_NOW: an unresolved symbol must fail here, with dlerror's text, not in the middle of
      // a run. RTLD_LOCAL: two programs may define kernels with the same names.
      void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) handles_[handle] = file;
      if (!handle) problem = dl_error();
      return handle;
    }
    problem = "no descriptor name to load it under (every one tried names another library)";
    return nullptr;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<void*, Identity> handles_;
};

LoadedFiles& loaded_files() {
  static auto* files = new LoadedFiles();  // leaked: libraries may be closed at exit
  return *files;
}

}  // namespace

std::shared_ptr<const ProgramLibrary> ProgramLibrary::load(const std::filesystem::path& path) {
  const std::string where = "program library '" + path.string() + "'";
  // dlopen() runs the file's constructors and maps it, so a planted file would run its code in
  // the caller and a truncated one would raise SIGBUS there: only bytes that match the digest
  // the binary cache recorded when it built them are loaded, and from the very descriptor
  // they were read through (LoadedFiles), so what was checked is what runs.
  std::string problem;
  library_file::VerifiedFile file = library_file::open_verified(path, problem);
  struct stat checked {};
  if (file.ok() && ::fstat(file.fd(), &checked) != 0) problem = std::strerror(errno);
  if (!problem.empty()) {
    throw ExecutionError(ExecutionError::Kind::Load,
                         "cannot load " + where + ": " + problem +
                             "; delete it and build again (the binary cache rebuilds it)");
  }
  void* handle = loaded_files().open(file.fd(), {checked.st_dev, checked.st_ino}, problem);
  if (!handle)
    throw ExecutionError(ExecutionError::Kind::Load, "cannot load " + where + ": " + problem);

  auto fail = [&](const std::string& message) {
    ::dlclose(handle);
    throw ExecutionError(ExecutionError::Kind::Load, message);
  };
  auto version = reinterpret_cast<PtoAbiVersionFn>(::dlsym(handle, "pto_abi_version"));
  if (!version) {
    fail(where + " does not export pto_abi_version (not a PyPTO program library?): " + dl_error());
  }
  if (int32_t v = version(); v != PTO_ABI_VERSION) {
    fail(where + " was built for device ABI version " + std::to_string(v) +
         ", but this runtime implements version " + std::to_string(PTO_ABI_VERSION) +
         "; rebuild the program");
  }
  auto orchestrate = reinterpret_cast<PtoOrchestrateFn>(::dlsym(handle, "pto_orchestrate"));
  if (!orchestrate) fail(where + " does not export pto_orchestrate: " + dl_error());
  return std::shared_ptr<const ProgramLibrary>(new ProgramLibrary(path, handle, orchestrate));
}

ProgramLibrary::ProgramLibrary(std::filesystem::path path, void* handle,
                               PtoOrchestrateFn orchestrate)
    : path_(std::move(path)), handle_(handle), orchestrate_(orchestrate) {
  link_map* map = nullptr;
  if (::dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return;
  // Room made here, so that the callback, called from C, cannot throw: a program library has
  // four loaded segments (headers, code, constants, data); any beyond eight are left to fault.
  segments_.reserve(8);
  struct Found {
    ElfW(Addr) load_bias;  // tells this library from the others the loader lists
    uintptr_t page_bytes;
    std::vector<Segment>* segments;
  } found{map->l_addr, static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE)), &segments_};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const auto& f = *static_cast<const Found*>(data);
        if (info->dlpi_addr != f.load_bias) return 0;
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD || segment.p_memsz == 0) continue;
          if (f.segments->size() == f.segments->capacity()) break;
          const uintptr_t first = info->dlpi_addr + segment.p_vaddr;
          const uintptr_t start = first / f.page_bytes * f.page_bytes;
          f.segments->push_back({start, static_cast<size_t>(first + segment.p_memsz - start)});
        }
        return 1;  // found: stop
      },
      &found);
}

void ProgramLibrary::map_pages() const noexcept {
  for (const Segment& s : segments_)
    ::madvise(reinterpret_cast<void*>(s.start), s.bytes, MADV_POPULATE_READ);
}

ProgramLibrary::~ProgramLibrary() { ::dlclose(handle_); }

}  // namespace pypto::runtime
