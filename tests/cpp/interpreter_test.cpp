#include "pypto/ir/interpreter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/pass_manager.h"

#include "ir_test_helpers.h"

namespace pypto::ir {
namespace {

using ir::HostTensor;

using testing::ints;

StmtPtr assign(const VarPtr& v, ExprPtr e, Span span = {}) {
  return std::make_shared<AssignStmt>(v, std::move(e), span);
}

StmtPtr ret(std::vector<ExprPtr> values) { return std::make_shared<ReturnStmt>(std::move(values)); }

// Binds an expression to a fresh variable of its own type.
struct Body {
  std::vector<StmtPtr> stmts;
  VarPtr let(const std::string& name, ExprPtr e, Span span = {}) {
    auto v = make_var(name, e->type());
    stmts.push_back(assign(v, std::move(e), span));
    return v;
  }
  void add(StmtPtr s) { stmts.push_back(std::move(s)); }
  StmtPtr build() { return make_seq(std::move(stmts)); }
};

struct Buffer {
  std::vector<int64_t> shape;
  std::vector<float> data;

  explicit Buffer(std::vector<int64_t> s, float fill = 0.0f) : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.assign(static_cast<size_t>(n), fill);
  }
  HostTensor host() { return HostTensor{"t", DataType::FP32, shape, data.data()}; }
  float& at(int64_t r, int64_t c) { return data[static_cast<size_t>(r * shape[1] + c)]; }
};

Buffer ramp(std::vector<int64_t> shape, float scale, float shift) {
  Buffer b(std::move(shape));
  for (size_t i = 0; i < b.data.size(); ++i) {
    b.data[i] = scale * static_cast<float>(static_cast<int>(i % 13) - 6) + shift;
  }
  return b;
}

FunctionPtr function(const std::string& name, FunctionType type, std::vector<Param> params,
                     std::vector<TypePtr> returns, StmtPtr body) {
  return std::make_shared<Function>(name, type, std::move(params), std::move(returns),
                                    std::move(body));
}

ProgramPtr program(std::vector<FunctionPtr> fns) {
  return std::make_shared<Program>("Test", std::move(fns));
}

const std::vector<int64_t> kShape = {4, 8};

// A kernel that loads a and b, computes `compute(ta, tb, body)` and stores the result into c.
void run_tile_kernel(const std::function<ExprPtr(VarPtr, VarPtr, Body&)>& compute, Buffer& a,
                     Buffer& b, Buffer& c) {
  auto tensor = tensor_type(kShape, DataType::FP32);
  auto pa = make_var("a", tensor), pb = make_var("b", tensor), pc = make_var("c", tensor);
  Body body;
  auto ta = body.let("ta", make_op_call("load", {pa, ints({0, 0}), ints(kShape)}));
  auto tb = body.let("tb", make_op_call("load", {pb, ints({0, 0}), ints(kShape)}));
  auto result = body.let("r", compute(ta, tb, body));
  auto stored = body.let("c", make_op_call("store", {result, ints({0, 0}), pc}));
  body.add(ret({stored}));
  auto kernel =
      function("kernel", FunctionType::InCore,
               {{pa, ParamDirection::In}, {pb, ParamDirection::In}, {pc, ParamDirection::Out}},
               {tensor}, body.build());
  interpret_function(*program({kernel}), "kernel", {a.host(), b.host(), c.host()});
}

void expect_elementwise(const char* what,
                        const std::function<ExprPtr(VarPtr, VarPtr, Body&)>& compute,
                        const std::function<float(float, float)>& expected) {
  Buffer a = ramp(kShape, 0.5f, 0.25f), b = ramp(kShape, -0.75f, 2.0f), c(kShape, -99.0f);
  std::reverse(b.data.begin(), b.data.end());
  run_tile_kernel(compute, a, b, c);
  for (size_t i = 0; i < c.data.size(); ++i) {
    ASSERT_FLOAT_EQ(c.data[i], expected(a.data[i], b.data[i])) << what << " at " << i;
  }
}

ExprPtr op(const char* name, std::vector<ExprPtr> args, Attrs attrs = {}) {
  return make_op_call(name, std::move(args), std::move(attrs));
}

TEST(InterpreterTest, ElementwiseBinaryOnTiles) {
  expect_elementwise(
      "add",
      [](VarPtr x, VarPtr y, Body&) {
        return op("add", {x, y});
      },
      [](float x, float y) { return x + y; });
  expect_elementwise(
      "sub",
      [](VarPtr x, VarPtr y, Body&) {
        return op("sub", {x, y});
      },
      [](float x, float y) { return x - y; });
  expect_elementwise(
      "mul",
      [](VarPtr x, VarPtr y, Body&) {
        return op("mul", {x, y});
      },
      [](float x, float y) { return x * y; });
  expect_elementwise(
      "div",
      [](VarPtr x, VarPtr y, Body&) {
        return op("div", {x, y});
      },
      [](float x, float y) { return x / y; });
  expect_elementwise(
      "maximum",
      [](VarPtr x, VarPtr y, Body&) {
        return op("maximum", {x, y});
      },
      [](float x, float y) { return std::max(x, y); });
  expect_elementwise(
      "minimum",
      [](VarPtr x, VarPtr y, Body&) {
        return op("minimum", {x, y});
      },
      [](float x, float y) { return std::min(x, y); });
}

TEST(InterpreterTest, TileScalarForms) {
  expect_elementwise(
      "tile*scalar",
      [](VarPtr x, VarPtr, Body&) {
        return op("mul", {x, make_float(-1.702)});
      },
      [](float x, float) { return static_cast<float>(x * -1.702); });
  expect_elementwise(
      "scalar-tile",
      [](VarPtr x, VarPtr, Body&) {
        return op("sub", {make_float(1.0), x});
      },
      [](float x, float) { return 1.0f - x; });
  expect_elementwise(
      "scalar/tile",
      [](VarPtr, VarPtr y, Body&) {
        return op("div", {make_int(3), y});
      },
      [](float, float y) { return static_cast<float>(3.0 / y); });
}

TEST(InterpreterTest, UnaryOps) {
  expect_elementwise(
      "exp", [](VarPtr x, VarPtr, Body&) { return op("exp", {x}); },
      [](float x, float) { return static_cast<float>(std::exp(double{x})); });
  expect_elementwise(
      "neg", [](VarPtr x, VarPtr, Body&) { return op("neg", {x}); },
      [](float x, float) { return -x; });
  expect_elementwise(
      "sqrt(abs)",
      [](VarPtr x, VarPtr, Body& b) { return op("sqrt", {b.let("m", op("abs", {x}))}); },
      [](float x, float) { return static_cast<float>(std::sqrt(std::fabs(double{x}))); });
  expect_elementwise(
      "recip", [](VarPtr, VarPtr y, Body&) { return op("recip", {y}); },
      [](float, float y) { return static_cast<float>(1.0 / y); });
  expect_elementwise(
      "relu", [](VarPtr x, VarPtr, Body&) { return op("relu", {x}); },
      [](float x, float) { return x > 0 ? x : 0.0f; });
}

TEST(InterpreterTest, CastTruncatesAndRoundsToTheTargetType) {
  expect_elementwise(
      "cast int32",
      [](VarPtr x, VarPtr, Body& b) {
        auto i = b.let("i", op("cast", {x}, {{"target_type", DataType::INT32}}));
        return op("cast", {i}, {{"target_type", DataType::FP32}});
      },
      [](float x, float) { return static_cast<float>(static_cast<int32_t>(x)); });
  // 1/3 rounded to FP16 is 0.333251953125; to BF16 0.333984375.
  expect_elementwise(
      "cast fp16",
      [](VarPtr, VarPtr, Body& b) {
        auto third = b.let(
            "third", op("div", {op("create_tile", {ints(kShape)}, {{"dtype", DataType::FP16}}),
                                make_float(1.0)}));
        auto r = b.let("r3", op("add", {third, make_float(1.0 / 3.0)}));
        return op("cast", {r}, {{"target_type", DataType::FP32}});
      },
      [](float, float) { return 0.333251953125f; });
  expect_elementwise(
      "cast bf16",
      [](VarPtr, VarPtr, Body& b) {
        auto z = b.let("z", op("create_tile", {ints(kShape)}, {{"dtype", DataType::BF16}}));
        auto r = b.let("r3", op("add", {z, make_float(1.0 / 3.0)}));
        return op("cast", {r}, {{"target_type", DataType::FP32}});
      },
      [](float, float) { return 0.333984375f; });
}

TEST(InterpreterTest, Int32TilesWrapAndDivideTowardZero) {
  expect_elementwise(
      "int32",
      [](VarPtr, VarPtr, Body& b) {
        auto z = b.let("z", op("create_tile", {ints(kShape)}, {{"dtype", DataType::INT32}}));
        auto big = b.let("big", op("add", {z, make_int(2147483647)}));
        auto wrapped = b.let("w", op("add", {big, make_int(2)}));          // -2147483647
        auto q = b.let("q", op("div", {wrapped, make_int(-1000000000)}));  // 2 (truncated)
        auto m7 = b.let("m7", op("sub", {z, make_int(7)}));
        auto q2 = b.let("q2", op("div", {m7, make_int(2)}));  // -3
        auto s = b.let("s", op("add", {q, q2}));              // -1
        return op("cast", {s}, {{"target_type", DataType::FP32}});
      },
      [](float, float) { return -1.0f; });
}

TEST(InterpreterTest, RowReductionsAndExpands) {
  Buffer a = ramp(kShape, 0.5f, 0.25f), b(kShape), c(kShape);
  run_tile_kernel(
      [](VarPtr x, VarPtr, Body& body) {
        auto mx = body.let(
            "mx",
            op("row_max", {x, op("create_tile", {ints({4, 1})}, {{"dtype", DataType::FP32}})}));
        auto shifted = body.let("sh", op("row_expand_sub", {x, mx}));
        auto sum = body.let("sum", op("row_sum", {shifted}));
        auto scaled = body.let("sc", op("row_expand_mul", {shifted, sum}));
        auto plus = body.let("pl", op("row_expand_add", {scaled, mx}));
        return op("row_expand_div", {plus, mx});
      },
      a, b, c);
  for (int64_t r = 0; r < 4; ++r) {
    float mx = -1e30f, sum = 0.0f;
    for (int64_t k = 0; k < 8; ++k) mx = std::max(mx, a.at(r, k));
    for (int64_t k = 0; k < 8; ++k) sum += a.at(r, k) - mx;
    for (int64_t k = 0; k < 8; ++k) {
      float want = ((a.at(r, k) - mx) * sum + mx) / mx;
      EXPECT_NEAR(c.at(r, k), want, 1e-5f * std::fabs(want)) << r << "," << k;
    }
  }
}

TEST(InterpreterTest, SliceAndAssembleOfTiles) {
  Buffer a = ramp(kShape, 1.0f, 0.0f), b = ramp(kShape, 1.0f, 100.0f), c(kShape);
  run_tile_kernel(
      [](VarPtr x, VarPtr y, Body& body) {
        auto part = body.let("part", op("slice", {y, ints({2, 4}), ints({2, 4})}));
        return op("assemble", {x, part, ints({0, 0})});
      },
      a, b, c);
  for (int64_t r = 0; r < 4; ++r) {
    for (int64_t k = 0; k < 8; ++k) {
      float want = (r < 2 && k < 4) ? b.at(r + 2, k + 4) : a.at(r, k);
      EXPECT_EQ(c.at(r, k), want) << r << "," << k;
    }
  }
}

TEST(InterpreterTest, MatmulThroughTheCubePath) {
  auto ta = tensor_type({4, 8}, DataType::FP32), tb = tensor_type({8, 4}, DataType::FP32);
  auto tc = tensor_type({4, 4}, DataType::FP32);
  auto pa = make_var("a", ta), pb = make_var("b", tb), pc = make_var("c", tc);
  Body body;
  Attrs mat = {{"target_memory", MemorySpace::Mat}};
  auto la = body.let("la", op("move", {op("load", {pa, ints({0, 0}), ints({4, 8})}, mat)},
                              {{"target_memory", MemorySpace::Left}}));
  auto rb = body.let("rb", op("move", {op("load", {pb, ints({0, 0}), ints({8, 4})}, mat)},
                              {{"target_memory", MemorySpace::Right}}));
  auto acc = body.let("acc", op("matmul", {la, rb}));
  auto acc2 = body.let("acc2", op("matmul_acc", {acc, la, rb}));
  auto stored = body.let("c", op("store", {acc2, ints({0, 0}), pc}));
  body.add(ret({stored}));
  auto kernel =
      function("mm", FunctionType::InCore,
               {{pa, ParamDirection::In}, {pb, ParamDirection::In}, {pc, ParamDirection::Out}},
               {tc}, body.build());
  Buffer a = ramp({4, 8}, 0.5f, 0.1f), b = ramp({8, 4}, -0.25f, 0.3f), c({4, 4});
  interpret_function(*program({kernel}), "mm", {a.host(), b.host(), c.host()});
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      double s = 0;
      for (int64_t k = 0; k < 8; ++k) s += double{a.at(i, k)} * double{b.at(k, j)};
      EXPECT_NEAR(c.at(i, j), 2 * s, 1e-5) << i << "," << j;
    }
  }
}

