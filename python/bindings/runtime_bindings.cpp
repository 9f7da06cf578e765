#include "bindings.h"

namespace pypto::bindings {

void bind_runtime(nanobind::module_ m) { (void)m; }

}  // namespace pypto::bindings
