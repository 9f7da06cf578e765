#include "pypto/ir/structural_equal.h"

#include <gtest/gtest.h>

#include <string>

#include "pypto/ir/op_registry.h"

#include "ir_test_helpers.h"

namespace pypto::ir {
namespace {

using testing::ints;

// Knobs that change one thing in an otherwise identical program.
struct Variant {
  std::string prefix = "";  // variable names: alpha-renaming must not matter
  double scale = 2.0;
  const char* op = "mul";
  DataType dtype = DataType::FP32;
  MemorySpace load_space = MemorySpace::Vec;
  int64_t trip_count = 4;
  bool rebind_accumulator = true;  // false: yield the loaded tile instead of the new value
};

ProgramPtr build(const Variant& v) {
  auto tensor = tensor_type({16, 16}, v.dtype);
  auto a = make_var(v.prefix + "a", tensor);
  auto c = make_var(v.prefix + "c", tensor);
  auto t = make_var(v.prefix + "t", tile_type({16, 16}, v.dtype, v.load_space));
  Attrs load_attrs;
  if (v.load_space != MemorySpace::Vec) load_attrs = {{"target_memory", v.load_space}};
  auto i = make_var(v.prefix + "i", scalar_type(DataType::INT64));
  auto acc = make_var(v.prefix + "acc", tile_type({16, 16}, v.dtype));
  auto next = make_var(v.prefix + "next", tile_type({16, 16}, v.dtype));
  auto result = make_var(v.prefix + "result", tile_type({16, 16}, v.dtype));
  auto stored = make_var(v.prefix + "c2", tensor);
  auto body = make_seq({
      std::make_shared<AssignStmt>(next, make_op_call(v.op, {acc, make_float(v.scale)})),
      std::make_shared<YieldStmt>(std::vector<ExprPtr>{v.rebind_accumulator ? next : t}),
  });
  auto loop = std::make_shared<ForStmt>(i, make_int(0), make_int(v.trip_count), make_int(1),
                                        ForKind::Sequential, std::vector<VarPtr>{acc},
                                        std::vector<ExprPtr>{t}, body, std::vector<VarPtr>{result});
  auto fn_body = make_seq({
      std::make_shared<AssignStmt>(
          t, make_op_call("load", {a, ints({0, 0}), ints({16, 16})}, load_attrs)),
      loop,
      std::make_shared<AssignStmt>(stored, make_op_call("store", {result, ints({0, 0}), c})),
      std::make_shared<ReturnStmt>(std::vector<ExprPtr>{stored}),
  });
  auto fn = std::make_shared<Function>(
      "kernel", FunctionType::InCore,
      std::vector<Param>{{a, ParamDirection::In}, {c, ParamDirection::Out}},
      std::vector<TypePtr>{tensor}, fn_body);
  return std::make_shared<Program>("P", std::vector<FunctionPtr>{fn});
}

TEST(StructuralEqualTest, AlphaRenamedProgramsAreEqualAndHashEqually) {
  auto p = build({});
  Variant renamed;
  renamed.prefix = "other_";
  auto q = build(renamed);
  EXPECT_TRUE(structural_equal(*p, *q));
  EXPECT_EQ(structural_hash(*p), structural_hash(*q));
  EXPECT_EQ(structural_hash(*p), structural_hash(*build({})));
}

TEST(StructuralEqualTest, DifferencesAreDetected) {
  auto base = build({});
  std::vector<Variant> variants(6);
  variants[0].scale = 3.0;                    // constant
  variants[1].op = "add";                     // op
  variants[2].dtype = DataType::FP16;         // type
  variants[3].load_space = MemorySpace::Mat;  // attr (and the tile's space)
  variants[4].trip_count = 5;                 // loop bound
  variants[5].rebind_accumulator = false;     // variable correspondence
  for (size_t k = 0; k < variants.size(); ++k) {
    auto other = build(variants[k]);
    EXPECT_FALSE(structural_equal(*base, *other)) << "variant " << k;
    EXPECT_NE(structural_hash(*base), structural_hash(*other)) << "variant " << k;
  }
}

TEST(StructuralEqualTest, AttrsAreComparedExactly) {
  auto x = make_var("x", tile_type({4, 4}, DataType::FP32, MemorySpace::Mat));
  auto left = make_op_call("move", {x}, {{"target_memory", MemorySpace::Left}});
  auto right = make_op_call("move", {x}, {{"target_memory", MemorySpace::Right}});
  EXPECT_TRUE(
      structural_equal(left, make_op_call("move", {x}, {{"target_memory", MemorySpace::Left}})));
  EXPECT_FALSE(structural_equal(left, right));
}

TEST(StructuralEqualTest, VariablesMustCorrespondOneToOne) {
  auto s = scalar_type(DataType::INT64);
  auto a = make_var("a", s), b = make_var("b", s);
  // a + a vs a + b: the second operand maps `a` to `b` while `a` already maps to `a`.
  EXPECT_TRUE(structural_equal(make_binary(BinaryOp::Add, a, a), make_binary(BinaryOp::Add, b, b)));
  EXPECT_FALSE(
      structural_equal(make_binary(BinaryOp::Add, a, a), make_binary(BinaryOp::Add, a, b)));
  EXPECT_FALSE(
      structural_equal(make_binary(BinaryOp::Add, a, b), make_binary(BinaryOp::Add, a, a)));
  // Types of corresponding variables must agree.
  auto f = make_var("a", scalar_type(DataType::FP32));
  EXPECT_FALSE(structural_equal(ExprPtr(a), ExprPtr(f)));
}

TEST(StructuralEqualTest, SpansAndNamesAreIgnoredFunctionNamesAreNot) {
  auto s = scalar_type(DataType::INT64);
  auto a = std::make_shared<Var>("a", s, Span{1, 1});
  auto b = std::make_shared<Var>("zzz", s, Span{9, 9});
  auto x = std::make_shared<AssignStmt>(a, make_int(1, Span{1, 5}), Span{1, 1});
  auto y = std::make_shared<AssignStmt>(b, make_int(1), Span{7, 3});
  EXPECT_TRUE(structural_equal(StmtPtr(x), StmtPtr(y)));
  auto f = std::make_shared<Function>("f", FunctionType::Orchestration, std::vector<Param>{},
                                      std::vector<TypePtr>{}, x);
  auto g = std::make_shared<Function>("g", FunctionType::Orchestration, std::vector<Param>{},
                                      std::vector<TypePtr>{}, x);
  EXPECT_FALSE(structural_equal(*f, *g));
  EXPECT_NE(structural_hash(*f), structural_hash(*g));
}

TEST(StructuralEqualTest, FloatsCompareBitwise) {
  EXPECT_TRUE(structural_equal(make_float(0.1), make_float(0.1)));
  EXPECT_FALSE(structural_equal(make_float(0.0), make_float(-0.0)));
  EXPECT_FALSE(structural_equal(make_int(1), make_float(1.0)));
}

}  // namespace
}  // namespace pypto::ir
