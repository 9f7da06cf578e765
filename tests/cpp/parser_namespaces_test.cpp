// PyPTO's spellings of ops: the pl.tensor / pl.tile namespaces and their aliases build the same
// IR as the plain pl.<op> spelling; pl.full, pl.const, pl.cast of a Scalar, a scalar index of
// pl.read and cast's `mode` string; the ops the compiler lacks fail at the call, named as
// written.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

// Lines 1-8; a kernel body starts on line 9, indented by 8 spaces.
std::string kernel(const std::string& body) {
  return "import pypto.language as pl\n"
         "\n"
         "@pl.program\n"
         "class P:\n"
         "    @pl.function(type=pl.FunctionType.InCore)\n"
         "    def k(self, a: pl.Tensor[[16, 32], pl.FP32], v: pl.Tensor[[32], pl.INT32],\n"
         "          o: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:\n"
         "        t = pl.load(a, [0, 0], [16, 32])\n" +
         body +
         "        o = pl.store(r, [0, 0], o)\n"
         "        return o\n";
}

std::string printed(const std::string& body) {
  auto programs = parse_module(kernel(body), "ok.py");
  return ir::print_program(*programs.at(0));
}

void expect_same(const std::string& spelled, const std::string& plain) {
  auto a = parse_module(kernel(spelled), "ok.py");
  auto b = parse_module(kernel(plain), "ok.py");
  EXPECT_EQ(ir::print_program(*a.at(0)), ir::print_program(*b.at(0))) << spelled;
}

TEST(ParserNamespaces, SpellingsBuildTheSameIrAsThePlainOps) {
  expect_same("        r = pl.tile.add(t, t)\n", "        r = pl.add(t, t)\n");
  expect_same("        r = pl.tile.muls(t, 2.0)\n", "        r = pl.mul(t, 2.0)\n");
  expect_same("        r = pl.tile.exp(tile=t)\n", "        r = pl.exp(t)\n");
  expect_same("        r = pl.tile.load(a, [0, 0], [16, 32])\n",
              "        r = pl.load(a, [0, 0], [16, 32])\n");
  expect_same(
      "        r = pl.tile.create([16, 32], pl.FP32, pl.MemorySpace.Vec)\n",
      "        r = pl.create_tile([16, 32], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)\n");
  expect_same("        x = pl.tensor.add(a, a)\n        r = t\n",
              "        x = pl.add(a, a)\n        r = t\n");
  expect_same("        s = pl.tensor.read(tensor=v, indices=[3])\n        r = pl.mul(t, s)\n",
              "        s = pl.read(v, [3])\n        r = pl.mul(t, s)\n");
  // The three-operand forms: two adds or subs.
  expect_same("        r = pl.tile.addc(t, t, t)\n", "        r = pl.add(pl.add(t, t), t)\n");
  expect_same("        r = pl.subsc(t, 2.0, rhs2=t)\n", "        r = pl.sub(pl.sub(t, 2.0), t)\n");
  // The scalar-operand forms, in every namespace.
  expect_same("        r = pl.adds(t, 2.0)\n", "        r = pl.add(t, 2.0)\n");
  expect_same("        r = pl.tile.maximums(t, 0.0)\n", "        r = pl.maximum(t, 0.0)\n");
  expect_same("        r = pl.fmods(t, 1.5)\n", "        r = pl.fmod(t, 1.5)\n");
  expect_same("        x = pl.tensor.subs(a, 1.0)\n        r = t\n",
              "        x = pl.sub(a, 1.0)\n        r = t\n");
  expect_same(
      "        i = pl.cast(t, pl.INT32)\n        r = pl.cast(pl.tile.shls(i, 2), pl.FP32)\n",
      "        i = pl.cast(t, pl.INT32)\n        r = pl.cast(pl.shl(i, 2), pl.FP32)\n");
  // PyPTO's scalar max / min in the tile namespace, and pl.max: Python's max / min.
  expect_same("        s = pl.read(v, [3])\n        r = pl.mul(t, pl.tile.max(s, 2))\n",
              "        s = pl.read(v, [3])\n        r = pl.mul(t, max(s, 2))\n");
  expect_same("        s = pl.read(v, [3])\n        r = pl.mul(t, pl.tile.min(s, 2))\n",
              "        s = pl.read(v, [3])\n        r = pl.mul(t, min(s, 2))\n");
  expect_same("        s = pl.read(v, [3])\n        r = pl.mul(t, pl.max(s, 2))\n",
              "        s = pl.read(v, [3])\n        r = pl.mul(t, max(s, 2))\n");
  // The partial ops and the triangular mask in both namespaces.
  expect_same("        r = pl.tile.part_add(t, t)\n", "        r = pl.part_add(t, t)\n");
  expect_same("        x = pl.tensor.part_max(a, a)\n        r = t\n",
              "        x = pl.part_max(a, a)\n        r = t\n");
  expect_same("        r = pl.tile.tri(1, [16, 32], dtype=pl.FP32, upper=True)\n",
              "        r = pl.tri(1, [16, 32], dtype=pl.FP32, upper=True)\n");
}

