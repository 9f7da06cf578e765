#include "pypto/runtime/binary_cache.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "pypto/runtime/device_headers.h"
#include "pypto/runtime/program_library.h"
#include "runtime_test_support.h"

namespace pypto::runtime {
namespace {

namespace fs = std::filesystem;

const char* kSource = R"(#include "pto_abi.h"
#include "pto_tile.h"

extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }
extern "C" int32_t pto_orchestrate(const PtoRuntimeApi*, const PtoArg*, int32_t) { return 0; }
)";

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh cache directory per test, removed afterwards.
class BinaryCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pypto-cache-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir = tmpl;
    options.cache_dir = dir;
  }
  void TearDown() override { fs::remove_all(dir); }

  // An executable shell script standing in for a compiler.
  std::string fake_compiler(const std::string& name, const std::string& body) {
    fs::path p = dir / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }

  fs::path dir;
  BuildOptions options;
};

TEST_F(BinaryCacheTest, SecondBuildIsACacheHitWithoutACompilerRun) {
  BuildResult first = build_library(kSource, options);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(first.library, dir / (first.key + ".so"));
  EXPECT_EQ(first.source, dir / (first.key + ".cpp"));
  EXPECT_TRUE(fs::exists(first.library));
  EXPECT_EQ(read_file(first.source), kSource);

  BuildResult second = build_library(kSource, options);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.library, first.library);
  EXPECT_EQ(second.key, first.key);
  EXPECT_LT(second.seconds, 0.5);  // the warm path is one hash and one stat()

  // The library is a loadable program of this ABI.
  auto lib = ProgramLibrary::load(second.library);
  EXPECT_EQ(lib->orchestrate()(nullptr, nullptr, 0), 0);

  // Nothing but the library, its source, the lock and the headers is left behind.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
  for (const auto& n : names) {
    EXPECT_EQ(n.find(".tmp."), std::string::npos) << "leftover temporary " << n;
  }
}

TEST_F(BinaryCacheTest, DeviceHeadersAreWrittenIntoTheCache) {
  build_library(kSource, options);
  int found = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("include-", 0) != 0) continue;
    for (const auto& header : runtime::device_headers()) {
      EXPECT_EQ(read_file(e.path() / std::string(header.file_name)), header.text);
      ++found;
    }
  }
  EXPECT_EQ(found, static_cast<int>(runtime::device_headers().size()));
}

TEST_F(BinaryCacheTest, KeyDependsOnSourceFlagsAndCompiler) {
  const std::string key = build_cache_key(kSource, options);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(build_cache_key(kSource, options), key);
  EXPECT_NE(build_cache_key(std::string(kSource) + "\n", options), key);

  BuildOptions o3 = options;
  o3.flags = {"-O3", "-shared", "-fPIC", "-std=c++17"};
  EXPECT_NE(build_cache_key(kSource, o3), key);

  // Same command name, different identity (version output): different key.
  BuildOptions v1 = options, v2 = options;
  v1.compiler = fake_compiler("cc1", "echo fake 1.0\n");
  v2.compiler = fake_compiler("cc2", "echo fake 2.0\n");
  EXPECT_NE(build_cache_key(kSource, v1), build_cache_key(kSource, v2));
  EXPECT_EQ(compiler_identity(v1.compiler), "fake 1.0\n");
}

TEST_F(BinaryCacheTest, FlagsReachTheCompiler) {
  BuildOptions o = options;
  o.flags = {"-O0", "-shared", "-fPIC", "-std=c++17", "-DPYPTO_TEST_FLAG=1"};
  BuildResult r = build_library(
      "#ifndef PYPTO_TEST_FLAG\n#error flag missing\n#endif\n" + std::string(kSource), o);
  EXPECT_FALSE(r.cache_hit);
  EXPECT_TRUE(fs::exists(r.library));
}

TEST_F(BinaryCacheTest, CompilerErrorsNameTheGeneratedFileAndLine) {
  const std::string bad = std::string(kSource) + "int broken( {\n";  // line 6
  const fs::path expected_source = dir / (build_cache_key(bad, options) + ".cpp");
  options.program_name = "BadProgram";
  try {
    build_library(bad, options);
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    std::string what = e.what();
    EXPECT_EQ(
        what.rfind("building program 'BadProgram' failed: the C++ compiler exited with code ", 0),
        0u)
        << what;
    EXPECT_NE(what.find(expected_source.string() + ":6:"), std::string::npos) << what;
    EXPECT_NE(what.find("error"), std::string::npos) << what;
    EXPECT_NE(what.find("command: "), std::string::npos) << what;
  }
  EXPECT_TRUE(fs::exists(expected_source)) << "the source must stay for the user to inspect";
  EXPECT_FALSE(fs::exists(dir / (build_cache_key(bad, options) + ".so")));
}

TEST_F(BinaryCacheTest, CallerProvidedSourcePathIsWhatDiagnosticsName) {
  options.source_path = dir / "work" / "kernels" / "program.cpp";
  try {
    build_library("int main() { return undefined_name; }\n", options);
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find(options.source_path.string() + ":1:"), std::string::npos)
        << e.what();
  }
  // On a cache hit too, the caller's file holds the source the library was built from.
  BuildResult first = build_library(kSource, options);
  fs::remove(options.source_path);
  BuildResult second = build_library(kSource, options);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.source, options.source_path);
  EXPECT_EQ(read_file(options.source_path), kSource);
}

