// load_compiled (call.h): a compiled program reloaded from the files its compile wrote.
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "pypto/driver/call.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/node_memory.h"
#include "pypto/ir/types.h"

namespace pypto::driver {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

[[noreturn]] void fail(const fs::path& dir, const std::string& what) {
  throw std::runtime_error("cannot reload a compiled program from '" + dir.string() + "': " + what);
}

std::string read_text(const fs::path& dir, const std::string& name) {
  std::ifstream in(dir / name, std::ios::binary);
  if (!in) {
    fail(dir, name +
                  " is missing (give the output directory of an ir.compile of a program "
                  "with an orchestration entry; a multi-rank program's device programs are "
                  "in its next_levels/<function>/)");
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ir::DataType dtype_of(const fs::path& dir, const Json& j) {
  const std::string name = j.value("dtype", "");
  std::optional<ir::DataType> dtype = ir::dtype_from_name(name);
  if (!dtype) fail(dir, "kernel_config.json names an unknown dtype '" + name + "'");
  return *dtype;
}

std::vector<int64_t> shape_of(const Json& j) { return j.value("shape", std::vector<int64_t>{}); }

ir::ParamDirection direction_of(const fs::path& dir, const std::string& name) {
  if (name == "In") return ir::ParamDirection::In;
  if (name == "Out") return ir::ParamDirection::Out;
  if (name == "InOut") return ir::ParamDirection::InOut;
  fail(dir, "kernel_config.json gives a tensor parameter the direction '" + name + "'");
}

}  // namespace

std::shared_ptr<CompiledProgram> load_compiled(const std::string& output_dir) {
  const fs::path dir(output_dir);
  Json manifest;
  try {
    manifest = Json::parse(read_text(dir, "kernel_config.json"));
  } catch (const Json::exception& e) {
    fail(dir, std::string("kernel_config.json is not valid JSON: ") + e.what());
  }
  if (!manifest.is_object() || !manifest.value("entry", Json()).is_string()) {
    fail(dir, "kernel_config.json names no entry (the program has no orchestration to call)");
  }
  const std::string entry = manifest["entry"].get<std::string>();
  const Json* function = nullptr;
  if (manifest.contains("orchestration") && manifest["orchestration"].is_array()) {
    for (const Json& o : manifest["orchestration"]) {
      if (o.value("name", "") == entry) function = &o;
    }
  }
  if (function == nullptr) fail(dir, "kernel_config.json has no orchestration '" + entry + "'");
  if (!function->contains("returns")) {
    fail(dir,
         "kernel_config.json was written by an older pypto (no \"returns\"): compile the "
         "program again");
  }
  std::vector<ir::Param> params;
  for (const Json& p : function->value("params", Json::array())) {
    if (p.value("kind", "") != "tensor") {
      fail(dir, "the entry's parameter '" + p.value("name", "") +
                    "' is not a tensor: only programs called with tensors can be reloaded");
    }
    params.push_back(
        {ir::make_var(p.value("name", ""), ir::tensor_type(shape_of(p), dtype_of(dir, p))),
         direction_of(dir, p.value("direction", ""))});
  }
  std::vector<ir::TypePtr> returns;
  for (const Json& r : (*function)["returns"]) {
    if (r.value("kind", "") == "tensor") {
      returns.push_back(ir::tensor_type(shape_of(r), dtype_of(dir, r)));
    } else if (r.value("kind", "") == "scalar") {
      returns.push_back(ir::scalar_type(dtype_of(dir, r)));
    } else {
      fail(dir, "the entry returns a " + r.value("type", std::string("value")) +
                    ", which a reloaded program cannot describe");
    }
  }
  // The signature only: the body was compiled into program.cpp.
  ir::FunctionPtr signature = ir::make_node<ir::Function>(
      entry, ir::FunctionType::Orchestration, std::move(params), std::move(returns), nullptr);
  ir::ProgramPtr program = ir::make_node<ir::Program>(manifest.value("program", entry),
                                                      std::vector<ir::FunctionPtr>{signature});
  CompileResult result;
  result.output_dir = dir.string();
  result.lowered = program;
  result.translation_unit = read_text(dir, "program.cpp");
  for (const Json& k : manifest.value("kernels", Json::array())) {
    result.kernel_names.push_back(k.value("name", ""));
  }
  result.manifest = nlohmann::ordered_json::parse(manifest.dump());
  return std::make_shared<CompiledProgram>(program, std::move(result));
}

}  // namespace pypto::driver
