#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include "pypto/runtime/device_headers.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(DeviceHeaders, EmbeddedTextEqualsFileOnDisk) {
  const auto& headers = pypto::runtime::device_headers();
  auto abi = std::find_if(headers.begin(), headers.end(),
                          [](const auto& h) { return h.file_name == "pto_abi.h"; });
  ASSERT_NE(abi, headers.end());
  EXPECT_EQ(std::string(abi->text), read_file(std::string(PYPTO_SOURCE_DIR) + "/device/pto_abi.h"));
}

}  // namespace
