#include "bindings.h"

namespace pypto::bindings {

void bind_ir(nanobind::module_ m) { (void)m; }

}  // namespace pypto::bindings
