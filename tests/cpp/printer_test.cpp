#include "pypto/ir/printer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/passes/pass_manager.h"

#include "ir_test_helpers.h"

namespace pypto::ir {
namespace {

using testing::ints;

VarPtr scalar_var(const std::string& name, DataType dt = DataType::INT64) {
  return make_var(name, scalar_type(dt));
}

// A kernel with a memref-annotated load, a loop with an iter_arg, an if with yields, a scope,
// negative floats, and four distinct variables all named `acc`.
ProgramPtr demo_program() {
  auto tensor64 = tensor_type({64, 64}, DataType::FP32);
  auto a = make_var("a", tensor64);
  auto n = scalar_var("n");
  auto c = make_var("c", tensor64);

  MemRef memref{MemorySpace::Vec, 0, 16384, 0};
  auto loaded = make_var("acc", tile_type({64, 64}, DataType::FP32, MemorySpace::Vec, memref));
  // As after InitMemRef: the call carries the refined type of the variable it defines.
  auto inferred = make_op_call("load", {a, ints({0, 0}), ints({64, 64})});
  const auto& load_call = *inferred->as<Call>();
  auto load =
      std::make_shared<Call>(CallKind::Op, "load", load_call.args, load_call.attrs, loaded->type());

  auto i = scalar_var("i");
  auto iter = make_var("acc", loaded->type());  // an iter_arg has its init value's type
  auto next = make_var("acc", tile_type({64, 64}, DataType::FP32));
  auto out = make_var("acc", loaded->type());
  auto body = make_seq({
      std::make_shared<AssignStmt>(next, make_op_call("mul", {iter, make_float(-1.702)})),
      std::make_shared<YieldStmt>(std::vector<ExprPtr>{next}),
  });
  auto loop = std::make_shared<ForStmt>(
      i, make_int(1), make_int(4), make_int(1), ForKind::Sequential, std::vector<VarPtr>{iter},
      std::vector<ExprPtr>{loaded}, body, std::vector<VarPtr>{out});

  auto k = scalar_var("k");
  auto k_then = scalar_var("k");
  auto k_else = scalar_var("k");
  auto cond = make_binary(BinaryOp::Gt, n, make_int(0));
  auto then_body = make_seq({
      std::make_shared<AssignStmt>(
          k_then,
          make_binary(BinaryOp::Mul, make_binary(BinaryOp::Add, n, make_int(1)), make_int(64))),
      std::make_shared<YieldStmt>(std::vector<ExprPtr>{k_then}),
  });
  auto else_body = std::make_shared<YieldStmt>(std::vector<ExprPtr>{make_int(-3)});
  auto branch = std::make_shared<IfStmt>(cond, then_body, else_body, std::vector<VarPtr>{k});

  auto stored = make_var("c", tensor64);
  auto scope = std::make_shared<ScopeStmt>(
      "CORE_GROUP", std::make_shared<AssignStmt>(
                        stored, make_op_call("store", {out, make_tuple({k, make_int(0)}), c})));
  auto fn_body = make_seq({std::make_shared<AssignStmt>(loaded, load), loop, branch, scope,
                           std::make_shared<ReturnStmt>(std::vector<ExprPtr>{stored})});
  auto kernel = std::make_shared<Function>(
      "kernel", FunctionType::InCore,
      std::vector<Param>{
          {a, ParamDirection::In}, {n, ParamDirection::In}, {c, ParamDirection::Out}},
      std::vector<TypePtr>{tensor64}, fn_body);

  // Orchestration: a tuple-returning call and element extraction.
  auto x = make_var("x", tensor64);
  auto y = make_var("y", tensor64);
  auto pair_type = tuple_type({tensor64, tensor64});
  auto t = make_var("t", pair_type);
  auto call =
      std::make_shared<Call>(CallKind::Function, "two", std::vector<ExprPtr>{x, y},
                             Attrs{{"arg_directions", std::vector<int64_t>{1, 2}}}, pair_type);
  auto first = make_var("first", tensor64);
  auto main_body = make_seq({
      std::make_shared<AssignStmt>(t, call),
      std::make_shared<AssignStmt>(first, make_tuple_get_item(t, 0)),
      std::make_shared<ReturnStmt>(std::vector<ExprPtr>{first, make_tuple_get_item(t, 1)}),
  });
  auto main_fn = std::make_shared<Function>(
      "main", FunctionType::Orchestration,
      std::vector<Param>{{x, ParamDirection::Out}, {y, ParamDirection::InOut}},
      std::vector<TypePtr>{tensor64, tensor64}, main_body);
  return std::make_shared<Program>("Demo", std::vector<FunctionPtr>{kernel, main_fn});
}

TEST(PrinterTest, PrintsTheWholeProgramInTheDslFormat) {
  const std::string expected =
      "import pypto.language as pl\n"
      "\n"
      "\n"
      "@pl.program\n"
      "class Demo:\n"
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def kernel(self, a: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64], "
      "c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
      "        acc: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(0, 16384, 0)] = "
      "pl.load(a, [0, 0], [64, 64])\n"
      "        for i, (acc_1,) in pl.range(1, 4, init_values=(acc,)):\n"
      "            acc_2: pl.Tile[[64, 64], pl.FP32] = pl.mul(acc_1, -1.702)\n"
      "            acc_3 = pl.yield_(acc_2)\n"
      "        if n > 0:\n"
      "            k = (n + 1) * 64\n"
      "            k_1 = pl.yield_(k)\n"
      "        else:\n"
      "            k_1 = pl.yield_(-3)\n"
      "        with pl.at(level=pl.Level.CORE_GROUP):\n"
      "            c_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(acc_3, [k_1, 0], c)\n"
      "        return c_1\n"
      "\n"
      "    @pl.function(type=pl.FunctionType.Orchestration)\n"
      "    def main(self, x: pl.Out[pl.Tensor[[64, 64], pl.FP32]], "
      "y: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]) -> "
      "tuple[pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:\n"
      "        t = self.two(x, y, attrs={\"arg_directions\": [pl.adir.output_existing, "
      "pl.adir.inout]})\n"
      "        first: pl.Tensor[[64, 64], pl.FP32] = t[0]\n"
      "        return first, t[1]\n";
  EXPECT_EQ(print_program(*demo_program()), expected);
}

TEST(PrinterTest, ScalarAnnotationOnlyWhenTypesDiffer) {
  auto k = scalar_var("k");
  auto same = std::make_shared<AssignStmt>(k, make_binary(BinaryOp::Add, k, make_int(1)));
  EXPECT_EQ(print_stmt(same), "k = k + 1\n");
  auto f = scalar_var("f", DataType::FP32);
  auto differs = std::make_shared<AssignStmt>(f, make_int(2));
  EXPECT_EQ(print_stmt(differs), "f: pl.Scalar[pl.FP32] = 2\n");
}

TEST(PrinterTest, MinimalParentheses) {
  auto a = scalar_var("a"), b = scalar_var("b"), c = scalar_var("c");
  auto add = [](ExprPtr x, ExprPtr y) { return make_binary(BinaryOp::Add, x, y); };
  auto sub = [](ExprPtr x, ExprPtr y) { return make_binary(BinaryOp::Sub, x, y); };
  auto mul = [](ExprPtr x, ExprPtr y) { return make_binary(BinaryOp::Mul, x, y); };
  EXPECT_EQ(print_expr(add(a, mul(b, c))), "a + b * c");
  EXPECT_EQ(print_expr(mul(add(a, b), c)), "(a + b) * c");
  EXPECT_EQ(print_expr(sub(sub(a, b), c)), "a - b - c");
  EXPECT_EQ(print_expr(sub(a, sub(b, c))), "a - (b - c)");
  EXPECT_EQ(print_expr(make_binary(BinaryOp::FloorDiv, mul(a, b), make_int(2))), "a * b // 2");
  EXPECT_EQ(print_expr(make_binary(BinaryOp::Mod, a, mul(b, c))), "a % (b * c)");
  auto lt = make_binary(BinaryOp::Lt, a, b);
  EXPECT_EQ(print_expr(make_binary(BinaryOp::Eq, lt, make_bool(true))), "(a < b) == True");
  EXPECT_EQ(print_expr(make_binary(BinaryOp::And, lt, make_binary(BinaryOp::Or, lt, lt))),
            "a < b and (a < b or a < b)");
  EXPECT_EQ(print_expr(make_binary(BinaryOp::Or, make_binary(BinaryOp::And, lt, lt), lt)),
            "a < b and a < b or a < b");
  auto neg = std::make_shared<Unary>(UnaryOp::Neg, add(a, b), scalar_type(DataType::INT64));
  EXPECT_EQ(print_expr(neg), "-(a + b)");
  EXPECT_EQ(print_expr(mul(neg, c)), "-(a + b) * c");
  auto neg_lit = std::make_shared<Unary>(UnaryOp::Neg, make_int(-5), scalar_type(DataType::INT64));
  EXPECT_EQ(print_expr(neg_lit), "-(-5)");
  auto not_lt = std::make_shared<Unary>(UnaryOp::Not, lt, scalar_type(DataType::BOOL));
  EXPECT_EQ(print_expr(not_lt), "not a < b");
  EXPECT_EQ(print_expr(make_binary(BinaryOp::Min, add(a, b), make_int(3))), "min(a + b, 3)");
  EXPECT_EQ(print_expr(sub(a, make_int(-1))), "a - -1");
}

TEST(PrinterTest, FloatsRoundTripExactly) {
  EXPECT_EQ(print_expr(make_float(1.0)), "1.0");
  EXPECT_EQ(print_expr(make_float(-1.702)), "-1.702");
  EXPECT_EQ(print_expr(make_float(0.1)), "0.1");
  EXPECT_EQ(print_expr(make_float(1e-7)), "1e-07");
  EXPECT_EQ(print_expr(make_float(1e300)), "1e+300");
  EXPECT_EQ(print_expr(make_float(-0.0)), "-0.0");
  EXPECT_EQ(print_expr(make_float(123456789.0)), "123456789.0");
  double third = 1.0 / 3.0;
  EXPECT_EQ(std::stod(print_expr(make_float(third))), third);
}

TEST(PrinterTest, RangeFormsAndUnroll) {
  auto i = scalar_var("i");
  auto empty = std::make_shared<SeqStmts>(std::vector<StmtPtr>{});
  auto loop = [&](int64_t start, int64_t step, ForKind kind) {
    return print_stmt(std::make_shared<ForStmt>(i, make_int(start), make_int(8), make_int(step),
                                                kind, std::vector<VarPtr>{}, std::vector<ExprPtr>{},
                                                empty, std::vector<VarPtr>{}));
  };
  EXPECT_EQ(loop(0, 1, ForKind::Sequential), "for i in pl.range(8):\n    pass\n");
  EXPECT_EQ(loop(2, 1, ForKind::Sequential), "for i in pl.range(2, 8):\n    pass\n");
  EXPECT_EQ(loop(0, 2, ForKind::Unroll), "for i in pl.unroll(0, 8, 2):\n    pass\n");
}

TEST(PrinterTest, AttrsOfEveryKind) {
  auto a = make_var("a", tile_type({4, 4}, DataType::FP32, MemorySpace::Mat));
  EXPECT_EQ(print_expr(make_op_call("move", {a}, {{"target_memory", MemorySpace::Left}})),
            "pl.move(a, target_memory=pl.MemorySpace.Left)");
  EXPECT_EQ(print_expr(make_op_call("cast", {a}, {{"target_type", DataType::BF16}})),
            "pl.cast(a, target_type=pl.BF16)");
  auto call = std::make_shared<Call>(
      CallKind::Function, "f", std::vector<ExprPtr>{},
      Attrs{{"n", int64_t{3}}, {"x", 0.5}, {"flag", true}, {"s", std::string("q\"")}},
      scalar_type(DataType::INT64));
  EXPECT_EQ(print_expr(call), "self.f(n=3, x=0.5, flag=True, s=\"q\\\"\")");
}

TEST(PrinterTest, GeneratedNamesNeverCollideWithExistingOnes) {
  // Two distinct `x` variables plus a variable literally named `x_1`.
  auto x0 = scalar_var("x"), x1 = scalar_var("x"), named = scalar_var("x_1");
  auto s = make_seq({
      std::make_shared<AssignStmt>(x0, make_int(1)),
      std::make_shared<AssignStmt>(x1, make_int(2)),
      std::make_shared<AssignStmt>(named, make_binary(BinaryOp::Add, x0, x1)),
  });
  EXPECT_EQ(print_stmt(s), "x = 1\nx_2 = 2\nx_1 = x + x_2\n");
}

TEST(PrinterTest, RebindingTheSameVarKeepsOneName) {
  auto t = make_var("t", tile_type({2, 2}, DataType::FP32));
  auto s = make_seq({
      std::make_shared<AssignStmt>(
          t, make_op_call("create_tile", {ints({2, 2})}, {{"dtype", DataType::FP32}})),
      std::make_shared<AssignStmt>(t, make_op_call("exp", {t})),
  });
  EXPECT_EQ(print_stmt(s),
            "t: pl.Tile[[2, 2], pl.FP32] = pl.create_tile([2, 2], dtype=pl.FP32)\n"
            "t: pl.Tile[[2, 2], pl.FP32] = pl.exp(t)\n");
}

// print -> parse -> print is a fixed point, and the re-parsed program equals the original.
void expect_round_trip(const Program& p, const std::string& what) {
  std::string text = print_program(p);
  ProgramPtr reparsed;
  try {
    auto programs = frontend::parse_module(text, what);
    ASSERT_EQ(programs.size(), 1u) << what;
    reparsed = programs[0];
  } catch (const CompileError& e) {
    FAIL() << what << ": printed text does not parse: " << e.what() << "\n" << text;
  }
  EXPECT_EQ(print_program(*reparsed), text) << what;
  EXPECT_TRUE(structural_equal(*reparsed, p)) << what << "\n" << text;
  EXPECT_EQ(structural_hash(*reparsed), structural_hash(p)) << what;
}

TEST(PrinterRoundTripTest, HandBuiltProgram) {
  // The demo program plus the two-output callee its orchestration calls.
  auto tensor64 = tensor_type({64, 64}, DataType::FP32);
  auto x = make_var("x", tensor64), y = make_var("y", tensor64);
  auto two = std::make_shared<Function>(
      "two", FunctionType::InCore,
      std::vector<Param>{{x, ParamDirection::Out}, {y, ParamDirection::InOut}},
      std::vector<TypePtr>{tensor64, tensor64},
      std::make_shared<ReturnStmt>(std::vector<ExprPtr>{x, y}));
  auto demo = demo_program();
  std::vector<FunctionPtr> fns = {two};
  fns.insert(fns.end(), demo->functions.begin(), demo->functions.end());
  expect_round_trip(*demo->with_functions(fns), "demo");
}

std::string read_example(const std::string& name) {
  std::ifstream in(std::filesystem::path(PYPTO_EXAMPLES_DIR) / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* const kExamples[] = {"add.py",           "blocked_add.py",  "ffn.py",    "matmul.py",
                                 "matmul_ksplit.py", "scoped_scale.py", "softmax.py"};

TEST(PrinterRoundTripTest, ExamplesAsParsed) {
  for (const char* file : kExamples) {
    auto programs = frontend::parse_module(read_example(file), file);
    ASSERT_EQ(programs.size(), 1u) << file;
    expect_round_trip(*programs[0], file);
  }
}

// The IR after each pass (SSA loops, outlined scopes, memory spaces, MemRefs, call directions)
// prints to text that parses back to the same IR.
TEST(PrinterRoundTripTest, ExamplesAfterEveryPass) {
  for (const char* file : kExamples) {
    auto programs = frontend::parse_module(read_example(file), file);
    ASSERT_EQ(programs.size(), 1u) << file;
    auto manager = passes::PassManager::for_strategy(passes::OptimizationStrategy::Default);
    manager.add_after_instrument([&](const std::string& pass, size_t, const ProgramPtr& p) {
      expect_round_trip(*p, std::string(file) + " after " + pass);
    });
    manager.run(programs[0]);
  }
}

}  // namespace
}  // namespace pypto::ir