// main(a, c): for i in range(4): self.kernel(slice(a), slice(c)) -- writes reach c via views.
TEST(InterpreterTest, TensorViewsWriteThroughToTheCallerBuffer) {
  auto block = tensor_type({2, 8}, DataType::FP32), whole = tensor_type({8, 8}, DataType::FP32);
  auto ka = make_var("a", block), kc = make_var("c", block);
  Body kb;
  auto t = kb.let("t", op("load", {ka, ints({0, 0}), ints({2, 8})}));
  auto s = kb.let("c", op("store", {op("mul", {t, make_float(2.0)}), ints({0, 0}), kc}));
  kb.add(ret({s}));
  auto kernel =
      function("double_block", FunctionType::InCore,
               {{ka, ParamDirection::In}, {kc, ParamDirection::Out}}, {block}, kb.build());

  auto ma = make_var("a", whole), mc = make_var("c", whole);
  auto i = make_var("i", scalar_type(DataType::INT64));
  auto row = make_binary(BinaryOp::Mul, i, make_int(2));
  auto call = std::make_shared<Call>(
      CallKind::Function, "double_block",
      std::vector<ExprPtr>{op("slice", {ma, ints({2, 8}), make_tuple({row, make_int(0)})}),
                           op("slice", {mc, ints({2, 8}), make_tuple({row, make_int(0)})})},
      Attrs{}, block);
  auto loop = std::make_shared<ForStmt>(
      i, make_int(0), make_int(4), make_int(1), ForKind::Sequential, std::vector<VarPtr>{},
      std::vector<ExprPtr>{}, std::make_shared<EvalStmt>(call), std::vector<VarPtr>{});
  auto main_fn = function("main", FunctionType::Orchestration,
                          {{ma, ParamDirection::In}, {mc, ParamDirection::Out}}, {whole},
                          make_seq({loop, ret({mc})}));
  Buffer a = ramp({8, 8}, 1.0f, 0.5f), c({8, 8}, -1.0f);
  interpret(*program({kernel, main_fn}), {a.host(), c.host()});
  for (size_t k = 0; k < c.data.size(); ++k) EXPECT_EQ(c.data[k], 2.0f * a.data[k]) << k;
}

