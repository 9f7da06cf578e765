// `pypto._core.ir`: the parser, the printer and structural equality on opaque Program handles.
// Python wraps these in pypto.ir.Program (python/pypto/ir/program.py).
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.h"
#include "ir_handles.h"
#include "pypto/driver/distributed.h"
#include "pypto/driver/parse.h"
#include "pypto/frontend/op_spellings.h"
#include "pypto/ir/dtype_table.h"
#include "pypto/ir/op_dtypes.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/support/diagnostics.h"

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

// One Python value as a constant of the program: a bool, an int that fits in 64 bits, a float,
// a pl dtype (an object with a `_pypto_dtype_name`), a dynamic dimension (`pl.dynamic`: an
// object with a `_pypto_dynamic_dim`), or a list/tuple of those (nested ones too). None for
// anything else, which is then no constant.
std::optional<frontend::Constant> to_constant(const nb::handle& value, int depth = 0) {
  if (nb::isinstance<nb::bool_>(value)) return frontend::Constant(nb::cast<bool>(value));
  if (nb::isinstance<nb::int_>(value)) {
    int64_t v = 0;
    if (nb::try_cast<int64_t>(value, v)) return frontend::Constant(v);
    return std::nullopt;
  }
  if (nb::isinstance<nb::float_>(value)) return frontend::Constant(nb::cast<double>(value));
  if (nb::isinstance<nb::list>(value) || nb::isinstance<nb::tuple>(value)) {
    // A list that holds itself (or absurdly deep nesting) is no constant.
    constexpr int kMaxDepth = 32;
    if (depth >= kMaxDepth) return std::nullopt;
    auto list = std::make_shared<frontend::ConstantList>();
    for (nb::handle item : value) {
      std::optional<frontend::Constant> c = to_constant(item, depth + 1);
      if (!c) return std::nullopt;
      list->items.push_back(std::move(*c));
    }
    return frontend::Constant(frontend::ConstantListPtr(std::move(list)));
  }
  if (nb::hasattr(value, "_pypto_dynamic_dim")) {  // pl.dynamic("M")
    nb::object name = value.attr("_pypto_dynamic_dim");
    if (!nb::isinstance<nb::str>(name)) return std::nullopt;
    return frontend::Constant(frontend::DynamicDim{nb::cast<std::string>(name)});
  }
  if (nb::hasattr(value, "_pypto_dtype_name")) {
    nb::object dtype_name = value.attr("_pypto_dtype_name");
    if (!nb::isinstance<nb::str>(dtype_name)) return std::nullopt;
    if (auto dtype = ir::dtype_from_name(nb::cast<std::string>(dtype_name))) {
      return frontend::Constant(*dtype);
    }
  }
  return std::nullopt;
}

// Python values of the defining scope that are constants of the program (see to_constant);
// everything else is ignored.
frontend::Constants to_constants(const nb::dict& values) {
  frontend::Constants constants;
  for (auto [key, value] : values) {
    if (!nb::isinstance<nb::str>(key)) continue;
    if (auto c = to_constant(value)) constants.emplace(nb::cast<std::string>(key), std::move(*c));
  }
  return constants;
}

// The functions defined outside a program that its scope sees, as Python describes them:
// ([(name, kind, file_name, first_line, constants, {name: index})...], {name: index},
// {file_name: text}); None for none. kind is "function", "inline" or "jit_inline".
frontend::Helpers to_helpers(const nb::object& value) {
  frontend::Helpers helpers;
  if (value.is_none()) return helpers;
  auto [sources, scope, files] = nb::cast<std::tuple<nb::list, nb::dict, nb::dict>>(value);
  for (nb::handle item : sources) {
    auto [name, kind, file_name, first_line, constants, own_scope] =
        nb::cast<std::tuple<std::string, std::string, std::string, int32_t, nb::dict, nb::dict>>(
            item);
    frontend::HelperSource source;
    source.name = std::move(name);
    source.kind = kind == "function" ? frontend::HelperKind::Function
                  : kind == "inline" ? frontend::HelperKind::Inline
                                     : frontend::HelperKind::JitInline;
    source.file_name = std::move(file_name);
    source.first_line = first_line;
    source.constants = to_constants(constants);
    for (auto [key, index] : own_scope) {
      source.scope.emplace(nb::cast<std::string>(key), nb::cast<size_t>(index));
    }
    helpers.sources.push_back(std::move(source));
  }
  for (auto [key, index] : scope) {
    helpers.scope.emplace(nb::cast<std::string>(key), nb::cast<size_t>(index));
  }
  for (auto [key, text] : files) {
    helpers.file_texts.emplace(nb::cast<std::string>(key), nb::cast<std::string>(text));
  }
  return helpers;
}

