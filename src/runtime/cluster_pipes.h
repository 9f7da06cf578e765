// The cross-core pipes of a Group's cluster (PtoIsa::pipes): see cluster_pipes.cpp.
#pragma once

#include "pto_abi.h"

namespace pypto::runtime::cluster_pipes {

const PtoPipeIsa& pipe_isa();

}  // namespace pypto::runtime::cluster_pipes
