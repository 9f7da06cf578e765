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

// One HostTensor per parameter, from `arrays` and their pl dtype names (as many as `params`:
// the caller checks the count). The tensors point into the arrays, which `keep` holds while
// they are used. Throws TypeError (not a C-contiguous CPU array, elements of another size) or
// ValueError (an unknown dtype), naming the parameter.
inline std::vector<ir::HostTensor> host_tensors_of(const nanobind::list& arrays,
                                                   const std::vector<std::string>& dtype_names,
                                                   const std::vector<ir::Param>& params,
                                                   std::vector<HostBuffer>& keep) {
  std::vector<ir::HostTensor> tensors(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].var->name;
    HostBuffer buffer;
    if (!nanobind::try_cast<HostBuffer>(arrays[i], buffer, /*convert=*/false)) {
      throw nanobind::type_error(
          ("argument '" + name + "' is not a C-contiguous CPU array").c_str());
    }
    auto dtype = ir::dtype_from_name(dtype_names[i]);
    if (!dtype) throw nanobind::value_error(("unknown dtype '" + dtype_names[i] + "'").c_str());
    if (static_cast<int64_t>(buffer.itemsize()) != ir::dtype_bytes(*dtype)) {
      throw nanobind::type_error(("argument '" + name + "' has " +
                                  std::to_string(buffer.itemsize()) + "-byte elements, not " +
                                  dtype_names[i])
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
