// Python face of the compile profiler (pypto._core.profiling), wrapped by
// pypto.compile_profiling. The Python CompileProfiler *is* the C++ one, so a stage opened in C++
// lands in the profiler a Python `with` entered, and CompileProfiler.current() hands back the
// very object that was entered.
#include <Python.h>

#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include <nanobind/nanobind.h>
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nlohmann/json.hpp>

#include "bindings.h"
#include "pypto/profiling/formats.h"
#include "pypto/profiling/profile_file.h"
#include "pypto/profiling/profiler.h"
#include "pypto/profiling/report.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

using profiling::CompileProfiler;
using profiling::ProfilerError;
using profiling::ScopedStage;
using profiling::StageRecord;

// Returned by CompileProfiler.stage() and stage(); the stage runs from __enter__ to __exit__.
struct StageScope {
  StageScope(nb::object keep_alive, CompileProfiler* profiler, std::string name)
      : keep_alive(std::move(keep_alive)), profiler(profiler), name(std::move(name)) {}

  nb::object keep_alive;  // the profiler's Python object, so the profiler outlives the stage
  CompileProfiler* profiler;
  std::string name;
  std::optional<ScopedStage> scope;
};

nb::handle g_profiling_module;
bool g_process_profiler_pinned = false;

nb::object make_stage_scope(nb::object keep_alive, CompileProfiler* profiler, std::string name) {
  // Constructed in place inside the Python object: one allocation per `with` block.
  nb::object scope = nb::inst_alloc(nb::type<StageScope>());
  new (nb::inst_ptr<StageScope>(scope))
      StageScope(std::move(keep_alive), profiler, std::move(name));
  nb::inst_mark_ready(scope);
  return scope;
}

// Python objects for C++ profilers: the existing instance when there is one (nanobind looks it
// up by address), so `CompileProfiler.current() is prof` holds inside `with prof:`.
nb::object to_python(CompileProfiler* profiler) {
  if (profiler == nullptr) return nb::none();
  nb::object object = nb::cast(profiler, nb::rv_policy::reference);
  if (profiler->is_process_wide() && !g_process_profiler_pinned) {
    // Held by the module so every call returns the same object; released with the module.
    g_profiling_module.attr("_process_profiler") = object;
    g_process_profiler_pinned = true;
  }
  return object;
}

