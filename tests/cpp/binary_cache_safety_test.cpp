// The binary cache is safe to share and to damage: a truncated library, a planted one (whose
// constructor would run on dlopen) and a cache directory others can write are never loaded;
// the caller survives and the entry is rebuilt, with a note.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "pypto/runtime/binary_cache.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/program_library.h"

namespace pypto::runtime {
namespace {

namespace fs = std::filesystem;

const char* kSource = R"(#include "pto_abi.h"
extern "C" int32_t pto_abi_version(void) { return PTO_ABI_VERSION; }
extern "C" int32_t pto_orchestrate(const PtoRuntimeApi*, const PtoArg*, int32_t) { return 7; }
)";

// A program library whose constructor creates `marker` as soon as anyone dlopens it.
std::string planted_source(const fs::path& marker) {
  return std::string(kSource) +
         "#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {\n"
         "  FILE* f = fopen(\"" +
         marker.string() + "\", \"w\");\n  if (f) fclose(f);\n}\n";
}

bool any_note_has(const BuildResult& r, const std::string& text) {
  for (const auto& n : r.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

class BinaryCacheSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "pypto-cache-safety-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root = tmpl;
    options.cache_dir = root / "cache";
    marker = root / "planted-code-ran";
    // The replacement of an unsafe cache directory is <tmp>/pypto-cache-<uid>-replacement, one
    // per user: the tests that reach it, run in parallel processes, would share it (and remove
    // it under each other). Each test's temporary folder is its own.
    if (const char* old = std::getenv("TMPDIR")) saved_tmpdir = old;
    ::setenv("TMPDIR", root.c_str(), 1);
  }
  void TearDown() override {
    if (saved_tmpdir) {
      ::setenv("TMPDIR", saved_tmpdir->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
    fs::remove_all(root);
  }

  // A library built (and so digested) elsewhere: the planted file.
  fs::path build_planted() {
    BuildOptions other = options;
    other.cache_dir = root / "attacker";
    return build_library(planted_source(marker), other).library;
  }

  fs::path root, marker;
  BuildOptions options;
  std::optional<std::string> saved_tmpdir;
};

TEST_F(BinaryCacheSafetyTest, NewCacheDirectoryIsPrivate) {
  build_library(kSource, options);
  struct stat st {};
  ASSERT_EQ(::stat(options.cache_dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, ::geteuid());
}

TEST_F(BinaryCacheSafetyTest, TruncatedLibraryIsRefusedAndRebuilt) {
  BuildResult first = build_library(kSource, options);
  fs::resize_file(first.library, fs::file_size(first.library) / 2);

  // Loading it directly is an error, not a SIGBUS.
  try {
    ProgramLibrary::load(first.library);
    FAIL() << "a truncated library was loaded";
  } catch (const ExecutionError& e) {
    EXPECT_EQ(e.kind(), ExecutionError::Kind::Load);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }

  BuildResult second = build_library(kSource, options);
  EXPECT_FALSE(second.cache_hit);
  EXPECT_EQ(second.library, first.library);
  EXPECT_TRUE(any_note_has(second, "was not used")) << ::testing::PrintToString(second.notes);
  EXPECT_EQ(ProgramLibrary::load(second.library)->orchestrate()(nullptr, nullptr, 0), 7);
  EXPECT_TRUE(build_library(kSource, options).cache_hit);
}

TEST_F(BinaryCacheSafetyTest, PlantedLibraryNeverRunsAndIsReplaced) {
  BuildResult first = build_library(kSource, options);
  const fs::path planted = build_planted();
  fs::copy_file(planted, first.library, fs::copy_options::overwrite_existing);
  ::chmod(first.library.c_str(), 0700);

  EXPECT_THROW(ProgramLibrary::load(first.library), ExecutionError);
  BuildResult second = build_library(kSource, options);
  EXPECT_FALSE(second.cache_hit);
  EXPECT_TRUE(any_note_has(second, "does not match the digest"))
      << ::testing::PrintToString(second.notes);
  EXPECT_EQ(ProgramLibrary::load(second.library)->orchestrate()(nullptr, nullptr, 0), 7);
  EXPECT_FALSE(fs::exists(marker)) << "the planted constructor ran";
}

TEST_F(BinaryCacheSafetyTest, SymlinkedLibraryIsNotFollowed) {
  BuildResult first = build_library(kSource, options);
  const fs::path planted = build_planted();
  fs::remove(first.library);
  fs::create_symlink(planted, first.library);
  BuildResult second = build_library(kSource, options);
  EXPECT_FALSE(second.cache_hit);
  EXPECT_FALSE(fs::is_symlink(second.library));
  ProgramLibrary::load(second.library);
  EXPECT_FALSE(fs::exists(marker)) << "the planted constructor ran";
}

// A directory others can write (or that belongs to someone else) is not used at all: a library
// planted there at the right key, with a matching digest, never runs.
void expect_directory_not_used(BuildOptions options, const fs::path& marker,
                               const fs::path& planted, const std::string& reason) {
  const std::string key = build_cache_key(kSource, options);
  fs::copy_file(planted, options.cache_dir / (key + ".so"));
  fs::copy_file(planted.string() + ".xxh", options.cache_dir / (key + ".so.xxh"));

  BuildResult r = build_library(kSource, options);
  EXPECT_FALSE(r.cache_hit);
  EXPECT_NE(r.library.parent_path(), options.cache_dir);
  EXPECT_TRUE(any_note_has(r, reason)) << ::testing::PrintToString(r.notes);
  EXPECT_TRUE(any_note_has(r, "set PYPTO_CACHE_DIR")) << ::testing::PrintToString(r.notes);
  EXPECT_EQ(ProgramLibrary::load(r.library)->orchestrate()(nullptr, nullptr, 0), 7);
  EXPECT_FALSE(fs::exists(marker)) << "the planted constructor ran";
  // Later builds in the process keep using the private replacement.
  BuildResult again = build_library(kSource, options);
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.library, r.library);
  fs::remove_all(r.library.parent_path());
}

TEST_F(BinaryCacheSafetyTest, WorldWritableDirectoryIsNotUsed) {
  const fs::path planted = build_planted();
  fs::create_directories(options.cache_dir);
  ::chmod(options.cache_dir.c_str(), 0777);
  expect_directory_not_used(options, marker, planted, "writable by other users (mode 0777)");
}

TEST_F(BinaryCacheSafetyTest, ForeignOwnedDirectoryIsNotUsed) {
  const fs::path planted = build_planted();
  fs::create_directories(options.cache_dir);
  ::chmod(options.cache_dir.c_str(), 0755);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(options.cache_dir.c_str(), 65534, 65534), 0);
    expect_directory_not_used(options, marker, planted, "owned by uid 65534");
  } else {
    // Without root we cannot give a directory away; one of root's serves the same purpose
    // (nothing can be planted in it, but it must still be refused).
    options.cache_dir = "/";
    BuildResult r = build_library(kSource, options);
    EXPECT_NE(r.library.parent_path(), fs::path("/"));
    EXPECT_TRUE(any_note_has(r, "owned by uid 0")) << ::testing::PrintToString(r.notes);
    fs::remove_all(r.library.parent_path());
  }
}

// A build killed before it cleaned up leaves <key>.so.tmp.XXXXXX (and .cpp) files; the next build
// in the directory removes those older than any build may take, and leaves fresh ones alone
// (another process may be building with them).
TEST_F(BinaryCacheSafetyTest, StaleTemporariesOfKilledBuildsAreRemoved) {
  build_library(kSource, options);
  const fs::path stale = options.cache_dir / "0123.so.tmp.AbCdEf";
  const fs::path stale_source = options.cache_dir / "0123.cpp.tmp.GhIjKl.cpp";
  const fs::path fresh = options.cache_dir / "4567.so.tmp.MnOpQr";
  for (const fs::path& p : {stale, stale_source, fresh}) std::ofstream(p) << "partial";
  const struct timespec day_old[2] = {{::time(nullptr) - 86400, 0}, {::time(nullptr) - 86400, 0}};
  ASSERT_EQ(::utimensat(AT_FDCWD, stale.c_str(), day_old, 0), 0);
  ASSERT_EQ(::utimensat(AT_FDCWD, stale_source.c_str(), day_old, 0), 0);
  build_library(std::string(kSource) + "// another program\n", options);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_source));
  EXPECT_TRUE(fs::exists(fresh));
}

