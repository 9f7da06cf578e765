// support::write_output_file: what `-o FILE` and the profile writers may replace (a regular file,
// atomically) and what they must write through (a symlink, a FIFO, a device).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "pypto/support/file_io.h"

namespace {

namespace fs = std::filesystem;
using pypto::support::FileError;
using pypto::support::write_output_file;

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fresh_folder(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("pypto_output_file_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

size_t entries(const fs::path& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(WriteOutputFile, ReplacesARegularFileAtomicallyAndCreatesANewOne) {
  const fs::path dir = fresh_folder("regular");
  const fs::path path = dir / "sub" / "out.json";
  write_output_file(path, "first");
  EXPECT_EQ(read_all(path), "first");
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  write_output_file(path, "second");
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(read_all(path), "second");
  EXPECT_NE(before.st_ino, after.st_ino);  // a new file took the name: readers never saw half
  EXPECT_EQ(entries(dir / "sub"), 1u);     // no temporary left
  fs::remove_all(dir);
}

TEST(WriteOutputFile, WritesThroughASymlinkAndKeepsTheLink) {
  const fs::path dir = fresh_folder("symlink");
  const fs::path target = dir / "target.txt";
  std::ofstream(target) << "old contents that are longer";
  fs::create_symlink(target, dir / "link.json");
  write_output_file(dir / "link.json", "new");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(read_all(target), "new");
  EXPECT_EQ(entries(dir), 2u);
  fs::remove_all(dir);
}

TEST(WriteOutputFile, WritesIntoAFifoThatAReaderDrains) {
  const fs::path dir = fresh_folder("fifo");
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_all(fifo); });
  const std::string big(1 << 20, 'x');  // more than a pipe buffer: the writer must wait
  write_output_file(fifo, {"<", big, ">"});
  reader.join();
  EXPECT_EQ(received.size(), big.size() + 2);
  struct stat info;
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode)) << "the FIFO was replaced";
  fs::remove_all(dir);
}

TEST(WriteOutputFile, WritesIntoACharacterDeviceWithoutReplacingIt) {
  // A symlink to /dev/null stands for `-o /dev/null` without risking the real node.
  const fs::path dir = fresh_folder("device");
  fs::create_symlink("/dev/null", dir / "null");
  write_output_file(dir / "null", "discarded");
  EXPECT_TRUE(fs::is_symlink(dir / "null"));
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  fs::remove_all(dir);
}

TEST(WriteOutputFile, RefusesAFolderWithAClearReason) {
  const fs::path dir = fresh_folder("folder");
  try {
    write_output_file(dir, "x");
    FAIL() << "wrote over a folder";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("it is a folder"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(dir));
  fs::remove_all(dir);
}

}  // namespace
