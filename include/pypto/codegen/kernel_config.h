// The kernel_config.json manifest written next to the generated sources.
#pragma once

#include <nlohmann/json.hpp>

#include "pypto/ir/program.h"

namespace pypto::codegen {

// {"program", "entry", "kernels": [{"name", "function", "params": [{"name", "direction",
//  "kind", "dtype", "shape"}], "buffers": [{"space", "buffer_id", "addr", "size", "values"}],
//  "peak_bytes": {"<space>": bytes}}], "orchestration": [{"name", "function", "params"}]}
// for a program after the pass pipeline.
nlohmann::ordered_json build_kernel_config(const ir::Program& program);

}  // namespace pypto::codegen
