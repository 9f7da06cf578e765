// kernel_config.py (kernel_config.h): kernel_config.json rendered as a Python module.
#include <string>

#include "pypto/codegen/kernel_config.h"

namespace pypto::codegen {

namespace {

using Json = nlohmann::ordered_json;

// A Python literal of `value`: JSON's own text except for true/false/null, whose Python
// spellings differ. JSON string escapes (\" \\ \n \uXXXX ...) are valid in Python strings.
void append_literal(std::string& out, const Json& value, int indent) {
  const std::string pad(static_cast<size_t>(indent + 4), ' ');
  const std::string close(static_cast<size_t>(indent), ' ');
  if (value.is_object()) {
    if (value.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (auto it = value.begin(); it != value.end(); ++it) {
      out += pad + Json(it.key()).dump(-1, ' ', false, Json::error_handler_t::replace) + ": ";
      append_literal(out, it.value(), indent + 4);
      out += ",\n";
    }
    out += close + "}";
  } else if (value.is_array()) {
    bool flat = true;  // a list of numbers or strings stays on one line
    for (const auto& v : value) flat = flat && !v.is_structured();
    if (flat) {
      out += "[";
      for (size_t i = 0; i < value.size(); ++i) {
        if (i) out += ", ";
        append_literal(out, value[i], indent);
      }
      out += "]";
      return;
    }
    out += "[\n";
    for (const auto& v : value) {
      out += pad;
      append_literal(out, v, indent + 4);
      out += ",\n";
    }
    out += close + "]";
  } else if (value.is_boolean()) {
    out += value.get<bool>() ? "True" : "False";
  } else if (value.is_null()) {
    out += "None";
  } else {
    out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

std::string literal(const Json& value) {
  std::string out;
  append_literal(out, value, 0);
  return out;
}

// `folder` / `name`.cpp under the module's folder, as Python code.
std::string source_expression(const std::string& folder, const std::string& name) {
  return "str(_ROOT_DIR / " + literal(Json(folder)) + " / " + literal(Json(name + ".cpp")) + ")";
}

// One entry of ORCHESTRATION or KERNELS: the manifest's entry with its source file, as code.
std::string function_entry(const Json& f, const std::string& folder, int func_id, int indent) {
  Json fields = Json::object();
  if (func_id >= 0) fields["func_id"] = func_id;
  fields["name"] = f.value("name", "");
  fields["function_name"] = f.value("function", "");
  const std::string pad(static_cast<size_t>(indent + 4), ' ');
  std::string out = "{\n";
  for (auto it = fields.begin(); it != fields.end(); ++it) {
    out += pad + literal(Json(it.key())) + ": " + literal(it.value()) + ",\n";
  }
  out +=
      pad + "\"source\": " + source_expression(folder, fields["name"].get<std::string>()) + ",\n";
  std::string params;
  append_literal(params, f.value("params", Json::array()), indent + 4);
  out += pad + "\"params\": " + params + ",\n";
  out += std::string(static_cast<size_t>(indent), ' ') + "}";
  return out;
}

}  // namespace

std::string kernel_config_python(const Json& manifest) {
  const std::string program = manifest.value("program", "");
  std::string out;
  out += "# Kernel configuration of program " + literal(Json(program)) +
         ": the facts of kernel_config.json\n"
         "# (same folder) as a Python module. The generated sources named here are the parts of\n"
         "# program.cpp, the translation unit built into the program library.\n";
  out += "from pathlib import Path\n\n_ROOT_DIR = Path(__file__).parent\n\n";
  out += "MANIFEST = " + literal(manifest) + "\n\n";
  const bool builtin = manifest.contains("builtin");
  out += "RUNTIME_CONFIG = {\n    \"runtime\": \"pypto-cpu-device\",\n";
  if (builtin) {
    out += "    \"library_source\": None,  # run by the device runtime itself: nothing is built\n";
  } else {
    out += "    \"library_source\": str(_ROOT_DIR / \"program.cpp\"),\n";
  }
  out += "}\n\n";

  // The entry's orchestration; a program whose entry is a kernel (or that has none) has none.
  const Json entry = manifest.value("entry", Json());
  const Json orchestrations = manifest.value("orchestration", Json::array());
  const Json* orchestration = nullptr;
  for (const auto& o : orchestrations) {
    if (entry.is_string() && o.value("name", "") == entry.get<std::string>()) orchestration = &o;
  }
  out += "ORCHESTRATION = " +
         (orchestration ? function_entry(*orchestration, "orchestration", -1, 0) : "None") + "\n\n";
  out += "KERNELS = [\n";
  int func_id = 0;
  for (const auto& k : manifest.value("kernels", Json::array())) {
    out += "    " + function_entry(k, "kernels", func_id++, 4) + ",\n";
  }
  out += "]\n";
  if (builtin) out += "\nBUILTIN = MANIFEST[\"builtin\"]\n";
  return out;
}

}  // namespace pypto::codegen