// acc = zeros; for i, (acc,) in range(1, 5, init_values=(zeros,)): acc' = acc + t * i; yield.
TEST(InterpreterTest, IterArgsLoopAccumulates) {
  Buffer a = ramp(kShape, 0.5f, 0.25f), b(kShape), c(kShape);
  run_tile_kernel(
      [](VarPtr x, VarPtr, Body& body) {
        auto zero =
            body.let("zero", op("create_tile", {ints(kShape)}, {{"dtype", DataType::FP32}}));
        auto i = make_var("i", scalar_type(DataType::INT64));
        auto acc = make_var("acc", zero->type());
        auto next = make_var("acc", tile_type(kShape, DataType::FP32));
        auto out = make_var("acc", tile_type(kShape, DataType::FP32));
        auto loop_body = make_seq({assign(next, op("add", {acc, op("mul", {x, i})})),
                                   std::make_shared<YieldStmt>(std::vector<ExprPtr>{next})});
        body.add(std::make_shared<ForStmt>(
            i, make_int(1), make_int(5), make_int(1), ForKind::Sequential, std::vector<VarPtr>{acc},
            std::vector<ExprPtr>{zero}, loop_body, std::vector<VarPtr>{out}));
        return op("add", {out, make_float(0.0)});
      },
      a, b, c);
  for (size_t k = 0; k < c.data.size(); ++k) EXPECT_FLOAT_EQ(c.data[k], 10.0f * a.data[k]);
}

