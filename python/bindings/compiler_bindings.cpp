#include "bindings.h"

namespace pypto::bindings {

void bind_compiler(nanobind::module_ m) { (void)m; }

}  // namespace pypto::bindings
