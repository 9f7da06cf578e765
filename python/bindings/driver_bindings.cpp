// `pypto._core.driver`: compile and run, each a session of the C++ driver. CompileOptions and
// RunConfig are bound as the driver's own structs, so every field Python sets reaches C++;
// python/pypto/ir/compile.py and python/pypto/runtime.py fill them and shape the results.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <signal.h>

#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

#include "bindings.h"
#include "host_arrays.h"
#include "ir_handles.h"
#include "pypto/driver/call.h"
#include "pypto/driver/compile.h"
#include "pypto/driver/generated_run.h"
#include "pypto/driver/output_dir.h"
#include "pypto/driver/run.h"
#include "pypto/driver/run_config.h"
#include "pypto/driver/session.h"
#include "pypto/ir/node_memory.h"
#include "pypto/support/environment.h"
#include "pypto/support/interrupt.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

using ByteArray = nb::ndarray<nb::numpy, uint8_t, nb::ndim<1>>;

// (name, dtype name, shape, is_output, starts_zero) per tensor; the buffers come from the
// prepare callback.
using TensorArg = std::tuple<std::string, std::string, std::vector<int64_t>, bool, bool>;

// Ctrl-C while Python waits for C++ work. Python's SIGINT handler only notes the signal for
// the interpreter loop, which is not running while a call holds no GIL; so while a run or a
// compile is in progress, SIGINT also requests an interrupt of the C++ work (support/
// interrupt.h), which stops within a fraction of a second. Python's own handler still runs,
// so the call then raises KeyboardInterrupt (or whatever a custom handler raises). A SIGINT
// that is ignored or left at its default is left alone. Nests across threads: the first
// forwarder installs the handler, the last restores the previous one.
class SigintForwarder {
 public:
  SigintForwarder() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (users_++ > 0) return;
    installed_ = false;
    if (::sigaction(SIGINT, nullptr, &previous_) != 0) return;
    const bool has_handler =
        (previous_.sa_flags & SA_SIGINFO) != 0
            ? previous_.sa_sigaction != nullptr
            : previous_.sa_handler != SIG_DFL && previous_.sa_handler != SIG_IGN;
    if (!has_handler) return;
    struct sigaction forward = previous_;
    forward.sa_flags |= SA_SIGINFO;
    forward.sa_sigaction = &on_sigint;
    support::clear_interrupt();
    installed_ = ::sigaction(SIGINT, &forward, nullptr) == 0;
  }
  ~SigintForwarder() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--users_ > 0) return;
    if (installed_) ::sigaction(SIGINT, &previous_, nullptr);
    installed_ = false;
    support::clear_interrupt();
  }
  SigintForwarder(const SigintForwarder&) = delete;
  SigintForwarder& operator=(const SigintForwarder&) = delete;

  // With the GIL held: raises what Python's handler makes of a pending SIGINT.
  static void raise_pending_signal() {
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }

 private:
  static void on_sigint(int sig, siginfo_t* info, void* context) {
    support::request_interrupt();
    if ((previous_.sa_flags & SA_SIGINFO) != 0) {
      previous_.sa_sigaction(sig, info, context);
    } else {
      previous_.sa_handler(sig);
    }
  }

  static inline std::mutex mutex_;
  static inline int users_ = 0;
  static inline bool installed_ = false;
  static inline struct sigaction previous_ {};
};

[[noreturn]] void raise_compile_error(const std::string& message) {
  nb::object type = nb::module_::import_("pypto.errors").attr("CompileError");
  nb::object instance = type(message);
  PyErr_SetObject(type.ptr(), instance.ptr());
  throw nb::python_error();
}

