// `pypto._core.compiler`: the compile driver (passes + codegen into an output directory).
// python/pypto/ir/compile.py wraps it as `pypto.ir.compile`.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "ir_handles.h"
#include "pypto/codegen/compile_driver.h"
#include "pypto/frontend/diagnostics.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

// The message of a failed compile, ready for the user: program errors rendered against the
// program's source (file, line, caret), output errors naming the path.
std::string describe_failure(const ir::Program& program) {
  try {
    throw;
  } catch (const frontend::ParseError& e) {
    return e.rendered();
  } catch (const ir::CompileError& e) {
    if (program.source) return frontend::render_diagnostic(*program.source, e);
    return e.what();
  } catch (const codegen::CompileOutputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return "compiling program '" + program.name + "' failed: " + e.what();
  }
}

[[noreturn]] void raise_compile_error(const std::string& message) {
  nb::object type = nb::module_::import_("pypto.errors").attr("CompileError");
  nb::object instance = type(message);
  PyErr_SetObject(type.ptr(), instance.ptr());
  throw nb::python_error();
}

}  // namespace

void bind_compiler(nb::module_ m) {
  nb::enum_<passes::OptimizationStrategy>(m, "OptimizationStrategy")
      .value("Default", passes::OptimizationStrategy::Default);

  nb::class_<codegen::CompileResult>(m, "CompileResult")
      .def_ro("output_dir", &codegen::CompileResult::output_dir)
      .def_ro("translation_unit", &codegen::CompileResult::translation_unit)
      .def_ro("kernel_names", &codegen::CompileResult::kernel_names)
      .def_prop_ro("lowered",
                   [](const codegen::CompileResult& r) { return ProgramHandle{r.lowered}; })
      .def_prop_ro("manifest_json",
                   [](const codegen::CompileResult& r) { return r.manifest.dump(); });

  m.def(
      "compile_program",
      [](const ProgramHandle& program, const std::string& output_dir,
         passes::OptimizationStrategy strategy, bool dump_passes, bool profiling) {
        if (!program.program) raise_compile_error("ir.compile: the program is empty");
        codegen::CompileOptions options;
        options.output_dir = output_dir;
        options.strategy = strategy;
        options.dump_passes = dump_passes;
        options.profiling = profiling;
        codegen::CompileResult result;
        std::string error;
        {
          // Python profilers are entered on this thread as C++ profilers, so releasing the
          // GIL changes nothing for profiling.
          nb::gil_scoped_release release;
          try {
            result = codegen::compile_program(program.program, options);
          } catch (...) {
            error = describe_failure(*program.program);
          }
        }
        if (!error.empty()) raise_compile_error(error);
        return result;
      },
      nb::arg("program"), nb::arg("output_dir") = "",
      nb::arg("strategy") = passes::OptimizationStrategy::Default, nb::arg("dump_passes") = true,
      nb::arg("profiling") = false,
      "Runs the pass pipeline and codegen; writes the sources into output_dir (empty: "
      "${PYPTO_PROG_BUILD_DIR:-build_output}/<Program>_<timestamp>).");
}

}  // namespace pypto::bindings
