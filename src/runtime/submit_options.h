// Submit options of the task runtime (PtoSubmitOptions): what is wrong with them, and the
// predicate that decides at dispatch whether a task runs.
#pragma once

#include <cstdint>
#include <string>

#include "pto_abi.h"

namespace pypto::runtime {

// The most blocks one launch may have: a bound on the tasks a runaway core_num creates.
constexpr int32_t kMaxLaunchBlocks = 1 << 16;

// What is wrong with the options of the submit of task `id` (empty: nothing).
std::string check_submit_options(const PtoSubmitOptions& o, int64_t id, bool has_kernel);

// The predicate's comparison of its element, read now (the task's dependencies are done).
bool predicate_holds(const PtoTaskPredicate& p);

}  // namespace pypto::runtime
