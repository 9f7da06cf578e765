// Output-folder retention and leases: a folder a run holds a lease on is never removed, by this
// process or another; unleased old folders are, and no lock files are left behind.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "pypto/driver/output_dir.h"

namespace pypto::driver {
namespace {

namespace fs = std::filesystem;

fs::path fresh_root(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("pypto_lease_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(root)) out.push_back(entry.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(OutputDirLease, RetentionSkipsALeasedFolderAndRemovesItOnceReleased) {
  const fs::path root = fresh_root("skip");
  const fs::path oldest = root / "Prog_20200101_000000_000001";
  const fs::path older = root / "Prog_20200101_000000_000002";
  const fs::path newest = root / "Prog_20200101_000000_000003";
  {
    OutputDirLease lease = OutputDirLease::acquire(oldest);
    ASSERT_TRUE(lease.held());
    fs::create_directories(oldest);
    fs::create_directories(older);
    fs::create_directories(newest);
    remove_old_output_dirs(newest, "Prog", 1);
    EXPECT_TRUE(fs::is_directory(oldest)) << "a leased folder was removed";
    EXPECT_FALSE(fs::exists(older));
    EXPECT_FALSE(fs::exists(output_dir_lease_path(older)));  // retention's lock file is gone
  }
  // Released: the lock file went with the lease, and the folder is old housekeeping now.
  EXPECT_FALSE(fs::exists(output_dir_lease_path(oldest)));
  remove_old_output_dirs(newest, "Prog", 1);
  EXPECT_EQ(names(root), std::vector<std::string>{"Prog_20200101_000000_000003"});
  fs::remove_all(root);
}

TEST(OutputDirLease, ALeaseInAnotherProcessProtectsTheFolder) {
  const fs::path root = fresh_root("process");
  const fs::path held = root / "Prog_20200101_000000_000001";
  const fs::path newest = root / "Prog_20200101_000000_000002";
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    OutputDirLease lease = OutputDirLease::acquire(held);
    fs::create_directories(held);
    char byte = lease.held() ? 'y' : 'n';
    (void)!::write(ready[1], &byte, 1);
    (void)!::read(done[0], &byte, 1);  // hold the lease until the parent has tried
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'y');
  fs::create_directories(newest);
  remove_old_output_dirs(newest, "Prog", 1);
  EXPECT_TRUE(fs::is_directory(held));
  (void)!::write(done[1], &byte, 1);
  int status = 0;
  ::waitpid(child, &status, 0);
  remove_old_output_dirs(newest, "Prog", 1);
  EXPECT_FALSE(fs::exists(held));
  fs::remove_all(root);
}

TEST(OutputDirLease, OnlyDefaultNamesAreRetentionCandidates) {
  EXPECT_TRUE(is_default_output_dir_name("Prog_20261207_001122_123456"));
  EXPECT_FALSE(is_default_output_dir_name("Prog_notes"));
  EXPECT_FALSE(is_default_output_dir_name("out"));
  EXPECT_EQ(output_dir_lease_path("a/b/Prog_1"), fs::path("a/b/.Prog_1.lease"));
}

}  // namespace
}  // namespace pypto::driver