nb::object json_to_python(const nlohmann::ordered_json& value) {
  using Type = nlohmann::ordered_json::value_t;
  switch (value.type()) {
    case Type::boolean:
      return nb::bool_(value.get<bool>());
    case Type::number_integer:
      return nb::int_(value.get<std::int64_t>());
    case Type::number_unsigned:
      return nb::int_(value.get<std::uint64_t>());
    case Type::number_float:
      return nb::float_(value.get<double>());
    case Type::string: {
      const auto& text = value.get_ref<const std::string&>();
      return nb::steal(
          PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
    }
    case Type::array: {
      nb::list list;
      for (const auto& item : value) list.append(json_to_python(item));
      return list;
    }
    case Type::object: {
      nb::dict dict;
      for (const auto& [key, item] : value.items()) dict[key.c_str()] = json_to_python(item);
      return dict;
    }
    default:
      return nb::none();
  }
}

StageRecord record_from_python(nb::handle object) {
  StageRecord record;
  try {
    record.name = nb::cast<std::string>(object.attr("name"));
    record.start = nb::cast<double>(object.attr("start"));
    record.end = nb::cast<double>(object.attr("end"));
    for (nb::handle child : object.attr("children")) {
      record.children.push_back(record_from_python(child));
    }
    if (nb::hasattr(object, "failed")) record.failed = nb::cast<bool>(object.attr("failed"));
    if (nb::hasattr(object, "error")) record.error = nb::cast<std::string>(object.attr("error"));
  } catch (const nb::cast_error&) {
    throw nb::type_error(
        "add_stage_record() expects a StageRecord: name (str), start and end (float seconds on "
        "the time.perf_counter() clock), children (StageRecords)");
  }
  return record;
}

// Writes an output a Python caller named. "-" follows what Python already printed (its
// sys.stdout buffer is flushed first). The GIL is released while writing: a FIFO blocks until
// its reader opens it, and that reader may be a Python thread of this process.
void write_output_from_python(const std::filesystem::path& path, const std::string& text) {
  if (path == "-") nb::module_::import_("sys").attr("stdout").attr("flush")();
  nb::gil_scoped_release released;
  profiling::write_output_file(path, text);
}

// ProfilerError becomes pypto.compile_profiling.ProfilerError, an OSError whose message names
// the path, the reason and the remedy, with .errno and .path set.
void translate_profiler_error(const std::exception_ptr& exception, void* type) {
  try {
    std::rethrow_exception(exception);
  } catch (const ProfilerError& error) {
    nb::object instance = nb::handle(static_cast<PyObject*>(type))(error.what());
    if (error.error_number() != 0) instance.attr("errno") = error.error_number();
    instance.attr("path") = error.path().string();
    PyErr_SetObject(static_cast<PyObject*>(type), instance.ptr());
  }
}

void bind_stage_scope(nb::module_& m) {
  nb::class_<StageScope>(m, "StageScope",
                         "Context manager timing one stage; from CompileProfiler.stage() or "
                         "stage().")
      .def(
          "__enter__",
          [](nb::handle self) {
            StageScope& s = nb::cast<StageScope&>(self);
            s.scope.reset();
            s.scope.emplace(s.profiler, [&s] { return std::move(s.name); });
            return self;
          },
          nb::sig("def __enter__(self) -> StageScope"))
      .def(
          "__exit__",
          [](StageScope& s, nb::handle exc_type, nb::handle exc_value, nb::handle) {
            const bool failed = !exc_type.is_none();
            if (s.scope) s.scope->end(failed);
            if (failed && s.profiler != nullptr && s.scope) {
              // The exception's message is the stage's error, as the C++ driver records it.
              nb::str text = nb::str(exc_value);
              std::string message = nb::cast<std::string>(nb::str(exc_type.attr("__name__")));
              if (nb::len(text) > 0) message += ": " + std::string(text.c_str());
              s.profiler->record_error(message);
            }
            s.scope.reset();
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none());
}

void bind_compile_profiler(nb::module_& m) {
  nb::class_<CompileProfiler>(m, "CompileProfiler",
                              "Records compile stages as a tree. Use as a context manager to make "
                              "it current on this thread.")
      .def(
          "__init__",
          [](CompileProfiler* self, std::optional<bool> memory) {
            new (self)
                CompileProfiler(memory.value_or(profiling::memory_tracking_enabled_by_env()));
          },
          nb::arg("memory").none() = nb::none(),
          "memory: also record resident memory at each stage's end and its growth over the "
          "stage (default: PYPTO_COMPILE_PROFILING_MEMORY).")
      .def_prop_ro("memory", &CompileProfiler::tracks_memory)
      .def_static(
          "current", [] { return to_python(CompileProfiler::current()); },
          nb::sig("def current() -> CompileProfiler | None"),
          "The profiler current on this thread (the very object that was entered), or None.")
      .def(
          "__enter__",
          [](nb::handle self) {
            nb::cast<CompileProfiler&>(self).enter();
            self.inc_ref();  // a current profiler must not be freed under the thread-local
            return self;
          },
          nb::sig("def __enter__(self) -> CompileProfiler"))
      .def(
          "__exit__",
          [](nb::handle self, nb::handle, nb::handle, nb::handle) {
            if (nb::cast<CompileProfiler&>(self).exit()) self.dec_ref();
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc_value").none(), nb::arg("traceback").none())
      .def(
          "stage",
          [](nb::handle self, std::string name) {
            return make_stage_scope(nb::borrow(self), &nb::cast<CompileProfiler&>(self),
                                    std::move(name));
          },
          nb::arg("name"), nb::sig("def stage(self, name: str) -> StageScope"),
          "Context manager timing a stage named `name` in this profiler.")
      .def(
          "_begin_stage",
          [](CompileProfiler& profiler, std::string name) {
            profiler.begin_stage(std::move(name));
          },
          nb::arg("name"))
      .def(
          "_end_stage",
          [](CompileProfiler& profiler, bool failed, std::optional<std::string> error) {
            profiler.end_stage(failed, error.value_or(std::string()));
          },
          nb::arg("failed") = false, nb::arg("error").none() = nb::none(),
          "Closes the innermost open stage; no-op when none is open. `error`: why it failed.")
      .def(
          "add_stage_record",
          [](CompileProfiler& profiler, nb::handle record) {
            profiler.add_stage_record(record_from_python(record));
          },
          nb::arg("record"),
          "Inserts a StageRecord tree under the stage open now (or at the root). Thread-safe.")
      .def_prop_ro("total_seconds", &CompileProfiler::total_seconds)
      .def_prop_ro("is_process_wide", &CompileProfiler::is_process_wide)
      .def(
          "to_dict",
          [](const CompileProfiler& profiler) { return report_to_python(profiler.report()); },
          nb::sig("def to_dict(self) -> dict[str, typing.Any]"),
          "The profile as a dict: total_seconds, stages (name, seconds, children...).")
      .def(
          "to_json",
          [](const CompileProfiler& profiler, std::optional<std::filesystem::path> path,
             int indent) {
            std::string text = profiler.to_json(indent);
            if (path) write_output_from_python(*path, text);
            return text;
          },
          nb::arg("path").none() = nb::none(), nb::arg("indent") = 2,
          "The profile as a JSON string; with `path`, also writes it there (creating folders).")
      .def(
          "summary",
          [](const CompileProfiler& profiler, const std::string& view) {
            if (view == "tree") return profiler.summary();
            if (view == "list") return profiling::format_summary_list(profiler.report());
            throw nb::value_error(
                ("summary(view=...) takes 'tree' or 'list', not '" + view + "'").c_str());
          },
          nb::arg("view") = "tree",
          "The text summary: 'tree' (the stage tree) or 'list' (by name, sorted by self time).")
      .def(
          "to_chrome_trace",
          [](const CompileProfiler& profiler, std::optional<std::filesystem::path> path) {
            std::string text = profiling::to_chrome_trace(profiler.report());
            if (path) write_output_from_python(*path, text);
            return text;
          },
          nb::arg("path").none() = nb::none(),
          "The profile as Chrome Trace Event JSON (Perfetto UI, chrome://tracing); with `path`, "
          "also writes it there.")
      .def("write_report", &CompileProfiler::write_report, nb::arg("dir"),
           nb::call_guard<nb::gil_scoped_release>(),
           "Writes dir/pipeline_profile.txt and dir/pipeline_profile.json, creating dir.")
      .def("clear", &CompileProfiler::clear, "Drops every record.")
      .def("__repr__", [](const CompileProfiler& profiler) {
        return "<CompileProfiler total=" + profiling::format_duration(profiler.total_seconds()) +
               (profiler.is_process_wide() ? " process-wide>" : ">");
      });
}

}  // namespace

nb::object report_to_python(const profiling::Report& report) {
  return json_to_python(profiling::report_to_ordered_json(report));
}

void bind_profiling(nb::module_ m) {
  g_profiling_module = m;
  static PyObject* error_type = PyErr_NewExceptionWithDoc(
      "pypto._core.profiling.ProfilerError",
      "A compile profile could not be written; the message names the path and the reason.",
      PyExc_OSError, nullptr);
  m.attr("ProfilerError") = nb::handle(error_type);
  nb::register_exception_translator(translate_profiler_error, error_type);

  bind_stage_scope(m);
  bind_compile_profiler(m);

  // Bound directly, not wrapped in Python: with profiling off this is the whole cost of an
  // entry point's check.
  m.def(
      "get_active_profiler", [] { return to_python(profiling::get_active_profiler()); },
      nb::sig("def get_active_profiler() -> CompileProfiler | None"),
      "The profiler current on this thread; else, when PYPTO_COMPILE_PROFILING is 1/true/yes, "
      "the process-wide one (bound to this thread); else None.");
  m.def(
      "stage",
      [](std::string name) {
        CompileProfiler* profiler = CompileProfiler::current();
        return make_stage_scope(nb::none(), profiler, std::move(name));
      },
      nb::arg("name"), nb::sig("def stage(name: str) -> StageScope"),
      "Context manager timing a stage in the profiler current on this thread; no-op without one.");
  m.def("now_seconds", &profiling::now_seconds,
        "Seconds on the profiler's clock (the time.perf_counter() clock).");
  m.def("profiling_enabled_by_env", &profiling::profiling_enabled_by_env);
  m.def("format_duration", &profiling::format_duration, nb::arg("seconds"),
        "Seconds in the unit the profile summary uses (3 significant digits: µs, ms or s).");
  m.def(
      "format_summary",
      [](const std::string& document, double min_percent, int max_depth) {
        // The one text renderer, for profiles Python holds as dicts (pypto.profile_view): the
        // caller has checked the document, so a format error here is a ValueError.
        profiling::SummaryOptions options;
        options.min_percent = min_percent;
        options.max_depth = max_depth;
        try {
          profiling::Report report =
              profiling::report_from_json(nlohmann::json::parse(document), "the profile");
          // The metadata in the dict's order (a parsed nlohmann::json sorts its keys).
          const auto ordered = nlohmann::ordered_json::parse(document);
          if (const auto it = ordered.find("metadata"); it != ordered.end() && it->is_object()) {
            report.metadata.clear();
            for (const auto& [key, value] : it->items())
              report.metadata.emplace_back(
                  key, value.is_string() ? value.get<std::string>() : value.dump());
          }
          return profiling::format_summary(report, options);
        } catch (const std::exception& e) {
          throw nb::value_error(e.what());
        }
      },
      nb::arg("document"), nb::arg("min_percent") = 0.0, nb::arg("max_depth") = -1,
      "The text summary (tree view) of a profile given as its JSON text: stages below "
      "min_percent of the total hidden, at most max_depth levels (-1: all).");
  m.def("write_exit_report", &profiling::write_exit_report,
        "The PYPTO_COMPILE_PROFILING exit report (summary to stderr, files to "
        "$PYPTO_COMPILE_PROFILING_DIR); once per process, nothing without a process-wide "
        "profiler.");
}

}  // namespace pypto::bindings