// Frontend (non-SSA) form of the same loop: the body re-assigns one Var.
TEST(InterpreterTest, RebindingInsideALoopCarriesTheValue) {
  Buffer a = ramp(kShape, 0.5f, 0.25f), b(kShape), c(kShape);
  run_tile_kernel(
      [](VarPtr x, VarPtr, Body& body) {
        auto acc = make_var("acc", tile_type(kShape, DataType::FP32));
        body.add(assign(acc, op("create_tile", {ints(kShape)}, {{"dtype", DataType::FP32}})));
        auto i = make_var("i", scalar_type(DataType::INT64));
        body.add(std::make_shared<ForStmt>(
            i, make_int(0), make_int(6), make_int(2), ForKind::Unroll, std::vector<VarPtr>{},
            std::vector<ExprPtr>{}, assign(acc, op("add", {acc, x})), std::vector<VarPtr>{}));
        return op("add", {acc, make_float(0.0)});
      },
      a, b, c);
  for (size_t k = 0; k < c.data.size(); ++k) EXPECT_FLOAT_EQ(c.data[k], 3.0f * a.data[k]);
}

// if n > 0: r = t * 2 (yield) else: r = -t (yield), for both signs of n.
TEST(InterpreterTest, IfWithYieldsPicksTheTakenBranch) {
  auto tensor = tensor_type(kShape, DataType::FP32);
  auto pa = make_var("a", tensor), pn = make_var("n", scalar_type(DataType::INT64)),
       pc = make_var("c", tensor);
  Body body;
  auto t = body.let("t", op("load", {pa, ints({0, 0}), ints(kShape)}));
  auto r = make_var("r", tile_type(kShape, DataType::FP32));
  auto r_then = make_var("r", tile_type(kShape, DataType::FP32));
  auto r_else = make_var("r", tile_type(kShape, DataType::FP32));
  auto then_body = make_seq({assign(r_then, op("mul", {t, make_float(2.0)})),
                             std::make_shared<YieldStmt>(std::vector<ExprPtr>{r_then})});
  auto else_body = make_seq(
      {assign(r_else, op("neg", {t})), std::make_shared<YieldStmt>(std::vector<ExprPtr>{r_else})});
  body.add(std::make_shared<IfStmt>(make_binary(BinaryOp::Gt, pn, make_int(0)), then_body,
                                    else_body, std::vector<VarPtr>{r}));
  auto s = body.let("c", op("store", {r, ints({0, 0}), pc}));
  body.add(ret({s}));
  auto prog = program(
      {function("k", FunctionType::InCore,
                {{pa, ParamDirection::In}, {pn, ParamDirection::In}, {pc, ParamDirection::Out}},
                {tensor}, body.build())});
  Buffer a = ramp(kShape, 0.5f, 0.25f), c(kShape);
  interpret_function(*prog, "k", {a.host(), int64_t{3}, c.host()});
  for (size_t k = 0; k < c.data.size(); ++k) EXPECT_EQ(c.data[k], 2.0f * a.data[k]);
  interpret_function(*prog, "k", {a.host(), int64_t{-3}, c.host()});
  for (size_t k = 0; k < c.data.size(); ++k) EXPECT_EQ(c.data[k], -a.data[k]);
}

