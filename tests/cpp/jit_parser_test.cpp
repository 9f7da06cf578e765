// @pl.jit functions in the parser: found in a file, specialised on arguments into the IR of the
// equivalent @pl.program, helpers specialised by their calls, errors located in the file.
#include <gtest/gtest.h>

#include <string>

#include "pypto/frontend/parser.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/support/diagnostics.h"

namespace pypto::frontend {
namespace {

// A file with constants, a helper, the jit entry and unrelated Python around them.
const char* const kJitFile = R"(import numpy as np
import pypto.language as pl

BLOCK = 32


def unrelated(x):
    return {"not": f"the DSL {x}"}


@pl.jit.incore
def scale_block(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.FP32):
    t = pl.load(x, [0, 0], [x.shape[0], x.shape[1]])
    y = pl.store(pl.mul(t, alpha), [0, 0], y)
    return y


@pl.jit
def scaled(x: pl.Tensor, y: pl.Out[pl.Tensor], alpha: pl.Scalar[pl.FP32]):
    for i in pl.range(x.shape[0] // BLOCK):
        scale_block(pl.slice(x, [BLOCK, x.shape[1]], [i * BLOCK, 0]),
                    pl.slice(y, [BLOCK, x.shape[1]], [i * BLOCK, 0]), alpha)
    return y
)";

// What `scaled` is for 64x16 FP32 tensors and alpha = 0.5, written as a program.
const char* const kEquivalentProgram = R"(import pypto.language as pl

@pl.program
class scaled:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_block(self, x: pl.Tensor[[32, 16], pl.FP32], y: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
                    alpha: pl.Scalar[pl.FP32]) -> pl.Tensor[[32, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 16])
        y = pl.store(pl.mul(t, alpha), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def scaled(self, x: pl.Tensor[[64, 16], pl.FP32],
               y: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(64 // 32):
            self.scale_block(pl.slice(x, [32, 16], [i * 32, 0]),
                             pl.slice(y, [32, 16], [i * 32, 0]), 0.5)
        return y
)";

JitArguments arguments(std::vector<int64_t> shape, double alpha) {
  JitArguments args;
  args.emplace("x", JitTensorArgument{shape, ir::DataType::FP32});
  args.emplace("y", JitTensorArgument{shape, ir::DataType::FP32});
  args.emplace("alpha", Constant(alpha));
  return args;
}

std::vector<JitFunctionSource> functions_of(const char* text, Constants* constants = nullptr) {
  return find_jit_functions(text, "jit.py", constants);
}

TEST(JitParser, FindsTheJitFunctionsAndTheModuleConstants) {
  Constants constants;
  auto found = functions_of(kJitFile, &constants);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].name, "scale_block");
  EXPECT_EQ(found[0].kind, JitKind::Incore);
  EXPECT_EQ(found[0].first_line, 11);
  EXPECT_EQ(found[1].name, "scaled");
  EXPECT_EQ(found[1].kind, JitKind::Entry);
  EXPECT_EQ(found[1].first_line, 18);
  EXPECT_EQ(std::get<int64_t>(constants.at("BLOCK")), 32);
}

TEST(JitParser, ASpecialisationIsTheEquivalentProgram) {
  Constants constants;
  auto found = functions_of(kJitFile, &constants);
  ir::ProgramPtr jit =
      parse_jit(kJitFile, "jit.py", found, "scaled", arguments({64, 16}, 0.5), constants);
  ir::ProgramPtr program = parse_module(kEquivalentProgram, "program.py").at(0);
  EXPECT_TRUE(ir::structural_equal(*jit, *program)) << ir::print_program(*jit);
  EXPECT_EQ(ir::print_program(*jit), ir::print_program(*program));
  // Another shape, another program.
  ir::ProgramPtr other =
      parse_jit(kJitFile, "jit.py", found, "scaled", arguments({128, 16}, 0.5), constants);
  EXPECT_FALSE(ir::structural_equal(*other, *program));
  EXPECT_TRUE(ir::types_equal(other->functions.back()->params[0].var->type(),
                              ir::tensor_type({128, 16}, ir::DataType::FP32)));
}

std::string jit_error(const JitArguments& args, std::string_view entry = "scaled") {
  Constants constants;
  auto found = functions_of(kJitFile, &constants);
  try {
    parse_jit(kJitFile, "jit.py", found, entry, args, constants);
  } catch (const support::ParseError& e) {
    return e.rendered();
  }
  return "no error";
}

TEST(JitParser, ErrorsAreLocatedInTheFile) {
  JitArguments args = arguments({64, 16}, 0.5);
  args.erase("alpha");
  EXPECT_EQ(jit_error(args).substr(0, 80),
            "jit.py:19:48: error: the specialisation gives no argument for parameter 'alpha'\n");
  // 16 rows hold no block of 32: the window at a run-time offset is a view the device clips to
  // the tensor (and the loop has no iteration), so it is no error when the program is read.
  EXPECT_EQ(jit_error(arguments({16, 16}, 0.5)), "no error");
  EXPECT_NE(jit_error(arguments({64, 16}, 0.5), "scale_block").find("is a @pl.jit.incore helper"),
            std::string::npos);
  EXPECT_NE(jit_error(arguments({64, 16}, 0.5), "missing").find("no @pl.jit function named"),
            std::string::npos);
  JitArguments tensor_for_scalar = arguments({64, 16}, 0.5);
  tensor_for_scalar.at("alpha") = JitTensorArgument{{4}, ir::DataType::FP32};
  EXPECT_NE(jit_error(tensor_for_scalar).find("parameter 'alpha' is a scalar; got a tensor"),
            std::string::npos);
}

TEST(JitParser, AHelperKeepsOneSpecialisationPerProgram) {
  const char* text = R"(import pypto.language as pl

@pl.jit.incore
def copy(x: pl.Tensor, y: pl.Out[pl.Tensor]):
    y = pl.store(pl.load(x, [0, 0], [x.shape[0], x.shape[1]]), [0, 0], y)
    return y

@pl.jit
def twice(a: pl.Tensor, b: pl.Out[pl.Tensor]):
    b = copy(a, b)
    b = copy(pl.slice(a, [8, 8], [0, 0]), b)
    return b
)";
  JitArguments args;
  args.emplace("a", JitTensorArgument{{16, 8}, ir::DataType::FP32});
  args.emplace("b", JitTensorArgument{{16, 8}, ir::DataType::FP32});
  try {
    parse_jit(text, "twice.py", functions_of(text), "twice", args);
    FAIL() << "expected an error";
  } catch (const support::ParseError& e) {
    EXPECT_NE(std::string(e.rendered())
                  .find("twice.py:11:14: error: argument 1 of 'copy' is pl.Tensor[[8, 8], pl.FP32] "
                        "here but pl.Tensor[[16, 8], pl.FP32] in its first call (line 10)"),
              std::string::npos)
        << e.rendered();
  }
}

}  // namespace
}  // namespace pypto::frontend