TEST(ParserNamespaces, FullIsAZeroTilePlusTheValue) {
  expect_same("        r = pl.tile.full([16, 32], dtype=pl.FP32, value=1.5)\n",
              "        r = pl.add(pl.create_tile([16, 32], dtype=pl.FP32), 1.5)\n");
}

TEST(ParserNamespaces, ScalarIndexReadsA1DTensor) {
  expect_same("        s = pl.read(v, 3)\n        r = pl.mul(t, s)\n",
              "        s = pl.read(v, [3])\n        r = pl.mul(t, s)\n");
}

TEST(ParserNamespaces, ConstAndScalarCastFoldOrPromote) {
  std::string text = printed(
      "        c = pl.const(3, pl.FP32)\n"
      "        s = pl.read(v, [3])\n"
      "        f = pl.cast(s, pl.FP32)\n"
      "        r = pl.mul(pl.mul(t, f), c)\n");
  EXPECT_NE(text.find("3.0"), std::string::npos) << text;
  EXPECT_NE(text.find("* 1.0"), std::string::npos) << text;
  // A constant casts at compile time, toward zero.
  expect_same("        r = pl.mul(t, pl.cast(2.75, pl.INT32))\n", "        r = pl.mul(t, 2)\n");
}

TEST(ParserNamespaces, CastModeIsAcceptedWhenItIsWhatTheConversionDoes) {
  expect_same("        r = pl.cast(pl.cast(t, pl.INT32, mode=\"trunc\"), pl.FP32, \"rint\")\n",
              "        r = pl.cast(pl.cast(t, target_type=pl.INT32), target_type=pl.FP32)\n");
}

struct ErrorCase {
  std::string body;
  int line;
  int col;
  const char* message;
};

TEST(ParserNamespaces, MissingOpsAndMisuseFailAtTheCall) {
  const std::vector<ErrorCase> cases = {
      {"        pl.tensor.gather_row(a, a, [0, 0], [0, 0], [1, 32])\n", 9, 30,
       "expected Tile, got Tensor in argument 1 of pl.gather_row"},
      {"        r = pl.tensor.alloc(t)\n", 9, 13, "pl.tensor.alloc names an allocation as a pl.Ptr"},
      {"        r = pl.tensor.frobnicate(t)\n", 9, 13, "unknown op 'pl.tensor.frobnicate'"},
      {"        pl.dump_tag(t)\n", 9, 21, "pl.dump_tag takes a tensor, got pl.Tile"},
      {"        r = pl.tensor.add(t, t)\n", 9, 27, "pl.tensor.add takes tensors, got pl.Tile"},
      {"        r = pl.tile.cast(t, pl.INT32, mode=\"round\")\n", 9, 44,
       "mode 'round' of pl.tile.cast is not supported yet for FP32 to INT32"},
      {"        r = pl.cast(t, pl.INT32, mode=\"sideways\")\n", 9, 39, "unknown rounding mode"},
      {"        r = pl.add(t, \"x\")\n", 9, 23, "string literals are not supported here"},
      {"        s = pl.read(v, [3])\n        r = pl.cast(s + 0.5, pl.INT32)\n", 10, 13,
       "is not supported yet"},
      {"        r = pl.tile.full([16, 32], pl.INT32, 0.5)\n", 9, 46,
       "must be an integer for INT32"},
      {"        r = pl.tile.adds(t, t)\n", 9, 29,
       "pl.tile.adds takes a scalar as its second argument, got pl.Tile"},
      {"        r = pl.shl(t, 1)\n", 9, 20, "pl.shl takes integer elements, got FP32"},
      {"        r = pl.log(pl.cast(t, pl.INT32))\n", 9, 20,
       "pl.log takes float (FP32, FP16, BF16) elements, got INT32"},
      {"        r = pl.expands(t, t)\n", 9, 24, "expected Scalar, got Tile in argument 2"},
      {"        r = pl.tile.addsc(t, t, t)\n", 9, 30, "pl.tile.addsc takes a scalar as rhs"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    try {
      parse_module(kernel(c.body), "bad.py");
      ADD_FAILURE() << "no error";
    } catch (const ParseError& e) {
      EXPECT_EQ(e.line(), c.line) << e.rendered();
      EXPECT_EQ(e.col(), c.col) << e.rendered();
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.rendered();
    }
  }
}

}  // namespace
}  // namespace pypto::frontend
