#pragma once

#include <string>

#include "pypto/ir/program.h"

namespace pypto::ir {

// Prints IR as DSL text (Python syntax) that the parser reads back: print -> parse -> print is a
// fixed point. Distinct variables that share a name are given unique names (`acc`, `acc_1`).
// Types are printed in full, including memory spaces and memory references once passes set them.
std::string print_program(const Program& p);
std::string print_function(const Function& f);
std::string print_stmt(const StmtPtr& s);
std::string print_expr(const ExprPtr& e);

}  // namespace pypto::ir
