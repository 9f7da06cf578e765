// PyPTO's type syntax: memory spaces (pl.Mem.*), tile views, tensor layouts and views, MemRefs,
// what each means in the IR, that the printed form parses back to itself, and the located error
// that names each form this device does not support.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

// Lines 1-5; the kernel's signature is line 6 and its body starts on line 7.
std::string kernel(const std::string& params, const std::string& body) {
  return "import pypto.language as pl\n"
         "\n"
         "@pl.program\n"
         "class P:\n"
         "    @pl.function(type=pl.FunctionType.InCore)\n"
         "    def k(self, " +
         params + ") -> pl.Tensor[[64, 64], pl.FP32]:\n" + body;
}

const char* kParams = "a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]";
const char* kStore = "        o = pl.store(t, [0, 0], o)\n        return o\n";

ir::ProgramPtr parse(const std::string& text) {
  auto programs = parse_module(text, "types.py");
  EXPECT_EQ(programs.size(), 1u);
  return programs.at(0);
}

// The statement `index` of the kernel's body.
const ir::AssignStmt* assignment(const ir::ProgramPtr& p, size_t index) {
  const auto* body = p->functions.at(0)->body->as<ir::SeqStmts>();
  return body->stmts.at(index)->as<ir::AssignStmt>();
}

const ir::TileType* tile_of(const ir::ProgramPtr& p, size_t index) {
  return assignment(p, index)->var->type()->as<ir::TileType>();
}

// Printing, parsing the print and printing again gives the same text and the same IR.
void expect_round_trip(const ir::ProgramPtr& p) {
  const std::string printed = ir::print_program(*p);
  auto again = parse(printed);
  EXPECT_EQ(ir::print_program(*again), printed);
  EXPECT_TRUE(ir::structural_equal(*p, *again)) << printed;
}

void expect_error(const std::string& text, int line, int col, const std::string& message) {
  try {
    parse_module(text, "types.py");
    ADD_FAILURE() << "no error; expected: " << message;
  } catch (const support::ParseError& e) {
    EXPECT_EQ(e.line(), line) << e.rendered();
    EXPECT_EQ(e.col(), col) << e.rendered();
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.rendered();
    EXPECT_NE(e.rendered().find("types.py:" + std::to_string(line)), std::string::npos);
  }
}

TEST(ParserTypes, KernelParameterValidShapeCutsTheLoadsOfTheParameter) {
  auto p =
      parse(kernel("a: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(valid_shape=[32, 64], "
                   "layout=pl.TensorLayout.ND)], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]",
                   "        t = pl.load(a, [16, 0], [32, 64])\n"
                   "        o = pl.store(t, [0, 0], o)\n        return o\n"));
  // The parameter's type is the whole tensor; the load reads the 16 rows the region leaves.
  EXPECT_EQ(ir::type_to_string(p->functions.at(0)->params.at(0).var->type()),
            "pl.Tensor[[64, 64], pl.FP32]");
  const auto* load = assignment(p, 0)->value->as<ir::Call>();
  ASSERT_NE(load, nullptr);
  ASSERT_EQ(load->args.size(), 4u);
  EXPECT_EQ(ir::print_expr(load->args[3]), "[16, 64]");
  expect_round_trip(p);
}

TEST(ParserTypes, MemAliasNamesAMemorySpaceInTypesAndOpArguments) {
  auto p = parse(kernel(kParams,
                        "        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], "
                        "[64, 64], target_memory=pl.Mem.Mat)\n"
                        "        u: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Left] = "
                        "pl.move(t, target_memory=pl.Mem.Left)\n"
                        "        v = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Vec)\n"
                        "        o = pl.store(v, [0, 0], o)\n        return o\n"));
  EXPECT_EQ(tile_of(p, 0)->space, ir::MemorySpace::Mat);
  EXPECT_EQ(tile_of(p, 1)->space, ir::MemorySpace::Left);
  EXPECT_EQ(tile_of(p, 2)->space, ir::MemorySpace::Vec);
  const auto* load = assignment(p, 0)->value->as<ir::Call>();
  ASSERT_EQ(load->attrs.size(), 1u);
  EXPECT_EQ(std::get<ir::MemorySpace>(load->attrs[0].second), ir::MemorySpace::Mat);
  expect_round_trip(p);
}

