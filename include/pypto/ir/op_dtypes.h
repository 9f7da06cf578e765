#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "pypto/ir/op_registry.h"

namespace pypto::ir {

// Which element types an op computes on, read off its own type rule: the rule is asked to type a
// call of 16x16 tiles of each dtype, in the forms the op's instruction shape takes (a tile with a
// tile, with a scalar, a scalar with a tile; a [rows, 1] or [1, cols] operand for the expands;
// Left and Right operands for the matrix products). The language reference's op x dtype table
// (scripts/gen_ops.py) and op_definition_test, which runs every accepted pair on the device
// against the interpreter, both read this one answer, so the table claims what the test checks.
//
// nullopt for an op whose result does not depend on its elements' type: the data movers (load,
// store, slice, reshape, gather...), which copy bytes whatever the dtype, and the ops without
// element data (scheduling, system, communication, launch queries).
std::optional<std::vector<DataType>> op_element_dtypes(const OpDef& def);

// Whether the op's type rule types a call with variables of these types (and attributes).
bool op_accepts(const OpDef& def, const std::vector<TypePtr>& types, const Attrs& attrs = {});

// The scalar type a DSL literal of a dtype's family takes: INT64 for the integers, FP32 for the
// floats.
TypePtr literal_scalar_of(DataType dtype);

// Every element dtype of the device, in the order of the language reference's tables.
const std::vector<DataType>& all_element_dtypes();

}  // namespace pypto::ir
