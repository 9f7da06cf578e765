// Malformed programs: each must fail with one error at an exact line and column, with a message
// saying what was wrong or expected. None may crash.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

// Lines 1-6; a kernel body starts on line 7, indented by 8 spaces.
const char* kKernelHeader =
    "import pypto.language as pl\n"
    "\n"
    "@pl.program\n"
    "class P:\n"
    "    @pl.function(type=pl.FunctionType.InCore)\n"
    "    def k(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) "
    "-> pl.Tensor[[64, 64], pl.FP32]:\n";

// Lines 1-4; class members start on line 5.
const char* kClassHeader =
    "import pypto.language as pl\n"
    "\n"
    "@pl.program\n"
    "class P:\n";

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

std::string kernel(const std::string& body) { return std::string(kKernelHeader) + body; }
std::string members(const std::string& body) { return std::string(kClassHeader) + body; }

const char* kOrch = "    @pl.function(type=pl.FunctionType.Orchestration)\n";
const char* kInCore = "    @pl.function(type=pl.FunctionType.InCore)\n";
const char* kSig64 =
    "(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> "
    "pl.Tensor[[64, 64], pl.FP32]:\n";

const char* kLoad = "        t = pl.load(a, [0, 0], [64, 64])\n";  // line 7 of a kernel
const char* kStore = "        o = pl.store(t, [0, 0], o)\n        return o\n";

struct ErrorCase {
  const char* name;
  std::string text;
  int line;
  int col;
  const char* message;  // a substring of the error message
};