std::vector<driver::RunTensor> to_run_tensors(const std::vector<TensorArg>& args) {
  std::vector<driver::RunTensor> tensors;
  for (const auto& [name, dtype_name, shape, is_output, starts_zero] : args) {
    auto dtype = ir::dtype_from_name(dtype_name);
    if (!dtype) throw nb::value_error(("unknown dtype '" + dtype_name + "'").c_str());
    driver::RunTensor t;
    t.tensor.name = name;
    t.tensor.dtype = *dtype;
    t.tensor.shape = shape;
    t.is_output = is_output;
    t.starts_zero = starts_zero;
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// Calls Python's prepare() (with the GIL) for one contiguous buffer per tensor and points the
// tensors at them. The buffers stay alive in `keep` (the caller's arrays) for the whole run.
driver::PrepareFn make_prepare(nb::object callback, std::vector<HostBuffer>& keep) {
  return [callback, &keep](std::vector<driver::RunTensor>& tensors) {
    nb::gil_scoped_acquire gil;
    try {
      nb::object buffers = callback();
      keep.clear();
      for (nb::handle b : buffers) keep.push_back(nb::cast<HostBuffer>(b));
    } catch (const nb::python_error& e) {
      // The exception's own message (e.g. the wrong init_value shape), without a traceback.
      throw std::runtime_error(std::string("invalid tensor specs: ") + nb::str(e.value()).c_str());
    } catch (const nb::cast_error&) {
      throw std::runtime_error("invalid tensor specs: a tensor's data is not a contiguous array");
    }
    if (keep.size() != tensors.size()) throw std::runtime_error("invalid tensor specs");
    for (size_t i = 0; i < tensors.size(); ++i) {
      ir::HostTensor& t = tensors[i].tensor;
      if (static_cast<int64_t>(keep[i].nbytes()) != t.size_bytes()) {
        throw std::runtime_error("tensor '" + t.name + "': buffer of " +
                                 std::to_string(keep[i].nbytes()) + " bytes for " +
                                 std::to_string(t.size_bytes()) + " expected");
      }
      t.data = keep[i].data();
    }
  };
}

// Hands the golden callback one flat byte view per tensor (valid during the call only); the
// Python side reshapes them into typed arrays. The GIL is taken for the call only.
driver::GoldenFn make_golden(nb::object callback) {
  if (callback.is_none()) return nullptr;
  return [callback](std::vector<ir::HostTensor>& tensors) {
    nb::gil_scoped_acquire gil;
    nb::list views;
    for (auto& t : tensors) {
      size_t n = static_cast<size_t>(t.size_bytes());
      // rv_policy::reference: a view, not a copy, so the golden's writes land in `tensors`.
      views.append(nb::cast(ByteArray(static_cast<uint8_t*>(t.data), {n}, nb::handle()),
                            nb::rv_policy::reference));
    }
    try {
      callback(views);
    } catch (const nb::python_error& e) {
      // Rendered here, while this thread holds the GIL; the driver reports it as the golden's
      // failure.
      throw std::runtime_error(e.what());
    }
  };
}

void bind_options(nb::module_& m) {
  nb::enum_<passes::OptimizationStrategy>(m, "OptimizationStrategy")
      .value("Default", passes::OptimizationStrategy::Default);

  nb::class_<driver::CompileOptions>(m, "CompileOptions")
      .def(nb::init<>())
      .def_rw("output_dir", &driver::CompileOptions::output_dir)
      .def_rw("sub_dir", &driver::CompileOptions::sub_dir)
      .def_rw("strategy", &driver::CompileOptions::strategy)
      .def_rw("dump_passes", &driver::CompileOptions::dump_passes)
      .def_rw("profiling", &driver::CompileOptions::profiling)
      .def_rw("platform", &driver::CompileOptions::platform);

  // One property per row of the option table (pypto/driver/run_config.def), with its doc.
  nb::class_<driver::RunConfig> run_config(m, "RunConfig");
  run_config.def(nb::init<>());
  for (const driver::RunOption& option : driver::run_options()) {
    std::visit([&](auto member) { run_config.def_rw(option.name, member, option.doc); },
               option.member);
  }

  m.def(
      "read_environment",
      [](const std::string& name) -> std::optional<std::string> {
        const char* value = support::read_environment(name);
        if (value == nullptr) return std::nullopt;
        return std::string(value);
      },
      nb::arg("name"),
      "The value of the environment variable `name`, or None when it is not set: the one reader "
      "of the environment (pypto/support/environment.def lists every variable; another name "
      "raises).");
  m.def(
      "environment_variables",
      [] {
        nb::list rows;
        for (const support::EnvironmentVariableInfo& info : support::environment_variables()) {
          nb::dict row;
          row["name"] = info.name;
          row["doc"] = info.doc;
          rows.append(row);
        }
        return rows;
      },
      nb::sig("def environment_variables() -> list[dict[str, str]]"),
      "Every environment variable pypto reads (pypto/support/environment.def): name, doc.");

  m.def("config_error", &driver::config_error, nb::arg("config"),
        "The first field of `config` out of its option's range (or naming no platform), "
        "phrased for the user; '' when every field fits. run() and the commands check the "
        "same.");

  m.def(
      "run_options",
      [] {
        const driver::RunConfig defaults;
        nb::list rows;
        for (const driver::RunOption& option : driver::run_options()) {
          nb::dict row;
          row["name"] = option.name;
          row["type"] = option.type_name();
          nb::object value = std::visit(
              [&](auto member) -> nb::object {
                using T = std::decay_t<decltype(defaults.*member)>;
                if constexpr (std::is_same_v<T, passes::OptimizationStrategy>) {
                  return nb::str(driver::option_value_text(option, defaults).c_str());
                } else {
                  return nb::cast(defaults.*member);
                }
              },
              option.member);
          const bool unset = option.on(driver::kUnsetIsDefault);
          row["default"] = unset ? nb::none() : value;
          row["unset_value"] = value;
          const bool number = std::string_view(option.type_name()) == "float" ||
                              std::string_view(option.type_name()) == "int";
          row["min"] = number ? nb::cast(option.min) : nb::none();
          row["max"] =
              number && option.max != driver::kUnbounded ? nb::cast(option.max) : nb::none();
          row["range"] = driver::option_range_text(option);
          row["unit"] = option.unit;
          row["environment"] = option.environment;
          nb::list commands;
          if (option.on(driver::kOnRun)) commands.append("run");
          if (option.on(driver::kOnCompile)) commands.append("compile");
          if (option.on(driver::kOnSweep)) commands.append("sweep");
          row["commands"] = commands;
          row["flag"] = option.flag();
          row["aliases"] = option.aliases;
          row["doc"] = option.doc;
          rows.append(row);
        }
        return rows;
      },
      nb::sig("def run_options() -> list[dict[str, typing.Any]]"),
      "The rows of the driver's option table (pypto/driver/run_config.def), in order: name, "
      "type (str, float, int, bool, strategy), default (None when unset means the environment "
      "or built-in default), unset_value (the driver's value for unset), min, max, range, unit, "
      "environment, commands (the CLI commands with a flag for it), flag, aliases (other "
      "spellings of the flag, comma-separated), doc.");
}

// A driver session held by Python for the length of a `with` block, so that work done in
// Python (preparing inputs) is part of the session and its profile. Closed on exit, on the
// thread that opened it.
struct PySession {
  std::optional<driver::Session> session;

  driver::Session& get() {
    if (!session) throw nb::value_error("the driver session is closed");
    return *session;
  }
};

void bind_session(nb::module_& m) {
  nb::class_<PySession>(m, "Session")
      .def(
          "__init__",
          [](PySession* self, bool profiling_requested) {
            new (self) PySession();
            self->session.emplace(profiling_requested);
          },
          nb::arg("profiling_requested"))
      .def(
          "__enter__", [](nb::handle self) { return self; },
          nb::sig("def __enter__(self) -> Session"))
      .def(
          "__exit__",
          [](PySession& s, nb::handle, nb::handle, nb::handle) {
            s.session.reset();
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none())
      .def_prop_ro("profiling", [](PySession& s) { return s.get().profiling(); })
      .def(
          "failed_report",
          [](PySession& s, const std::string& error) -> nb::object {
            driver::Session& session = s.get();
            if (!session.profiling()) return nb::none();
            session.record_error(error);
            return report_to_python(session.report());
          },
          nb::arg("error"),
          nb::sig("def failed_report(self, error: str) -> dict[str, typing.Any] | None"),
          "The session's profile after a failure outside run() (a parse error): the failed "
          "stage carries `error`. None without a profiler.")
      // A stage timed in Python (the specialisation of a @pl.jit call); no-ops unprofiled.
      .def("begin_stage",
           [](PySession& s, const std::string& name) {
             if (auto* p = s.get().profiler()) p->begin_stage(name);
           })
      .def("end_stage",
           [](PySession& s) {
             if (auto* p = s.get().profiler()) p->end_stage();
           })
      .def(
          "report", [](PySession& s) { return report_to_python(s.get().report()); },
          nb::sig("def report(self) -> dict[str, typing.Any]"))
      .def(
          "take_run_profile",
          [](PySession& s) {
            driver::RunResult r;
            driver::take_profile(s.get(), r);
            return nb::make_tuple(r.profiled ? report_to_python(r.profile) : nb::none(),
                                  r.run_summary);
          },
          nb::sig("def take_run_profile(self) -> tuple[dict[str, typing.Any] | None, str]"),
          "The run's profile (None without a profiler) and, with PYPTO_COMPILE_PROFILING, its "
          "summary to print: driver.run leaves them for the caller to take last, so that the "
          "profile covers the caller's own work on the result.")
      .def("write_report", [](PySession& s) { s.get().write_report(); });
}

// The fields of the driver's RunResult (profile: a dict or None).
nb::dict run_result_dict(const driver::RunResult& r) {
  nb::dict result;
  result["passed"] = r.passed;
  result["error"] = r.error;
  result["execution_time"] = r.execution_time;
  result["round_times"] = r.round_times;
  result["profile"] = r.profiled ? report_to_python(r.profile) : nb::none();
  result["work_dir"] = r.work_dir;
  result["run_summary"] = r.run_summary;
  result["workers"] = r.workers;
  result["isolated"] = r.isolated;
  result["cache_hit"] = r.cache_hit;
  result["compile_cache_hit"] = r.compile_cache_hit;
  result["notes"] = r.notes;
  return result;
}

// The @pl.jit path (driver/call.h): a program compiled once, called on the caller's arrays.
void bind_calls(nb::module_& m) {
  nb::class_<driver::CompiledProgram>(m, "CompiledProgram")
      .def_prop_ro("program",
                   [](const driver::CompiledProgram& c) { return ProgramHandle{c.program()}; })
      .def_prop_ro("output_dir",
                   [](const driver::CompiledProgram& c) { return c.compiled().output_dir; })
      // What a call takes, in order: (name, shape, dtype name, direction) per parameter, all
      // tensors (compile_for_calls and callable_program refuse other entries).
      .def_prop_ro("entry_params",
                   [](const driver::CompiledProgram& c) {
                     nb::list params;
                     for (const ir::Param& p : c.entry_params()) {
                       const auto* type = p.var->type()->as<ir::TensorType>();
                       params.append(nb::make_tuple(
                           p.var->name, type ? nb::cast(type->shape) : nb::none(),
                           type ? std::string(ir::dtype_name(type->dtype)) : std::string(),
                           std::string(ir::param_direction_name(p.direction))));
                     }
                     return params;
                   })
      .def_prop_ro("result", [](const driver::CompiledProgram& c) { return c.compiled(); })
      .def_prop_ro("returns_values",
                   [](const driver::CompiledProgram& c) {
                     return !c.program()->entry()->return_types.empty();
                   })
      // What a worker's register() does: the library a first call would build and load, now.
      .def(
          "load",
          [](driver::CompiledProgram& c) {
            bool built = false;
            bool cache_hit = false;
            std::vector<std::string> notes;
            std::string error;
            {
              SigintForwarder forward_sigint;
              nb::gil_scoped_release release;
              try {
                c.library(built, cache_hit, notes);
              } catch (...) {
                error = driver::describe_current_exception(c.program().get());
              }
            }
            SigintForwarder::raise_pending_signal();
            if (!error.empty()) throw std::runtime_error(error);
            return std::make_tuple(built, cache_hit);
          },
          "Builds the program's library (or takes it from the binary cache) and loads it now, "
          "as its first call would. Returns (built, cache_hit); built is False when it was "
          "loaded already.");

  m.def(
      "default_output_dir",
      [](const std::string& program_name) {
        return driver::default_output_dir(program_name).string();
      },
      nb::arg("program_name"),
      "The output directory ir.compile picks when given none: "
      "${PYPTO_PROG_BUILD_DIR:-build_output}/<program>_<timestamp>.");

  m.def(
      "callable_program",
      [](const driver::CompileResult& result) {
        std::string error = driver::callable_entry_error(*result.lowered);
        if (!error.empty()) throw nb::type_error(error.c_str());
        return std::make_shared<driver::CompiledProgram>(result.lowered, result);
      },
      nb::arg("result"),
      "The compiled program of an ir.compile result, to be called (nothing is compiled "
      "again); raises TypeError when its entry takes other than tensors.");

  m.def(
      "function_program",
      [](const ProgramHandle& program, const std::string& name, const std::string& rename) {
        if (!program.program->find_function(name)) {
          throw nb::key_error(
              ("program '" + program.program->name + "' has no function '" + name + "'").c_str());
        }
        ir::ProgramPtr part = driver::function_program(*program.program, name);
        if (!rename.empty()) {
          auto renamed = ir::make_node<ir::Program>(*part);
          renamed->name = rename;
          part = renamed;
        }
        return ProgramHandle{part};
      },
      nb::arg("program"), nb::arg("name"), nb::arg("program_name") = "",
      "The program of function `name` and what it calls, transitively (one orchestration of "
      "a program that has several), named `program_name` (default: <program>_<name>).");

  m.def(
      "load_compiled",
      [](const std::string& output_dir) {
        std::shared_ptr<driver::CompiledProgram> compiled;
        std::string error;
        {
          nb::gil_scoped_release release;
          try {
            compiled = driver::load_compiled(output_dir);
          } catch (const std::exception& e) {
            error = e.what();
          }
        }
        if (!error.empty()) throw nb::value_error(error.c_str());
        return compiled;
      },
      nb::arg("output_dir"),
      "The compiled program an ir.compile wrote into output_dir (kernel_config.json and "
      "program.cpp), reloaded without parsing or compiling; raises ValueError saying what is "
      "missing.");

  m.def(
      "compile_for_calls",
      [](PySession& session, const ProgramHandle& program, const driver::RunConfig& config) {
        std::shared_ptr<driver::CompiledProgram> compiled;
        std::string error;
        driver::Session& s = session.get();
        {
          SigintForwarder forward_sigint;
          nb::gil_scoped_release release;
          try {
            compiled = driver::compile_for_calls(s, program.program, config);
          } catch (...) {
            error = driver::describe_current_exception(program.program.get());
            s.record_error(error);
          }
        }
        SigintForwarder::raise_pending_signal();
        if (!error.empty()) raise_compile_error(error);
        return compiled;
      },
      nb::arg("session"), nb::arg("program"), nb::arg("config"),
      "Compiles a program to be called many times (stage `compile`); raises CompileError.");

  // Arrays: anything nanobind takes as a CPU ndarray without converting it (numpy arrays,
  // torch tensors through DLPack), so the program reads and writes the caller's memory.
  m.def(
      "call",
      [](nb::object session, driver::CompiledProgram& compiled, nb::list arrays,
         const std::vector<std::string>& dtype_names, const driver::RunConfig& config) {
        const auto& params = compiled.entry_params();
        if (arrays.size() != params.size() || dtype_names.size() != params.size()) {
          throw nb::value_error("call: one array and one dtype per tensor parameter");
        }
        std::vector<HostBuffer> keep;
        std::vector<ir::HostTensor> args = host_tensors_of(arrays, dtype_names, params, keep);
        std::optional<driver::Session> own;
        driver::Session* s = nullptr;
        if (session.is_none()) {
          own.emplace(false);
          s = &*own;
        } else {
          s = &nb::cast<PySession&>(session).get();
        }
        driver::CallResult result;
        std::string error;
        {
          SigintForwarder forward_sigint;
          nb::gil_scoped_release release;
          try {
            result = driver::call(*s, compiled, std::move(args), config);
          } catch (...) {
            error = driver::describe_current_exception(compiled.program().get());
            s->record_error(error);
          }
        }
        SigintForwarder::raise_pending_signal();
        if (!error.empty()) throw std::runtime_error(error);
        return std::make_tuple(result.execution_time, result.built, result.library_cache_hit,
                               result.notes);
      },
      nb::arg("session").none(), nb::arg("compiled"), nb::arg("arrays"), nb::arg("dtypes"),
      nb::arg("config"),
      "Runs a compiled program on the given arrays (stage `device_execution`); Out/InOut "
      "arrays hold the results. Returns (execution_time, built, library_cache_hit, notes); "
      "raises RuntimeError with the device's message.");
}

}  // namespace

void bind_driver(nb::module_ m) {
  bind_options(m);
  bind_session(m);

  nb::class_<driver::CompileResult>(m, "CompileResult")
      .def_ro("output_dir", &driver::CompileResult::output_dir)
      .def_ro("translation_unit", &driver::CompileResult::translation_unit)
      .def_ro("kernel_names", &driver::CompileResult::kernel_names)
      .def_prop_ro("lowered",
                   [](const driver::CompileResult& r) { return ProgramHandle{r.lowered}; })
      .def_prop_ro("manifest_json", [](const driver::CompileResult& r) {
        return r.manifest.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      });

  m.def(
      "compile_program",
      [](const ProgramHandle& program, const driver::CompileOptions& options) {
        if (!program.program) raise_compile_error("ir.compile: the program is empty");
        driver::CompileResult result;
        std::string error;
        {
          SigintForwarder forward_sigint;
          // Python profilers are entered on this thread as C++ profilers, so releasing the
          // GIL changes nothing for profiling.
          nb::gil_scoped_release release;
          try {
            result = driver::compile_program(program.program, options);
          } catch (...) {
            error = driver::describe_current_exception(program.program.get());
          }
        }
        SigintForwarder::raise_pending_signal();
        if (!error.empty()) raise_compile_error(error);
        return result;
      },
      nb::arg("program"), nb::arg("options"),
      "Runs the pass pipeline and codegen in a session of its own; raises CompileError.");

  bind_calls(m);

  m.def(
      "run",
      [](PySession& session, const ProgramHandle& program,
         const std::vector<TensorArg>& tensor_args, nb::object prepare, nb::object golden,
         const driver::RunConfig& config) {
        std::vector<driver::RunTensor> tensors = to_run_tensors(tensor_args);
        std::vector<HostBuffer> buffers;
        driver::PrepareFn prepare_fn = make_prepare(prepare, buffers);
        driver::GoldenFn golden_fn = make_golden(golden);
        driver::Session& s = session.get();
        driver::RunResult r;
        {
          SigintForwarder forward_sigint;
          nb::gil_scoped_release release;
          r = driver::run(s, program.program, tensors, golden_fn, config, prepare_fn);
        }
        SigintForwarder::raise_pending_signal();
        return run_result_dict(r);
      },
      nb::arg("session"), nb::arg("program"), nb::arg("tensors"), nb::arg("prepare"),
      nb::arg("golden").none(), nb::arg("config"),
      "Runs the whole pipeline in `session`; returns a dict with the fields of the "
      "driver's RunResult. Its profile is None and run_summary '': the caller takes them last "
      "(Session.take_run_profile).");

  m.def(
      "run_generated",
      [](PySession& session, const ProgramHandle& program, const driver::RunConfig& config,
         uint64_t seed) {
        driver::Session& s = session.get();
        driver::GeneratedRunResult r;
        {
          SigintForwarder forward_sigint;
          nb::gil_scoped_release release;
          r = driver::run_generated(s, program.program, config, seed);
          driver::take_profile(s, r.run);
        }
        SigintForwarder::raise_pending_signal();
        nb::dict result = run_result_dict(r.run);
        result["output_checksum"] = r.output_checksum;
        return result;
      },
      nb::arg("session"), nb::arg("program"), nb::arg("config"), nb::arg("seed"),
      "Runs the program on random inputs made from `seed` against the reference interpreter "
      "(what `pypto run` does); the dict of run() plus output_checksum (XXH3-64 hex of the "
      "outputs, '' when the device did not finish).");

  m.def(
      "round_statistics",
      [](std::vector<double> seconds) {
        driver::RoundStatistics s = driver::round_statistics(std::move(seconds));
        nb::dict d;
        d["rounds"] = s.rounds;
        d["min"] = s.min;
        d["median"] = s.median;
        d["mean"] = s.mean;
        d["p95"] = s.p95;
        d["stdev"] = s.stdev;
        return d;
      },
      nb::arg("seconds"), "min, median, mean, p95 and stdev of a benchmark's round times.");
}

}  // namespace pypto::bindings
