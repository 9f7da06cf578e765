// support::write_bulk_file: the way golden .npy files are written, replacing the previous run's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "pypto/support/file_io.h"

namespace {

namespace fs = std::filesystem;
using pypto::support::FileError;
using pypto::support::write_bulk_file;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder of its own under the temporary directory.
fs::path fresh_folder(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("pypto_file_io_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteBulkFile, ReplacesAnOlderFileWithANewInodeAndLeavesNoTemporary) {
  const fs::path dir = fresh_folder("replace");
  const fs::path path = dir / "x.npy";
  write_bulk_file(path, {"old ", "bytes"});
  ASSERT_TRUE(fs::is_regular_file(path));
  // A second name for the old file: it keeps the old bytes, so the new file is a new inode
  // (removed and renamed into place, not rewritten in place).
  fs::create_hard_link(path, dir / "old_link");
  write_bulk_file(path, {"new", " ", "bytes"});
  EXPECT_EQ(read_all(path), "new bytes");
  EXPECT_EQ(read_all(dir / "old_link"), "old bytes");
  EXPECT_EQ(fs::hard_link_count(path), 1u);
  EXPECT_EQ(entries(dir), 2u);  // x.npy and old_link: no temporary left
  fs::remove_all(dir);
}

TEST(WriteBulkFile, CreatesParentFoldersAndAFileWhereNoneWas) {
  const fs::path dir = fresh_folder("create");
  const fs::path path = dir / "data" / "out" / "y.npy";
  write_bulk_file(path, {"abc"});
  EXPECT_EQ(read_all(path), "abc");
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  fs::remove_all(dir);
}

TEST(WriteBulkFile, AFolderInTheWayIsAnErrorNamingThePathAndLeavesNothingBehind) {
  const fs::path dir = fresh_folder("folder");
  const fs::path path = dir / "z.npy";
  fs::create_directories(path / "inside");
  try {
    write_bulk_file(path, {"data"});
    FAIL() << "expected a FileError";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(path / "inside"));  // the folder is untouched
  EXPECT_EQ(entries(dir), 1u);                     // and no temporary is left
  fs::remove_all(dir);
}

}  // namespace
