// Walks the op registry: every op carries every attribute it needs, and for every op with a
// kernel instruction, a program built from its registry entry computes the same in generated
// code (built with the host compiler, run on the runtime's tile instructions) as in the
// reference interpreter. Programs come from the op's emission shape, so a new op is covered
// without touching this file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "codegen_test_support.h"
#include "pypto/codegen/program_codegen.h"
#include "pypto/frontend/parser.h"
#include "pypto/ir/interpreter.h"
#include "pypto/ir/op_dtypes.h"
#include "pypto/ir/op_registry.h"
#include "pypto/passes/pass_manager.h"
#include "pypto/support/element_ops.h"

namespace pypto::ir {
namespace {

using codegen::testing::HostArray;

bool needs_opcode(EmitShape e) {
  return e == EmitShape::Binary || e == EmitShape::Unary || e == EmitShape::RowReduce ||
         e == EmitShape::RowExpand || e == EmitShape::ColReduce || e == EmitShape::RowArgReduce ||
         e == EmitShape::ColArgReduce || e == EmitShape::ExpandExpDif || e == EmitShape::PartBinary;
}

// True when the runtime and the interpreter have an element function for the op's opcode.
bool has_element_function(const OpDef& def) {
  auto any = [](auto) {};
  switch (def.emit) {
    case EmitShape::Binary:
    case EmitShape::RowExpand:
    case EmitShape::ColExpand:
      return support::with_binary_op(def.isa_opcode, any);
    case EmitShape::Unary:
      return support::with_unary_op(def.isa_opcode, any);
    case EmitShape::RowReduce:
    case EmitShape::ColReduce:
    case EmitShape::RowArgReduce:
    case EmitShape::ColArgReduce:
      return support::with_reduce_op(def.isa_opcode, any);
    case EmitShape::ExpandExpDif:
    case EmitShape::PartBinary:
      return support::with_binary_op(def.isa_opcode, any);
    default:
      return false;
  }
}

TEST(OpDefinition, EveryOpHasEveryAttributeItNeeds) {
  const auto& registry = OpRegistry::global();
  ASSERT_FALSE(registry.names().empty());
  for (const auto& name : registry.names()) {
    SCOPED_TRACE("pl." + name);
    const OpDef* def = registry.find(name);
    ASSERT_NE(def, nullptr);
    EXPECT_TRUE(static_cast<bool>(def->infer)) << "no type rule";
    EXPECT_NE(def->interpret, nullptr) << "no interpreter kernel";
    EXPECT_LE(def->min_args, def->arg_names.size());
    if (def->emit == EmitShape::None) {
      // Only tensor-level ops have no kernel instruction: create_tensor and task scheduling
      // (orchestrations), expand_clone (which ConvertTensorToTileOps lowers in kernels), the
      // host orchestrator's window buffers, paged_gather of tensors (lowered to loads), and
      // pl.arange and pl.random (the tensor forms of pl.ci and pl.tile_random, which
      // ConvertTensorToTileOps lowers them to); gather_compare's two results are a tuple, which
      // kernel code does not hold yet. The launch queries and the core counts of pl.system
      // are scalar expressions, not instructions. aiv_shard and aic_gather never reach a kernel:
      // LowerSplitAiv replaces them.
      EXPECT_TRUE(
          def->category == OpCategory::CreateTensor || def->category == OpCategory::ExpandClone ||
          def->category == OpCategory::Scheduling || def->category == OpCategory::LaunchQuery ||
          def->category == OpCategory::Communication || def->category == OpCategory::PagedGather ||
          def->category == OpCategory::System || name == "gather_compare" ||
          def->name == "arange" || def->name == "random" || def->name == "aiv_shard" ||
          def->name == "aic_gather")
          << "no emission shape";
    }
    // The column broadcasts take a binary opcode, except col_expand, which only copies.
    if (needs_opcode(def->emit) || (def->emit == EmitShape::ColExpand && name != "col_expand")) {
      EXPECT_GE(def->isa_opcode, 0) << "no device opcode";
      ASSERT_NE(def->isa_opcode_name, nullptr);
      EXPECT_EQ(std::string(def->isa_opcode_name).rfind("PTO_", 0), 0u) << def->isa_opcode_name;
      EXPECT_TRUE(has_element_function(*def)) << "no element function for the opcode";
    } else {
      EXPECT_EQ(def->isa_opcode, -1);
      EXPECT_EQ(def->isa_opcode_name, nullptr);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Programs per op. Inputs x and w are [16, 16] FP32; each block of statements computes one
// result `r<i>` that is stored (as FP32) at rows [16 i, 16 i + 16) of the output y.

struct Block {
  std::string stmts;  // statements, one per line, defining r<i>
  bool fp32_result;   // else cast to FP32 before the store
  float tolerance;    // relative and absolute
};

struct DtypeCase {
  const char* name;
  bool integer;
  float tolerance;  // the interpreter computes in double, the device in float
  const char* scale;
  bool non_negative = false;  // operands from |x * scale| (an unsigned type)
};

// The narrow integers get operands large enough that their sums and products wrap (and the
// casts that make the operands saturate); the FP8s may round once more on the device (float
// then 8 bits) than in the interpreter (double then 8 bits): one unit in the last place (a
// factor of 2 for FP8E8M0, whose values are powers of two; it has no sign, so |x| operands).
const DtypeCase kDtypes[] = {{"FP32", false, 1e-5f, "1.0"},
                             {"FP16", false, 2e-3f, "1.0"},
                             {"BF16", false, 1.6e-2f, "1.0"},
                             {"INT32", true, 0.0f, "8.0"},
                             {"INT64", true, 0.0f, "8.0"},
                             {"INT8", true, 0.0f, "100.0"},
                             {"INT16", true, 0.0f, "20000.0"},
                             {"UINT8", true, 0.0f, "100.0", true},
                             {"UINT16", true, 0.0f, "30000.0", true},
                             {"UINT32", true, 0.0f, "1000000000.0", true},
                             {"UINT64", true, 0.0f, "8.0", true},
                             {"FP8E4M3FN", false, 0.125f, "1.0"},
                             {"FP8E5M2", false, 0.25f, "1.0"},
                             {"FP8E8M0", false, 1.0f, "1.0", true},
                             {"BOOL", true, 0.0f, "1.0", true},
                             {"FP4", false, 1.0f, "4.0"},
                             {"INT4", true, 0.0f, "8.0"},
                             {"UINT4", true, 0.0f, "8.0", true}};

// `valid`: the valid_shapes of the load ("" for a whole tile).
std::string operand(const char* tensor, const char* shape, const DtypeCase& d,
                    const std::string& valid = "") {
  const std::string partial = valid.empty() ? "" : ", valid_shapes=" + valid;
  std::string value = "pl.mul(pl.load(" + std::string(tensor) + ", [0, 0], " + shape + partial +
                      "), " + d.scale + ")";
  if (d.non_negative) value = "pl.abs(" + value + ")";
  return "pl.cast(" + value + ", target_type=pl." + d.name + ")";
}

constexpr const char* kToLeft =
    "pl.move(pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), "
    "target_memory=pl.MemorySpace.Left)";
constexpr const char* kToRight =
    "pl.move(pl.load(w, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat), "
    "target_memory=pl.MemorySpace.Right)";
constexpr const char* kRowToLeft =
    "pl.move(pl.load(x, [3, 0], [1, 16], target_memory=pl.MemorySpace.Mat), "
    "target_memory=pl.MemorySpace.Left)";
// batch_matmul's operands here: 2-D tiles in Mat (a batch of one; the batched forms have their
// own tests, batch_matmul_test.cpp, since x and w are 2-D).
constexpr const char* kMatX = "pl.load(x, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)";
constexpr const char* kMatW = "pl.load(w, [0, 0], [16, 16], target_memory=pl.MemorySpace.Mat)";
constexpr const char* kX = "pl.load(x, [0, 0], [16, 16])";
constexpr const char* kW = "pl.load(w, [0, 0], [16, 16])";
// INT32 indices 0 to 15 (of rows or columns of a [16, 16] tile), from w.
constexpr const char* kIndex =
    "pl.rem(pl.cast(pl.mul(pl.abs(pl.load(w, [0, 0], [16, 16])), 1000.0), "
    "target_type=pl.INT32), 16)";

// An integer operand that an op divides by must not hold zeros: integer division by zero is a
// fault (IntegerDivisionByZeroIsAFault below), not a value to compare.
std::string divisor(const OpDef& def, support::OpFamily family, const std::string& operand,
                    const DtypeCase& d) {
  if (!d.integer || !support::op_divides(family, def.isa_opcode)) return operand;
  return "pl.add(pl.mul(pl.abs(" + operand + "), 2), 1)";
}

// Whether the op's type rule takes operands of these types: the blocks skip the forms and dtypes
// an op does not take (log of integers, shl of floats, a tile as the fill of expands).
bool takes(const OpDef& def, const std::vector<TypePtr>& types) { return op_accepts(def, types); }

TypePtr tile_of(const DtypeCase& d) { return tile_type({16, 16}, dtype_from_name(d.name).value()); }

TypePtr scalar_of(const DtypeCase& d) { return literal_scalar_of(dtype_from_name(d.name).value()); }

// The blocks exercising `def`; `r` is the result name, `op` the call's callee.
std::vector<Block> blocks_for(const OpDef& def) {
  const std::string op = "pl." + def.name;
  std::vector<Block> out;
  auto add = [&](const std::string& expr, bool fp32, float tol) {
    std::string r = "r" + std::to_string(out.size());
    out.push_back({r + " = " + expr + "\n", fp32, tol});
  };
  switch (def.emit) {
    case EmitShape::Binary:
      for (const auto& d : kDtypes) {
        std::string a = operand("x", "[16, 16]", d);
        std::string b = divisor(def, support::OpFamily::Binary, operand("w", "[16, 16]", d), d);
        if (takes(def, {tile_of(d), tile_of(d)}))
          add(op + "(" + a + ", " + b + ")", false, d.tolerance);
        if (takes(def, {tile_of(d), scalar_of(d)}))
          add(op + "(" + a + (d.integer ? ", 3)" : ", 0.75)"), false, d.tolerance);
        if (takes(def, {scalar_of(d), tile_of(d)}))
          add(op + (d.integer ? "(1.5, " : "(-3, ") + a + ")", false, d.tolerance);
      }
      break;
    case EmitShape::Unary:
      for (const auto& d : kDtypes) {
        if (!takes(def, {tile_of(d)})) continue;
        add(op + "(" + divisor(def, support::OpFamily::Unary, operand("x", "[16, 16]", d), d) + ")",
            false, d.tolerance);
      }
      break;
    case EmitShape::RowReduce:
      for (const auto& d : kDtypes)
        add(op + "(" + operand("x", "[16, 16]", d) + ")", false, d.tolerance);
      break;
    case EmitShape::RowExpand:
      for (const auto& d : kDtypes) {
        add(op + "(" + operand("x", "[16, 16]", d) + ", " +
                divisor(def, support::OpFamily::RowExpand, operand("w", "[16, 1]", d), d) + ")",
            false, d.tolerance);
      }
      break;
    case EmitShape::ColExpand:
      for (const auto& d : kDtypes) {
        std::string col = operand("w", "[1, 16]", d);
        if (def.isa_opcode >= 0) col = divisor(def, support::OpFamily::Binary, col, d);
        add(op + "(" + operand("x", "[16, 16]", d) + ", " + col + ")", false, d.tolerance);
      }
      break;
    case EmitShape::Concat:
      add(op + "(pl.slice(" + std::string(kX) + ", [16, 8], [0, 0]), pl.slice(" + kW +
              ", [16, 8], [0, 8]))",
          true, 0.0f);
      break;
    case EmitShape::Reshape:
      if (def.name == "reinterpret_view") {  // the same bytes as another dtype
        add("pl.cast(" + op + "(" + kX + ", pl.INT32), target_type=pl.FP32)", true, 0.0f);
        add(op + "(" + op + "(" + kX + ", pl.INT32), pl.FP32)", true, 0.0f);
        add("pl.cast(" + op + "(pl.slice(" + kX + ", [8, 16], [0, 0]), pl.FP16, shape=[16, 16]), " +
                "target_type=pl.FP32)",
            true, 0.0f);
        break;
      }
      if (def.name == "view") {  // a view of the tensor, loaded
        add("pl.reshape(pl.load(" + op + "(x, [8, 32]), [0, 0], [8, 32]), [16, 16])", true, 0.0f);
        add("pl.load(" + op + "(" + op + "(w, [256]), [16, 16]), [0, 0], [16, 16])", true, 0.0f);
        break;
      }
      add(op + "(" + op + "(" + kX + ", [8, 32]), [16, 16])", true, 0.0f);
      // Rows of [8, 32] become pairs of rows of [16, 16].
      add(op + "(pl.concat(pl.slice(" + std::string(kX) + ", [8, 16], [0, 0]), pl.slice(" + kW +
              ", [8, 16], [8, 0])), [16, 16])",
          true, 0.0f);
      break;
    case EmitShape::Read:
      add("pl.mul(" + std::string(kX) + ", " + op + "(w, [3, 4]))", true, 1e-6f);
      add("pl.add(" + std::string(kX) + ", " + op + "(" + kW + ", [15, 6]))", true, 1e-6f);
      break;
    case EmitShape::Compare:
      // Each comparison through pl.sel, and the mask's first bytes themselves.
      for (const auto& d : kDtypes) {
        const std::string a = operand("x", "[16, 16]", d), b = operand("w", "[16, 16]", d);
        for (int cmp = 0; cmp < 6; ++cmp) {
          const std::string k = ", cmp_type=" + std::to_string(cmp) + ")";
          add("pl.sel(" + op + "(" + a + ", " + b + k + ", " + a + ", " + b + ")", false,
              d.tolerance);
          add("pl.sel(" + op + "(" + a + (d.integer ? ", 2" : ", 0.25") + k + ", " + a + ", " + b +
                  ")",
              false, d.tolerance);
        }
        add("pl.slice(" + op + "(" + a + ", " + b + ", cmp_type=2), [16, 16], [0, 0])", false,
            0.0f);
      }
      break;
    case EmitShape::Select:
      for (const auto& d : kDtypes) {
        const std::string a = operand("x", "[16, 16]", d), b = operand("w", "[16, 16]", d);
        const std::string mask = "pl.cmp(" + a + ", " + b + ", cmp_type=4)";
        if (def.name == "sels") {
          add(op + "(" + mask + ", " + a + ", " + a + (d.integer ? ", -7)" : ", 1.5)"), false,
              d.tolerance);
        } else {
          add(op + "(" + mask + ", " + a + ", " + b + ")", false, d.tolerance);
        }
      }
      break;
    case EmitShape::FillPad:
      for (const char* pad : {"zero", "min", "max"}) {
        add(op + "(pl.load(x, [0, 0], [16, 16], valid_shapes=[9, 11]), pad_value=pl.PadValue." +
                pad + ")",
            true, 0.0f);
      }
      break;
    case EmitShape::Cast:
      for (const auto& d : kDtypes) {
        add(op + "(pl.mul(" + kX + ", 1000.0), target_type=pl." + d.name + ")", false, 0.0f);
        // Out of range for the integers: saturates.
        add(op + "(pl.mul(" + kX + ", 10000000000.0), target_type=pl." + d.name + ")", false, 0.0f);
      }
      // Every pair of dtypes, from values of the source's own range.
      for (const auto& from : kDtypes) {
        for (const auto& to : kDtypes) {
          if (&from != &to) {
            add(op + "(" + operand("x", "[16, 16]", from) + ", target_type=pl." + to.name + ")",
                false, 0.0f);
          }
        }
      }
      break;
    case EmitShape::Load:
      add(op + "(x, [3, 0], [8, 16])", true, 0.0f);
      break;
    case EmitShape::Store:  // every block ends in a store; this one stores a loaded tile as is
      add(kX, true, 0.0f);
      break;
    case EmitShape::Move:
      add("pl.matmul(" + std::string(kToLeft) + ", " + kToRight + ")", true, 1e-5f);
      break;
    case EmitShape::CreateTile:
      if (def.name == "create_l1") {  // a Mat accumulator, filled and multiplied
        add("pl.matmul(pl.gather_row(" + op +
                "([16, 16], pl.FP32), x, [0, 0], [0, 0], [16, 16]), " + kToRight + ")",
            true, 1e-5f);
        break;
      }
      add("pl.add(" + op + "([16, 16], dtype=pl.FP32), " + kX + ")", true, 0.0f);
      break;
    case EmitShape::Matmul:
      if (def.name == "gemv") {  // one row
        add(op + "(" + kRowToLeft + ", " + kToRight + ", acc_phase=\"final\")", true, 1e-5f);
        break;
      }
      if (def.name == "gemv_bias") {  // one row, plus a row of w
        add(op + "(" + std::string(kRowToLeft) + ", " + kToRight +
                ", pl.load(w, [5, 0], [1, 16]), acc_phase=\"partial\")",
            true, 1e-5f);
        break;
      }
      if (def.name == "matmul_bias") {  // a row of w added to every row of the product
        add(op + "(" + std::string(kToLeft) + ", " + kToRight + ", pl.load(w, [5, 0], [1, 16]))",
            true, 1e-5f);
        break;
      }
      add(op + "(" + std::string(kToLeft) + ", " + kToRight + ")", true, 1e-5f);
      add(op + "(" + std::string(kToLeft) + ", " + kToRight + ", out_dtype=pl.FP32)", true, 1e-5f);
      break;
    case EmitShape::MatmulAcc:
      if (def.name == "gemv_acc") {
        add(op + "(pl.gemv(" + std::string(kRowToLeft) + ", " + kToRight + "), " + kRowToLeft +
                ", " + kToRight + ")",
            true, 1e-5f);
        break;
      }
      add(op + "(pl.matmul(" + std::string(kToLeft) + ", " + kToRight + "), " + kToLeft + ", " +
              kToRight + ")",
          true, 1e-5f);
      // init_cond: the product replaces the accumulator where it holds.
      for (const char* init : {"True", "False"}) {
        add(op + "(pl.matmul(" + std::string(kToLeft) + ", " + kToRight + "), " + kToLeft + ", " +
                kToRight + ", init_cond=" + init + ")",
            true, 1e-5f);
      }
      break;
    case EmitShape::BatchMatmul:
      add(op + "(" + std::string(kMatX) + ", " + kMatW + ")", true, 1e-5f);
      break;
    case EmitShape::BatchMatmulAcc:
      add(op + "(pl.batch_matmul(" + std::string(kMatX) + ", " + kMatW + "), " + kMatW + ", " +
              kMatX + ")",
          true, 1e-5f);
      break;
    // Column and index reductions fold in the device's order and type: bit for bit.
    case EmitShape::ColReduce:
    case EmitShape::RowArgReduce:
    case EmitShape::ColArgReduce:
      for (const auto& d : kDtypes) {
        if (takes(def, {tile_of(d)}))
          add(op + "(" + operand("x", "[16, 16]", d) + ")", false, 0.0f);
      }
      break;
    case EmitShape::RowBroadcast:
      for (const auto& d : kDtypes) {
        add(op + "(" + operand("x", "[16, 16]", d) + ", " + operand("w", "[16, 1]", d) + ")", false,
            0.0f);
      }
      break;
    case EmitShape::ExpandExpDif:
      for (const auto& d : kDtypes) {
        const char* vec = def.category == OpCategory::ColExpand ? "[1, 16]" : "[16, 1]";
        add(op + "(" + operand("x", "[16, 16]", d) + ", " + operand("w", vec, d) + ")", false,
            d.tolerance);
      }
      break;
    case EmitShape::Transpose:
      if (def.name == "transpose_view") {  // no axes: the last two swap
        for (const auto& d : kDtypes)
          add(op + "(" + operand("x", "[16, 16]", d) + ")", false, 0.0f);
        add(op + "(pl.slice(" + std::string(kX) + ", [8, 16], [0, 0]))", true, 0.0f);
        break;
      }
      for (const auto& d : kDtypes)
        add(op + "(" + operand("x", "[16, 16]", d) + ", 0, 1)", false, 0.0f);
      add(op + "(pl.slice(" + std::string(kX) + ", [8, 16], [0, 0]), axis1=-1, axis2=0)", true,
          0.0f);
      add(op + "(" + std::string(kX) + ", 1, -1)", true, 0.0f);  // the same axis: unchanged
      break;
    case EmitShape::Slice:
      add(op + "(" + std::string(kX) + ", [8, 8], [4, 4])", true, 0.0f);
      break;
    case EmitShape::Assemble:
      add(op + "(" + std::string(kX) + ", pl.slice(" + kW + ", [8, 8], [0, 0]), [4, 8])", true,
          0.0f);
      break;
    case EmitShape::Comm:  // multi-rank ops run on ranks: comm_transport_test, test_multi_rank.py
    // Gather and scatter: indices from w, repeated ones included (the last write wins).
    case EmitShape::Write:
      add(op + "(" + std::string(kX) + ", [3, 4], -2.5)", true, 0.0f);
      add(op + "(" + std::string(kX) + ", [15, 0], 7)", true, 0.0f);
      break;
    case EmitShape::Gather:
      add(op + "(" + std::string(kX) + ", 1, " + kIndex + ")", true, 0.0f);
      add(op + "(" + std::string(kX) + ", -2, pl.slice(" + kIndex + ", [8, 16], [0, 0]))", true,
          0.0f);
      break;
    case EmitShape::GatherMask:
      for (int pattern = 1; pattern <= 7; ++pattern)
        add(op + "(" + std::string(kX) + ", " + std::to_string(pattern) + ")", true, 0.0f);
      break;
    case EmitShape::Scatter:
      add(op + "(" + std::string(kX) + ", 1, " + kIndex + ", " + kW + ")", true, 0.0f);
      add(op + "(" + std::string(kX) + ", 0, pl.slice(" + kIndex +
              ", [4, 16], [0, 0]), "
              "pl.slice(" +
              kW + ", [4, 16], [0, 0]))",
          true, 0.0f);
      break;
    case EmitShape::ScatterMask:
      add(op + "(" + std::string(kX) + ", pl.slice(" + kW + ", [16, 8], [0, 0]), 2)", true, 0.0f);
      add(op + "(" + std::string(kX) + ", pl.slice(" + kW + ", [16, 4], [0, 0]), 5)", true, 0.0f);
      break;
    case EmitShape::ScatterUpdate:
      add(op + "(" + std::string(kX) + ", -2, pl.slice(" + kIndex +
              ", [2, 3], [0, 0]), "
              "pl.slice(" +
              kW + ", [6, 16], [0, 0]))",
          true, 0.0f);
      break;
    case EmitShape::MScatter: {
      // Into y itself (its first 256 elements), then read back as the block's result.
      const std::string flat =
          "pl.rem(pl.cast(pl.mul(pl.abs(pl.load(w, [0, 0], [16, 16])), 1000.0), "
          "target_type=pl.INT32), 256)";
      std::string r = "r" + std::to_string(out.size());
      out.push_back({"y = " + op + "(" + std::string(kX) + ", " + flat + ", y)\n        " + r +
                         " = pl.load(y, [0, 0], [16, 16])\n",
                     true, 0.0f});
      break;
    }
    // Loads by index and by window, bit for bit: byte offsets of 32-byte blocks of x (any byte
    // whose block lies in it), flat element indices of x and row indices (wrapped past 16).
    case EmitShape::GatherBlocks: {
      auto offsets_below = [](int bytes) {
        return "pl.slice(pl.cast(pl.rem(pl.cast(pl.mul(pl.abs(" + std::string(kW) +
               "), 1000.0), target_type=pl.INT32), " + std::to_string(bytes - 31) +
               "), target_type=pl.UINT32), [2, 16], [0, 0])";
      };
      const std::string offsets = offsets_below(1024);
      add("pl.reshape(" + op + "(" + kX + ", " + offsets + "), [16, 16])", true, 0.0f);
      add("pl.reshape(" + op + "(" + kX + ", " + offsets + ", output_dtype=pl.INT32), [16, 16])",
          false, 0.0f);
      add("pl.slice(pl.reshape(" + op + "(pl.cast(" + kX + ", target_type=pl.FP16), " +
              offsets_below(512) + "), [32, 16]), [16, 16], [16, 0])",
          false, 0.0f);
      break;
    }
    case EmitShape::GatherLoad: {
      const std::string flat = "pl.rem(pl.cast(pl.mul(pl.abs(" + std::string(kW) +
                               "), 1000.0), target_type=pl.INT32), 256)";
      add(op + "(x, " + flat + ", coalesce=\"elem\")", true, 0.0f);
      add(op + "(x, pl.slice(" + std::string(kIndex) + ", [1, 16], [3, 0]))", true, 0.0f);
      add(op + "(x, pl.mul(pl.slice(" + std::string(kIndex) +
              ", [16, 1], [0, 5]), 3), gather_oob=\"wrap\")",
          true, 0.0f);
      add(op + "(x, pl.add(" + flat + ", 200), \"elem\", gather_oob=\"zero\")", true, 0.0f);
      break;
    }
    case EmitShape::GatherRow:
      add(op + "(pl.add(" + std::string(kX) + ", 1.0), w, [4, 0], [3, 0], [8, 16])", true, 0.0f);
      add(op + "(" + std::string(kX) + ", w, [2, 5], [9, 1], [4, 8], valid_shape=[3, 6])", true,
          0.0f);
      add("pl.matmul(" + std::string(kToLeft) + ", " + op +
              "(pl.create_l1([16, 16], pl.FP32), w, [0, 2], [5, 0], [1, 16], True))",
          true, 1e-5f);
      break;
    // Generators, sorts and padding copies: bit for bit.
    case EmitShape::Ci:
      add(op + "(5, [1, 16], dtype=pl.INT32)", false, 0.0f);
      add(op + "(3, [1, 16], dtype=pl.UINT16, descending=True)", false, 0.0f);  // wraps
      break;
    case EmitShape::Random:
      add(op + "(1, 2, 0xFFFFFFFF, 4, 5, 6, [16, 16])", false, 0.0f);
      add(op + "(7, 8, 9, 0, 0, 0, [16, 16], dtype=pl.INT32, rounds=7)", false, 0.0f);
      break;
    case EmitShape::Sort32:
    case EmitShape::MergeSort: {
      // [4, 64] values (ties among them) and UINT32 indices; pairs as [4, 128], shown as the
      // first 16 rows of [32, 16].
      const std::string values = "pl.reshape(pl.cast(pl.cast(pl.mul(" + std::string(kX) +
                                 ", 4.0), target_type=pl.INT32), target_type=pl.FP32), [4, 64])";
      const std::string idx = "pl.reshape(pl.cast(pl.abs(pl.mul(" + std::string(kW) +
                              ", 1000.0)), target_type=pl.UINT32), [4, 64])";
      std::string pairs = "pl.sort32(" + values + ", " + idx + ")";
      if (def.emit == EmitShape::MergeSort) pairs = op + "(" + pairs + ", 64)";
      for (int64_t first : {0, 16})
        add("pl.slice(pl.reshape(" + pairs + ", [32, 16]), [16, 16], [" + std::to_string(first) +
                ", 0])",
            true, 0.0f);
      break;
    }
    case EmitShape::MergeLists: {
      // Two and three sorted lists of [2, 64] pairs (each a sort32 of 32 values of x or w) into
      // [2, 128] / [2, 192], shown as rows of 16.
      auto list = [&](const char* tensor, int row) {
        const std::string values = "pl.cast(pl.cast(pl.mul(pl.load(" + std::string(tensor) + ", [" +
                                   std::to_string(row) + ", 0], [2, 16]), 4.0), " +
                                   "target_type=pl.INT32), target_type=pl.FP32)";
        const std::string idx = "pl.cast(pl.abs(pl.mul(pl.load(w, [" + std::to_string(row) +
                                ", 0], [2, 16]), 1000.0)), target_type=pl.UINT32)";
        return "pl.sort32(pl.concat(" + values + ", " + values + "), pl.concat(" + idx + ", " +
               idx + "))";
      };
      add("pl.reshape(" + op + "(" + list("x", 0) + ", " + list("w", 4) + "), [16, 16])", true,
          0.0f);
      add("pl.slice(pl.reshape(" + op + "(" + list("x", 2) + ", " + list("w", 6) + ", " +
              list("x", 8) + "), [24, 16]), [16, 16], [8, 0])",
          true, 0.0f);
      break;
    }
    case EmitShape::FillPadExpand:
      for (const char* pad : {"zero", "min", "max"}) {
        add(op + "(pl.load(x, [0, 0], [8, 12], valid_shapes=[5, 7]), [16, 16], " +
                "pad_value=pl.PadValue." + pad + ")",
            true, 0.0f);
      }
      add(op + "(pl.load(x, [2, 0], [14, 8]), [16, 16], pad_value=pl.PadValue.max)", true, 0.0f);
      break;
    // The pl.system ops are statements: each is followed by a computation whose result must be
    // the same with them (they order work; they change no value).
    case EmitShape::System: {
      std::vector<std::string> calls;
      if (def.name == "system.sync_src" || def.name == "system.sync_dst") {
        calls = {op + "(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.V, event_id=0)"};
      } else if (def.name == "system.sync_set" || def.name == "system.sync_wait") {
        calls = {op + "(3, pipe=pl.PipeType.MTE3)"};
      } else if (def.name == "system.cacheinvalid") {
        calls = {op + "()", op + "(x, [1, 16], [2, 0])"};
      } else if (def.name == "system.syncall") {
        calls = {op + "()", op + "(core_type=\"aiv_only\")"};
      } else {
        calls = {op + "()"};
      }
      for (const std::string& call : calls) {
        const std::string r = "r" + std::to_string(out.size());
        out.push_back({call + "\n        " + r + " = pl.add(" + kX + ", 1.0)\n", true, 0.0f});
      }
      break;
    }
    // A triangular mask: each side, a run-time diagonal, a valid corner: bit for bit.
    case EmitShape::Tri:
      add(op + "(0, [16, 16])", false, 0.0f);
      add(op + "(-3, [16, 16], dtype=pl.FP16, upper=True)", false, 0.0f);
      add(op + "(pl.read(pl.cast(pl.mul(" + std::string(kX) +
              ", 8.0), target_type=pl.INT32), [1, 2]), [16, 16], dtype=pl.UINT8)",
          false, 0.0f);
      add(op + "(2, [16, 16], [9, 11], dtype=pl.BF16, upper=True)", false, 0.0f);
      break;
    // Partial ops: both operands whole, the second valid in a corner (the first is copied
    // outside it), the first valid in a corner (the result is valid there only).
    case EmitShape::PartBinary:
      for (const auto& d : kDtypes) {
        if (!takes(def, {tile_of(d), tile_of(d)})) continue;
        const std::string a = operand("x", "[16, 16]", d), b = operand("w", "[16, 16]", d);
        add(op + "(" + a + ", " + b + ")", false, d.tolerance);
        add(op + "(" + a + ", " + operand("w", "[16, 16]", d, "[9, 11]") + ")", false, d.tolerance);
        add(op + "(" + operand("x", "[16, 16]", d, "[12, 5]") + ", " +
                operand("w", "[16, 16]", d, "[7, 16]") + ")",
            false, d.tolerance);
      }
      break;
    // MX matmul of [16, 64] @ [64, 32] FP8E4M3FN (the cube's smallest aligned MX shapes), the
    // scales powers of two near 1; both halves of the [16, 32] product. Built in Vec and moved
    // to Mat, which the a5 target can do (the program is compiled for it).
    case EmitShape::MatmulMx:
    case EmitShape::MatmulMxAcc: {
      const std::string xw = "pl.concat(" + std::string(kX) + ", " + kW + ")";
      const std::string wx = "pl.concat(pl.mul(" + std::string(kW) + ", 2.0), " + kX + ")";
      auto to = [](const std::string& value, const char* dtype, const char* space) {
        std::string mat = "pl.move(pl.cast(" + value + ", target_type=pl." + dtype +
                          "), target_memory=pl.MemorySpace.Mat)";
        if (*space == 0) return mat;
        return "pl.move(" + mat + ", target_memory=pl.MemorySpace." + space + ")";
      };
      const std::string lhs = to("pl.concat(" + xw + ", " + wx + ")", "FP8E4M3FN", "Left");
      const std::string rhs = to("pl.reshape(pl.concat(pl.concat(" + xw + ", " + wx +
                                     "), pl.concat(" + wx + ", " + xw + ")), [64, 32])",
                                 "FP8E4M3FN", "Right");
      // |x| * 4 + 0.25 rounds to the powers of two 2^-2 .. 2^2.
      auto scales = [&](const std::string& box) {
        return to("pl.add(pl.mul(pl.abs(" + box + "), 4.0), 0.25)", "FP8E8M0", "");
      };
      const std::string lhs_scale = scales("pl.slice(" + std::string(kX) + ", [16, 2], [0, 3])");
      const std::string rhs_scale =
          scales("pl.reshape(pl.slice(" + std::string(kW) + ", [4, 16], [2, 0]), [2, 32])");
      const std::string mx = lhs + ", " + lhs_scale + ", " + rhs + ", " + rhs_scale;
      std::string call;
      if (def.name == "matmul_mx") call = op + "(" + mx + ")";
      if (def.name == "matmul_mx_acc") call = op + "(pl.matmul_mx(" + mx + "), " + mx + ")";
      if (def.name == "matmul_mx_bias") {
        call = op + "(" + mx + ", pl.concat(pl.load(w, [5, 0], [1, 16]), pl.load(x, [2, 0], " +
               "[1, 16])))";
      }
      // Summed in the same order with the same fused multiply-adds: bit for bit.
      for (const char* half : {"[0, 0]", "[0, 16]"})
        add("pl.slice(" + call + ", [16, 16], " + half + ")", true, 0.0f);
      break;
    }
    case EmitShape::None:
      break;
  }
  return out;
}

std::string program_text(const std::vector<Block>& blocks) {
  std::string rows = std::to_string(16 * blocks.size());
  std::string y = "pl.Tensor[[" + rows + ", 16], pl.FP32]";
  std::string in = "x: pl.Tensor[[16, 16], pl.FP32], w: pl.Tensor[[16, 16], pl.FP32]";
  std::string text = "import pypto.language as pl\n\n@pl.program\nclass OpProgram:\n";
  text += "    @pl.function(type=pl.FunctionType.InCore)\n";
  text += "    def k(self, " + in + ", y: pl.Out[" + y + "]) -> " + y + ":\n";
  for (size_t i = 0; i < blocks.size(); ++i) {
    std::string r = "r" + std::to_string(i);
    text += "        " + blocks[i].stmts;
    std::string value = blocks[i].fp32_result ? r : "pl.cast(" + r + ", target_type=pl.FP32)";
    text += "        y = pl.store(" + value + ", [" + std::to_string(16 * i) + ", 0], y)\n";
  }
  text += "        return y\n\n";
  text += "    @pl.function(type=pl.FunctionType.Orchestration)\n";
  text += "    def main(self, " + in + ", y: pl.Out[" + y + "]) -> " + y + ":\n";
  text += "        y = self.k(x, w, y)\n        return y\n";
  return text;
}

bool agree(float device, float reference, float tol) {
  if (std::isnan(device) || std::isnan(reference))
    return std::isnan(device) == std::isnan(reference);
  if (device == reference) return true;  // also equal infinities
  return std::fabs(device - reference) <= tol + tol * std::fabs(reference);
}

class OpAgreesWithInterpreter : public ::testing::TestWithParam<std::string> {};

// The language reference's op x dtype table marks a dtype of an op ✓ when the op's type rule
// takes it (op_element_dtypes); this test holds the table to it: every such pair is in a block
// that OnRandomInputs runs on the device against the interpreter. The matrix products, whose
// operands come from tensors of their own dtype, and the generators and sorts, whose blocks pick
// dtypes of their own, are covered by their own tests (test_matmul_family_e2e.py,
// tile_matmul_test, op_generate_test).
TEST(OpDefinition, EveryDtypeAnOpTakesRunsOnTheDevice) {
  const std::set<EmitShape> elsewhere = {
      EmitShape::Matmul, EmitShape::MatmulAcc, EmitShape::BatchMatmul, EmitShape::BatchMatmulAcc,
      EmitShape::Ci,     EmitShape::Random,    EmitShape::Sort32};
  const OpRegistry& registry = OpRegistry::global();
  int checked = 0;
  for (const std::string& name : registry.names()) {
    const OpDef& def = *registry.find(name);
    const auto dtypes = op_element_dtypes(def);
    if (!dtypes || elsewhere.count(def.emit)) continue;
    std::string all;
    for (const Block& b : blocks_for(def)) all += b.stmts;
    for (DataType d : *dtypes) {
      const std::string mention = "target_type=pl." + std::string(dtype_name(d)) + ")";
      EXPECT_NE(all.find(mention), std::string::npos)
          << "pl." << name << " takes " << dtype_name(d) << " but no block runs it";
      ++checked;
    }
  }
  EXPECT_GT(checked, 300);
}

TEST_P(OpAgreesWithInterpreter, OnRandomInputs) {
  const OpDef* def = OpRegistry::global().find(GetParam());
  ASSERT_NE(def, nullptr);
  auto blocks = blocks_for(*def);
  ASSERT_FALSE(blocks.empty()) << "no program for the emission shape of pl." << def->name;
  std::string text = program_text(blocks);
  SCOPED_TRACE(text);
  auto program = frontend::parse_module(text, "op.py").at(0);
  // The MX matmuls are a5's (their operands are built in Vec and moved to Mat, as only a5 can).
  if (def->emit == EmitShape::MatmulMx || def->emit == EmitShape::MatmulMxAcc)
    program = program->with_target(Target::A5);

  std::vector<HostArray> device = {HostArray({16, 16}), HostArray({16, 16}),
                                   HostArray({static_cast<int64_t>(16 * blocks.size()), 16})};
  for (size_t i = 0; i < device.size(); ++i) {
    codegen::testing::fill_random(device[i], static_cast<uint32_t>(31 + i));
  }
  std::vector<HostArray> reference = device;
  const char* names[] = {"x", "w", "y"};
  std::vector<InterpreterArg> interpreter_args;
  for (size_t i = 0; i < reference.size(); ++i) {
    ir::HostTensor t;
    t.name = names[i];
    t.shape = reference[i].shape;
    t.data = reference[i].data.data();
    interpreter_args.emplace_back(t);
  }
  interpret(*program, interpreter_args);

  auto lowered =
      passes::PassManager::for_strategy(passes::OptimizationStrategy::Default).run(program);
  codegen::testing::Library lib(codegen::generate_program(*lowered).translation_unit, "op");
  ASSERT_TRUE(lib.ok());
  codegen::testing::InlineRuntime rt;
  std::vector<PtoArg> args = {device[0].arg(), device[1].arg(), device[2].arg(PTO_ARG_OUT)};
  ASSERT_EQ(lib.orchestrate()(rt.api(), args.data(), 3), 0);
  ASSERT_TRUE(rt.failures().empty()) << rt.failures().front();

  for (size_t b = 0; b < blocks.size(); ++b) {
    size_t bad = 0;
    for (size_t i = 16 * 16 * b; i < 16 * 16 * (b + 1); ++i) {
      float d = device[2].data[i], e = reference[2].data[i];
      if (!agree(d, e, blocks[b].tolerance) && bad++ < 3) {
        ADD_FAILURE() << "block " << b << " (" << blocks[b].stmts << ") element " << i % 256
                      << ": generated code " << d << ", interpreter " << e;
      }
    }
    EXPECT_EQ(bad, 0u) << "block " << b;
  }
}

// Every op with a kernel instruction (the rest run in orchestrations only).
std::vector<std::string> kernel_ops() {
  std::vector<std::string> out;
  for (const auto& name : OpRegistry::global().names()) {
    // Multi-rank ops need ranks: comm_transport_test.cpp and tests/python/test_multi_rank.py.
    const OpDef* def = OpRegistry::global().find(name);
    // set_ffts takes an INT64 workspace of 256 elements, which the generated program has not:
    // tests/python/test_system_ops.py compiles and runs it.
    // The cross-core pipe ops run in a Group's cluster, which the reference interpreter does not
    // run, and set_validshape narrows a tile for them: tests/python/test_cross_core_pipes.py.
    static const std::set<std::string> kPipeOps{"system.reserve_buffer",
                                                "system.import_peer_buffer",
                                                "system.aic_initialize_pipe",
                                                "system.aiv_initialize_pipe",
                                                "tpush_to_aiv",
                                                "tpush_to_aic",
                                                "tpop_from_aic",
                                                "tpop_from_aiv",
                                                "system.tfree_to_aic",
                                                "system.tfree_to_aiv",
                                                "set_validshape"};
    if (def->emit != EmitShape::None && def->category != OpCategory::Communication &&
        name != "system.set_ffts" && !kPipeOps.count(name)) {
      out.push_back(name);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Registry, OpAgreesWithInterpreter, ::testing::ValuesIn(kernel_ops()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           // A test name has no dots: pl.system.syncall is system_syncall.
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

}  // namespace
}  // namespace pypto::ir

namespace pypto::ir {
namespace {

// Integer division by zero is a fault on the device, reported like the interpreter reports it,
// for every instruction that divides and for the scalar `//` and `%` of generated code.
class IntegerDivisionByZero : public ::testing::TestWithParam<std::string> {};

TEST_P(IntegerDivisionByZero, IsAFaultInTheInterpreterAndOnTheDevice) {
  const std::string text =
      "import pypto.language as pl\n\n@pl.program\nclass DivProgram:\n"
      "    @pl.function(type=pl.FunctionType.InCore)\n"
      "    def k(self, x: pl.Tensor[[16, 16], pl.FP32],\n"
      "          y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
      "        z = pl.cast(pl.load(x, [0, 0], [16, 16]), target_type=pl.INT32)\n"
      "        for i in pl.range(1):\n"
      "            y = pl.store(pl.cast(" +
      GetParam() +
      ", target_type=pl.FP32), [0, 0], y)\n"
      "        return y\n\n"
      "    @pl.function(type=pl.FunctionType.Orchestration)\n"
      "    def main(self, x: pl.Tensor[[16, 16], pl.FP32],\n"
      "             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:\n"
      "        y = self.k(x, y)\n        return y\n";
  SCOPED_TRACE(text);
  auto program = frontend::parse_module(text, "div.py").at(0);
  HostArray x({16, 16}), y({16, 16});  // x: zeros
  std::vector<InterpreterArg> args;
  for (auto* a : {&x, &y}) {
    ir::HostTensor t;
    t.shape = a->shape;
    t.data = a->data.data();
    args.emplace_back(t);
  }
  try {
    interpret(*program, args);
    ADD_FAILURE() << "the interpreter divided by zero";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("by zero"), std::string::npos) << e.what();
  }

  auto lowered =
      passes::PassManager::for_strategy(passes::OptimizationStrategy::Default).run(program);
  codegen::testing::Library lib(codegen::generate_program(*lowered).translation_unit, "div");
  ASSERT_TRUE(lib.ok());
  codegen::testing::InlineRuntime rt;
  std::vector<PtoArg> pto_args = {x.arg(), y.arg(PTO_ARG_OUT)};
  lib.orchestrate()(rt.api(), pto_args.data(), 2);
  ASSERT_FALSE(rt.failures().empty()) << "the device divided by zero silently";
  EXPECT_EQ(rt.failures().front().rfind("k: ", 0), 0u) << rt.failures().front();
  EXPECT_NE(rt.failures().front().find("by zero"), std::string::npos) << rt.failures().front();
}

INSTANTIATE_TEST_SUITE_P(Ops, IntegerDivisionByZero,
                         ::testing::Values("pl.div(pl.add(z, 5), z)", "pl.div(pl.add(z, 5), 0)",
                                           "pl.div(7, z)", "pl.recip(z)",
                                           "pl.row_expand_div(pl.add(z, 5), pl.row_sum(z))",
                                           "pl.add(z, 64 // i)", "pl.add(z, 64 % i)",
                                           "pl.rem(pl.add(z, 5), z)", "pl.rems(z, 0)",
                                           "pl.fmod(pl.add(z, 5), z)", "pl.fmods(z, 0)"));

}  // namespace
}  // namespace pypto::ir