TEST(ParserTypes, TileArgumentsComeInAnyOrderAndMemRefsTakePyptoMeaning) {
  auto p = parse(kernel(kParams,
                        // PyPTO's numeric form: (addr, size, id); the space may follow it.
                        "        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(256, 16384, 3), "
                        "pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64])\n"
                        // The form PyPTO prints: (base buffer, byte offset, size).
                        "        u: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_vec_5, 0, 16384), "
                        "pl.Mem.Vec] = pl.exp(t)\n"
                        // The four-argument form, and a typed zero offset.
                        "        w: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.MemRef(pl.Mem.Vec, "
                        "0, 16384, 7)] = pl.exp(u)\n"
                        "        x: pl.Tile[[64, 64], pl.FP32, pl.MemRef(\"mem_vec_2\", "
                        "pl.const(0, pl.INT64), 16384), pl.Mem.Vec] = pl.exp(w)\n"
                        "        o = pl.store(x, [0, 0], o)\n        return o\n"));
  const auto* t = tile_of(p, 0);
  ASSERT_TRUE(t->memref);
  EXPECT_EQ(t->memref->addr, 256);
  EXPECT_EQ(t->memref->size, 16384);
  EXPECT_EQ(t->memref->buffer_id, 3);
  EXPECT_EQ(t->memref->space, ir::MemorySpace::Vec);
  EXPECT_EQ(ir::type_to_string(assignment(p, 0)->var->type()),
            "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(256, 16384, 3)]");
  EXPECT_EQ(tile_of(p, 1)->memref->buffer_id, 5);
  EXPECT_EQ(tile_of(p, 1)->memref->addr, -1);
  EXPECT_EQ(tile_of(p, 2)->memref->buffer_id, 7);
  EXPECT_EQ(tile_of(p, 2)->memref->addr, 0);
  EXPECT_EQ(tile_of(p, 3)->memref->buffer_id, 2);
  expect_round_trip(p);
}

TEST(ParserTypes, TileViewLayoutsAreKeptAndPrintedAgainstTheImplicitView) {
  auto p = parse(kernel(
      kParams,
      "        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout."
      "col_major, slayout=pl.TileLayout.row_major, fractal=1024)] = pl.load(a, [0, 0], [64, "
      "64])\n"
      // Mat's implicit view is col_major / row_major: only the fractal differs.
      "        m: pl.Tile[[64, 64], pl.FP32, pl.TileView(blayout=pl.TileLayout.col_major, "
      "slayout=pl.TileLayout.row_major, fractal=1024), pl.Mem.Mat] = pl.load(a, [0, 0], [64, "
      "64], target_memory=pl.Mem.Mat)\n" +
          std::string(kStore)));
  const auto* t = tile_of(p, 0);
  ASSERT_TRUE(t->view);
  EXPECT_EQ(t->view->blayout, ir::TileLayout::col_major);
  EXPECT_EQ(t->view->slayout, ir::TileLayout::row_major);
  EXPECT_EQ(t->view->fractal, 1024);
  EXPECT_EQ(ir::type_to_string(assignment(p, 0)->var->type()),
            "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.TileView(blayout=pl.TileLayout."
            "col_major, slayout=pl.TileLayout.row_major, fractal=1024)]");
  EXPECT_EQ(ir::type_to_string(assignment(p, 1)->var->type()),
            "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Mat, pl.TileView(fractal=1024)]");
  expect_round_trip(p);
}

