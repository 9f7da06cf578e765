// Private to src/frontend: the small records the parser's members share (values, function
// signatures, blocks, loop and helper state, subscripts) and the free helpers over them. The
// Parser class itself is in parser_state.h.
#pragma once

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include "pypto/frontend/lexer.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/scalar_arith.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend::detail {

using ir::CompileError;
using ir::DataType;
using ir::ExprPtr;
using ir::Span;
using ir::StmtPtr;
using ir::TypePtr;
using ir::VarPtr;
using TK = TokenKind;

// What an expression evaluates to: an IR expression, or one of the enum-like values of the
// `pl` namespace that only make sense as attributes, type parts or scope levels.
struct Value {
  // TileLayout / TensorLayout: a `pl.TileLayout.<m>` / `pl.TensorLayout.<M>` member, which only
  // a few op keywords take (pl.move's blayout=, pl.tensor.create's layout=); `level` holds the
  // member's name.
  enum class Kind : uint8_t { Expr, DType, Space, Level, FuncType, Pad, TileLayout, TensorLayout };
  Kind kind = Kind::Expr;
  ExprPtr expr;
  DataType dtype = DataType::FP32;
  ir::MemorySpace space = ir::MemorySpace::Vec;
  ir::PadValue pad = ir::PadValue::Zero;
  ir::FunctionType func_type = ir::FunctionType::InCore;
  std::string_view level;
  Span span;
};

std::string_view value_kind_description(const Value& v);

// One argument of a call as written: by keyword or by position.
struct CallArg {
  std::string_view keyword;  // empty for positional
  Span keyword_span;
  Value value;
  // A string literal argument (only where the callee accepts strings: `value` then holds no
  // expression, and its span is the literal's).
  std::optional<std::string> text;
  // `attrs={...}` of a call of a program function (parser_call_attrs.cpp): `value` then holds
  // no expression, and its span is the dictionary's.
  std::optional<ir::Attrs> attrs;
  // `pl.no_dep(x)` as an argument of a call of a program function: `value` is x, passed without
  // ordering the task by it.
  bool no_dep = false;
};

// Same kind, shape and dtype: what must hold when a name is rebound or a value is passed to a
// function. Memory spaces and MemRefs may differ (passes refine them).
bool same_shape_dtype(const TypePtr& a, const TypePtr& b);

// A scalar argument fits a scalar parameter of the same family (integers, floats, bool).
bool argument_fits(const TypePtr& param, const TypePtr& arg);

// Evaluates an expression built only from literals (constants are literals in the IR) as the
// program computes it (pypto/ir/scalar_arith.h). No value when it is not constant or cannot be
// evaluated; `overflowed` when an integer operation wrapped around.
ir::ScalarFold fold_constant(const ExprPtr& e);

std::optional<Constant> to_constant(const std::optional<ir::Scalar>& s);

// The constant a value of a module-level assignment holds: a number, a dtype, or a list/tuple
// of those; none when it is not constant.
std::optional<Constant> constant_of(const Value& v);

// pl.Level's member names ("AIV, AIC, ... or GLOBAL") and whether `name` is one of them.
bool is_level_name(std::string_view name);
std::string level_names();
// HOST and the levels above it (PyPTO's Linqu levels 3 and up): where a host orchestrator and
// host sub-workers run.
bool is_above_chip_level(std::string_view level);
// The canonical name of a pl.Level member (NODE is HOST, UMA and PROCESSOR are CHIP, ...).
std::string_view canonical_level(std::string_view level);
// pl.SplitMode's value of a member name: NONE 0, UP_DOWN 1, LEFT_RIGHT 2.
std::optional<int64_t> split_mode_number(std::string_view name);

// A layout member (`value`) given to op `def` (pl.move's blayout=, pl.tensor.create's layout=),
// by `keyword` or, without one, at argument `position`: checked and dropped
// (parser_op_spellings.cpp). Throws CompileError where no layout belongs.
void accept_layout_argument(const ir::OpDef& def, std::string_view keyword, const Value& value,
                            size_t position, const std::string& spelling);

using DynamicBindings = std::map<std::string, int64_t, std::less<>>;

// Where a parameter's shape has a dynamic dimension: the dimension, the name, and how the
// dimension's extent follows from the name's (extent = scale * name + offset).
struct DynamicDimAt {
  size_t dim = 0;
  std::string name;
  int64_t scale = 1;
  int64_t offset = 0;
};

