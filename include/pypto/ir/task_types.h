// How orchestrations hold PyPTO's task handles: a TaskId is a Scalar[UINT64] (0: no task, e.g.
// PyPTO's `None`) and an Array[N, TASK_ID] a Tensor[[N], UINT64] made by create_tensor, whose
// zeroed slots name no task. The ops that make and use them: src/ir/task_ops.h.
#pragma once

#include "pypto/ir/types.h"

namespace pypto::ir {

inline constexpr DataType kTaskIdDType = DataType::UINT64;

// Whether `type` is a TaskId or a TaskId array.
bool is_task_id_type(const TypePtr& type);
bool is_task_array_type(const TypePtr& type);

}  // namespace pypto::ir
