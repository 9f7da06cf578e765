// ProgramLibrary::map_pages: in a process forked after the library was loaded (as an isolated
// run's device process is), every page of the library's mappings is in the page tables
// afterwards, so that the first launch takes no page fault for the program's code or constants.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/program_library.h"

namespace pypto::runtime {
namespace {

namespace fs = std::filesystem;

// Constants over several pages, so that one fault's neighbours could not map them all.
const char* kSource = R"(#include "pto_abi.h"
extern "C" const unsigned char pto_test_table[5 * 4096 + 7] = {1, 2, 3};
extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }
extern "C" int32_t pto_orchestrate(const PtoRuntimeApi*, const PtoArg*, int32_t) {
  return pto_test_table[1];
}
)";

struct Residency {
  int64_t size_kb = 0;  // of every mapping of the file
  int64_t rss_kb = 0;   // of those, in this process's page tables
};

// Sums the Size and Rss lines of /proc/self/smaps over the mappings named `path`.
Residency residency_of(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  Residency r;
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (first.find('-') != std::string::npos && first.back() != ':') {  // a mapping's header
      std::string perms, offset, device, inode, name;
      fields >> perms >> offset >> device >> inode >> name;
      inside = name == path;
    } else if (inside && (first == "Size:" || first == "Rss:")) {
      int64_t kb = 0;
      fields >> kb;
      (first == "Size:" ? r.size_kb : r.rss_kb) += kb;
    }
  }
  return r;
}

TEST(ProgramLibraryTest, MapPagesMapsEveryPageOfTheLibraryInAForkedProcess) {
  std::string tmpl = (fs::temp_directory_path() / "pypto-map-pages-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path root = tmpl;
  BuildOptions options;
  options.cache_dir = root / "cache";
  const fs::path library = fs::canonical(build_library(kSource, options).library);
  auto program = ProgramLibrary::load(library);
  ASSERT_EQ(program->orchestrate()(nullptr, nullptr, 0), 2);

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Exit codes: 0 every page mapped, 2 the library is not mapped, 3 pages missing.
    program->map_pages();
    // Libraries are loaded from a sealed in-memory copy (library_file::sealed_copy), named
    // after the file.
    const Residency after = residency_of("/memfd:" + library.filename().string());
    ::_exit(after.size_kb == 0 ? 2 : after.rss_kb < after.size_kb ? 3 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no mapping of " << library << " found; 3: pages left "
                                    << "unmapped after map_pages";
  fs::remove_all(root);
}

// Libraries are loaded from the descriptor they were checked through (/proc/self/fd/N); the
// loader also knows them by that name, and descriptor numbers are reused. A second library,
// opened under the number the first (still loaded) one was, is still the second.
TEST(ProgramLibraryTest, LibrariesLoadedOneAfterAnotherAreEachTheFileItWasGiven) {
  std::string tmpl = (fs::temp_directory_path() / "pypto-fd-names-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const fs::path root = tmpl;
  BuildOptions options;
  options.cache_dir = root / "cache";
  auto source_returning = [](int value) {
    return std::string(R"(#include "pto_abi.h"
extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }
extern "C" int32_t pto_orchestrate(const PtoRuntimeApi*, const PtoArg*, int32_t) { return )") +
           std::to_string(value) + "; }\n";
  };
  std::vector<std::shared_ptr<const ProgramLibrary>> loaded;
  for (int value = 11; value < 15; ++value) {
    loaded.push_back(ProgramLibrary::load(build_library(source_returning(value), options).library));
    EXPECT_EQ(loaded.back()->orchestrate()(nullptr, nullptr, 0), value);
  }
  // The same file again (another descriptor): the same code.
  auto again = ProgramLibrary::load(build_library(source_returning(12), options).library);
  EXPECT_EQ(again->orchestrate()(nullptr, nullptr, 0), 12);
  loaded.clear();
  again.reset();
  fs::remove_all(root);
}

}  // namespace
}  // namespace pypto::runtime
