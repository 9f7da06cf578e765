#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

struct Param {
  VarPtr var;
  ParamDirection direction = ParamDirection::In;
};

// What `@pl.function(...)` says of a function besides its kind. PyPTO uses level and role to
// place a function in its machine hierarchy (a HOST-level orchestrator, a CHIP-level sub-worker)
// and `attrs` for hints to its hardware back end (`"split": pl.SplitMode.UP_DOWN`); none of these
// changes what the function computes on the simulated device, so they are kept to be printed
// back, as written. `strict_ssa` asks the parser to refuse rebinding a name; `auto_scope=False`
// that no scope be added around a body written without one.
struct FunctionAttrs {
  std::string level;  // a pl.Level member name, empty when not given
  std::string role;   // a pl.Role member name, empty when not given
  bool strict_ssa = false;
  std::optional<bool> auto_scope;
  // A host sub-worker (level HOST or above, role SubWorker, no `self`): a Python function the
  // host runs between the ranks' work. Its body is Python, kept by the Python package, and the
  // IR has its signature only.
  bool host_python = false;
  // attrs={...}: each key with the source text of its value.
  std::vector<std::pair<std::string, std::string>> extra;

  bool empty() const {
    return level.empty() && role.empty() && !strict_ssa && !auto_scope && extra.empty() &&
           !host_python;
  }
  bool operator==(const FunctionAttrs& o) const {
    return level == o.level && role == o.role && strict_ssa == o.strict_ssa &&
           auto_scope == o.auto_scope && extra == o.extra && host_python == o.host_python;
  }
  bool operator!=(const FunctionAttrs& o) const { return !(*this == o); }
};

class Function {
 public:
  Function(std::string name, FunctionType type, std::vector<Param> params,
           std::vector<TypePtr> return_types, StmtPtr body, Span span = {},
           FunctionAttrs attrs = {})
      : name(std::move(name)),
        type(type),
        params(std::move(params)),
        return_types(std::move(return_types)),
        body(std::move(body)),
        span(span),
        attrs(std::move(attrs)) {}
  std::string name;
  FunctionType type;
  std::vector<Param> params;
  std::vector<TypePtr> return_types;
  StmtPtr body;
  Span span;
  FunctionAttrs attrs;
};
using FunctionPtr = std::shared_ptr<const Function>;

// What a function is once its kind is decided: an Opaque function that hands work to kernels (it
// has pl.at scopes or calls another function) is an Orchestration, any other Opaque function an
// InCore kernel; other kinds are what they say. OutlineIncoreScopes makes the decision in the IR.
FunctionType resolved_kind(const Function& f);

// How many Out and InOut parameters `f` has: its return value i belongs to the i-th of them.
size_t output_param_count(const Function& f);

class Program {
 public:
  Program(std::string name, std::vector<FunctionPtr> functions,
          std::shared_ptr<const SourceInfo> source = nullptr)
      : name(std::move(name)), functions(std::move(functions)), source(std::move(source)) {}
  std::string name;
  std::vector<FunctionPtr> functions;  // in definition order
  std::shared_ptr<const SourceInfo> source;
  // What the program is compiled for (CompileOptions.platform); passes that depend on the
  // hardware (the legal data movement of InferTileMemorySpace) read it.
  Target target = Target::A2A3;

  FunctionPtr find_function(std::string_view fname) const;  // null if absent
  // The orchestration entry: the function named "main" if any, else the only Orchestration
  // function (Opaque functions count by their resolved_kind); null when there is none.
  FunctionPtr entry() const;
  // A copy with `functions` replaced, keeping name, source and target.
  std::shared_ptr<const Program> with_functions(std::vector<FunctionPtr> fns) const;
  // A copy compiled for `t`.
  std::shared_ptr<const Program> with_target(Target t) const;
};
using ProgramPtr = std::shared_ptr<const Program>;

}  // namespace pypto::ir
