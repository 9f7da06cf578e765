// Shared by the runtime tests.
#pragma once

#include <filesystem>

// ThreadSanitizer aborts a forked child of a multi-threaded process that starts threads, which
// is what isolated execution (and a test forking builders) does: such tests skip under TSan and
// run in the other builds.
#if defined(__SANITIZE_THREAD__)
#define PYPTO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PYPTO_TSAN 1
#endif
#endif

#ifdef PYPTO_TSAN
#define PYPTO_SKIP_FORK_UNDER_TSAN() GTEST_SKIP() << "fork + threads is unsupported under TSan"
#else
#define PYPTO_SKIP_FORK_UNDER_TSAN() (void)0
#endif

namespace pypto::runtime::test_support {

// Test programs are built into one cache shared by test processes: they are compiled once.
inline std::filesystem::path test_cache_dir() {
  return std::filesystem::temp_directory_path() / "pypto-runtime-test-cache";
}

}  // namespace pypto::runtime::test_support
