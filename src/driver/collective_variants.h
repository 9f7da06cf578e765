// The folders of a multi-rank program's built-in collectives in its output directory:
// next_levels/builtin.tensor.<collective>__<variant>/ holds a kernel_config.json and a
// kernel_config.py that say which collective of the device runtime the host plan runs, how
// (reduction, root, signal layout, element type) and where (each use with its windows).
#pragma once

#include <filesystem>
#include <string>

#include "pypto/driver/distributed.h"

namespace pypto::driver::detail {

// "builtin.tensor.allreduce__sum__fp32", "builtin.tensor.broadcast__root0__fp32", ...: one name
// per distinct variant (collective, reduction, root, element type), as PyPTO names them.
std::string collective_variant_name(const HostCollective& collective);

// Writes next_levels/<variant>/kernel_config.{json,py} under `root` for every variant `plan`
// runs. Throws CompileOutputError when the files cannot be written.
void write_collective_variants(const std::filesystem::path& root, const HostPlan& plan);

}  // namespace pypto::driver::detail
