#pragma once

#include <string_view>
#include <vector>

namespace pypto::runtime {

// A header from device/ that generated code includes, embedded into the library at build time;
// the binary cache hands them to the compiler and hashes them into its keys.
struct DeviceHeader {
  std::string_view file_name;  // e.g. "pto_tile.h"
  std::string_view text;
};

// All device headers, in a stable order (sorted by file name).
const std::vector<DeviceHeader>& device_headers();

}  // namespace pypto::runtime
