// Differential test of the passes: the reference interpreter runs the frontend IR and the IR
// after every single pass on the same random inputs; every tensor must come out the same.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "pass_test_helpers.h"
#include "pypto/ir/interpreter.h"

namespace pypto::passes {
namespace {

using namespace testing;

struct Buffers {
  std::vector<std::vector<float>> data;  // one per tensor parameter (FP32 programs)
  std::vector<ir::InterpreterArg> args;
};

Buffers make_inputs(const ir::Function& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Buffers b;
  b.data.reserve(entry.params.size());
  for (const auto& p : entry.params) {
    if (const auto* t = p.var->type()->as<ir::TensorType>()) {
      int64_t n = 1;
      for (int64_t d : t->shape) n *= d;
      b.data.emplace_back(static_cast<size_t>(n));
      for (auto& v : b.data.back()) v = normal(rng);
    }
  }
  size_t tensor = 0;
  for (const auto& p : entry.params) {
    if (const auto* t = p.var->type()->as<ir::TensorType>()) {
      ir::HostTensor h;
      h.name = p.var->name;
      h.dtype = t->dtype;
      h.shape = t->shape;
      h.data = b.data[tensor++].data();
      b.args.emplace_back(h);
    } else {
      b.args.emplace_back(int64_t{3});
    }
  }
  return b;
}

void expect_same_outputs(const Buffers& expected, const Buffers& actual, const std::string& what) {
  ASSERT_EQ(expected.data.size(), actual.data.size());
  for (size_t t = 0; t < expected.data.size(); ++t) {
    size_t mismatches = 0;
    for (size_t i = 0; i < expected.data[t].size(); ++i) {
      float e = expected.data[t][i], a = actual.data[t][i];
      if (std::fabs(a - e) > 1e-5f * std::fabs(e) + 1e-6f) {
        if (mismatches++ < 3) {
          ADD_FAILURE() << what << ": tensor " << t << " element " << i << " is " << a
                        << ", expected " << e;
        }
      }
    }
    EXPECT_EQ(mismatches, 0u) << what << ": tensor " << t;
  }
}

// Interprets the program after every pass of the Default pipeline and compares with the
// frontend IR's results.
void check_every_pass(const ir::ProgramPtr& frontend, const std::string& name) {
  const auto entry = frontend->entry();
  ASSERT_TRUE(entry) << name;
  Buffers reference = make_inputs(*entry, 7);
  ir::interpret(*frontend, reference.args);
  int runs = 0;
  PassManager pm = PassManager::for_strategy(OptimizationStrategy::Default);
  pm.add_after_instrument([&](const std::string& pass, size_t, const ir::ProgramPtr& program) {
    Buffers actual = make_inputs(*entry, 7);
    ir::interpret(*program, actual.args);
    expect_same_outputs(reference, actual, name + " after " + pass);
    ++runs;
  });
  pm.run(frontend);
  EXPECT_EQ(runs, static_cast<int>(registered_passes().size()));
}

TEST(PassDifferential, EveryExampleComputesTheSameAfterEveryPass) {
  auto examples = example_programs();
  ASSERT_GE(examples.size(), 7u);
  for (const auto& [file, program] : examples) check_every_pass(program, file);
}

TEST(PassDifferential, LoopCarriedScalarsBranchesAndUnrolledAccumulators) {
  check_every_pass(parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], s: pl.Scalar[pl.INT64], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        acc = pl.load(x, [0, 0], [64, 64])
        for i in pl.unroll(3):
            acc = pl.add(acc, pl.mul(acc, 0.5))
        for j in pl.range(s):
            acc = pl.sub(acc, 1.0)
            if j > 1:
                acc = pl.maximum(acc, 0.25)
        y = pl.store(acc, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], n: pl.Scalar[pl.INT64], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        s = 0
        for i in pl.range(n):
            s = s + i
        if s > 2:
            s = s - 1
        y = self.k(x, s + 1, y)
        return y
)"),
                   "loops");
}

TEST(PassDifferential, TensorOpsLoweredInRowBlocks) {
  check_every_pass(parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[512, 128], pl.FP32], w: pl.Tensor[[512, 128], pl.FP32], out: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
        out = pl.add(pl.mul(x, 2.0), pl.exp(w))
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[512, 128], pl.FP32], w: pl.Tensor[[512, 128], pl.FP32], out: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
        out = self.k(x, w, out)
        return out
)"),
                   "tensor ops");
}

