// The size of a program's IR, for pass statistics in the compile profile.
#pragma once

#include <cstdint>

#include "pypto/ir/program.h"

namespace pypto::ir {

// Expression and statement nodes of every function, parameters included.
std::int64_t count_nodes(const Program& program);

}  // namespace pypto::ir
