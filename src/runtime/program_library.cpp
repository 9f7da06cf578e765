#include "pypto/runtime/program_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <string>

#include "library_file.h"
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

ProgramLibrary::~ProgramLibrary() { ::dlclose(handle_); }

}  // namespace pypto::runtime
