// The element types as data (the rows of pypto/ir/dtypes.def), for what is generated from them:
// the device ABI's enumerators and the Python dtype constants (scripts/gen_dtypes.py).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pypto::ir {

struct DTypeRow {
  std::string name;  // "FP32"
  int value;         // ir::DataType and PtoDType
  int64_t bytes;
  std::string kind;  // "float", "signed", "unsigned" or "bool"
  std::string numpy_name;
  std::string doc;
};

// Every element type, in value order.
std::vector<DTypeRow> dtype_table();

}  // namespace pypto::ir
