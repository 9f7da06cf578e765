// Multi-rank programs (pypto.ir.distributed_compiled_program): compile a program's host
// orchestrator for a world size, and call it on arrays, every rank in a process of its own.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "bindings.h"
#include "host_arrays.h"
#include "ir_handles.h"
#include "pypto/driver/distributed.h"
#include "pypto/driver/run.h"
#include "pypto/driver/session.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

const char* direction_name(ir::ParamDirection d) {
  return d == ir::ParamDirection::In ? "In" : d == ir::ParamDirection::Out ? "Out" : "InOut";
}

// Runs a host sub-worker through the Python callable `host_call`, holding the GIL: each tensor
// argument is a writable memoryview of the host tensor's bytes, released after the call. A
// Python exception is kept in `pending` (raised again once the call has unwound) and fails the
// call.
void run_host_call(const nb::object& host_call, const driver::HostCall& call,
                   std::vector<ir::HostTensor>& tensors, std::optional<nb::python_error>& pending) {
  nb::gil_scoped_acquire acquire;
  nb::list args;
  std::vector<nb::object> views;
  size_t next_tensor = 0;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const driver::DispatchArg& a = call.args[i];
    if (a.kind != driver::DispatchArg::Kind::HostTensor) {
      std::visit([&](auto v) { args.append(v); }, a.scalar);
      continue;
    }
    ir::HostTensor& tensor = tensors.at(next_tensor++);
    PyObject* memory = PyMemoryView_FromMemory(
        static_cast<char*>(tensor.data), static_cast<Py_ssize_t>(tensor.size_bytes()), PyBUF_WRITE);
    if (!memory) throw nb::python_error();
    nb::object view = nb::steal(memory);
    const ir::ParamDirection direction =
        i < call.directions.size() ? call.directions[i] : ir::ParamDirection::In;
    args.append(nb::make_tuple(view, tensor.shape, std::string(ir::dtype_name(tensor.dtype)),
                               direction_name(direction)));
    views.push_back(std::move(view));
  }
  auto release_views = [&] {
    for (nb::object& v : views) {
      if (PyObject* r = PyObject_CallMethod(v.ptr(), "release", nullptr)) {
        Py_DECREF(r);
      } else {
        PyErr_Clear();  // still exported: the bytes stay valid until the call returns
      }
    }
  };
  try {
    host_call(call.callee, args);
  } catch (nb::python_error& e) {
    release_views();
    pending.emplace(std::move(e));
    throw std::runtime_error("host sub-worker '" + call.callee + "' raised an exception");
  }
  release_views();
}

[[noreturn]] void raise_error(const char* type_name, const std::string& message) {
  nb::object type = nb::module_::import_("pypto.errors").attr(type_name);
  nb::object instance = type(message);
  PyErr_SetObject(type.ptr(), instance.ptr());
  throw nb::python_error();
}

}  // namespace

