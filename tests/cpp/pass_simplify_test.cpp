#include <gtest/gtest.h>

#include "pass_test_helpers.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(Simplify, FoldsConstantsIdentitiesAndDeadAssignments) {
  auto in = parse_body(kKernelK + R"(
        i = 2
        unused = pl.load(x, [0, 0], [64, 64])
        t = pl.load(x, [i * 16 + 0, 0 * i], [32, 64])
        y = pl.store(t, [(i + 1) + 1, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  // `i` is propagated, `i * 16 + 0` -> 32, `0 * i` -> 0, `(i + 1) + 1` -> 4; `unused` is gone.
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[32, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [32, 0], [32, 64])
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [4, 0], y)
        return y_1
)" + kCallKSsa));
}

// valid_shapes equal to the tile's shape (PyPTO's printer writes them on every load) make the
// plain load; a smaller or run-time valid shape stays.
TEST(Simplify, ValidShapesCoveringTheWholeTileAreDropped) {
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [32, 64], [32, 64])
        u = pl.load(x, [32, 0], [32, 64], [32, 40])
        y = pl.store(pl.add(t, pl.tile.fillpad(u)), [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  const std::string text = ir::print_program(*out);
  EXPECT_NE(text.find("pl.load(x, [0, 0], [32, 64])"), std::string::npos) << text;
  EXPECT_NE(text.find("pl.load(x, [32, 0], [32, 64], [32, 40])"), std::string::npos) << text;
}

TEST(Simplify, ReassociatesConstantOffsetsAroundAVariable) {
  const std::string main_sig = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64]) -> pl.Tensor[[8, 8], pl.FP32]:
)";
  auto in = parse_body(main_sig + R"(
        a = (n + 16) + 48
        b = 2 * (n * 3)
        c = a + b * 1
        v = pl.slice(x, [8, 8], [c - 0, min(4, 7)])
        return v
)");
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  EXPECT_TRUE(same_program(out, main_sig + R"(
        a = n + 64
        b = n * 6
        c = a + b
        v: pl.Tensor[[8, 8], pl.FP32] = pl.slice(x, [8, 8], [c, 4])
        return v
)"));
}

TEST(Simplify, FoldsAnIfOnAConstantCondition) {
  const std::string main_sig = R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
)";
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        y = pl.store(t, [0, 0], y)
        return y
)" + main_sig + R"(
        n = 3
        if n > 2:
            y = self.k(x, y)
        return y
)");
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [0, 0], [64, 64])
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], y)
        return y_1
)" + main_sig + R"(
        y_1: pl.Tensor[[64, 64], pl.FP32] = self.k(x, y)
        return y_1
)"));
}

TEST(Simplify, ALoopThatRunsOnceIsItsBody) {
  auto in = parse_body(kKernelK + R"(
        for i in pl.range(2, 9, 8):
            t = pl.load(x, [i * 16, 0], [16, 64])
            y = pl.store(t, [i * 16 - 32, 0], y)
        for j in pl.range(2):
            u = pl.load(x, [j * 16, 0], [16, 64])
            y = pl.store(u, [j * 16, 0], y)
        for k in pl.range(3, 3):
            w = pl.load(x, [k, 0], [16, 64])
            y = pl.store(w, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  // The first loop (one iteration: i = 2) is its body with i = 2 and y carried in and out; the
  // loops of two and of no iterations stay loops.
  EXPECT_TRUE(same_program(out, kKernelK + R"(
        t: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [32, 0], [16, 64])
        y_1: pl.Tensor[[64, 64], pl.FP32] = pl.store(t, [0, 0], y)
        for j, (y_2,) in pl.range(2, init_values=(y_1,)):
            u: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [j * 16, 0], [16, 64])
            y_3: pl.Tensor[[64, 64], pl.FP32] = pl.store(u, [j * 16, 0], y_2)
            y_4 = pl.yield_(y_3)
        for k, (y_5,) in pl.range(3, 3, init_values=(y_4,)):
            w: pl.Tile[[16, 64], pl.FP32, pl.MemorySpace.Vec] = pl.load(x, [k, 0], [16, 64])
            y_6: pl.Tensor[[64, 64], pl.FP32] = pl.store(w, [0, 0], y_5)
            y_7 = pl.yield_(y_6)
        return y_7
)" + kCallKSsa))
      << print(out);
}

TEST(Simplify, KeepsStoresAndCallsEvenWhenTheirResultIsUnused) {
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        z = pl.store(t, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_passes(in, {"ConvertToSSA", "Simplify"});
  EXPECT_NE(print(out).find("pl.store(t, [0, 0], y)"), std::string::npos) << print(out);
}

}  // namespace
}  // namespace pypto::passes
