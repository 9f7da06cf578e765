#pragma once

#include <string>

#include "pypto/runtime/host_tensor.h"

namespace pypto::runtime {

// Writes `tensor` as a NumPy .npy file (format version 1.0, little-endian, C order), readable
// with numpy.load. FP16 is written as '<f2'; BF16, which NumPy lacks, as raw '<u2' bits.
// The file appears complete or not at all (support::write_bulk_file: an older file of that
// name is removed first, since golden data is rewritten on every run). Throws
// support::FileError naming the path on failure.
void write_npy(const std::string& path, const HostTensor& tensor);

}  // namespace pypto::runtime