void bind_distributed(nb::module_ m) {
  nb::class_<driver::DistributedProgram>(m, "DistributedProgram")
      .def_ro("world_size", &driver::DistributedProgram::world_size)
      .def_ro("output_dir", &driver::DistributedProgram::output_dir)
      .def_prop_ro("host", [](const driver::DistributedProgram& p) { return p.plan.host; })
      .def_prop_ro("window_bytes",
                   [](const driver::DistributedProgram& p) { return p.plan.window_bytes; })
      .def_prop_ro("params",
                   [](const driver::DistributedProgram& p) {
                     std::vector<std::tuple<std::string, std::string>> out;
                     for (const ir::Param& param : p.plan.params) {
                       const char* dir = param.direction == ir::ParamDirection::In    ? "In"
                                         : param.direction == ir::ParamDirection::Out ? "Out"
                                                                                      : "InOut";
                       out.emplace_back(param.var->name, dir);
                     }
                     return out;
                   })
      .def_prop_ro(
          "param_types",
          [](const driver::DistributedProgram& p) {
            std::vector<std::tuple<std::vector<int64_t>, std::string>> out;
            for (const ir::Param& param : p.plan.params) {
              const auto* t = param.var->type()->as<ir::TensorType>();
              out.emplace_back(t->shape, std::string(ir::dtype_name(t->dtype)));
            }
            return out;
          },
          "The shape and dtype name of each parameter of the host orchestrator.")
      .def_prop_ro("dispatches",
                   [](const driver::DistributedProgram& p) {
                     std::vector<std::tuple<int, std::string>> out;
                     for (const driver::Dispatch& d : p.plan.dispatches) {
                       out.emplace_back(d.rank, d.callee);
                     }
                     return out;
                   })
      // What prepare() does ahead of the dispatches: every device program's library, built (or
      // taken from the binary cache) and loaded now rather than by the first call.
      .def(
          "load",
          [](driver::DistributedProgram& p) {
            int built_count = 0;
            std::string error;
            {
              nb::gil_scoped_release release;
              try {
                for (auto& [name, device] : p.devices) {
                  bool built = false, hit = false;
                  std::vector<std::string> notes;
                  device->library(built, hit, notes);
                  built_count += built ? 1 : 0;
                }
              } catch (const std::exception& e) {
                error = e.what();
              }
            }
            if (!error.empty()) throw std::runtime_error(error);
            return built_count;
          },
          "Builds (or takes from the binary cache) and loads the library of every device "
          "program now. Returns how many this call loaded (0 when all were loaded already).");

  m.def(
      "compile_distributed",
      [](const ProgramHandle& program, int world_size, const driver::RunConfig& config,
         bool profiling) {
        std::shared_ptr<driver::DistributedProgram> compiled;
        std::string error;
        {
          nb::gil_scoped_release release;
          driver::Session session(profiling);
          try {
            compiled = driver::compile_distributed(session, program.program, world_size, config);
          } catch (...) {
            error = driver::describe_current_exception(program.program.get());
            session.record_error(error);
          }
        }
        if (!error.empty()) raise_error("CompileError", error);
        return compiled;
      },
      nb::arg("program"), nb::arg("world_size"), nb::arg("config"), nb::arg("profiling") = false,
      "Compiles the device programs of a multi-rank program for `world_size` ranks; raises "
      "CompileError.");

  m.def(
      "call_distributed",
      [](driver::DistributedProgram& program, nb::list arrays,
         const std::vector<std::string>& dtype_names, const driver::RunConfig& config,
         double signal_timeout, bool profiling, nb::object host_call,
         const std::string& transport) {
        if (transport != "shm" && transport != "mpi") {
          throw nb::value_error(
              ("transport must be \"shm\" or \"mpi\", got \"" + transport + "\"").c_str());
        }
        const auto& params = program.plan.params;
        if (arrays.size() != params.size() || dtype_names.size() != params.size()) {
          throw nb::value_error(("host orchestrator '" + program.plan.host + "' takes " +
                                 std::to_string(params.size()) + " tensor(s), got " +
                                 std::to_string(arrays.size()))
                                    .c_str());
        }
        std::vector<HostBuffer> keep;
        std::vector<ir::HostTensor> args = host_tensors_of(arrays, dtype_names, params, keep);
        std::optional<nb::python_error> pending;  // raised by a host sub-worker
        driver::DistributedCallResult result;
        std::string error;
        nb::object profile = nb::none();
        {
          std::optional<driver::Session> session;
          {
            nb::gil_scoped_release release;
            session.emplace(profiling);
            driver::DistributedCallOptions options;
            options.signal_timeout = std::chrono::milliseconds(
                static_cast<int64_t>(std::clamp(signal_timeout, 0.001, 86400.0) * 1e3));
            if (!host_call.is_none()) {
              options.run_host_call = [&](const driver::HostCall& call,
                                          std::vector<ir::HostTensor>& tensors) {
                run_host_call(host_call, call, tensors, pending);
              };
            }
            try {
              if (transport == "mpi") options.world = runtime::mpi_world();
              result =
                  driver::call_distributed(*session, program, std::move(args), config, options);
            } catch (...) {
              error = driver::describe_current_exception(nullptr);
              session->record_error(error);
            }
          }
          if (profiling && session->profiling()) profile = report_to_python(session->report());
        }
        if (pending) throw *pending;  // the sub-worker's own exception, as it raised it
        if (!error.empty()) throw std::runtime_error(error);
        return nb::make_tuple(result.execution_time, result.rank_seconds, result.rank_wait_seconds,
                              profile);
      },
      nb::arg("program"), nb::arg("arrays"), nb::arg("dtypes"), nb::arg("config"),
      nb::arg("signal_timeout") = 60.0, nb::arg("profiling") = false,
      nb::arg("host_call").none() = nb::none(), nb::arg("transport") = "shm",
      "Runs a compiled multi-rank program on arrays (one per host orchestrator parameter); "
      "Out/InOut arrays hold the results. host_call(name, args) runs a host sub-worker: args "
      "holds, per argument, (writable memoryview, shape, dtype name, direction name) for a "
      "tensor or the scalar; the memoryviews are valid during the call only. Returns "
      "(execution_time, rank_seconds, rank_wait_seconds, profile or None); raises "
      "RuntimeError naming the rank that failed, or the sub-worker's exception. transport "
      "\"mpi\": this process is one rank of the processes mpirun started (MPI initialised "
      "with MPI_THREAD_MULTIPLE) and runs only its own rank's dispatches.");
}

}  // namespace pypto::bindings