// main creates an intermediate, calls a kernel that returns a fresh tensor (copied into its
// Out parameter), then a two-output kernel whose results come back as a tuple.
TEST(InterpreterTest, CallsWithOutParamsAndTupleResults) {
  auto tensor = tensor_type(kShape, DataType::FP32);
  // twice(a, out): out = a + a (tensor-level op: a new tensor, copied into out on return)
  auto ta = make_var("a", tensor), tout = make_var("out", tensor);
  Body tw;
  auto sum = tw.let("s", op("add", {ta, ta}));
  tw.add(ret({sum}));
  auto twice =
      function("twice", FunctionType::InCore,
               {{ta, ParamDirection::In}, {tout, ParamDirection::Out}}, {tensor}, tw.build());
  // split(h, x, y): x = h + 1 ; y (InOut) = y * h
  auto sh = make_var("h", tensor), sx = make_var("x", tensor), sy = make_var("y", tensor);
  Body sp;
  auto th = sp.let("th", op("load", {sh, ints({0, 0}), ints(kShape)}));
  auto ty = sp.let("ty", op("load", {sy, ints({0, 0}), ints(kShape)}));
  auto x2 = sp.let("x", op("store", {op("add", {th, make_float(1.0)}), ints({0, 0}), sx}));
  auto y2 = sp.let("y", op("store", {op("mul", {ty, th}), ints({0, 0}), sy}));
  sp.add(ret({x2, y2}));
  auto split =
      function("split", FunctionType::InCore,
               {{sh, ParamDirection::In}, {sx, ParamDirection::Out}, {sy, ParamDirection::InOut}},
               {tensor, tensor}, sp.build());
  // main(a, x, y): h = create_tensor; h = twice(a, h); t = split(h, x, y); return t[0], t[1]
  auto ma = make_var("a", tensor), mx = make_var("x", tensor), my = make_var("y", tensor);
  Body mb;
  auto h = mb.let("h", op("create_tensor", {ints(kShape)}, {{"dtype", DataType::FP32}}));
  mb.add(assign(
      h, std::make_shared<Call>(CallKind::Function, "twice", std::vector<ExprPtr>{ma, h},
                                Attrs{{"arg_directions", std::vector<int64_t>{0, 1}}}, tensor)));
  auto pair = tuple_type({tensor, tensor});
  auto t = mb.let("t", std::make_shared<Call>(CallKind::Function, "split",
                                              std::vector<ExprPtr>{h, mx, my}, Attrs{}, pair));
  mb.add(ret({make_tuple_get_item(t, 0), make_tuple_get_item(t, 1)}));
  auto main_fn =
      function("main", FunctionType::Orchestration,
               {{ma, ParamDirection::In}, {mx, ParamDirection::Out}, {my, ParamDirection::InOut}},
               {tensor, tensor}, mb.build());
  Buffer a = ramp(kShape, 0.5f, 0.25f), x(kShape), y = ramp(kShape, 1.0f, 3.0f);
  Buffer y0 = y;
  interpret(*program({twice, split, main_fn}), {a.host(), x.host(), y.host()});
  for (size_t k = 0; k < a.data.size(); ++k) {
    float hv = a.data[k] + a.data[k];
    EXPECT_EQ(x.data[k], hv + 1.0f) << k;
    EXPECT_EQ(y.data[k], y0.data[k] * hv) << k;
  }
}