std::vector<ErrorCase> cases() {
  std::string S = kStore;
  std::string L = kLoad;
  return {
      // ---- syntax
      {"missing_colon_after_signature",
       members(std::string(kInCore) + "    def k(self) -> pl.Scalar[pl.INT64]\n        return 1\n"),
       6, 39, "expected ':' after function signature"},
      {"missing_close_paren", kernel("        t = pl.load(a, [0, 0], [64, 64]\n" + S), 7, 20,
       "'(' was never closed"},
      {"mismatched_bracket", kernel("        t = pl.load(a, [0, 0), [64, 64])\n" + S), 7, 29,
       "does not match opening parenthesis '['"},
      {"unterminated_string", kernel("        x = 'abc\n" + S), 7, 13, "unterminated string"},
      {"invalid_character", kernel("        t = a $ 1\n" + S), 7, 15, "invalid character '$'"},
      {"unindent_mismatch", kernel(L + "      o = pl.store(t, [0, 0], o)\n        return o\n"), 8,
       7, "unindent does not match any outer indentation level"},
      {"unexpected_indent",
       kernel(L + "            o = pl.store(t, [0, 0], o)\n        return o\n"), 8, 13,
       "unexpected indent"},
      {"tabs_and_spaces", kernel("\tt = pl.load(a, [0, 0], [64, 64])\n" + S), 7, 2,
       "inconsistent use of tabs and spaces"},
      {"missing_indented_block", kernel("        for i in pl.range(4):\n        pass\n" + L + S), 8,
       9, "expected an indented block after 'for' statement on line 7"},
      {"power_operator", kernel("        x = 2 ** 3\n" + L + S), 7, 15,
       "operator '**' is not supported"},
      {"augmented_assignment", kernel("        x = 1\n        x += 1\n" + L + S), 8, 11,
       "augmented assignment '+=' is not supported"},
      {"assign_to_subscript", kernel("        n = 3\n        n[0] = 1\n" + L + S), 8, 10,
       "only tuple values can be indexed"},
      {"assign_to_call", kernel(L + "        pl.exp(t) = t\n" + S), 8, 9,
       "cannot assign to an expression"},
      {"conditional_expression", kernel("        x = 1 if 2 else 3\n" + L + S), 7, 15,
       "conditional expressions"},
      {"expression_statement_without_effect", kernel(L + "        t\n" + S), 8, 9,
       "expected a call or an assignment"},
      {"nested_def", kernel("        def g(self):\n            pass\n" + L + S), 7, 9,
       "nested function definitions are not supported"},
      {"too_deep_nesting",
       kernel("        x = " + std::string(150, '(') + "1" + std::string(150, ')') + "\n" + L + S),
       7, 112, "too deeply nested"},
      {"too_long_operator_chain", kernel("        x = 1" + repeat(" + 1", 1001) + "\n" + L + S), 7,
       4015, "expression too long (more than 1000 chained operators)"},
      // ---- names and ops
      {"undefined_name", kernel("        t = pl.load(b, [0, 0], [64, 64])\n" + S), 7, 21,
       "undefined name 'b'"},
      {"unknown_op", kernel("        t = pl.frobnicate(a)\n" + S), 7, 13,
       "unknown op 'pl.frobnicate'"},
      {"unknown_function", kernel("        t = load(a)\n" + S), 7, 13, "unknown function 'load'"},
      {"wrong_arity_too_few", kernel("        t = pl.load(a, [0, 0])\n" + S), 7, 13,
       "pl.load takes at least 3 argument(s), got 2 (missing 'shapes')"},
      {"wrong_arity_too_many", kernel(L + "        u = pl.exp(t, t)\n" + S), 8, 23,
       "pl.exp takes at most 1 arguments"},
      {"unknown_keyword", kernel("        t = pl.load(a, [0, 0], [64, 64], speed=3)\n" + S), 7, 42,
       "unknown keyword argument 'speed' of pl.load"},
      {"non_constant_attribute",
       kernel("        t = pl.load(a, [0, 0], [64, 64], target_memory=a)\n" + S), 7, 56,
       "attribute 'target_memory' of pl.load must be a constant"},
      {"unknown_memory_space",
       kernel("        t = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.L2)\n" + S), 7,
       71, "unknown memory space 'pl.MemorySpace.L2'"},
      {"type_mismatch_tensor_for_tile", kernel(L + "        u = pl.add(t, a)\n" + S), 8, 23,
       "got Tensor in argument 2 of pl.add"},
      {"type_mismatch_tile_for_tensor",
       kernel(L + "        u = pl.load(t, [0, 0], [64, 64])\n" + S), 8, 21,
       "expected Tensor, got Tile in argument 1 of pl.load"},
      {"shape_mismatch",
       kernel(L + "        u = pl.load(a, [0, 0], [32, 32])\n        v = pl.add(t, u)\n" + S), 9,
       23, "shape mismatch in pl.add"},
      {"dtype_mismatch",
       kernel(L + "        u = pl.cast(t, target_type=pl.FP16)\n        v = pl.add(t, u)\n" + S), 9,
       23, "dtype mismatch in pl.add"},
      {"memory_space_mismatch",
       kernel(L + "        m = pl.matmul(pl.move(t, target_memory=pl.MemorySpace.Right), t)\n" + S),
       8, 23, "expected a tile in Left, got one in Right"},
      {"illegal_move", kernel(L + "        m = pl.move(t, target_memory=pl.MemorySpace.Acc)\n" + S),
       8, 21, "illegal data movement in pl.move from Vec to Acc"},
      {"string_in_expression", kernel("        t = pl.load(a, 'x', [64, 64])\n" + S), 7, 24,
       "string literals are not supported"},
      {"range_outside_for", kernel("        r = pl.range(4)\n" + L + S), 7, 13,
       "only allowed as the iterable of a for loop"},
      {"index_of_non_tuple", kernel("        n = 3\n        u = n[0]\n" + L + S), 8, 14,
       "only tuple values can be indexed"},
      {"tile_as_if_condition", kernel(L + "        if t:\n            pass\n" + S), 8, 12,
       "expected a scalar condition"},
      // ---- types and annotations
      {"fractional_shape",  // true division gives a float, never truncated to 32
       members(std::string(kInCore) +
               "    def k(self, a: pl.Tensor[[64 / 2, 64], pl.FP32]) -> pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 31, "shape must be an integer, got the float 64 / 2"},
      {"non_constant_shape",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Tensor[[True, 64], pl.FP32]) -> pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 31, "non-constant shape"},
      {"non_positive_shape",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Tensor[[0, 64], pl.FP32]) -> pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 31, "shape dimensions must be positive"},
      {"overflowing_shape",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Tensor[[4294967296 * 4294967296 + 64, 64], pl.FP32]) -> "
               "pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 31, "integer overflow in shape"},
      {"overflowing_tuple_index",
       kernel(L + "        p = (t, t)\n        u = p[9223372036854775807 + 2]\n" + S), 9, 15,
       "integer overflow in a tuple index"},
      {"missing_dtype",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Tensor[[64, 64]]) -> pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 38, "expected ',' and a dtype after the shape"},
      {"unknown_type",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Matrix[[64, 64], pl.FP32]) -> pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 20, "unknown type 'pl.Matrix'"},
      {"dtype_expected",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Tensor[[64, 64], 4]) -> pl.Scalar[pl.INT64]:\n"
               "        return 1\n"),
       6, 40, "expected a dtype such as pl.FP32"},
      {"missing_param_annotation",
       members(std::string(kInCore) +
               "    def k(self, a) -> pl.Scalar[pl.INT64]:\n        return 1\n"),
       6, 18, "parameter 'a' needs a type annotation"},
      {"self_not_first",
       members(std::string(kInCore) +
               "    def k(a: pl.Scalar[pl.INT64], self) -> pl.Scalar[pl.INT64]:\n"
               "        return a\n"),
       6, 35, "'self' must be the first parameter of 'k'"},
      {"duplicate_parameter",
       members(std::string(kInCore) +
               "    def k(self, a: pl.Scalar[pl.INT64], a: pl.Scalar[pl.INT64]) -> "
               "pl.Scalar[pl.INT64]:\n        return a\n"),
       6, 41, "duplicate parameter 'a'"},
      {"annotation_mismatch",
       kernel("        t: pl.Tile[[32, 32], pl.FP32] = pl.load(a, [0, 0], [64, 64])\n" + S), 7, 12,
       "annotation pl.Tile[[32, 32], pl.FP32] does not match the value's type"},
      // In a nested block: in the function's own block the name becomes a new variable.
      {"rebinding_changes_shape",
       kernel(L + "        for i in pl.range(1):\n            t = pl.load(a, [0, 0], [32, 32])\n" +
              S),
       9, 13,
       "cannot rebind 't' of type pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] to a value of "
       "type pl.Tile[[32, 32], pl.FP32, pl.MemorySpace.Vec]"},
      {"memref_without_space",
       kernel("        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(0, 16384, 0)] = pl.load(a, [0, 0], "
              "[64, 64])\n" +
              S),
       7, 39, "with a pl.MemRef(...) must also give its memory space"},
      {"out_on_a_local",
       kernel("        t: pl.Out[pl.Tile[[64, 64], pl.FP32]] = pl.load(a, [0, 0], [64, 64])\n" + S),
       7, 12, "only allowed on function parameters"},
      // ---- functions and calls
      {"direct_recursion",
       members(std::string(kInCore) + "    def k" + kSig64 +
               "        o = self.k(a, o)\n        return o\n"),
       7, 13, "function 'k' calls itself; recursion is not supported"},
      {"indirect_recursion",
       members(std::string(kInCore) + "    def f" + kSig64 +
               "        o = self.g(a, o)\n        return o\n" + kInCore + "    def g" + kSig64 +
               "        o = self.f(a, o)\n        return o\n"),
       11, 13, "recursive call cycle 'f' -> 'g' -> 'f'"},
      {"duplicate_function",
       members(std::string(kInCore) + "    def k" + kSig64 + "        return o\n" + kInCore +
               "    def k" + kSig64 + "        return o\n"),
       9, 9, "duplicate function 'k' (first defined on line 6)"},
      {"unknown_self_function",
       members(std::string(kOrch) + "    def m" + kSig64 +
               "        o = self.kernel(a, o)\n        return o\n"),
       7, 18, "program has no function 'kernel'"},
      {"self_call_arity",
       members(std::string(kInCore) + "    def k" + kSig64 + "        return o\n" + kOrch +
               "    def m" + kSig64 + "        o = self.k(a)\n        return o\n"),
       10, 13, "self.k takes 2 argument(s), got 1"},
      {"self_call_argument_type",
       members(std::string(kInCore) + "    def k" + kSig64 + "        return o\n" + kOrch +
               "    def m(self, a: pl.Tensor[[32, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], "
               "pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
               "        o = self.k(a, o)\n        return o\n"),
       10, 20,
       "expected pl.Tensor[[64, 64], pl.FP32], got pl.Tensor[[32, 64], pl.FP32] in argument 1 of "
       "self.k"},
      {"method_without_decorator",
       members("    def k" + std::string(kSig64) + "        return o\n"), 5, 5,
       "method 'k' needs a @pl.function"},
      {"class_level_statement", members("    X = 3\n"), 5, 5,
       "expected a @pl.function method in program class 'P'"},
      {"bad_function_type",
       members("    @pl.function(type=pl.FunctionType.Kernel)\n    def k" + std::string(kSig64) +
               "        return o\n"),
       5, 39, "unknown function type 'pl.FunctionType.Kernel'"},
      // ---- returns
      {"missing_return", kernel(L), 6, 9, "does not end with a return statement"},
      {"return_count", kernel(L + "        return\n"), 8, 9,
       "return gives 0 value(s) but the function declares 1"},
      {"return_type", kernel(L + "        return t\n"), 8, 16,
       "return value 1 has type pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] but the function "
       "returns pl.Tensor[[64, 64], pl.FP32]"},
      // ---- loops, yields, scopes
      {"range_step_zero", kernel("        for i in pl.range(0, 4, 0):\n            pass\n" + L + S),
       7, 33, "step must not be zero"},
      {"range_float_bound", kernel("        for i in pl.range(4.0):\n            pass\n" + L + S),
       7, 27, "expected an integer scalar in pl.range"},
      {"for_over_python_range", kernel("        for i in range(4):\n            pass\n" + L + S), 7,
       18,
       "expected pl.range(...), pl.parallel(...), pl.pipeline(...), pl.unroll(...), "
       "pl.spmd(...) or pl.split_aiv(...)"},
      {"yield_without_init_values",
       kernel(L + "        for i in pl.range(4):\n            t = pl.yield_(t)\n" + S), 9, 17,
       "pl.yield_ in a loop without init_values"},
      {"yield_count_mismatch",
       kernel(L +
              "        for i, (x,) in pl.range(4, init_values=(t,)):\n"
              "            y, z = pl.yield_(x, x)\n" +
              S),
       9, 20, "pl.yield_ gives 2 value(s) but the loop carries 1"},
      {"loop_without_yield",
       kernel(L +
              "        for i, (x,) in pl.range(4, init_values=(t,)):\n"
              "            x = pl.exp(x)\n" +
              S),
       8, 9, "a loop with init_values must end with 'x = pl.yield_(...)'"},
      {"yield_not_last",
       kernel(L +
              "        for i, (x,) in pl.range(4, init_values=(t,)):\n"
              "            y = pl.yield_(x)\n            x = pl.exp(x)\n" +
              S),
       10, 13, "pl.yield_ must be the last statement of its block"},
      {"yield_not_assigned",
       kernel(L +
              "        for i, (x,) in pl.range(4, init_values=(t,)):\n"
              "            pl.yield_(x)\n" +
              S),
       9, 13, "the result of pl.yield_ must be assigned"},
      {"yield_type_mismatch",
       kernel(L +
              "        for i, (x,) in pl.range(4, init_values=(t,)):\n"
              "            y = pl.yield_(a)\n" +
              S),
       9, 27, "pl.yield_ value 1 has type pl.Tensor[[64, 64], pl.FP32]"},
      {"init_values_without_targets",
       kernel(L + "        for i in pl.range(4, init_values=(t,)):\n            pass\n" + S), 8, 42,
       "init_values needs a 'for i, (x, ...) in' target"},
      {"if_yield_only_in_then", kernel(L + "        if 1 > 0:\n            y = pl.yield_(t)\n" + S),
       9, 17, "both branches (if and else) must"},
      {"if_yield_different_names",
       kernel(L +
              "        if 1 > 0:\n            y = pl.yield_(t)\n        else:\n"
              "            z = pl.yield_(t)\n" +
              S),
       11, 17, "both branches of an if must assign pl.yield_ to the same names"},
      {"yield_outside_loop", kernel(L + "        y = pl.yield_(t)\n" + S), 8, 13,
       "only allowed at the end of a loop body or an if branch"},
      {"unknown_level",
       kernel(L + "        with pl.at(level=pl.Level.CLUSTER):\n            pass\n" + S), 8, 35,
       "unknown level 'pl.Level.CLUSTER'"},
      {"with_without_pl_at", kernel(L + "        with open('f'):\n            pass\n" + S), 8, 14,
       "pl.spmd(n) or pl.manual_scope() after 'with'"},
      {"else_without_if", kernel(L + "        else:\n            pass\n" + S), 8, 9,
       "'else' without a matching 'if'"},
      {"unknown_arg_direction",
       members(std::string(kInCore) + "    def k" + kSig64 + L + S + kOrch + "    def main" +
               kSig64 +
               "        o = self.k(a, o, attrs={\"arg_directions\": [pl.adir.bogus, "
               "pl.adir.input]})\n        return o\n"),
       12, 60, "unknown argument direction 'pl.adir.bogus'"},
      {"arg_directions_count",
       members(std::string(kInCore) + "    def k" + kSig64 + L + S + kOrch + "    def main" +
               kSig64 +
               "        o = self.k(a, o, attrs={\"arg_directions\": [pl.adir.input]})\n        "
               "return o\n"),
       12, 13, "self.k passes 2 argument(s) but its arg_directions name 1"},
      {"unsupported_call_attribute",
       members(std::string(kInCore) + "    def k" + kSig64 + L + S + kOrch + "    def main" +
               kSig64 + "        o = self.k(a, o, attrs={\"core_num\": 4})\n        return o\n"),
       12, 33, "call attribute 'core_num' of self.k is not supported"},
  };
}