TEST_F(BinaryCacheTest, MissingCompilerIsExplained) {
  options.compiler = "/nonexistent";
  try {
    build_library(kSource, options);
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "C++ compiler '/nonexistent' not found; set CXX to a C++17 compiler", 0),
              0u)
        << e.what();
  }
}

TEST_F(BinaryCacheTest, CxxEnvironmentVariableSelectsTheCompiler) {
  const char* old = std::getenv("CXX");
  std::string saved = old ? old : "";
  ::setenv("CXX", "/nonexistent/c++", 1);
  EXPECT_EQ(resolve_compiler(options), "/nonexistent/c++");
  EXPECT_THROW(build_library(kSource, options), BuildError);
  if (old) {
    ::setenv("CXX", saved.c_str(), 1);
  } else {
    ::unsetenv("CXX");
  }
}

TEST_F(BinaryCacheTest, UnwritableCacheDirectoryIsNamed) {
  const fs::path file = dir / "regular-file";
  std::ofstream(file) << "x";
  options.cache_dir = file / "cache";  // below a regular file: cannot exist
  try {
    build_library(kSource, options);
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    std::string what = e.what();
    EXPECT_NE(
        what.find("cannot use the binary cache directory '" + options.cache_dir.string() + "'"),
        std::string::npos)
        << what;
    EXPECT_NE(what.find("set PYPTO_CACHE_DIR to a writable directory"), std::string::npos);
  }
}

TEST_F(BinaryCacheTest, CompilerTimeoutKillsItAndSaysSo) {
  options.compiler = fake_compiler(
      "slow-cc", "if [ \"$1\" = --version ]; then echo slow 1.0; exit 0; fi\nsleep 30 & wait\n");
  options.timeout = std::chrono::milliseconds(300);
  auto start = std::chrono::steady_clock::now();
  try {
    build_library(kSource, options);
    FAIL() << "expected BuildError";
  } catch (const BuildError& e) {
    EXPECT_NE(std::string(e.what()).find("the C++ compiler timed out after 0.3 s and was killed"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST_F(BinaryCacheTest, ConcurrentBuildsFromThreadsCompileOnce) {
  constexpr int kThreads = 6;
  std::vector<BuildResult> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      try {
        results[i] = build_library(kSource, options);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  int compiled = 0;
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(errors[i], "");
    EXPECT_EQ(results[i].library, results[0].library);
    compiled += results[i].cache_hit ? 0 : 1;
  }
  EXPECT_EQ(compiled, 1) << "builders of one key must wait for each other, not compile twice";
  EXPECT_NO_THROW(ProgramLibrary::load(results[0].library));
}

TEST_F(BinaryCacheTest, ConcurrentBuildsFromProcessesCompileOnce) {
  PYPTO_SKIP_FORK_UNDER_TSAN();
  compiler_identity(resolve_compiler(options));  // children inherit the identity cache
  constexpr int kProcs = 4;
  std::vector<pid_t> pids;
  for (int i = 0; i < kProcs; ++i) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 2;
      try {
        code = build_library(kSource, options).cache_hit ? 0 : 1;
      } catch (...) {
      }
      ::_exit(code);
    }
    pids.push_back(pid);
  }
  int compiled = 0, hits = 0;
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    compiled += WEXITSTATUS(status) == 1;
    hits += WEXITSTATUS(status) == 0;
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(hits, kProcs - 1);
  EXPECT_NO_THROW(ProgramLibrary::load(dir / (build_cache_key(kSource, options) + ".so")));
}

// Sets an environment variable for the scope (unset when `value` is null).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// $PYPTO_CACHE_DIR is RunConfig::cache_dir's default, which the driver resolves
// (driver_run_config_test.cpp); the runtime's own default does not read it.
TEST(BinaryCacheDefaults, CacheDirFollowsXdgThenHome) {
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv cache_dir("PYPTO_CACHE_DIR", "/not/read/here");
  {
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(default_cache_dir(), fs::path("/home/someone/.cache/pypto"));
    ScopedEnv xdg_set("XDG_CACHE_HOME", "/xdg/cache");
    EXPECT_EQ(default_cache_dir(), fs::path("/xdg/cache/pypto"));
    ScopedEnv xdg_relative("XDG_CACHE_HOME", "relative");  // ignored, as the spec says
    EXPECT_EQ(default_cache_dir(), fs::path("/home/someone/.cache/pypto"));
  }
  {
    // Without HOME: the user database's home folder, never a shared /tmp name by default.
    ScopedEnv home("HOME", nullptr);
    const passwd* pw = ::getpwuid(::geteuid());
    ASSERT_NE(pw, nullptr);
    EXPECT_EQ(default_cache_dir(), fs::path(pw->pw_dir) / ".cache" / "pypto");
  }
  EXPECT_EQ(default_build_flags(),
            (std::vector<std::string>{"-O2", "-fno-exceptions", "-shared", "-fPIC", "-std=c++17",
                                      "-nodefaultlibs"}));
  EXPECT_EQ(default_link_libraries(),
            (std::vector<std::string>{"-lm", "-lc", "-lgcc", "-Wl,-z,defs"}));
  // A source too large to optimise in reasonable time is built at -O0, and the key says so.
  const std::string large(kUnoptimisedSourceBytes + 1, ' ');
  EXPECT_EQ(default_build_flags(large).front(), "-O0");
  BuildOptions optimised;
  optimised.flags = default_build_flags();
  EXPECT_NE(build_cache_key(large, BuildOptions{}), build_cache_key(large, optimised));
}

}  // namespace
}  // namespace pypto::runtime
