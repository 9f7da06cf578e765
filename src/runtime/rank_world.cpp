// mpi_world(): loads the MPI implementation of RankWorld from its own library (rank_world.h).
#include "pypto/runtime/rank_world.h"

#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>

#include "pypto/runtime/errors.h"
#include "pypto/support/environment.h"

namespace pypto::runtime {
namespace {

// The library's entry point: a new world, or null with the reason in `error`.
using CreateWorld = RankWorld* (*)(char* error, size_t error_bytes);
constexpr const char* kLibrary = "libpypto_mpi.so";
constexpr const char* kEntry = "pypto_mpi_world_create";

// Where libpypto_mpi.so may be: $PYPTO_MPI_LIBRARY, else beside the file that holds this code
// (the Python extension in the package, the pypto tool or a test in the build folder), as that
// file was named and with its symbolic links resolved (a development checkout links the
// extension from the build folder).
std::vector<std::filesystem::path> candidates() {
  const char* given = support::read_environment(support::EnvironmentVariable::PYPTO_MPI_LIBRARY);
  if (given && *given) return {given};
  std::vector<std::filesystem::path> paths;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<const void*>(&mpi_world), &info) && info.dli_fname) {
    const std::filesystem::path self(info.dli_fname);
    paths.push_back(self.parent_path() / kLibrary);
    std::error_code ec;
    const std::filesystem::path real = std::filesystem::canonical(self, ec);
    if (!ec && real.parent_path() != self.parent_path()) {
      paths.push_back(real.parent_path() / kLibrary);
    }
  }
  return paths;
}

std::shared_ptr<RankWorld> load() {
  using Kind = ExecutionError::Kind;
  std::string tried;
  for (const std::filesystem::path& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += (tried.empty() ? "" : ", ") + path.string();
      continue;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      throw ExecutionError(Kind::Setup, "cannot load the MPI transport " + path.string() + ": " +
                                            ::dlerror() +
                                            " (is Open MPI installed: apt-get install "
                                            "openmpi-bin libopenmpi-dev?)");
    }
    auto create = reinterpret_cast<CreateWorld>(::dlsym(handle, kEntry));
    if (!create) {
      throw ExecutionError(
          Kind::Setup, path.string() + " has no " + kEntry + ": it is not pypto's MPI transport");
    }
    char error[1024] = "";
    RankWorld* world = create(error, sizeof error);
    if (!world) throw ExecutionError(Kind::Setup, std::string("MPI transport: ") + error);
    // The library stays loaded: the world lives until the process ends.
    return std::shared_ptr<RankWorld>(world);
  }
  throw ExecutionError(Kind::Setup,
                       std::string("the MPI transport (") + kLibrary +
                           ") is not installed: it is built where CMake finds MPI (Debian: "
                           "apt-get install openmpi-bin libopenmpi-dev, then rebuild); looked "
                           "at " +
                           (tried.empty() ? "no place" : tried));
}

// TerminationNotice's message and the handler it replaced (one notice at a time: a process
// runs one rank).
std::mutex g_notice_mutex;
std::string g_notice;
struct sigaction g_previous {};

void on_termination(int sig) {
  // Only async-signal-safe calls: write, sigaction, raise.
  ssize_t ignored = ::write(STDERR_FILENO, g_notice.data(), g_notice.size());
  (void)ignored;
  ::sigaction(sig, &g_previous, nullptr);
  ::raise(sig);
}

}  // namespace

TerminationNotice::TerminationNotice(std::string message) {
  std::lock_guard<std::mutex> lock(g_notice_mutex);
  g_notice = std::move(message) + "\n";
  struct sigaction action {};
  action.sa_handler = &on_termination;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, &g_previous);
}

TerminationNotice::~TerminationNotice() {
  std::lock_guard<std::mutex> lock(g_notice_mutex);
  ::sigaction(SIGTERM, &g_previous, nullptr);
}

std::shared_ptr<RankWorld> mpi_world() {
  static std::mutex mutex;
  static std::shared_ptr<RankWorld> world;
  std::lock_guard<std::mutex> lock(mutex);
  if (!world) world = load();
  return world;
}

}  // namespace pypto::runtime
