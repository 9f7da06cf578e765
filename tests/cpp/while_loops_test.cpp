// while loops, break and continue through the parser and the passes: break/continue lower to
// flags, ConvertToSSA carries what a while loop rebinds, the printed form parses back, and the
// passes that cannot keep a while's meaning refuse it with a located error.
#include <gtest/gtest.h>

#include "pass_test_helpers.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(WhileLoops, BreakAndContinueLowerToFlags) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        i = 0
        while i < n:
            i = i + 1
            if i == 2:
                continue
            if i == 5:
                break
            y = self.k(x, y)
        return y
)");
  EXPECT_TRUE(same_program(in, kCopyKernel + kScalarMain + R"(
        i = 0
        __break = False
        while i < n and not __break:
            __continue = False
            i = i + 1
            if i == 2:
                __continue = True
            if not (__break or __continue):
                if i == 5:
                    __break = True
                if not (__break or __continue):
                    y = self.k(x, y)
        return y
)"));
}

TEST(WhileLoops, RangeWithBreakBecomesAWhileLoop) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        for i in pl.range(1, n, 2):
            if i > 6:
                break
            y = self.k(x, y)
        return y
)");
  EXPECT_TRUE(same_program(in, kCopyKernel + kScalarMain + R"(
        i: pl.Scalar[pl.INT64] = 1
        __stop = n
        __break = False
        while i < __stop and not __break:
            if i > 6:
                __break = True
            if not __break:
                y = self.k(x, y)
            if not __break:
                i = i + 2
        return y
)"));
}

// Whether `main` of `out` is the `main` that kScalarMain + `body` parses to (the kernel is compared
// elsewhere: the passes rename its versions too).
::testing::AssertionResult same_main(const ir::ProgramPtr& out, const std::string& body) {
  auto expected = parse_body(kCopyKernel + kScalarMain + body);
  if (ir::structural_equal(*out->find_function("main"), *expected->find_function("main"))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "actual:\n"
         << ir::print_function(*out->find_function("main")) << "\nexpected:\n"
         << ir::print_function(*expected->find_function("main"));
}

TEST(WhileLoops, ConvertToSsaCarriesRebindingsAndPrintsTheExplicitForm) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        i = 0
        while i < n:
            y = self.k(x, y)
            i = i + 1
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA"});
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::SSA)).empty());
  EXPECT_TRUE(same_main(out, R"(
        i = 0
        for (y_1, i_1) in pl.while_(init_values=(y, i)):
            pl.cond(i_1 < n)
            y_2: pl.Tensor[[64, 64], pl.FP32] = self.k(x, y_1)
            i_2 = i_1 + 1
            y_3, i_3 = pl.yield_(y_2, i_2)
        return y_3
)"));
  const std::string printed = print(out);
  EXPECT_EQ(print(parse(printed)), printed);
}

TEST(WhileLoops, SimplifyDropsALoopWhoseConditionIsFalse) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        i = 0
        while 1 > 2:
            y = self.k(x, y)
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  EXPECT_TRUE(same_main(out, R"(
        return y
)"));
}

TEST(WhileLoops, ACallInTheConditionIsALocatedError) {
  auto in = parse_body(kCopyKernel + kScalarMain + R"(
        i = 0
        while pl.read(x, [0, 0]) > 1.0:
            i = i + 1
        return y
)");
  std::string message = error_of([&] { run_passes(in, {"ConvertToSSA", "FlattenCallExpr"}); });
  EXPECT_NE(message.find("while condition"), std::string::npos) << message;
}

TEST(WhileLoops, MisplacedExitsAreLocatedErrors) {
  EXPECT_NE(error_of([&] {
              parse_body(kCopyKernel + kScalarMain + "        break\n        return y\n");
            }).find("'break' outside a loop"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] {
        parse_body(kCopyKernel + kScalarMain +
                   "        for i in pl.unroll(2):\n            continue\n        return y\n");
      }).find("here it is a pl.unroll loop"),
      std::string::npos);
}

}  // namespace
}  // namespace pypto::passes
