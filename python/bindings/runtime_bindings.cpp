// `pypto._core.runtime`: the run driver (compile, golden, build, execute, validate) for
// pypto.runtime.run. Tensors cross as caller-owned numpy buffers; Python does the conversions
// of TensorSpec values and calls the user's golden function.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.h"
#include "ir_handles.h"
#include "pypto/runtime/errors.h"
#include "pypto/runtime/run.h"
#include "pypto/runtime/shared_memory.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

using ByteArray = nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>;
using HostBuffer = nb::ndarray<nb::c_contig, nb::device::cpu>;

// (name, dtype name, shape, contiguous buffer, is_output) per tensor.
using TensorArg = std::tuple<std::string, std::string, std::vector<int64_t>, HostBuffer, bool>;

std::vector<runtime::RunTensor> to_run_tensors(std::vector<TensorArg>& args) {
  std::vector<runtime::RunTensor> tensors;
  for (auto& [name, dtype_name, shape, buffer, is_output] : args) {
    auto dtype = ir::dtype_from_name(dtype_name);
    if (!dtype) throw nb::value_error(("unknown dtype '" + dtype_name + "'").c_str());
    runtime::RunTensor t;
    t.tensor.name = name;
    t.tensor.dtype = *dtype;
    t.tensor.shape = shape;
    t.tensor.data = buffer.data();
    t.is_output = is_output;
    if (static_cast<int64_t>(buffer.nbytes()) != t.tensor.size_bytes()) {
      throw nb::value_error(("tensor '" + name + "': buffer of " + std::to_string(buffer.nbytes()) +
                             " bytes for " + std::to_string(t.tensor.size_bytes()) + " expected")
                                .c_str());
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// Hands the golden callback one flat byte view per tensor (valid during the call only); the
// Python side reshapes them into typed arrays.
runtime::GoldenFn make_golden(nb::object callback) {
  if (callback.is_none()) return nullptr;
  return [callback](std::vector<runtime::HostTensor>& tensors) {
    nb::list views;
    for (auto& t : tensors) {
      size_t n = static_cast<size_t>(t.size_bytes());
      // rv_policy::reference: a view, not a copy, so the golden's writes land in `tensors`.
      views.append(nb::cast(ByteArray(static_cast<uint8_t*>(t.data), {n}, nb::handle()),
                            nb::rv_policy::reference));
    }
    callback(views);
  };
}

}  // namespace

void bind_runtime(nb::module_ m) {
  m.def(
      "run",
      [](const ProgramHandle& program, std::vector<TensorArg> tensor_args, nb::object golden,
         double rtol, double atol, bool compile_profiling, bool dump_passes,
         const std::string& work_dir, int workers, bool isolate, const std::string& platform) {
        std::vector<runtime::RunTensor> tensors = to_run_tensors(tensor_args);
        runtime::RunConfig config;
        config.platform = platform;
        config.rtol = rtol;
        config.atol = atol;
        config.compile_profiling = compile_profiling;
        config.dump_passes = dump_passes;
        config.work_dir = work_dir;
        config.workers = workers;
        config.isolate = isolate;
        runtime::RunResult r = runtime::run(program.program, tensors, make_golden(golden), config);
        std::string profile = r.profile.is_null() ? std::string() : r.profile.dump();
        return std::make_tuple(r.passed, r.error, r.execution_time, profile, r.work_dir);
      },
      nb::arg("program"), nb::arg("tensors"), nb::arg("golden").none(), nb::arg("rtol"),
      nb::arg("atol"), nb::arg("compile_profiling"), nb::arg("dump_passes"), nb::arg("work_dir"),
      nb::arg("workers"), nb::arg("isolate"), nb::arg("platform"),
      "Runs the whole pipeline; returns (passed, error, execution_time, profile_json, work_dir).");

  m.def(
      "shared_bytes",
      [](size_t nbytes) {
        std::unique_ptr<runtime::SharedBuffer> buffer;
        try {
          buffer = runtime::SharedBuffer::allocate(nbytes);
        } catch (const runtime::ExecutionError& e) {
          PyErr_SetString(PyExc_MemoryError, e.what());
          throw nb::python_error();
        }
        uint8_t* data = buffer->data();
        nb::capsule owner(buffer.release(),
                          [](void* p) noexcept { delete static_cast<runtime::SharedBuffer*>(p); });
        return ByteArray(data, {nbytes}, owner);
      },
      nb::arg("nbytes"),
      "A zeroed uint8 array in memory shared with isolated runs: tensors placed in it reach the "
      "device without being copied.");
}

}  // namespace pypto::bindings