// One dimension of the valid region a kernel parameter's pl.TensorView(valid_shape=[...])
// declares: a constant extent, or a dynamic dimension's name that only the view names (its
// value is the caller's argument's valid extent there, given through a scalar parameter of
// that name, parser_valid_shapes.cpp).
struct ValidDim {
  int64_t extent = 0;  // when `symbol` is empty
  std::string symbol;
};

struct FunctionSignature {
  std::string name;
  ir::FunctionType type = ir::FunctionType::Opaque;  // a bare @pl.function
  ir::FunctionAttrs attrs;
  std::vector<ir::Param> params;
  std::vector<TypePtr> return_types;
  // A function written without a `->` annotation: its return types are those of its first
  // return statement, known once its body is read (a caller met first has it read then:
  // Parser::read_returns_of).
  bool returns_from_body = false;
  bool body_in_progress = false;
  ir::FunctionPtr body;  // set once read
  Span span;
  size_t body_start = 0;  // token index just after the signature's ':'
  // A function defined outside the program class: its index in Parser::helpers_.
  std::optional<size_t> helper;
  size_t decl_start = 0;  // token index of its first decorator: where its signature is read again
  bool is_method = true;
  // Dynamic dimensions (pl.dynamic) in its parameters' shapes: per parameter, (dimension index,
  // name). A signature that has any is a template: it is not a function of the program itself,
  // each call specialises it on its arguments' shapes (parser_dynamic.cpp).
  std::vector<std::vector<DynamicDimAt>> dynamic_dims;
  std::vector<std::string> dynamic_names;  // every one its signature names, first use first
  bool is_template = false;
  std::vector<size_t> specialisations;      // a template's, as indices of Parser::signatures_
  std::optional<size_t> specialisation_of;  // a specialisation's template
  DynamicBindings bindings;                 // a specialisation's extents of the dynamic dims
  std::vector<std::vector<int64_t>> argument_shapes;  // per parameter with dynamic dims
  // Kernel parameters whose pl.TensorView declares a partial valid region, by parameter name
  // (their IR type is the whole tensor: pl.load intersects its valid region with this one).
  std::map<std::string, std::vector<ValidDim>, std::less<>> param_valid;
  // The dynamic names only those views give: a specialisation has one leading Scalar[INDEX]
  // parameter per name, which each call fills from its arguments' valid regions.
  std::vector<std::string> valid_symbols;
};

// Where a signature read for the first time names a dynamic dimension: in which of the shapes
// read so far (Parser::shapes_read_), at which dimension.
struct DynamicDimUse {
  size_t shape = 0;
  size_t dim = 0;
  std::string name;
  bool in_tensor_view = false;  // in a pl.TensorView's valid_shape, which needs no value
  // A dimension written as arithmetic on the name (`M * 2`, `N + 1`): its extent is
  // scale * name + offset (Parser::parse_shape_formula).
  int64_t scale = 1;
  int64_t offset = 0;
};

// One component of a subscript (parser_subscripts.cpp): `i` (an index) or `lo:hi` (either
// bound may be missing).
struct SubscriptItem {
  bool is_slice = false;
  ExprPtr index;  // an index, or a slice's lower bound (null: 0)
  ExprPtr upper;  // a slice's upper bound (null: the dimension's extent)
  Span span;
};

// The box a subscript names: per dimension its offset and extent (1 for an index), and the
// extents of the dimensions a slice keeps.
struct SubscriptWindow {
  std::vector<ExprPtr> offsets;
  std::vector<int64_t> extents;
  std::vector<int64_t> kept;
};

struct CallSite {
  size_t callee;
  Span span;
};

// The `x = pl.yield_(...)` that ends a loop body or an if branch.
struct YieldInfo {
  std::vector<std::string_view> names;
  std::vector<Span> name_spans;
  std::vector<ExprPtr> values;
  std::vector<Span> value_spans;  // where each value is written
  Span span;
};

// What `with pl.at(...)` says (parser_at_scope.cpp).
struct AtScopeArgs {
  std::string level;      // "CORE_GROUP", or a hierarchy level (canonical name)
  std::string role;       // role=pl.Role.<member> of a hierarchy scope; empty: none
  Span role_span;
  std::string name_hint;  // the outlined kernel's name; empty: the pass names it
  ExprPtr deps;           // deps=[...]: a MakeTuple of TaskIds and TaskId arrays, or null
};

