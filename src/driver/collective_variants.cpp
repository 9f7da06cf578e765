// next_levels/builtin.tensor.<variant>/ of a multi-rank program (collective_variants.h). The
// device runtime runs pld.tensor's collectives itself (runtime/comm_isa.h, one implementation
// per PtoCollectiveKind): nothing is generated or built for them, and these folders record
// which implementation each variant is and the host plan steps that use it.
#include "collective_variants.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <vector>

#include <nlohmann/json.hpp>

#include "pypto/codegen/kernel_config.h"
#include "pypto/driver/output_dir.h"

namespace pypto::driver::detail {
namespace {

using Json = nlohmann::ordered_json;

// PtoCollectiveKind (device/pto_abi.h), and 6 for the host barrier (comm_isa::kHostBarrier).
const char* collective_name(int32_t kind) {
  static const char* const names[] = {"allreduce",  "allgather",    "reduce_scatter", "broadcast",
                                      "all_to_all", "all_to_all_v", "barrier"};
  return kind >= 0 && kind < 7 ? names[kind] : "unknown";
}

// PtoReduceOp.
const char* reduce_name(int32_t op) {
  static const char* const names[] = {"sum", "max", "min", "prod"};
  return op >= 0 && op < 4 ? names[op] : "unknown";
}

bool reduces(int32_t kind) { return kind == 0 || kind == 2; }

// A ring allreduce indexes its signal by step and peer (signal_dim 1).
std::string collective_op(const HostCollective& c) {
  std::string name = collective_name(c.kind);
  if (c.kind == 0 && c.signal_dim == 1) name += "_ring";
  return name;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return text;
}

Json tensor_json(const DispatchArg& a) {
  Json j;
  if (a.kind == DispatchArg::Kind::Window) {
    j["memory"] = "window";
  } else {
    j["memory"] = "host_tensor";
    j["param"] = a.param;
  }
  j["byte_offset"] = a.byte_offset;
  j["shape"] = a.shape;
  j["dtype"] = std::string(ir::dtype_name(a.dtype));
  return j;
}

Json use_json(const HostCollective& c) {
  static const char* const roles[] = {"target", "signal", "input", "send_counts", "recv_counts"};
  Json j;
  j["step"] = c.label;
  for (size_t i = 0; i < c.tensors.size() && i < 5; ++i) {
    if (c.tensors[i].kind == DispatchArg::Kind::Scalar) continue;  // absent for this collective
    j[roles[i]] = tensor_json(c.tensors[i]);
  }
  return j;
}

}  // namespace

std::string collective_variant_name(const HostCollective& c) {
  std::string name = "builtin.tensor." + collective_op(c);
  if (reduces(c.kind)) name += std::string("__") + reduce_name(c.reduce_op);
  if (c.kind == 3) name += "__root" + std::to_string(c.root);
  // A barrier moves no data: PyPTO gives its variant the fixed suffix fp32.
  const bool moves_data = c.kind != 6 && !c.tensors.empty();
  const std::string dtype =
      moves_data ? lower(std::string(ir::dtype_name(c.tensors[0].dtype))) : "fp32";
  return name + "__" + dtype;
}

void write_collective_variants(const std::filesystem::path& root, const HostPlan& plan) {
  std::map<std::string, std::vector<const HostCollective*>> variants;
  for (const HostCollective& c : plan.collectives) {
    variants[collective_variant_name(c)].push_back(&c);
  }
  for (const auto& [name, uses] : variants) {
    const HostCollective& first = *uses.front();
    Json builtin;
    builtin["collective"] = "pld.tensor." + collective_op(first);
    if (reduces(first.kind)) builtin["reduce_op"] = reduce_name(first.reduce_op);
    if (first.kind == 3) builtin["root"] = first.root;
    if (first.kind != 6 && !first.tensors.empty()) {
      builtin["dtype"] = std::string(ir::dtype_name(first.tensors[0].dtype));
    }
    builtin["implementation"] =
        "the device runtime's built-in collective (comm_isa::collective, kind " +
        std::to_string(first.kind) + "): no kernel is generated or built for it";
    builtin["uses"] = Json::array();
    for (const HostCollective* c : uses) builtin["uses"].push_back(use_json(*c));
    Json manifest;
    manifest["program"] = name;
    manifest["entry"] = nullptr;
    manifest["kernels"] = Json::array();
    manifest["orchestration"] = Json::array();
    manifest["builtin"] = std::move(builtin);
    const std::filesystem::path dir = root / "next_levels" / name;
    prepare_output_dir(dir);
    write_output_files(dir, {{"kernel_config.json",
                              manifest.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"},
                             {"kernel_config.py", codegen::kernel_config_python(manifest)}});
  }
}

}  // namespace pypto::driver::detail