// Raises the Python exception of pypto.errors for a ParseError / CompileError, so no C++
// exception text reaches the user unformatted.
void raise_python_error(const char* class_name, nb::tuple args) {
  nb::object errors = nb::module_::import_("pypto.errors");
  nb::object type = errors.attr(class_name);
  nb::object instance = type(*args);
  PyErr_SetObject(type.ptr(), instance.ptr());
}

void translate_errors(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const support::ParseError& e) {
    raise_python_error("ParseError",
                       nb::make_tuple(e.rendered(), std::string(e.what()), e.file_name(), e.line(),
                                      e.col(), e.source_line()));
  } catch (const ir::CompileError& e) {
    raise_python_error("CompileError", nb::make_tuple(std::string(e.what())));
  }
}

std::vector<FunctionHandle> functions_of(const ProgramHandle& h) {
  std::vector<FunctionHandle> out;
  out.reserve(h.program->functions.size());
  for (const auto& f : h.program->functions) out.push_back(FunctionHandle{h.program, f});
  return out;
}

// (name, type as DSL text, direction) per parameter.
std::vector<std::tuple<std::string, std::string, std::string>> params_of(const FunctionHandle& h) {
  std::vector<std::tuple<std::string, std::string, std::string>> out;
  for (const auto& p : h.function->params) {
    out.emplace_back(p.var->name, ir::type_to_string(p.var->type()),
                     std::string(ir::param_direction_name(p.direction)));
  }
  return out;
}

// One op's signature for the Python side (see op_signatures below).
using OpSignature = std::tuple<std::string, std::string, std::vector<std::string>, size_t,
                               std::vector<std::string>>;

// The registry's category by name; scripts/gen_ops.py types an op's Python function by it (a
// category the script has no entry for gets parameters typed `Any`). -Wswitch flags a new
// category missing here.
std::string_view op_category_name(ir::OpCategory category) {
  switch (category) {
    case ir::OpCategory::Load:
      return "Load";
    case ir::OpCategory::Store:
      return "Store";
    case ir::OpCategory::Move:
      return "Move";
    case ir::OpCategory::CreateTile:
      return "CreateTile";
    case ir::OpCategory::CreateTensor:
      return "CreateTensor";
    case ir::OpCategory::ExpandClone:
      return "ExpandClone";
    case ir::OpCategory::Slice:
      return "Slice";
    case ir::OpCategory::Assemble:
      return "Assemble";
    case ir::OpCategory::ElementwiseBinary:
      return "ElementwiseBinary";
    case ir::OpCategory::ElementwiseUnary:
      return "ElementwiseUnary";
    case ir::OpCategory::Cast:
      return "Cast";
    case ir::OpCategory::RowReduce:
      return "RowReduce";
    case ir::OpCategory::RowExpand:
      return "RowExpand";
    case ir::OpCategory::ColExpand:
      return "ColExpand";
    case ir::OpCategory::Matmul:
      return "Matmul";
    case ir::OpCategory::Concat:
      return "Concat";
    case ir::OpCategory::Reshape:
      return "Reshape";
    case ir::OpCategory::Read:
      return "Read";
    case ir::OpCategory::FillPad:
      return "FillPad";
    case ir::OpCategory::ColReduce:
      return "ColReduce";
    case ir::OpCategory::ArgReduce:
      return "ArgReduce";
    case ir::OpCategory::Transpose:
      return "Transpose";
    case ir::OpCategory::Compare:
      return "Compare";
    case ir::OpCategory::Select:
      return "Select";
    case ir::OpCategory::Scheduling:
      return "Scheduling";
    case ir::OpCategory::LaunchQuery:
      return "LaunchQuery";
    case ir::OpCategory::Communication:
      return "Communication";
    case ir::OpCategory::System:
      return "System";
    case ir::OpCategory::Write:
      return "Write";
    case ir::OpCategory::Gather:
      return "Gather";
    case ir::OpCategory::Scatter:
      return "Scatter";
    case ir::OpCategory::PagedGather:
      return "PagedGather";
    case ir::OpCategory::Generate:
      return "Generate";
    case ir::OpCategory::Sort:
      return "Sort";
    case ir::OpCategory::FillPadExpand:
      return "FillPadExpand";
    case ir::OpCategory::GatherRow:
      return "GatherRow";
  }
  return "Other";
}

}  // namespace

