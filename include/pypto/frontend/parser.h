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
#include <memory>
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
// A list or tuple of such numbers (nested ones too, e.g. `vshape = [m, n]`) is one as well: it
// stands wherever a literal list may (shapes, offsets, valid shapes), and `name[i]` is its item.
// (The list type lives in a namespace of its own: a map of constants passed to an unqualified
// call must not bring this namespace's functions into argument-dependent lookup.)
namespace constant_list {
struct List;
}
using ConstantListPtr = std::shared_ptr<const constant_list::List>;
// A dimension whose extent is not known when the program is written (`M = pl.dynamic("M")`).
// A function whose parameter shapes name one is specialised at each call on the shapes of the
// call's arguments (one function per distinct set of extents); the entry of a program is
// specialised on the tensors it runs with (Python passes the extents as integer constants).
// (In a namespace of its own, like the list type, for the same reason.)
namespace dynamic_dim {
struct DynamicDim {
  std::string name;
  bool operator==(const DynamicDim& o) const { return name == o.name; }
};
}  // namespace dynamic_dim
using DynamicDim = dynamic_dim::DynamicDim;
using Constant = std::variant<int64_t, double, bool, ir::DataType, ConstantListPtr, DynamicDim>;
namespace constant_list {
struct List {
  std::vector<Constant> items;
};
}  // namespace constant_list
using ConstantList = constant_list::List;
using Constants = std::map<std::string, Constant, std::less<>>;

// The constant that tells the parser the rank count of a multi-rank run (the number of devices
// of its DistributedConfig): pld.world_size() is then that number. Without it, pld.world_size()
// is an op that a host orchestrator evaluates when it runs.
inline constexpr std::string_view kWorldSizeConstant = "__pld_world_size__";

// Nesting of blocks and expressions beyond this is rejected (the parser is recursive).
inline constexpr int kMaxNestingDepth = 100;

// -------------------------------- functions defined outside the program (parser_helpers.cpp)
//
// A module-level `@pl.function` (no `self`) called by name from a program method is added to the
// program once and called like a method; a `@pl.inline` (or `@pl.jit.inline`) function's body is
// expanded at each call site. Inside a file given to parse_module, such functions are found in
// the text itself; a `@pl.program` class or a `@pl.jit` function parsed on its own gets them as
// HelperSources (found by Python in the scope that defines the class or function).

enum class HelperKind : uint8_t { Function, Inline, JitInline };

struct HelperSource {
  std::string name;  // the def's name (what the program calls the function)
  HelperKind kind = HelperKind::Function;
  std::string file_name;   // a key of Helpers::file_texts
  int32_t first_line = 1;  // of its first decorator, 1-based in that file
  Constants constants;     // the constants of the scope that defines it
  // The helpers visible where it is defined: name -> index into Helpers::sources.
  std::map<std::string, size_t, std::less<>> scope;
};

struct Helpers {
  std::vector<HelperSource> sources;
  std::map<std::string, size_t, std::less<>> scope;  // those the program's own scope sees
  std::map<std::string, std::string, std::less<>> file_texts;
};

// Parses a whole Python file: imports are skipped, top-level constant assignments
// (`N = 64`, `ROWS, COLS = 512, 128`, `K = N // 2`, `DT = pl.FP32`) are evaluated into the
// constants (on top of `constants`), other top-level statements are skipped, and every
// `@pl.program` class is parsed, in file order. `pinned` constants override the file's own
// assignments of those names (a sweep over a module constant); naming one the file does not
// assign is an error.
std::vector<ir::ProgramPtr> parse_module(std::string_view text, std::string_view file_name,
                                         const Constants& constants = {},
                                         const Constants& pinned = {});

// The tensors a program runs with, for an entry whose parameter shapes name dynamic dimensions
// (pl.dynamic): the entry is specialised on them, by parameter name when every name is one of
// the entry's parameters, else by position.
struct EntryTensor {
  std::string name;
  std::vector<int64_t> shape;
  ir::DataType dtype = ir::DataType::FP32;
};

// Parses the source of one `@pl.program` class (decorators included), as inspect.getsource
// returns it: it may be indented as a whole. `line_offset` is the number of file lines before
// the text, so errors and the program's SourceInfo refer to lines of the file. With
// `rest_of_file`, the text may go on after the class (from its header to the end of its file):
// what follows the class is not read.
ir::ProgramPtr parse_program(std::string_view text, std::string_view file_name,
                             const Constants& constants = {}, int32_t line_offset = 0,
                             bool rest_of_file = false, const Helpers& helpers = {},
                             const std::vector<EntryTensor>& entry_tensors = {});

// -------------------------------- @pl.jit functions (parser_jit.cpp)
//
// A `@pl.jit` function is a plain function whose tensor parameters carry no shape
// (`a: pl.Tensor`, `c: pl.Out[pl.Tensor]`) and whose scalar parameters name a dtype (`n: pl.INT32`
// or `pl.Scalar[pl.INT32]`). A specialisation gives every parameter its argument: a tensor its
// shape and dtype, a scalar its value. Parsed with one, the function becomes the same IR as the
// equivalent `@pl.program`: an Orchestration function named after it (tensor parameters only;
// each scalar is a constant of the body), `with pl.at(level=pl.Level.CORE_GROUP)` scopes left
// for OutlineIncoreScopes, and one InCore function per `@pl.jit.incore` helper it calls, typed
// by the arguments of its calls.

// @pl.jit, @pl.jit.incore, @pl.jit.host (a multi-rank program's host orchestrator)
enum class JitKind : uint8_t { Entry, Incore, Host };

// Where a jit function is in its file: `first_line` (1-based) is its first decorator's line.
struct JitFunctionSource {
  std::string name;
  JitKind kind = JitKind::Entry;
  int32_t first_line = 1;
};

struct JitTensorArgument {
  std::vector<int64_t> shape;
  ir::DataType dtype = ir::DataType::FP32;
};

// A parameter's argument in a specialisation: a tensor's shape and dtype, or a scalar's value.
using JitArgument = std::variant<JitTensorArgument, Constant>;
using JitArguments = std::map<std::string, JitArgument, std::less<>>;

// The top-level `@pl.jit` and `@pl.jit.incore` functions of a whole Python file, in file order
// (what `pypto compile` and `pypto run` offer). `module_constants`, when given, receives the
// file's top-level constants (as parse_module evaluates them), for parse_jit.
std::vector<JitFunctionSource> find_jit_functions(std::string_view file_text,
                                                  std::string_view file_name,
                                                  Constants* module_constants = nullptr);

// Parses the jit function `entry` of `functions` (all in `file_text`, the whole file; helpers
// are the `Incore` ones, called by name) specialised on `arguments` (one per parameter). The
// program is named after the entry. Errors are located in the file as for parse_program.
ir::ProgramPtr parse_jit(std::string_view file_text, std::string_view file_name,
                         const std::vector<JitFunctionSource>& functions, std::string_view entry,
                         const JitArguments& arguments, const Constants& constants = {},
                         const Helpers& helpers = {});

}  // namespace pypto::frontend
