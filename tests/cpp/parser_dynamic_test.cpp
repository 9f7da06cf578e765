// Dynamic dimensions (pl.dynamic): a function whose parameter shapes name one is specialised
// at each call on its arguments' shapes, an entry on the tensors the program runs with;
// pl.tensor.dim reads an extent; what cannot be given an extent is a located error.
#include <gtest/gtest.h>

#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

const std::string kHeader =
    "@pl.program\n"
    "class P:\n";

// M and N as the scope of a @pl.program class gives them (`M = pl.dynamic("M")`).
const Constants kDynamic = {{"M", DynamicDim{"M"}}, {"N", DynamicDim{"N"}}};

// A kernel `add(a, b, c)` over [M, N] tensors that loads [M, N] tiles.
const std::string kKernel =
    "    @pl.function(type=pl.FunctionType.InCore)\n"
    "    def add(self, a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32],\n"
    "            c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:\n"
    "        t = pl.add(pl.load(a, [0, 0], [M, N]), pl.load(b, [0, 0], [M, N]))\n"
    "        return pl.store(t, [0, 0], c)\n";

// An orchestration over static [rows, cols] tensors that calls the kernel `calls` times with
// the shapes given.
std::string orchestration(const std::string& params, const std::string& body,
                          const std::string& ret) {
  return "    @pl.function(type=pl.FunctionType.Orchestration)\n"
         "    def main(self, " +
         params + ") -> " + ret + ":\n" + body;
}

ir::ProgramPtr parse(const std::string& text, const std::vector<EntryTensor>& entry = {}) {
  return parse_program(text, "dyn.py", kDynamic, 0, false, {}, entry);
}

