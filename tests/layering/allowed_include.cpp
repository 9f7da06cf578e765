// The control of upward_include.cpp: a runtime source using a layer below it compiles.
#include "pypto/ir/program.h"
#include "pypto/runtime/host_tensor.h"
