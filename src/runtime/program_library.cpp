#include "pypto/runtime/program_library.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "library_file.h"
#include "madvise_populate.h"
#include "pypto/runtime/errors.h"

namespace pypto::runtime {

namespace {

std::string dl_error() {
  const char* e = ::dlerror();
  return e ? e : "unknown dynamic loader error";
}

}  // namespace

std::shared_ptr<const ProgramLibrary> ProgramLibrary::load(const std::filesystem::path& path) {
  const std::string where = "program library '" + path.string() + "'";
  // dlopen() runs the file's constructors and maps it, so a planted file would run its code in
  // the caller and a truncated one would raise SIGBUS there: only bytes that match the digest
  // the binary cache recorded when it built them are loaded, and only if the path still names
  // the file that was checked. (Not dlopen("/proc/self/fd/N"): the loader recognizes loaded
  // libraries by name, and descriptor numbers are reused.)
  std::string problem;
  library_file::VerifiedFile file = library_file::open_verified(path, problem);
  struct stat checked {
  }, named{};
  if (file.ok() && (::fstat(file.fd(), &checked) != 0 || ::stat(path.c_str(), &named) != 0 ||
                    checked.st_ino != named.st_ino || checked.st_dev != named.st_dev)) {
    problem = "it was replaced while it was being checked";
  }
  if (!problem.empty()) {
    throw ExecutionError(ExecutionError::Kind::Load,
                         "cannot load " + where + ": " + problem +
                             "; delete it and build again (the binary cache rebuilds it)");
  }
  // RTLD_NOW: an unresolved symbol must fail here, with dlerror's text, not in the middle of a
  // run. RTLD_LOCAL: two programs may define kernels with the same names.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    throw ExecutionError(ExecutionError::Kind::Load, "cannot load " + where + ": " + dl_error());

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