void bind_ir(nb::module_ m) {
  nb::register_exception_translator(translate_errors);

  nb::class_<FunctionHandle>(m, "Function")
      .def_prop_ro("name", [](const FunctionHandle& h) { return h.function->name; })
      .def_prop_ro("type",
                   [](const FunctionHandle& h) {
                     return std::string(ir::function_type_name(h.function->type));
                   })
      .def_prop_ro("params", &params_of)
      .def_prop_ro("return_types",
                   [](const FunctionHandle& h) {
                     std::vector<std::string> out;
                     for (const auto& t : h.function->return_types) {
                       out.push_back(ir::type_to_string(t));
                     }
                     return out;
                   })
      // pl.Level / pl.Role member names from @pl.function(level=, role=); None when not given.
      .def_prop_ro("level",
                   [](const FunctionHandle& h) -> std::optional<std::string> {
                     if (h.function->attrs.level.empty()) return std::nullopt;
                     return h.function->attrs.level;
                   })
      .def_prop_ro("role",
                   [](const FunctionHandle& h) -> std::optional<std::string> {
                     if (h.function->attrs.role.empty()) return std::nullopt;
                     return h.function->attrs.role;
                   })
      .def_prop_ro("works_on_ranks",
                   [](const FunctionHandle& h) {
                     return driver::works_on_ranks(h.program.get(), *h.function);
                   })
      .def("as_python", [](const FunctionHandle& h) { return ir::print_function(*h.function); })
      .def("structural_equal", [](const FunctionHandle& a, const FunctionHandle& b) {
        return ir::structural_equal(*a.function, *b.function);
      });

  nb::class_<ProgramHandle>(m, "Program")
      .def_prop_ro("name", [](const ProgramHandle& h) { return h.program->name; })
      .def_prop_ro("functions", &functions_of)
      .def_prop_ro("entry_name",
                   [](const ProgramHandle& h) -> std::optional<std::string> {
                     // Resolved as a run resolves it: an Opaque function that orchestrates counts.
                     ir::FunctionPtr entry = h.program->entry();
                     if (!entry) return std::nullopt;
                     return entry->name;
                   })
      .def_prop_ro("file_name",
                   [](const ProgramHandle& h) {
                     return h.program->source ? h.program->source->file_name : std::string();
                   })
      .def("as_python", [](const ProgramHandle& h) { return ir::print_program(*h.program); })
      .def("structural_equal",
           [](const ProgramHandle& a, const ProgramHandle& b) {
             return ir::structural_equal(*a.program, *b.program);
           })
      .def("structural_hash",
           [](const ProgramHandle& h) { return ir::structural_hash(*h.program); });

  m.def(
      "parse_program",
      [](const std::string& text, const std::string& file_name, const nb::dict& constants,
         int32_t line_offset, bool rest_of_file, const nb::object& helpers,
         const std::vector<std::tuple<std::string, std::vector<int64_t>, std::string>>&
             entry_tensors) {
        frontend::Constants values = to_constants(constants);
        frontend::Helpers external = to_helpers(helpers);
        std::vector<frontend::EntryTensor> entry;
        for (const auto& [name, shape, dtype] : entry_tensors) {
          auto dt = ir::dtype_from_name(dtype);
          if (!dt) throw nb::value_error(("unknown dtype '" + dtype + "'").c_str());
          entry.push_back(frontend::EntryTensor{name, shape, *dt});
        }
        nb::gil_scoped_release release;
        return ProgramHandle{driver::parse_program(text, file_name, values, line_offset,
                                                   rest_of_file, external, entry)};
      },
      nb::arg("text"), nb::arg("file_name") = "<string>", nb::arg("constants") = nb::dict(),
      nb::arg("line_offset") = 0, nb::arg("rest_of_file") = false, nb::arg("helpers") = nb::none(),
      nb::arg("entry_tensors") =
          std::vector<std::tuple<std::string, std::vector<int64_t>, std::string>>{},
      "Parses the source of one @pl.program class (decorators included; it may be indented), as "
      "the `parse` stage of the active profiler. "
      "rest_of_file: the text runs on to the end of the class's file; only the class is read. "
      "entry_tensors: (name, shape, dtype name) of the tensors the program runs with, which "
      "specialise an entry whose shapes name pl.dynamic dimensions.");

  m.def(
      "parse_module",
      [](const std::string& text, const std::string& file_name, const nb::dict& constants,
         const nb::dict& pinned) {
        frontend::Constants values = to_constants(constants);
        frontend::Constants pinned_values = to_constants(pinned);
        std::vector<ir::ProgramPtr> programs;
        {
          nb::gil_scoped_release release;
          programs = driver::parse_module(text, file_name, values, pinned_values);
        }
        std::vector<ProgramHandle> out;
        for (auto& p : programs) out.push_back(ProgramHandle{std::move(p)});
        return out;
      },
      nb::arg("text"), nb::arg("file_name") = "<string>", nb::arg("constants") = nb::dict(),
      nb::arg("pinned") = nb::dict(),
      "Parses a Python file: top-level constants are evaluated, every @pl.program class is "
      "parsed (the `parse` stage of the active profiler). `pinned` constants replace the file's "
      "own assignments of those names.");

  m.def(
      "parse_jit",
      [](const std::string& file_text, const std::string& file_name,
         const std::vector<std::tuple<std::string, bool, int32_t>>& functions,
         const std::string& entry, const nb::dict& arguments, const nb::dict& constants,
         const nb::object& helpers) {
        std::vector<frontend::JitFunctionSource> sources;
        for (const auto& [name, is_incore, first_line] : functions) {
          sources.push_back(frontend::JitFunctionSource{
              name, is_incore ? frontend::JitKind::Incore : frontend::JitKind::Entry, first_line});
        }
        // Tensors are (shape, dtype name); scalars are converted as constants are.
        frontend::JitArguments values;
        nb::dict scalars;
        for (auto [key, value] : arguments) {
          std::string name = nb::cast<std::string>(key);
          if (nb::isinstance<nb::tuple>(value)) {
            auto [shape, dtype_name] =
                nb::cast<std::tuple<std::vector<int64_t>, std::string>>(value);
            auto dtype = ir::dtype_from_name(dtype_name);
            if (!dtype) throw nb::value_error(("unknown dtype '" + dtype_name + "'").c_str());
            values.emplace(name, frontend::JitTensorArgument{std::move(shape), *dtype});
          } else {
            scalars[key] = value;
          }
        }
        for (auto& [name, value] : to_constants(scalars)) values.emplace(name, value);
        frontend::Constants scope = to_constants(constants);
        frontend::Helpers external = to_helpers(helpers);
        nb::gil_scoped_release release;
        return ProgramHandle{
            driver::parse_jit(file_text, file_name, sources, entry, values, scope, external)};
      },
      nb::arg("file_text"), nb::arg("file_name"), nb::arg("functions"), nb::arg("entry"),
      nb::arg("arguments"), nb::arg("constants") = nb::dict(), nb::arg("helpers") = nb::none(),
      "Parses the @pl.jit function `entry` of a file specialised on `arguments` (name -> "
      "(shape, dtype name) for tensors, a number for scalars); `functions` are the file's jit "
      "functions as (name, is_incore, first_line). The `parse` stage of the active profiler.");

  m.def(
      "render_diagnostic",
      [](const std::string& file_name, const std::string& text, int32_t line_offset, int32_t line,
         int32_t col, const std::string& message) {
        return support::render_diagnostic(file_name, text, line_offset, ir::Span{line, col},
                                          message);
      },
      nb::arg("file_name"), nb::arg("text"), nb::arg("line_offset"), nb::arg("line"),
      nb::arg("col"), nb::arg("message"));

  m.def(
      "op_names", [] { return ir::OpRegistry::global().names(); },
      "The names of the DSL's ops (pl.<name>), sorted.");

  // The device's memories, for pypto.backend's SoC model (one definition: ir::kSpaces).
  m.def(
      "memory_spaces",
      [] {
        std::vector<std::pair<std::string, int64_t>> out;
        for (auto s : {ir::MemorySpace::DDR, ir::MemorySpace::Vec, ir::MemorySpace::Mat,
                       ir::MemorySpace::Left, ir::MemorySpace::Right, ir::MemorySpace::Acc}) {
          out.emplace_back(std::string(ir::memory_space_name(s)), ir::memory_space_capacity(s));
        }
        return out;
      },
      "Each memory space of the device with its capacity in bytes (0: global memory, unbounded "
      "here), in declaration order.");
  m.def(
      "legal_transfers",
      [](const std::string& platform) {
        const auto target = ir::target_from_platform(platform);
        if (!target) {
          throw nb::value_error(
              ("unknown platform '" + platform + "'; the platforms are " + ir::platform_names())
                  .c_str());
        }
        std::vector<std::pair<std::string, std::string>> out;
        const auto spaces = {ir::MemorySpace::DDR,  ir::MemorySpace::Vec,   ir::MemorySpace::Mat,
                             ir::MemorySpace::Left, ir::MemorySpace::Right, ir::MemorySpace::Acc};
        for (auto from : spaces) {
          for (auto to : spaces) {
            if (from != to && ir::is_legal_transfer(from, to, *target)) {
              out.emplace_back(std::string(ir::memory_space_name(from)),
                               std::string(ir::memory_space_name(to)));
            }
          }
        }
        return out;
      },
      nb::arg("platform"),
      "The direct moves (load, move or store) between memory spaces on a platform's target, as "
      "(from, to) names.");

  m.def(
      "op_signatures",
      [] {
        std::vector<OpSignature> out;
        const ir::OpRegistry& registry = ir::OpRegistry::global();
        for (const std::string& name : registry.names()) {
          const ir::OpDef* def = registry.find(name);
          out.emplace_back(def->name, std::string(op_category_name(def->category)), def->arg_names,
                           def->min_args, def->attr_names);
        }
        return out;
      },
      "One (name, category, positional parameters, how many of them are required, keyword "
      "attributes) per op of the registry, sorted by name: what scripts/gen_ops.py turns into "
      "the typed functions of pypto.language.");

  m.def(
      "dtype_table",
      [] {
        nb::list rows;
        for (const ir::DTypeRow& row : ir::dtype_table()) {
          nb::dict d;
          d["name"] = row.name;
          d["value"] = row.value;
          d["bytes"] = row.bytes;
          d["kind"] = row.kind;
          d["numpy"] = row.numpy_name;
          d["doc"] = row.doc;
          rows.append(d);
        }
        return rows;
      },
      nb::sig("def dtype_table() -> list[dict[str, typing.Any]]"),
      "The element types in value order (pypto/ir/dtypes.def): name, value (the device ABI's), "
      "bytes, kind (float, signed, unsigned, bool), numpy (numpy's or ml_dtypes' name), doc.");

  m.def(
      "op_element_dtypes",
      [] {
        std::vector<std::pair<std::string, std::optional<std::vector<std::string>>>> out;
        const ir::OpRegistry& registry = ir::OpRegistry::global();
        for (const std::string& name : registry.names()) {
          std::optional<std::vector<std::string>> names;
          if (auto dtypes = ir::op_element_dtypes(*registry.find(name))) {
            names.emplace();
            for (ir::DataType d : *dtypes) names->emplace_back(ir::dtype_name(d));
          }
          out.emplace_back(name, std::move(names));
        }
        return out;
      },
      "One (name, the dtypes its type rule computes on, or None for an op that moves bytes or "
      "has no element data) per op of the registry, sorted by name: the op x dtype table of the "
      "language reference (scripts/gen_ops.py).");

  m.def(
      "op_spelling",
      [](const std::string& ns, const std::string& name) {
        const frontend::OpSpelling s = frontend::resolve_op_spelling(ns, name);
        static constexpr const char* kKinds[] = {"op", "form", "unsupported", "unknown"};
        return std::make_pair(std::string(kKinds[static_cast<int>(s.kind)]), s.op);
      },
      nb::arg("ns"), nb::arg("name"),
      "How the parser reads pl.<ns>.<name> (ns '' for pl.<name>): ('op', registry op), ('form', "
      "the op it is built on or ''), ('unsupported', '') for an op of PyPTO's language not here "
      "yet, or ('unknown', '').");
}

}  // namespace pypto::bindings
