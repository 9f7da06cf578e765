#include "bindings.h"

namespace pypto::bindings {

void bind_profiling(nanobind::module_ m) { (void)m; }

}  // namespace pypto::bindings