ParseError error_of(const std::string& text, const std::vector<EntryTensor>& entry = {}) {
  try {
    parse(text, entry);
  } catch (const ParseError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return ParseError({}, "", "", 0, "", "");
}

const ir::Function* function_named(const ir::Program& p, const std::string& name) {
  for (const auto& f : p.functions) {
    if (f->name == name) return f.get();
  }
  return nullptr;
}

TEST(ParserDynamic, ACallSpecialisesTheKernelOnItsArgumentsShapes) {
  auto program = parse(kHeader + kKernel +
                       orchestration("a: pl.Tensor[[64, 32], pl.FP32], "
                                     "b: pl.Tensor[[64, 32], pl.FP32], "
                                     "c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]",
                                     "        c = self.add(a, b, c)\n        return c\n",
                                     "pl.Tensor[[64, 32], pl.FP32]"));
  ASSERT_EQ(program->functions.size(), 2u);
  const ir::Function* add = function_named(*program, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(ir::type_to_string(add->params[0].var->type()), "pl.Tensor[[64, 32], pl.FP32]");
  EXPECT_EQ(ir::type_to_string(add->return_types[0]), "pl.Tensor[[64, 32], pl.FP32]");
  // The body's uses of M and N are the extents.
  EXPECT_NE(ir::print_program(*program).find("pl.load(a, [0, 0], [64, 32])"), std::string::npos)
      << ir::print_program(*program);
  // Written where the template is: the kernel first, as in the source.
  EXPECT_EQ(program->functions[0]->name, "add");
}

TEST(ParserDynamic, TwoShapesMakeTwoSpecialisationsAndARepeatReusesOne) {
  auto program = parse(kHeader + kKernel +
                       orchestration("a: pl.Tensor[[64, 32], pl.FP32], "
                                     "b: pl.Tensor[[16, 8], pl.FP32], "
                                     "c: pl.Out[pl.Tensor[[64, 32], pl.FP32]], "
                                     "d: pl.Out[pl.Tensor[[16, 8], pl.FP32]]",
                                     "        c = self.add(a, a, c)\n"
                                     "        d = self.add(b, b, d)\n"
                                     "        c = self.add(a, a, c)\n"
                                     "        return c\n",
                                     "pl.Tensor[[64, 32], pl.FP32]"));
  ASSERT_EQ(program->functions.size(), 3u);
  ASSERT_NE(function_named(*program, "add"), nullptr);
  const ir::Function* second = function_named(*program, "add_M16_N8");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(ir::type_to_string(second->params[2].var->type()), "pl.Tensor[[16, 8], pl.FP32]");
  const std::string text = ir::print_program(*program);
  EXPECT_NE(text.find("self.add_M16_N8(b, b, d)"), std::string::npos) << text;
}

TEST(ParserDynamic, EachParameterKeepsItsArgumentsOwnExtents) {
  // As in PyPTO, one name in two shapes does not make them equal: `c` is [N, M] of the
  // arguments while declared [M, N]; the body's M and N are those of `a`, the first shape.
  auto program = parse(kHeader +
                       "    @pl.function(type=pl.FunctionType.InCore)\n"
                       "    def t(self, a: pl.Tensor[[M, N], pl.FP32],\n"
                       "          c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> "
                       "pl.Tensor[[M, N], pl.FP32]:\n"
                       "        x = pl.load(a, [0, 0], [M, N])\n"
                       "        return c\n" +
                       orchestration("a: pl.Tensor[[16, 32], pl.FP32], "
                                     "c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]",
                                     "        c = self.t(a, c)\n        return c\n",
                                     "pl.Tensor[[32, 16], pl.FP32]"));
  const ir::Function* t = function_named(*program, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(ir::type_to_string(t->params[1].var->type()), "pl.Tensor[[32, 16], pl.FP32]");
  // The return type written like the output's is the output's.
  EXPECT_EQ(ir::type_to_string(t->return_types[0]), "pl.Tensor[[32, 16], pl.FP32]");
  EXPECT_NE(ir::print_program(*program).find("pl.load(a, [0, 0], [16, 32])"), std::string::npos);
}

TEST(ParserDynamic, TheEntryIsSpecialisedOnTheTensorsTheProgramRunsWith) {
  const std::string text =
      kHeader + kKernel +
      orchestration(
          "a: pl.Tensor[[M, N], pl.FP32], b: pl.Tensor[[M, N], pl.FP32], "
          "c: pl.Out[pl.Tensor[[M, N], pl.FP32]]",
          "        c = self.add(a, b, c)\n        return c\n", "pl.Tensor[[M, N], pl.FP32]");
  // Without tensors: the entry's dynamic dimensions have no extents.
  ParseError e = error_of(text);
  EXPECT_NE(std::string(e.what()).find("the entry 'main' has dynamic dimensions (M, N)"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 9);
  // By name.
  auto program = parse(text, {{"c", {8, 16}, ir::DataType::FP32},
                              {"a", {8, 16}, ir::DataType::FP32},
                              {"b", {8, 16}, ir::DataType::FP32}});
  const ir::Function* main = function_named(*program, "main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(ir::type_to_string(main->params[0].var->type()), "pl.Tensor[[8, 16], pl.FP32]");
  EXPECT_EQ(ir::type_to_string(function_named(*program, "add")->params[1].var->type()),
            "pl.Tensor[[8, 16], pl.FP32]");
  // By position, when the names are not the parameters'.
  program = parse(text, {{"x", {4, 4}, ir::DataType::FP32},
                         {"y", {4, 4}, ir::DataType::FP32},
                         {"z", {4, 4}, ir::DataType::FP32}});
  EXPECT_EQ(ir::type_to_string(function_named(*program, "main")->params[2].var->type()),
            "pl.Tensor[[4, 4], pl.FP32]");
  e = error_of(text, {{"x", {4, 4}, ir::DataType::FP32}});
  EXPECT_NE(std::string(e.what()).find("has 3 parameters but the program runs with 1 tensors"),
            std::string::npos)
      << e.what();
}

TEST(ParserDynamic, TensorDimIsTheExtentOfAnAxis) {
  auto program = parse(kHeader +
                       "    @pl.function(type=pl.FunctionType.InCore)\n"
                       "    def k(self, a: pl.Tensor[[M, 32], pl.FP32],\n"
                       "          c: pl.Out[pl.Tensor[[M, 32], pl.FP32]]) -> "
                       "pl.Tensor[[M, 32], pl.FP32]:\n"
                       "        rows = pl.tensor.dim(a, 0)\n"
                       "        cols = pl.tensor.dim(a, -1)\n"
                       "        for i in pl.range(rows // 16):\n"
                       "            t = pl.load(a, [i * 16, cols - 32], [16, 32])\n"
                       "            c = pl.store(t, [i * 16, 0], c)\n"
                       "        return c\n" +
                       orchestration("a: pl.Tensor[[48, 32], pl.FP32], "
                                     "c: pl.Out[pl.Tensor[[48, 32], pl.FP32]]",
                                     "        c = self.k(a, c)\n        return c\n",
                                     "pl.Tensor[[48, 32], pl.FP32]"));
  const std::string text = ir::print_program(*program);
  EXPECT_NE(text.find("rows = 48\n"), std::string::npos) << text;
  EXPECT_NE(text.find("cols = 32\n"), std::string::npos) << text;
  ParseError e =
      error_of(kHeader +
               "    @pl.function(type=pl.FunctionType.InCore)\n"
               "    def k(self, a: pl.Tensor[[16, 32], pl.FP32]) -> pl.Scalar[pl.INT64]:\n"
               "        return pl.tensor.dim(a, 2)\n");
  EXPECT_NE(std::string(e.what()).find("axis 2 is out of range for a 2-D tensor"),
            std::string::npos)
      << e.what();
}

TEST(ParserDynamic, WhatHasNoExtentIsALocatedError) {
  // A name only in the return type: no argument can give it a value.
  ParseError e = error_of(kHeader +
                          "    @pl.function(type=pl.FunctionType.InCore)\n"
                          "    def k(self, a: pl.Tensor[[16, 32], pl.FP32]) -> "
                          "pl.Tensor[[M, 32], pl.FP32]:\n"
                          "        return a\n" +
                          orchestration("a: pl.Tensor[[16, 32], pl.FP32]",
                                        "        x = self.k(a)\n        return x\n",
                                        "pl.Tensor[[16, 32], pl.FP32]"));
  EXPECT_NE(std::string(e.what()).find(
                "dynamic dimension 'M' of 'k' is not the extent of any parameter's shape"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 8);
  // A dynamic name in a function that is not specialised.
  e = error_of(kHeader +
               "    @pl.function(type=pl.FunctionType.InCore)\n"
               "    def k(self, a: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
               "        t = pl.load(a, [0, 0], [M, 32])\n"
               "        return a\n");
  EXPECT_NE(std::string(e.what()).find("dynamic dimension 'M' has no extent here"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(e.line(), 5);
  // A rank that does not match.
  e = error_of(kHeader + kKernel +
               orchestration("a: pl.Tensor[[64], pl.FP32], c: pl.Out[pl.Tensor[[64, 32], pl.FP32]]",
                             "        c = self.add(a, a, c)\n        return c\n",
                             "pl.Tensor[[64, 32], pl.FP32]"));
  EXPECT_NE(std::string(e.what()).find(
                "expected a 2-D tensor, got pl.Tensor[[64], pl.FP32] in argument 1 of 'add'"),
            std::string::npos)
      << e.what();
  // A name that is nothing.
  e = error_of(kHeader +
               "    @pl.function(type=pl.FunctionType.InCore)\n"
               "    def k(self, a: pl.Tensor[[Q, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
               "        return a\n");
  EXPECT_NE(std::string(e.what()).find("unknown name 'Q' in a shape"), std::string::npos)
      << e.what();
}

TEST(ParserDynamic, AModuleAssignmentOfPlDynamicDefinesOne) {
  auto programs =
      parse_module("import pypto.language as pl\nR = pl.dynamic(\"R\")\n" + kHeader +
                       "    @pl.function(type=pl.FunctionType.InCore)\n"
                       "    def k(self, a: pl.Tensor[[R, 8], pl.FP32],\n"
                       "          c: pl.Out[pl.Tensor[[R, 8], pl.FP32]]) -> "
                       "pl.Tensor[[R, 8], pl.FP32]:\n"
                       "        return pl.store(pl.load(a, [0, 0], [R, 8]), [0, 0], c)\n" +
                       orchestration("a: pl.Tensor[[4, 8], pl.FP32], "
                                     "c: pl.Out[pl.Tensor[[4, 8], pl.FP32]]",
                                     "        c = self.k(a, c)\n        return c\n",
                                     "pl.Tensor[[4, 8], pl.FP32]"),
                   "dyn.py");
  ASSERT_EQ(programs.size(), 1u);
  EXPECT_NE(ir::print_program(*programs[0]).find("pl.load(a, [0, 0], [4, 8])"), std::string::npos);
  try {
    parse_module(
        "import pypto.language as pl\nR = pl.dynamic(3)\n" + kHeader +
            "    @pl.function(type=pl.FunctionType.InCore)\n"
            "    def k(self, a: pl.Tensor[[R, 8], pl.FP32]) -> pl.Tensor[[4, 8], pl.FP32]:\n"
            "        return a\n",
        "dyn.py");
    ADD_FAILURE() << "pl.dynamic(3) was accepted";
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find("pl.dynamic takes the dimension's name"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.line(), 2);
  }
}

}  // namespace
}  // namespace pypto::frontend