// A relative cache directory whose name starts with '-' reaches the compiler as a path, not as
// an option.
TEST_F(BinaryCacheSafetyTest, DirectoryNamedLikeAnOptionIsAPath) {
  const fs::path cwd = fs::current_path();
  fs::current_path(root);
  options.cache_dir = "-dcache";
  BuildResult r;
  EXPECT_NO_THROW(r = build_library(kSource, options));
  fs::current_path(cwd);
  EXPECT_TRUE(r.library.is_absolute()) << r.library;
  EXPECT_TRUE(fs::exists(root / "-dcache" / r.library.filename()));
  EXPECT_EQ(ProgramLibrary::load(r.library)->orchestrate()(nullptr, nullptr, 0), 7);
}

// The fallback for an unsafe directory is one private directory of the user, not a new one per
// process.
TEST_F(BinaryCacheSafetyTest, UnsafeDirectoryFallbackIsTheSameDirectoryEveryTime) {
  fs::create_directories(options.cache_dir);
  ::chmod(options.cache_dir.c_str(), 0777);
  const fs::path replacement = build_library(kSource, options).library.parent_path();
  EXPECT_EQ(replacement.filename(), "pypto-cache-" + std::to_string(::geteuid()) + "-replacement");
  BuildOptions other = options;
  other.cache_dir = root / "other-unsafe";
  fs::create_directories(other.cache_dir);
  ::chmod(other.cache_dir.c_str(), 0777);
  EXPECT_EQ(build_library(kSource, other).library.parent_path(), replacement);
  fs::remove_all(replacement);
}

}  // namespace
}  // namespace pypto::runtime