TEST(InterpreterTest, OutOfBoundsLoadReportsOffsetsAndStatementSpan) {
  auto tensor = tensor_type(kShape, DataType::FP32);
  auto pa = make_var("a", tensor), pn = make_var("n", scalar_type(DataType::INT64)),
       pc = make_var("c", tensor);
  Body body;
  auto t = body.let("t", op("load", {pa, make_tuple({pn, make_int(0)}), ints({2, 8})}), Span{7, 9});
  auto s = body.let("c", op("store", {t, ints({0, 0}), pc}));
  body.add(ret({s}));
  auto prog = program(
      {function("k", FunctionType::InCore,
                {{pa, ParamDirection::In}, {pn, ParamDirection::In}, {pc, ParamDirection::Out}},
                {tensor}, body.build())});
  Buffer a(kShape), c(kShape);
  EXPECT_NO_THROW(interpret_function(*prog, "k", {a.host(), int64_t{2}, c.host()}));
  try {
    interpret_function(*prog, "k", {a.host(), int64_t{3}, c.host()});
    FAIL() << "expected an out-of-bounds error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(),
                 "out of bounds in pl.load: offsets [3, 0] with shape [2, 8] exceed tensor "
                 "shape [4, 8]");
    EXPECT_EQ(e.span().line, 7);
    EXPECT_EQ(e.span().col, 9);
  }
}

TEST(InterpreterTest, ScalarArithmeticFollowsPython) {
  auto s64 = scalar_type(DataType::INT64);
  auto n = make_var("n", s64), d = make_var("d", s64);
  auto tensor = tensor_type({1, 4}, DataType::FP32);
  auto pc = make_var("c", tensor);
  // c[0, :] = [n // d, n % d, n / d, min(n, d)] via a tile built with assemble.
  Body body;
  auto tile = body.let("z", op("create_tile", {ints({1, 4})}, {{"dtype", DataType::FP32}}));
  std::vector<ExprPtr> values = {make_binary(BinaryOp::FloorDiv, n, d),
                                 make_binary(BinaryOp::Mod, n, d), make_binary(BinaryOp::Div, n, d),
                                 make_binary(BinaryOp::Min, n, d)};
  VarPtr cur = tile;
  for (int64_t k = 0; k < 4; ++k) {
    auto one =
        body.let("one", op("add", {op("create_tile", {ints({1, 1})}, {{"dtype", DataType::FP32}}),
                                   values[static_cast<size_t>(k)]}));
    cur = body.let("z", op("assemble", {cur, one, ints({0, k})}));
  }
  auto s = body.let("c", op("store", {cur, ints({0, 0}), pc}), Span{4, 2});
  body.add(ret({s}));
  auto prog = program(
      {function("k", FunctionType::InCore,
                {{n, ParamDirection::In}, {d, ParamDirection::In}, {pc, ParamDirection::Out}},
                {tensor}, body.build())});
  Buffer c({1, 4});
  interpret_function(*prog, "k", {int64_t{-7}, int64_t{2}, c.host()});
  EXPECT_EQ(c.data, (std::vector<float>{-4.0f, 1.0f, -3.5f, -7.0f}));
  try {
    interpret_function(*prog, "k", {int64_t{7}, int64_t{0}, c.host()});
    FAIL() << "expected a division-by-zero error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "integer division by zero");
  }
}