TEST(ParserTypes, ATileViewThatRepeatsTheImplicitOneIsNoView) {
  auto p = parse(kernel(kParams,
                        "        t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.TileView()] "
                        "= pl.load(a, [0, 0], [64, 64])\n"
                        "        c: pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec, pl.TileView(blayout="
                        "pl.TileLayout.col_major, valid_shape=[64, 1], pad=pl.PadValue.null)] "
                        "= pl.row_sum(t)\n" +
                            std::string(kStore)));
  EXPECT_FALSE(tile_of(p, 0)->view);
  EXPECT_FALSE(tile_of(p, 1)->view);  // a [64, 1] column is col_major anyway
  EXPECT_EQ(ir::type_to_string(assignment(p, 0)->var->type()),
            "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec]");
}

TEST(ParserTypes, ATileViewValidShapeGivesItsLoadTheValidRegion) {
  auto p = parse(kernel(kParams,
                        "        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(valid_shape="
                        "[48, 64])] = pl.load(a, [0, 0], [64, 64])\n"
                        "        u: pl.Tile[[64, 64], pl.FP32, pl.TileView(valid_shape=[16, 32])] "
                        "= pl.load(a, [0, 0], [64, 64], valid_shapes=[16, 32])\n" +
                            std::string(kStore)));
  const auto* load = assignment(p, 0)->value->as<ir::Call>();
  ASSERT_EQ(load->args.size(), 4u);
  const auto* valid = load->args[3]->as<ir::MakeTuple>();
  ASSERT_TRUE(valid);
  EXPECT_EQ(ir::as_const_int(valid->elements[0]), 48);
  EXPECT_EQ(ir::as_const_int(valid->elements[1]), 64);
  EXPECT_EQ(tile_of(p, 0)->view->valid_shape, (std::vector<int64_t>{48, 64}));
  EXPECT_TRUE(ir::types_equal(assignment(p, 0)->value->type(), assignment(p, 0)->var->type()));
  EXPECT_EQ(ir::type_to_string(assignment(p, 1)->var->type()),
            "pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.TileView(valid_shape=[16, 32])]");
  expect_round_trip(p);
}

TEST(ParserTypes, TensorLayoutsViewsAndMemRefsAreKeptAndPrintedBack) {
  auto p = parse(kernel(
      "a: pl.Tensor[[64, 64], pl.FP32, pl.NZ], "
      "b: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)],"
      " c: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(layout=pl.TensorLayout.MX_A_ZZ)], "
      "d: pl.Tensor[[64, 64], pl.FP32, pl.TensorLayout.ND, pl.MemRef(0, 16384, 2)], "
      "e: pl.Tensor[[64, 64], pl.FP32, pl.MemRef(\"mem_ddr_1\", 0, 16384)], "
      "f: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(valid_shape=[64, 64], layout=pl.TensorLayout."
      "NZ, pad=pl.PadValue.zero)], "
      "o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]",
      "        t = pl.load(a, [0, 0], [64, 64])\n" + std::string(kStore)));
  const auto& params = p->functions.at(0)->params;
  auto type = [&](size_t i) { return ir::type_to_string(params.at(i).var->type()); };
  EXPECT_EQ(type(0), "pl.Tensor[[64, 64], pl.FP32, pl.NZ]");
  EXPECT_EQ(type(1), "pl.Tensor[[64, 64], pl.FP32]");  // packed ND: nothing to keep
  EXPECT_EQ(type(2), "pl.Tensor[[64, 64], pl.FP32, pl.MX_A_ZZ]");
  EXPECT_EQ(type(3), "pl.Tensor[[64, 64], pl.FP32, pl.MemRef(0, 16384, 2)]");
  EXPECT_EQ(type(4), "pl.Tensor[[64, 64], pl.FP32, pl.MemRef(-1, 16384, 1)]");
  EXPECT_EQ(type(5),
            "pl.Tensor[[64, 64], pl.FP32, pl.TensorView(layout=pl.TensorLayout.NZ, "
            "pad=pl.PadValue.zero)]");
  const auto* a = params.at(0).var->type()->as<ir::TensorType>();
  ASSERT_TRUE(a->view);
  EXPECT_EQ(a->view->layout, ir::TensorLayout::NZ);
  EXPECT_EQ(params.at(3).var->type()->as<ir::TensorType>()->memref->space, ir::MemorySpace::DDR);
  expect_round_trip(p);
}

