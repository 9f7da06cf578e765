// Planted on purpose: a runtime source that reaches up into the driver. The layering test
// compiles it with the runtime layer's include view and expects the compiler to refuse it.
#include "pypto/driver/run.h"