// Scalar + - * // % and unary minus wrap around at the result dtype's width (INT32 at 32 bits)
// without undefined behaviour; every value below is exact in FP32.
TEST(InterpreterTest, ScalarArithmeticWrapsAtTheLimits) {
  auto s64 = scalar_type(DataType::INT64), s32 = scalar_type(DataType::INT32);
  auto n = make_var("n", s64), m = make_var("m", s32);
  auto tensor = tensor_type({1, 8}, DataType::FP32);
  auto pc = make_var("c", tensor);
  auto i64 = [](int64_t v) { return make_int(v); };
  auto i32 = [](int64_t v) { return std::make_shared<IntImm>(v, DataType::INT32); };
  auto neg = [](const ExprPtr& a) { return std::make_shared<Unary>(UnaryOp::Neg, a, a->type()); };
  Body body;
  auto n1 = body.let("n1", make_binary(BinaryOp::Add, n, i64(1)));  // MAX + 1 -> MIN
  auto m1 = body.let("m1", make_binary(BinaryOp::Add, m, i32(1)));  // INT32: -2**31
  std::vector<ExprPtr> values = {
      n1,
      m1,
      make_binary(BinaryOp::FloorDiv, n1, i64(-1)),  // MIN // -1 -> MIN
      make_binary(BinaryOp::Mod, n1, i64(-1)),       // MIN % -1 -> 0
      make_binary(BinaryOp::Mul, m1, i32(-1)),       // INT32 MIN * -1 -> MIN
      neg(m1),                                       // -INT32 MIN -> MIN
      make_binary(BinaryOp::Sub, make_binary(BinaryOp::Sub, n1, i64(1)), n),  // MIN - 1 - MAX
      make_binary(BinaryOp::Mul, n, n),                                       // MAX * MAX -> 1
  };
  auto tile = body.let("z", op("create_tile", {ints({1, 8})}, {{"dtype", DataType::FP32}}));
  VarPtr cur = tile;
  for (size_t k = 0; k < values.size(); ++k) {
    auto one = body.let(
        "one",
        op("add", {op("create_tile", {ints({1, 1})}, {{"dtype", DataType::FP32}}), values[k]}));
    cur = body.let("z", op("assemble", {cur, one, ints({0, static_cast<int64_t>(k)})}));
  }
  body.add(ret({body.let("c", op("store", {cur, ints({0, 0}), pc}))}));
  auto prog = program(
      {function("k", FunctionType::InCore,
                {{n, ParamDirection::In}, {m, ParamDirection::In}, {pc, ParamDirection::Out}},
                {tensor}, body.build())});
  Buffer c({1, 8});
  interpret_function(*prog, "k",
                     {std::numeric_limits<int64_t>::max(),
                      int64_t{std::numeric_limits<int32_t>::max()}, c.host()});
  const float min64 = -9223372036854775808.0f, min32 = -2147483648.0f;
  EXPECT_EQ(c.data, (std::vector<float>{min64, min32, min64, 0.0f, min32, min32, 0.0f, 1.0f}));
}

TEST(InterpreterTest, MissingReturnAndBadArgumentsAreErrors) {
  auto tensor = tensor_type(kShape, DataType::FP32);
  auto pc = make_var("c", tensor);
  auto f = std::make_shared<Function>(
      "k", FunctionType::InCore, std::vector<Param>{{pc, ParamDirection::Out}},
      std::vector<TypePtr>{tensor}, std::make_shared<SeqStmts>(std::vector<StmtPtr>{}), Span{3, 5});
  Buffer c(kShape), wrong({8, 4});
  try {
    interpret_function(*program({f}), "k", {c.host()});
    FAIL() << "expected a missing-return error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "function k ended without a return statement");
    EXPECT_EQ(e.span().line, 3);
  }
  try {
    interpret_function(*program({f}), "k", {wrong.host()});
    FAIL() << "expected a shape error";
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "argument for c is [8, 4] FP32, expected pl.Tensor[[4, 8], pl.FP32]");
  }
  EXPECT_THROW(interpret(*program({f}), {c.host()}), CompileError);  // no orchestration entry
}

// ---------------------------------------------------------------------------------------------
// The shared examples, interpreted as parsed (frontend IR) and after every pass of the default
// pipeline, against expectations computed here in double precision.

