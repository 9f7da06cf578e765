// The caller's arrays as the driver's HostTensors, without a copy: what a call of a compiled
// program (driver_bindings.cpp) and of a multi-rank program (distributed_bindings.cpp) hand
// the device. nanobind takes numpy arrays and torch tensors (through DLPack) as CPU ndarrays.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>
#include <vector>

#include "pypto/ir/host_tensor.h"
#include "pypto/ir/program.h"
#include "pypto/ir/types.h"

namespace pypto::bindings {

using HostBuffer = nanobind::ndarray<nanobind::c_contig, nanobind::device::cpu>;
// An array the program only reads (an In parameter): a read-only one is fine.
using ReadOnlyHostBuffer =
    nanobind::ndarray<nanobind::ro, nanobind::c_contig, nanobind::device::cpu>;

// Whether the element type an array declares itself (DLPack's code) is one `dtype` can be. The
// size is checked apart. BF16 and the FP8 formats come as several codes (ml_dtypes' arrays have
// no standard one), so any code of their size is accepted.
inline bool element_code_fits(ir::DataType dtype, uint8_t code) {
  using Code = nanobind::dlpack::dtype_code;
  const auto is = [code](Code c) { return code == static_cast<uint8_t>(c); };
  switch (dtype) {
    case ir::DataType::FP32:
    case ir::DataType::FP16:
      return is(Code::Float);
    case ir::DataType::INT8:
    case ir::DataType::INT16:
    case ir::DataType::INT32:
    case ir::DataType::INT64:
      return is(Code::Int);
    case ir::DataType::UINT8:
    case ir::DataType::UINT16:
    case ir::DataType::UINT32:
    case ir::DataType::UINT64:
      return is(Code::UInt);
    case ir::DataType::BOOL:
      return is(Code::Bool) || is(Code::UInt) || is(Code::Int);
    default:
      return true;
  }
}

inline const char* element_code_name(uint8_t code) {
  using Code = nanobind::dlpack::dtype_code;
  switch (static_cast<Code>(code)) {
    case Code::Int:
      return "signed integer";
    case Code::UInt:
      return "unsigned integer";
    case Code::Float:
      return "floating-point";
    case Code::Bfloat:
      return "bfloat";
    case Code::Complex:
      return "complex";
    case Code::Bool:
      return "bool";
    default:
      return "unknown";
  }
}

// One HostTensor per parameter, from `arrays` and their pl dtype names (as many as `params`:
// the caller checks the count). The tensors point into the arrays, which `keep` holds while
// they are used. In parameters may be read-only arrays; Out/InOut ones must be writable. Throws
// TypeError (not a C-contiguous CPU array, read-only where the program writes, elements of
// another size or kind than the dtype given for it) or ValueError (an unknown dtype), naming the
// parameter.
inline std::vector<ir::HostTensor> host_tensors_of(const nanobind::list& arrays,
                                                   const std::vector<std::string>& dtype_names,
                                                   const std::vector<ir::Param>& params,
                                                   std::vector<HostBuffer>& keep) {
  std::vector<ir::HostTensor> tensors(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].var->name;
    ReadOnlyHostBuffer readable;
    if (!nanobind::try_cast<ReadOnlyHostBuffer>(arrays[i], readable, /*convert=*/false)) {
      throw nanobind::type_error(
          ("argument '" + name + "' is not a C-contiguous CPU array").c_str());
    }
    HostBuffer buffer(readable);
    if (params[i].direction != ir::ParamDirection::In &&
        !nanobind::try_cast<HostBuffer>(arrays[i], buffer, /*convert=*/false)) {
      throw nanobind::type_error(("argument '" + name + "' is pl." +
                                  std::string(ir::param_direction_name(params[i].direction)) +
                                  " but its array is read-only; pass a writable array for the "
                                  "results")
                                     .c_str());
    }
    auto dtype = ir::dtype_from_name(dtype_names[i]);
    if (!dtype) throw nanobind::value_error(("unknown dtype '" + dtype_names[i] + "'").c_str());
    if (static_cast<int64_t>(buffer.itemsize()) != ir::dtype_bytes(*dtype)) {
      throw nanobind::type_error(("argument '" + name + "' has " +
                                  std::to_string(buffer.itemsize()) + "-byte elements, not " +
                                  dtype_names[i])
                                     .c_str());
    }
    if (!element_code_fits(*dtype, buffer.dtype().code)) {
      // The object's dtype attribute and its data (DLPack) disagree: reading the data as
      // `dtype` would give wrong values without any error.
      throw nanobind::type_error(("argument '" + name + "' says its dtype is " + dtype_names[i] +
                                  ", but its data (DLPack) holds " +
                                  element_code_name(buffer.dtype().code) +
                                  " elements; pass an array whose data is what it says")
                                     .c_str());
    }
    ir::HostTensor& t = tensors[i];
    t.name = name;
    t.dtype = *dtype;
    t.shape.assign(buffer.shape_ptr(), buffer.shape_ptr() + buffer.ndim());
    t.data = buffer.data();
    keep.push_back(std::move(buffer));
  }
  return tensors;
}

}  // namespace pypto::bindings
