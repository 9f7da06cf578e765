// debug/run.py (kernel_config.h): a script that runs a compiled folder again, on its own.
#include <string>

#include "pypto/codegen/kernel_config.h"

namespace pypto::codegen {

namespace {

using Json = nlohmann::ordered_json;

// The torch dtype of a tensor's element type, or "" for one torch has no dtype for (those
// arguments are numpy arrays of the dtype's storage type instead).
std::string torch_dtype(const std::string& dtype) {
  if (dtype == "FP32") return "torch.float32";
  if (dtype == "FP16") return "torch.float16";
  if (dtype == "BF16") return "torch.bfloat16";
  if (dtype == "INT8") return "torch.int8";
  if (dtype == "INT16") return "torch.int16";
  if (dtype == "INT32") return "torch.int32";
  if (dtype == "INT64") return "torch.int64";
  if (dtype == "UINT8") return "torch.uint8";
  if (dtype == "BOOL") return "torch.bool";
  return "";
}

// A string field of the manifest ("" when it is missing or null: a program without an entry).
std::string text(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// `s` as a Python string literal: JSON's escapes are Python's, and bytes that are not UTF-8 (a
// hostile program's names) become U+FFFD rather than breaking the script.
std::string quoted(const std::string& s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

bool is_float(const std::string& dtype) {
  return dtype == "FP32" || dtype == "FP16" || dtype == "BF16" || dtype.rfind("FP", 0) == 0;
}

std::string shape_tuple(const Json& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i].is_number_integer() ? std::to_string(shape[i].get<int64_t>()) : "1";
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

// The Python expression of one argument: random values for an input, zeros for an output
// (an InOut starts from random values too), a literal for a scalar.
std::string argument(const Json& param) {
  const std::string kind = text(param, "kind");
  const std::string dtype = text(param, "dtype");
  const std::string name = text(param, "name");
  const std::string direction = text(param, "direction").empty() ? "In" : text(param, "direction");
  if (kind == "scalar") {
    return std::string(is_float(dtype) ? "1.0" : "1") + ",  # " + quoted(name) + ": " + dtype +
           " scalar";
  }
  if (kind != "tensor") return "None,  # " + quoted(name) + ": not a tensor or a scalar";
  auto dims = param.find("shape");
  const std::string shape =
      shape_tuple(dims != param.end() && dims->is_array() ? *dims : Json::array());
  const std::string torch = torch_dtype(dtype);
  const std::string note = ",  # " + quoted(name) + " (" + direction + ")";
  if (direction == "Out") {
    if (!torch.empty()) return "torch.zeros(" + shape + ", dtype=" + torch + ")" + note;
    return "np.zeros(" + shape + ", dtype=pl." + dtype + ".storage_numpy)" + note;
  }
  if (torch.empty()) {
    return "np.asarray(np.random.default_rng(0).standard_normal(" + shape + "), dtype=pl." + dtype +
           ".storage_numpy)" + note;
  }
  if (dtype == "BOOL") return "torch.randint(0, 2, " + shape + ").bool()" + note;
  if (!is_float(dtype)) {
    return "torch.randint(-8, 8, " + shape + ", dtype=" + torch + ")" + note;
  }
  return "torch.randn(" + shape + ", dtype=" + torch + ")" + note;
}

}  // namespace

std::string debug_run_script(const Json& manifest, const std::string& platform) {
  const Json* entry = nullptr;
  const std::string entry_name = text(manifest, "entry");
  if (auto it = manifest.find("orchestration"); it != manifest.end() && it->is_array()) {
    for (const auto& o : *it) {
      if (o.is_object() && !entry_name.empty() && text(o, "name") == entry_name) entry = &o;
    }
  }
  std::string inputs;
  std::string names;
  if (entry && entry->contains("params") && (*entry)["params"].is_array()) {
    for (const auto& p : (*entry)["params"]) {
      inputs += "        " + argument(p) + "\n";
      names += (names.empty() ? "" : ", ") + quoted(text(p, "name"));
    }
  }
  const std::string program = text(manifest, "program");
  std::string out;
  out += "\"\"\"Runs the compiled program " + quoted(program) +
         " of this folder again, on its own:\n\n";
  out += "    python debug/run.py\n\n";
  out += "With a golden.py beside the folder's kernel_config.json (PyPTO's test harness writes\n";
  out += "one), its inputs are used and the outputs are checked against its golden. Otherwise\n";
  out += "_inline_inputs() makes the entry's arguments from its signature (random inputs,\n";
  out += "zeroed outputs): edit them to try other values. Written by pypto's compiler.\n";
  out += "\"\"\"\n\n";
  out += "import pathlib\nimport sys\n\nimport numpy as np\n\n";
  out += "import pypto.language as pl\n";
  out += "from pypto.ir.compiled_program import CompiledProgram\n\n";
  out += "FOLDER = pathlib.Path(__file__).resolve().parents[1]\n";
  out += "PLATFORM = " + quoted(platform) + "\n";
  out += "NAMES = [" + names + "]\n";
  out += "ENTRY = " + (entry ? quoted(entry_name) : std::string("None")) + "\n\n\n";
  out += "def _inline_inputs():\n";
  out += "    \"\"\"The entry's arguments in order.\"\"\"\n";
  out += "    import torch\n\n";
  out += "    torch.manual_seed(0)\n";
  out += "    return [\n" + inputs + "    ]\n\n\n";
  out += "def _check_golden(compiled, path):\n";
  out +=
      "    \"\"\"Runs on golden.py's inputs; 0 when every output is within its RTOL/ATOL of "
      "the golden.\"\"\"\n";
  out += "    import importlib.util\n\n";
  out += "    import torch\n\n";
  out += "    spec = importlib.util.spec_from_file_location(\"golden\", path)\n";
  out += "    golden = importlib.util.module_from_spec(spec)\n";
  out += "    spec.loader.exec_module(golden)\n";
  out += "    params = {\"name\": \"Default\"}\n";
  out += "    named = golden.generate_inputs(params)\n";
  out += "    expected = {name: value.clone() for name, value in named}\n";
  out += "    golden.compute_golden(expected, params)\n";
  out += "    compiled(*[value for _, value in named])\n";
  out += "    actual = dict(named)\n";
  out += "    rtol, atol = getattr(golden, \"RTOL\", 1e-5), getattr(golden, \"ATOL\", 1e-5)\n";
  out += "    wrong = [name for name in getattr(golden, \"__outputs__\", [])\n";
  out +=
      "             if not torch.allclose(actual[name].float(), expected[name].float(), "
      "rtol=rtol, atol=atol)]\n";
  out += "    for name in wrong:\n";
  out += "        diff = (actual[name].float() - expected[name].float()).abs().max().item()\n";
  out +=
      "        print(f\"{name}: differs from golden.py by up to {diff:.6g} (rtol {rtol}, "
      "atol {atol})\", file=sys.stderr)\n";
  out += "    if not wrong:\n";
  out += "        print(f\"{FOLDER.name}: the outputs match golden.py\")\n";
  out += "    return 1 if wrong else 0\n\n\n";
  out += "def main():\n";
  out += "    if ENTRY is None:\n";
  out +=
      "        print(f\"{FOLDER.name}: the program has no entry to run (no Orchestration "
      "function); run one of its kernels through a program that calls it\", "
      "file=sys.stderr)\n";
  out += "        return 1\n";
  out += "    compiled = CompiledProgram.from_dir(FOLDER, platform=PLATFORM)\n";
  out += "    golden = FOLDER / \"golden.py\"\n";
  out += "    if golden.exists():\n";
  out += "        return _check_golden(compiled, golden)\n";
  out += "    args = _inline_inputs()\n";
  out += "    compiled(*args)\n";
  out += "    for name, value in zip(NAMES, args):\n";
  out += "        if hasattr(value, \"shape\"):\n";
  out +=
      "            array = np.asarray(value.float() if hasattr(value, \"float\") else value, "
      "dtype=np.float64)\n";
  out += "            print(f\"{name}: shape {tuple(array.shape)}, sum {array.sum():.6g}, \"\n";
  out += "                  f\"max |x| {np.abs(array).max(initial=0):.6g}\")\n";
  out += "    return 0\n\n\n";
  out += "if __name__ == \"__main__\":\n";
  out += "    sys.exit(main())\n";
  return out;
}

}  // namespace pypto::codegen