std::string read_example(const std::string& name) {
  std::ifstream in(std::filesystem::path(PYPTO_EXAMPLES_DIR) / name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Buffer normal(std::vector<int64_t> shape, uint32_t seed) {
  Buffer b(std::move(shape));
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  for (float& v : b.data) v = dist(gen);
  return b;
}

using Matrix = std::vector<double>;

Matrix matmul_ref(const Buffer& a, const Buffer& b) {
  int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  Matrix c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j)
        c[static_cast<size_t>(i * n + j)] +=
            double{a.data[static_cast<size_t>(i * k + p)]} * b.data[static_cast<size_t>(p * n + j)];
  return c;
}

struct ExampleCase {
  std::string file;
  std::vector<Buffer> inputs;  // in parameter order of main
  size_t output_index;         // which of `inputs` is the checked output
  Matrix expected;
  double rtol, atol;
};

ExampleCase make_case(const std::string& file) {
  if (file == "add.py") {
    Buffer a = normal({128, 128}, 1), b({128, 128}, 1.5f), c({128, 128});
    Matrix e(a.data.size());
    for (size_t i = 0; i < e.size(); ++i) e[i] = double{a.data[i]} + b.data[i];
    return {file, {a, b, c}, 2, e, 1e-5, 1e-5};
  }
  if (file == "blocked_add.py") {
    Buffer a = normal({512, 128}, 2), b = normal({512, 128}, 3), c({512, 128}, -7.0f);
    Matrix e(a.data.size());
    for (size_t i = 0; i < e.size(); ++i) e[i] = double{a.data[i]} + b.data[i];
    return {file, {a, b, c}, 2, e, 1e-5, 1e-5};
  }
  if (file == "softmax.py") {
    Buffer x = normal({64, 64}, 4), y({64, 64});
    Matrix e(x.data.size());
    for (int64_t r = 0; r < 64; ++r) {
      double mx = -1e300, sum = 0;
      for (int64_t c = 0; c < 64; ++c) mx = std::max(mx, double{x.at(r, c)});
      for (int64_t c = 0; c < 64; ++c) sum += std::exp(x.at(r, c) - mx);
      for (int64_t c = 0; c < 64; ++c)
        e[static_cast<size_t>(r * 64 + c)] = std::exp(x.at(r, c) - mx) / sum;
    }
    return {file, {x, y}, 1, e, 1e-5, 1e-5};
  }
  if (file == "matmul.py") {
    Buffer a = normal({64, 64}, 5), b = normal({64, 64}, 6), c({64, 64});
    return {file, {a, b, c}, 2, matmul_ref(a, b), 1e-4, 1e-4};
  }
  if (file == "matmul_ksplit.py") {
    Buffer a = normal({64, 256}, 7), b = normal({256, 64}, 8), c({64, 64});
    return {file, {a, b, c}, 2, matmul_ref(a, b), 1e-4, 1e-3};
  }
  if (file == "ffn.py") {
    Buffer x = normal({64, 64}, 9), w1 = normal({64, 64}, 10), w2 = normal({64, 64}, 11),
           y({64, 64});
    Matrix h = matmul_ref(x, w1);
    Buffer g({64, 64});
    for (size_t i = 0; i < h.size(); ++i)
      g.data[i] = static_cast<float>(h[i] / (1.0 + std::exp(-1.702 * h[i])));
    return {file, {x, w1, w2, y}, 3, matmul_ref(g, w2), 1e-3, 1e-3};
  }
  if (file == "scoped_scale.py") {
    Buffer x = normal({256, 64}, 12), y({256, 64});
    Matrix e(x.data.size());
    for (size_t i = 0; i < e.size(); ++i) e[i] = 3.0 * x.data[i] + 1.0;
    return {file, {x, y}, 1, e, 1e-5, 1e-5};
  }
  ADD_FAILURE() << "no case for " << file;
  return {};
}

// Interprets `program` on copies of the case's inputs; returns a description of the first
// mismatch, or "" when every output element is within tolerance.
std::string run_and_compare(const Program& program, const ExampleCase& c) {
  std::vector<Buffer> buffers = c.inputs;
  std::vector<InterpreterArg> args;
  for (auto& b : buffers) args.push_back(b.host());
  interpret(program, args);
  const std::vector<float>& got = buffers[c.output_index].data;
  if (got.size() != c.expected.size()) return "output size differs";
  for (size_t i = 0; i < got.size(); ++i) {
    double want = c.expected[i];
    if (!(std::fabs(got[i] - want) <= c.atol + c.rtol * std::fabs(want))) {
      return "element " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", expected " +
             std::to_string(want);
    }
  }
  return "";
}

const std::vector<std::string> kExamples = {"add.py",         "blocked_add.py",   "softmax.py",
                                            "matmul.py",      "matmul_ksplit.py", "ffn.py",
                                            "scoped_scale.py"};

TEST(InterpreterExamplesTest, FrontendIrMatchesTheGolden) {
  for (const auto& file : kExamples) {
    auto programs = frontend::parse_module(read_example(file), file);
    ASSERT_EQ(programs.size(), 1u) << file;
    ExampleCase c = make_case(file);
    EXPECT_EQ(run_and_compare(*programs[0], c), "") << file;
  }
}

TEST(InterpreterExamplesTest, EveryPassPreservesTheResult) {
  for (const auto& file : kExamples) {
    auto programs = frontend::parse_module(read_example(file), file);
    ASSERT_EQ(programs.size(), 1u) << file;
    ExampleCase c = make_case(file);
    auto manager = passes::PassManager::for_strategy(passes::OptimizationStrategy::Default);
    std::vector<std::string> seen;
    manager.add_after_instrument([&](const std::string& pass, size_t, const ProgramPtr& p) {
      seen.push_back(pass);
      EXPECT_EQ(run_and_compare(*p, c), "") << file << " after " << pass;
    });
    try {
      manager.run(programs[0]);
    } catch (const std::exception& e) {
      ADD_FAILURE() << file << ": pipeline failed: " << e.what();
    }
    EXPECT_EQ(seen.size(), manager.pass_names().size()) << file;
  }
}

TEST(InterpreterExamplesTest, BlockedAddIsFastEnoughToBeAGolden) {
  auto programs = frontend::parse_module(read_example("blocked_add.py"), "blocked_add.py");
  ASSERT_EQ(programs.size(), 1u);
  ExampleCase c = make_case("blocked_add.py");
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < 10; ++k) ASSERT_EQ(run_and_compare(*programs[0], c), "");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 10.0);  // generous: sanitizer and debug builds run here too
}

}  // namespace
}  // namespace pypto::ir