TEST(ParserTypes, PlTupleIsTupleAndLayoutsDoNotMatterForArguments) {
  const std::string text =
      "import pypto.language as pl\n"
      "\n"
      "@pl.program\n"
      "class P:\n"
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, a: pl.Tensor[[64, 64], pl.FP32, pl.NZ], o: pl.Out[pl.Tensor[[64, 64], "
      "pl.FP32]]) -> pl.Tuple[pl.Tensor[[64, 64], pl.FP32]]:\n"
      "        t = pl.load(a, [0, 0], [64, 64])\n"
      "        o = pl.store(t, [0, 0], o)\n"
      "        return o\n"
      "\n"
      "    @pl.function(type=pl.FunctionType.Orchestration)\n"
      "    def main(self, a: pl.Tensor[[64, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], "
      "pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:\n"
      "        o = self.k(a, o)\n"
      "        return o\n";
  auto p = parse(text);
  EXPECT_EQ(p->functions.at(0)->return_types.size(), 1u);
  expect_round_trip(p);
}

TEST(ParserTypes, TheOlderCallNotationNamesTheSameTypes) {
  auto p =
      parse(kernel("a: pl.Tensor((64, 64), pl.FP32), n: pl.Scalar(pl.INT64), "
                   "o: pl.Out[pl.Tensor([64, 64], pl.FP32)]",
                   "        t: pl.Tile((64, 64), pl.FP32) = pl.load(a, [0, 0], [64, 64])\n" +
                       std::string(kStore)));
  const auto& params = p->functions.at(0)->params;
  EXPECT_EQ(ir::type_to_string(params.at(0).var->type()), "pl.Tensor[[64, 64], pl.FP32]");
  EXPECT_EQ(ir::type_to_string(params.at(1).var->type()), "pl.Scalar[pl.INT64]");
  EXPECT_EQ(ir::type_to_string(params.at(2).var->type()), "pl.Tensor[[64, 64], pl.FP32]");
  EXPECT_EQ(tile_of(p, 0)->shape, (std::vector<int64_t>{64, 64}));
  expect_error(kernel("a: pl.Tensor((64, 64), pl.FP32, pl.NZ), o: pl.Out[pl.Tensor[[64, 64], "
                      "pl.FP32]]",
                      "        t = pl.load(a, [0, 0], [64, 64])\n" + std::string(kStore)),
               6, 49, "the call notation takes only the shape and the dtype");
}

TEST(ParserTypes, UnsupportedFormsAreLocatedErrorsThatNameThem) {
  const std::string L = "        t = pl.load(a, [0, 0], [64, 64])\n";
  const std::string S = kStore;
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.TileView(foo=1)] = "
                      "pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 51, "pl.TileView argument 'foo' is not supported");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.NZ] = pl.load(a, [0, 0], "
                      "[64, 64])\n" +
                          S),
               7, 39, "pl.Tile does not accept a tensor layout such as pl.NZ");
  expect_error(kernel("a: pl.Tensor[[64, 64], pl.FP32, pl.DN], o: pl.Out[pl.Tensor[[64, 64], "
                      "pl.FP32]]",
                      L + S),
               6, 49, "pl.Tensor[..., pl.DN] is not supported");
  // A strided view is honoured (tests/python/test_tensor_storage_views.py); one that would
  // place two elements at one place is not.
  expect_error(kernel("a: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(stride=[32, 1], layout="
                      "pl.TensorLayout.ND)], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]",
                      L + S),
               6, 49, "places two elements at one place");
  // A partial valid region is a kernel parameter's (ParserTypes.KernelParameterValidShape...);
  // anywhere else it is an error.
  expect_error(kernel(kParams,
                      "        x: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(valid_shape=[32, "
                      "64])] = a\n" +
                          L + S),
               7, 41,
               "pl.TensorView valid_shape [32, 64] on a tensor of shape [64, 64] is supported on "
               "a kernel's parameter only");
  expect_error(kernel("a: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(foo=[1])], "
                      "o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]",
                      L + S),
               6, 63, "pl.TensorView argument 'foo' is not supported");
  expect_error(kernel("a: pl.Tensor[[64, 64], pl.FP32, pl.NZ, pl.NZ], o: pl.Out[pl.Tensor[[64, "
                      "64], pl.FP32]]",
                      L + S),
               6, 56, "the 4th argument of pl.Tensor must be pl.MemRef(...)");
  expect_error(kernel("a: pl.Tensor[[64, 64], pl.FP32, STRIDED], o: pl.Out[pl.Tensor[[64, 64], "
                      "pl.FP32]]",
                      L + S),
               6, 49, "'STRIDED' in a pl.Tensor annotation");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.ScalarLocal] = pl.load(a, "
                      "[0, 0], [64, 64])\n" +
                          S),
               7, 46, "memory space pl.Mem.ScalarLocal is not supported on this device");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.HF8] = pl.load(a, [0, 0], [64, "
                      "64])\n" +
                          S),
               7, 30, "pl.HF8 is not supported yet: the HiFloat8 encoding has no element");
  expect_error(
      kernel("a: pl.Tensor[[M, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]", L + S), 6,
      31, "unknown name 'M' in a shape");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(\"scratch\", slots=17), "
                      "pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 66, "slots= of a declared allocation must be 1 to 16, got 17");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(scratch, 0, "
                      "16384), pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 49, "pl.MemRef base 'scratch' is not supported");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.MemRef(mem_acc_1, 0, "
                      "16384), pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 39, "names memory space Acc but the tile is in Vec");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.Mem.Vec] = "
                      "pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 51, "at most one memory space");
  expect_error(kernel(kParams, L +
                                   "        u: pl.Tile[[64, 64], pl.FP32, pl.TileView(valid_shape="
                                   "[32, 64])] = pl.exp(t)\n" +
                                   S),
               8, 12, "only supported on the result of pl.load");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.TileView(valid_shape=[32, "
                      "64])] = pl.load(a, [0, 0], [64, 64], valid_shapes=[16, 64])\n" +
                          S),
               7, 12, "does not match the valid_shapes of its pl.load");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.TileView(stride=[1, 64])] "
                      "= pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 58, "pl.TileView stride [1, 64] is not supported");
  expect_error(kernel(kParams,
                      "        t: pl.Tile[[64, 64], pl.FP32, pl.TileView(valid_shape=[32, "
                      "64], pad=pl.PadValue.zero)] = pl.load(a, [0, 0], [64, 64])\n" +
                          S),
               7, 93, "pad together with a partial valid_shape is not supported");
  expect_error(
      kernel(kParams, "        t: pl.Array[16, pl.INT32] = pl.load(a, [0, 0], [64, 64])\n" + S), 7,
      12, "type pl.Array is not supported on this device");
  expect_error(
      kernel(kParams, "        t = pl.load(a, [0, 0], [64, 64], target_memory=pl.NZ)\n" + S), 7, 56,
      "got a tensor layout (pl.TensorLayout is only allowed in pl.Tensor");
  expect_error(kernel(kParams,
                      "        t = pl.load(a, [0, 0], [64, 64], target_memory="
                      "pl.Mem.Foo)\n" +
                          S),
               7, 63, "unknown memory space 'pl.Mem.Foo'");
}

}  // namespace
}  // namespace pypto::frontend