// `predicate=(tensor[indices] <cmp> target)` of a task (parser_tasks.cpp).
struct TaskPredicate {
  ExprPtr operand;  // the tensor
  ExprPtr indices;  // a MakeTuple, one index per dimension
  int64_t cmp = 0;  // PtoCmpType, with the tensor as the left operand
  int64_t target = 0;
  Span span;
};

// ScopeEndingABlock: the body of a `with pl.scope()` / `pl.manual_scope()` that is the last
// statement of a loop body or an if branch, which may end with that block's pl.yield_.
enum class BlockKind : uint8_t {
  Function,
  Loop,
  LoopWithIterArgs,
  IfBranch,
  Scope,
  ScopeEndingABlock
};

// While it lives, one more scope of a kind is open: `count` is one higher.
class CountedScope {
 public:
  explicit CountedScope(int& count) : count_(count) { ++count_; }
  ~CountedScope() { --count_; }
  CountedScope(const CountedScope&) = delete;
  CountedScope& operator=(const CountedScope&) = delete;

 private:
  int& count_;
};

struct Block {
  std::vector<StmtPtr> stmts;
  std::optional<YieldInfo> yield;
  bool ends_with_return = false;
};

// A parameter of a @pl.jit or @pl.jit.incore function as written: a tensor (shape-less, or with
// a shape the argument must have) or a scalar of a dtype.
struct JitParam {
  std::string_view name;
  Span span;
  ir::ParamDirection direction = ir::ParamDirection::In;
  bool is_tensor = false;
  TypePtr annotated;  // pl.Tensor[[...], dtype] when written with a shape
  // The pl.dynamic dimensions of `annotated` (placeholder extents there). A call's argument
  // gives each its extent.
  std::vector<DynamicDimAt> dynamic_dims;
  DataType scalar_dtype = DataType::FP32;
};

struct JitSignature {
  std::string name;
  JitKind kind = JitKind::Entry;
  Span span;
  std::vector<JitParam> params;
  size_t body_start = 0;
  // A helper, once a call has specialised it: its index in signatures_ and where that call is.
  std::optional<size_t> signature;
  Span first_call;
  bool in_progress = false;  // its body is being parsed (a call now would be recursion)
};

// A loop whose body is being parsed. `break` and `continue` become assignments of a flag of
// the innermost one (`exits` remembers them); when its body is complete, lower_*_exits turns
// the loop into structured code that reads the flags, so no later stage sees a jump.
struct LoopContext {
  std::string kind;           // "pl.range", "while"...: names the loop in messages
  bool allows_exits = false;  // break/continue are allowed (sequential and while loops)
  bool has_init = false;      // carries values explicitly (init_values=)
  Span span;
  VarPtr break_flag, continue_flag;  // made by the first break / continue
  std::unordered_map<const ir::Stmt*, Span> exits;
};

using HelperScope = std::map<std::string, size_t, std::less<>>;

// A function defined outside the program (parser_helpers.cpp): a module-level @pl.function, a
// @pl.inline or a @pl.jit.inline function.
struct ExternalHelper {
  std::string name;
  HelperKind kind = HelperKind::Function;
  // Its tokens, lexed from its own file when `own_tokens`; otherwise it is in the parser's token
  // stream at `start` (a function of the file given to parse_module).
  bool own_tokens = false;
  bool lexed = false;
  std::vector<Token> tokens;
  size_t start = 0;
  std::string_view file_name;
  std::string_view file_text;
  int32_t line_shift = 0;           // a token's line + line_shift is its line in file_text
  Constants constants;              // of the scope that defines it (own_tokens only)
  HelperScope scope;                // the helpers visible in its body (own_tokens only)
  int32_t first_line = 1;           // of its first decorator in file_text (own_tokens only)
  std::optional<size_t> signature;  // a Function helper added to the current program
  bool expanding = false;           // an inline helper whose body is being expanded
  // A pl.FunctionType.Spmd method: its body's kernel call is launched over this many blocks
  // (its attrs={"core_num": N}).
  std::optional<int64_t> spmd_blocks;
};

// The state of an inline expansion: parameters still bound to the caller's variables (a first
// assignment in the body makes a new local instead of writing the caller's variable).
struct InlineFrame {
  std::vector<std::string> aliased_params;
};

}  // namespace pypto::frontend::detail
