#include "pypto/runtime/program_library.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "library_file.h"
#include "madvise_populate.h"
#include "pypto/runtime/errors.h"

namespace pypto::runtime {

namespace {
std::atomic<uint64_t> g_latest_generation{0};  // of the last library loaded in this process
}  // namespace

namespace {

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "unknown dynamic loader error";
}

// What the loader knows our libraries by. A library is loaded from the descriptor its bytes were
// checked through, as /proc/self/fd/N, so that no rename of the file between the check and the
// load can swap it. The loader also answers a later dlopen() of a name an object is loaded under
// (or was reached by), and descriptor numbers are reused. So each loaded file keeps its own
// duplicate descriptor open while we hold it (its name then always reaches it, and the next load
// of the same file is a plain reference), and a new load takes a number no loaded object answers
// to (RTLD_NOLOAD says).
class LoadedFiles {
 public:
  struct Identity {
    dev_t dev;
    ino_t ino;
    bool operator==(const Identity& o) const { return dev == o.dev && ino == o.ino; }
  };

  // dlopen()s the file open as `fd` (identity `file`). Returns the handle, or null with
  // `problem` set. Each handle returned is given back with close().
  void* open(int fd, Identity file, std::string& problem) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry& e : entries_) {
      if (!(e.file == file)) continue;
      // Loaded by us and held: its descriptor is still open, so its name names this file.
      void* again = ::dlopen(e.name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
      if (again == e.handle) {
        ++e.users;
        return again;
      }
      if (again) ::dlclose(again);
      break;
    }
    constexpr int kAttempts = 64;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      const int number = ::fcntl(fd, F_DUPFD_CLOEXEC, next_number_);
      if (number < 0) {
        if (next_number_ == kFirstNumber) break;
        next_number_ = kFirstNumber;  // past the descriptor limit: start again from below
        continue;
      }
      next_number_ = number + 1;
      const std::string name = "/proc/self/fd/" + std::to_string(number);
      // RTLD_NOLOAD: what the name reaches now, without loading anything.
      if (void* existing = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD)) {
        ::dlclose(existing);  // another library answers to this name (or is this file)
        ::close(number);
        continue;
      }
      // RTLD_NOW: an unresolved symbol must fail here, with dlerror's text, not in the middle of
      // a run. RTLD_LOCAL: two programs may define kernels with the same names.
      void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        problem = dl_error();
        ::close(number);
        return nullptr;
      }
      entries_.push_back({handle, file, number, name, 1});
      return handle;
    }
    problem = "no descriptor number left to load it under";
    return nullptr;
  }

  void close(void* handle) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ::dlclose(handle);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->handle != handle || --it->users > 0) continue;
      ::close(it->descriptor);
      entries_.erase(it);
      return;
    }
  }

 private:
  struct Entry {
    void* handle;
    Identity file;
    int descriptor;  // the duplicate its name refers to, open while it is held
    std::string name;
    int users;
  };
  // Above the descriptors a process usually has open, so that names are rarely reused.
  static constexpr int kFirstNumber = 64;
  std::mutex mutex_;
  std::vector<Entry> entries_;
  int next_number_ = kFirstNumber;
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
  std::string bytes;
  library_file::VerifiedFile file = library_file::open_verified(path, problem, nullptr, &bytes);
  struct stat checked {};
  if (file.ok() && ::fstat(file.fd(), &checked) != 0) problem = std::strerror(errno);
  if (!problem.empty()) {
    throw ExecutionError(ExecutionError::Kind::Load,
                         "cannot load " + where + ": " + problem +
                             "; delete it and build again (the binary cache rebuilds it)");
  }
  // Loaded from a sealed copy of the checked bytes, not the file: programs stay loaded across
  // runs (run()'s and @pl.jit's caches), and a file truncated in place under a loaded library
  // would fault its code (library_file::sealed_copy). The file's identity still tells loads of
  // the same file apart.
  library_file::VerifiedFile copy(
      library_file::sealed_copy(bytes, path.filename().string(), problem));
  if (!copy.ok()) {
    throw ExecutionError(ExecutionError::Kind::Load, "cannot load " + where + ": " + problem);
  }
  bytes.clear();
  bytes.shrink_to_fit();
  void* handle = loaded_files().open(copy.fd(), {checked.st_dev, checked.st_ino}, problem);
  if (!handle)
    throw ExecutionError(ExecutionError::Kind::Load, "cannot load " + where + ": " + problem);

  auto fail = [&](const std::string& message) {
    loaded_files().close(handle);
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
  auto* library = new ProgramLibrary(path, handle, orchestrate);
  // Numbered once whole: a process forked once this number is visible has all of it.
  library->generation_ = g_latest_generation.fetch_add(1) + 1;
  return std::shared_ptr<const ProgramLibrary>(library);
}

ProgramLibrary::ProgramLibrary(std::filesystem::path path, void* handle,
                               PtoOrchestrateFn orchestrate)
    : path_(std::move(path)), handle_(handle), orchestrate_(orchestrate) {
  core_memory_extent_.fill(std::numeric_limits<int64_t>::max());
  if (auto extent =
          reinterpret_cast<PtoCoreMemoryExtentFn>(::dlsym(handle_, "pto_core_memory_extent")))
    extent(core_memory_extent_.data());
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

ProgramLibrary::~ProgramLibrary() { loaded_files().close(handle_); }

uint64_t ProgramLibrary::latest_load_generation() { return g_latest_generation.load(); }

}  // namespace pypto::runtime
