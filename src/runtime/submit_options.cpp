// Submit options of the task runtime: their checks, and the predicate a task is dispatched on.
#include "submit_options.h"

#include <string>

namespace pypto::runtime {

namespace {

// One case a line reads as the table it is.
// clang-format off
bool predicate_dtype_supported(int32_t dtype) {
  switch (dtype) {
    case PTO_INT8: case PTO_INT16: case PTO_INT32: case PTO_INT64: case PTO_UINT8:
    case PTO_UINT16: case PTO_UINT32: case PTO_UINT64: case PTO_BOOL: case PTO_FP32:
      return true;
    default:
      return false;
  }
}
// clang-format on

}  // namespace

// What is wrong with a submit's options: a dependency that names no earlier task, a predicate
// without its element or with an unknown comparison or dtype, or a block count that is
// negative, too large, or given to a barrier.
std::string check_submit_options(const PtoSubmitOptions& o, int64_t id, bool has_kernel) {
  if (o.ndeps < 0 || (o.ndeps > 0 && !o.deps)) return "invalid dependency list";
  if (o.block_num < 0) return "the launch has " + std::to_string(o.block_num) + " blocks";
  if (o.block_num > kMaxLaunchBlocks) {
    return "the launch has " + std::to_string(o.block_num) + " blocks; at most " +
           std::to_string(kMaxLaunchBlocks) + " are supported";
  }
  if (o.block_num > 1 && !has_kernel) return "a launch of several blocks needs a kernel";
  for (int32_t k = 0; k < o.ndeps; ++k) {
    const PtoTaskHandle h = o.deps[k];
    if (h != PTO_NO_TASK && (h < 1 || h > id)) {
      return "dependency " + std::to_string(k) + " is task handle " + std::to_string(h) +
             ", which names no task submitted before it";
    }
  }
  if (const PtoTaskPredicate* p = o.predicate) {
    if (!p->element) return "the predicate has no operand";
    if (p->op < PTO_CMP_EQ || p->op > PTO_CMP_GE)
      return "unknown predicate comparison " + std::to_string(p->op);
    if (!predicate_dtype_supported(p->dtype))
      return "the predicate's operand has dtype " + std::to_string(p->dtype) +
             " (an integer, BOOL or FP32 element is needed)";
  }
  return {};
}

// clang-format off
// The predicate's comparison of its element, read now (the task's dependencies are done).
bool predicate_holds(const PtoTaskPredicate& p) {
  double value = 0;
  switch (p.dtype) {
    case PTO_INT8: value = *static_cast<const int8_t*>(p.element); break;
    case PTO_INT16: value = *static_cast<const int16_t*>(p.element); break;
    case PTO_INT32: value = *static_cast<const int32_t*>(p.element); break;
    case PTO_INT64: value = static_cast<double>(*static_cast<const int64_t*>(p.element)); break;
    case PTO_UINT8: case PTO_BOOL: value = *static_cast<const uint8_t*>(p.element); break;
    case PTO_UINT16: value = *static_cast<const uint16_t*>(p.element); break;
    case PTO_UINT32: value = *static_cast<const uint32_t*>(p.element); break;
    case PTO_UINT64: value = static_cast<double>(*static_cast<const uint64_t*>(p.element)); break;
    default: value = *static_cast<const float*>(p.element); break;
  }
  const auto target = static_cast<double>(p.target);
  switch (p.op) {
    case PTO_CMP_EQ: return value == target;
    case PTO_CMP_NE: return value != target;
    case PTO_CMP_LT: return value < target;
    case PTO_CMP_LE: return value <= target;
    case PTO_CMP_GT: return value > target;
    default: return value >= target;
  }
}
// clang-format on

}  // namespace pypto::runtime
