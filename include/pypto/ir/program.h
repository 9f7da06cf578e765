#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pypto/ir/stmt.h"

namespace pypto::ir {

struct Param {
  VarPtr var;
  ParamDirection direction = ParamDirection::In;
};

class Function {
 public:
  Function(std::string name, FunctionType type, std::vector<Param> params,
           std::vector<TypePtr> return_types, StmtPtr body, Span span = {})
      : name(std::move(name)),
        type(type),
        params(std::move(params)),
        return_types(std::move(return_types)),
        body(std::move(body)),
        span(span) {}
  std::string name;
  FunctionType type;
  std::vector<Param> params;
  std::vector<TypePtr> return_types;
  StmtPtr body;
  Span span;
};
using FunctionPtr = std::shared_ptr<const Function>;

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
  // function; null when there is none.
  FunctionPtr entry() const;
  // A copy with `functions` replaced, keeping name, source and target.
  std::shared_ptr<const Program> with_functions(std::vector<FunctionPtr> fns) const;
  // A copy compiled for `t`.
  std::shared_ptr<const Program> with_target(Target t) const;
};
using ProgramPtr = std::shared_ptr<const Program>;

}  // namespace pypto::ir
