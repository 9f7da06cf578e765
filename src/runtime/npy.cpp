#include "pypto/runtime/npy.h"

#include <string_view>

#include "pypto/support/file_io.h"

namespace pypto::runtime {

namespace {

// numpy's dtype strings; BF16 and the FP8s are their bit patterns (numpy has no such floats).
const char* npy_descr(ir::DataType t) {
  switch (t) {
    case ir::DataType::FP32:
      return "<f4";
    case ir::DataType::FP16:
      return "<f2";
    case ir::DataType::BF16:
    case ir::DataType::UINT16:
      return "<u2";
    case ir::DataType::INT8:
      return "|i1";
    case ir::DataType::INT16:
      return "<i2";
    case ir::DataType::INT32:
      return "<i4";
    case ir::DataType::INT64:
      return "<i8";
    case ir::DataType::UINT8:
    case ir::DataType::FP8E4M3FN:
    case ir::DataType::FP8E5M2:
    case ir::DataType::FP8E8M0:
    case ir::DataType::FP4:
    case ir::DataType::INT4:
    case ir::DataType::UINT4:
      return "|u1";
    case ir::DataType::UINT32:
      return "<u4";
    case ir::DataType::UINT64:
      return "<u8";
    case ir::DataType::BOOL:
      return "|b1";
  }
  return "<f4";
}

std::string npy_header(const HostTensor& t) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (i) shape += ", ";
    shape += std::to_string(t.shape[i]);
  }
  if (t.shape.size() == 1) shape += ",";  // a 1-tuple in Python syntax
  shape += ")";
  std::string dict = std::string("{'descr': '") + npy_descr(t.dtype) +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + header length (2) + dict + padding + '\n' is a multiple of 64.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>((dict.size() >> 8) & 0xff);
  return header + dict;
}

}  // namespace

void write_npy(const std::string& path, const HostTensor& tensor) {
  // The header and the caller's buffer go to the file as they are: no staging copy of the data.
  const std::string header = npy_header(tensor);
  const std::string_view data(static_cast<const char*>(tensor.data),
                              static_cast<size_t>(tensor.size_bytes()));
  support::write_bulk_file(path, {header, data});
}

}  // namespace pypto::runtime
