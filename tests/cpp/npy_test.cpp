#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "pypto/runtime/npy.h"

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Npy, HeaderIsAlignedAndDescribesShapeAndDtype) {
  std::vector<float> data = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
  pypto::ir::HostTensor t{"x", pypto::ir::DataType::FP32, {2, 3}, data.data()};
  auto dir = std::filesystem::temp_directory_path() / "pypto_npy_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "x.npy").string();
  pypto::runtime::write_npy(path, t);
  std::string bytes = read_all(path);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  size_t header_len =
      static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  std::string header = bytes.substr(10, header_len);
  EXPECT_NE(header.find("'descr': '<f4'"), std::string::npos);
  EXPECT_NE(header.find("'shape': (2, 3)"), std::string::npos);
  EXPECT_EQ(bytes.size(), 10 + header_len + data.size() * sizeof(float));
  float last;
  std::memcpy(&last, bytes.data() + bytes.size() - 4, 4);
  EXPECT_EQ(last, 6.0f);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(Npy, OneDimensionalShapeIsAOneTuple) {
  std::vector<int32_t> data = {7, 8, 9};
  pypto::ir::HostTensor t{"v", pypto::ir::DataType::INT32, {3}, data.data()};
  auto path = (std::filesystem::temp_directory_path() / "pypto_npy_1d.npy").string();
  pypto::runtime::write_npy(path, t);
  std::string bytes = read_all(path);
  EXPECT_NE(bytes.find("'shape': (3,)"), std::string::npos);
  EXPECT_NE(bytes.find("'descr': '<i4'"), std::string::npos);
}

TEST(Npy, UnwritablePathNamesThePath) {
  float x = 0;
  pypto::ir::HostTensor t{"x", pypto::ir::DataType::FP32, {1}, &x};
  try {
    pypto::runtime::write_npy("/etc/passwd/sub/x.npy", t);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/etc/passwd/sub/x.npy"), std::string::npos);
  }
}

}  // namespace