TEST(PassDifferential, ScopesWithInOutTensorsInsideALoop) {
  check_every_pass(parse_body(R"(
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[128, 64], pl.FP32], y: pl.InOut[pl.Tensor[[128, 64], pl.FP32]], z: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> tuple[pl.Tensor[[128, 64], pl.FP32], pl.Tensor[[128, 64], pl.FP32]]:
        for j in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                a = pl.load(x, [j * 64, 0], [64, 64])
                b = pl.load(y, [j * 64, 0], [64, 64])
                y = pl.store(pl.add(a, b), [j * 64, 0], y)
                z = pl.store(pl.sub(a, b), [j * 64, 0], z)
        return y, z
)"),
                   "scopes");
}

TEST(PassDifferential, MatmulAccumulationAcrossAnUnrolledLoop) {
  check_every_pass(parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        acc = pl.matmul(pl.move(pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left), pl.move(pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Right))
        for kk in pl.unroll(1, 4):
            ak = pl.load(a, [0, kk * 32], [32, 32], target_memory=pl.MemorySpace.Mat)
            bk = pl.load(b, [kk * 32, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
            acc = pl.matmul_acc(acc, pl.move(ak, target_memory=pl.MemorySpace.Left), pl.move(bk, target_memory=pl.MemorySpace.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 32], pl.FP32], c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        c = self.k(a, b, c)
        return c
)"),
                   "unrolled matmul");
}

TEST(PassDifferential, MatmulsLargerThanTheL0BuffersSplitIntoBlocks) {
  // A [256, 256] FP32 product (twice Acc) stored, then rounded to BF16 for a second matmul;
  // a [64, 512] @ [512, 64] product whose K is split; a loop-carried tensor accumulator.
  check_every_pass(parse_body(R"(
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 32], pl.BF16], b: pl.Tensor[[32, 256], pl.BF16], e: pl.Tensor[[256, 16], pl.BF16], x: pl.Tensor[[64, 512], pl.FP32], y: pl.Tensor[[512, 64], pl.FP32], p: pl.Out[pl.Tensor[[256, 256], pl.FP32]], d: pl.Out[pl.Tensor[[256, 16], pl.FP32]], q: pl.Out[pl.Tensor[[64, 64], pl.FP32]], r: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> tuple[pl.Tensor[[256, 256], pl.FP32], pl.Tensor[[256, 16], pl.FP32], pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:
        a_mat = pl.load(a, [0, 0], [256, 32], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [32, 256], target_memory=pl.Mem.Mat)
        e_mat = pl.load(e, [0, 0], [256, 16], target_memory=pl.Mem.Mat)
        prod = pl.matmul(a_mat, b_mat)
        p = pl.store(prod, [0, 0], p)
        prod2 = pl.matmul(a_mat, b_mat)
        rounded = pl.cast(prod2, pl.BF16)
        d = pl.store(pl.matmul(rounded, e_mat), [0, 0], d)
        q = pl.assemble(q, pl.matmul(x, y), [0, 0])
        acc = pl.create_tensor([64, 64], dtype=pl.FP32)
        for kb in pl.range(4):
            xs = pl.slice(x, [64, 128], [0, kb * 128])
            ys = pl.slice(y, [128, 64], [kb * 128, 0])
            if kb == 0:
                acc = pl.matmul(xs, ys)
            else:
                acc = pl.matmul_acc(acc, xs, ys)
        r = pl.assemble(r, acc, [0, 0])
        return p, d, q, r

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[256, 32], pl.BF16], b: pl.Tensor[[32, 256], pl.BF16], e: pl.Tensor[[256, 16], pl.BF16], x: pl.Tensor[[64, 512], pl.FP32], y: pl.Tensor[[512, 64], pl.FP32], p: pl.Out[pl.Tensor[[256, 256], pl.FP32]], d: pl.Out[pl.Tensor[[256, 16], pl.FP32]], q: pl.Out[pl.Tensor[[64, 64], pl.FP32]], r: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> tuple[pl.Tensor[[256, 256], pl.FP32], pl.Tensor[[256, 16], pl.FP32], pl.Tensor[[64, 64], pl.FP32], pl.Tensor[[64, 64], pl.FP32]]:
        p, d, q, r = self.k(a, b, e, x, y, p, d, q, r)
        return p, d, q, r
)"),
                   "matmuls split into L0 blocks");
}

}  // namespace
}  // namespace pypto::passes
