// Parser of the DSL: Python-syntax program text -> typed frontend IR (ir::Program).
//
// Recursive descent over the token stream of lexer.h; every op call goes through
// ir::make_op_call, which checks it and infers its type. The frontend IR is not SSA: a function
// has one Var per name, and rebinding a name assigns that Var again (its type may not change).
// All errors are thrown as ParseError (support/diagnostics.h) rendered against the text, at the
// first error.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "pypto/ir/program.h"
#include "pypto/ir/types.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {

// The error every parse entry point throws.
using support::ParseError;

// A value of a Python name outside the program (a module global, a local of the scope where the
// class is defined): it becomes an IntImm/FloatImm/BoolImm, or a dtype where one is expected.
using Constant = std::variant<int64_t, double, bool, ir::DataType>;
using Constants = std::map<std::string, Constant, std::less<>>;

// Nesting of blocks and expressions beyond this is rejected (the parser is recursive).
inline constexpr int kMaxNestingDepth = 100;

// Parses a whole Python file: imports are skipped, top-level constant assignments
// (`N = 64`, `ROWS, COLS = 512, 128`, `K = N // 2`, `DT = pl.FP32`) are evaluated into the
// constants (on top of `constants`), other top-level statements are skipped, and every
// `@pl.program` class is parsed, in file order. `pinned` constants override the file's own
// assignments of those names (a sweep over a module constant); naming one the file does not
// assign is an error.
std::vector<ir::ProgramPtr> parse_module(std::string_view text, std::string_view file_name,
                                         const Constants& constants = {},
                                         const Constants& pinned = {});

// Parses the source of one `@pl.program` class (decorators included), as inspect.getsource
// returns it: it may be indented as a whole. `line_offset` is the number of file lines before
// the text, so errors and the program's SourceInfo refer to lines of the file. With
// `rest_of_file`, the text may go on after the class (from its header to the end of its file):
// what follows the class is not read.
ir::ProgramPtr parse_program(std::string_view text, std::string_view file_name,
                             const Constants& constants = {}, int32_t line_offset = 0,
                             bool rest_of_file = false);

}  // namespace pypto::frontend
