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
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
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
      .def_prop_ro("dispatches", [](const driver::DistributedProgram& p) {
        std::vector<std::tuple<int, std::string>> out;
        for (const driver::Dispatch& d : p.plan.dispatches) out.emplace_back(d.rank, d.callee);
        return out;
      });

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
         double signal_timeout, bool profiling) {
        const auto& params = program.plan.params;
        if (arrays.size() != params.size() || dtype_names.size() != params.size()) {
          throw nb::value_error(("host orchestrator '" + program.plan.host + "' takes " +
                                 std::to_string(params.size()) + " tensor(s), got " +
                                 std::to_string(arrays.size()))
                                    .c_str());
        }
        std::vector<HostBuffer> keep;
        std::vector<ir::HostTensor> args = host_tensors_of(arrays, dtype_names, params, keep);
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
            try {
              result = driver::call_distributed(*session, program, std::move(args), config,
                                                options);
            } catch (...) {
              error = driver::describe_current_exception(nullptr);
              session->record_error(error);
            }
          }
          if (profiling && session->profiling()) profile = report_to_python(session->report());
        }
        if (!error.empty()) throw std::runtime_error(error);
        return nb::make_tuple(result.execution_time, result.rank_seconds,
                              result.rank_wait_seconds, profile);
      },
      nb::arg("program"), nb::arg("arrays"), nb::arg("dtypes"), nb::arg("config"),
      nb::arg("signal_timeout") = 60.0, nb::arg("profiling") = false,
      "Runs a compiled multi-rank program on arrays (one per host orchestrator parameter); "
      "Out/InOut arrays hold the results. Returns (execution_time, rank_seconds, "
      "rank_wait_seconds, profile or None); raises RuntimeError naming the rank that failed.");
}

}  // namespace pypto::bindings
