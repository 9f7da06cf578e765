#pragma once

#include <cstdint>

#include "pypto/ir/program.h"

namespace pypto::ir {

// Structural equality up to consistent renaming of variables (alpha-equivalence): two programs
// are equal when they have the same functions, types, ops and attributes, and their variables
// correspond one-to-one by definition site. Spans are ignored; names of variables are ignored,
// names of functions and programs are not.
bool structural_equal(const Program& a, const Program& b);
bool structural_equal(const Function& a, const Function& b);
bool structural_equal(const StmtPtr& a, const StmtPtr& b);
bool structural_equal(const ExprPtr& a, const ExprPtr& b);

// A hash consistent with structural_equal (equal programs hash equally).
uint64_t structural_hash(const Program& p);
uint64_t structural_hash(const Function& f);

}  // namespace pypto::ir