TEST(ParserErrors, EachMalformedProgramFailsAtTheRightPlace) {
  auto all = cases();
  ASSERT_GE(all.size(), 40u);
  for (const auto& c : all) {
    SCOPED_TRACE(c.name);
    try {
      parse_module(c.text, "bad.py");
      ADD_FAILURE() << c.name << ": no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), c.line) << e.rendered();
      EXPECT_EQ(e.col(), c.col) << e.rendered();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.rendered();
      // The rendered form names the file, line and column and shows a caret.
      std::string head =
          "bad.py:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: ";
      EXPECT_EQ(e.rendered().rfind(head, 0), 0u) << e.rendered();
      EXPECT_NE(e.rendered().find('^'), std::string::npos) << e.rendered();
    }
  }
}

TEST(ParserErrors, TruncatedProgramsNeverCrash) {
  // Every prefix of a valid program either parses or fails with a positioned error.
  std::string text = kernel(std::string(kLoad) +
                            "        for i, (x,) in pl.range(1, 4, init_values=(t,)):\n"
                            "            y = pl.yield_(pl.add(x, 1.0))\n"
                            "        if y is not None:\n            pass\n" +
                            kStore);
  for (size_t n = 0; n <= text.size(); ++n) {
    try {
      parse_module(text.substr(0, n), "cut.py");
    } catch (const ParseError& e) {
      EXPECT_FALSE(e.rendered().empty());
    }
  }
}

}  // namespace
}  // namespace pypto::frontend
