#include <gtest/gtest.h>

#include <set>

#include "pass_test_helpers.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/verifier.h"

namespace pypto::passes {
namespace {

using namespace testing;

// Buffer id of every named tile variable of a function (names as the IR has them).
std::multimap<std::string, int64_t> buffers_by_name(const ir::Function& f) {
  struct Collector : ir::IRVisitor {
    std::multimap<std::string, int64_t> out;
    std::set<const ir::Var*> seen;
    void visit_var(const ir::Var& v) override {
      const auto* t = v.type()->as<ir::TileType>();
      if (t && t->memref && seen.insert(&v).second) out.emplace(v.name, t->memref->buffer_id);
    }
  } c;
  c.visit(f.body);
  return c.out;
}

TEST(InitMemRef, MatmulKSplitAccumulatorGroupSharesOneAccBuffer) {
  auto out = run_pipeline_through(load_example("matmul_ksplit.py"), "InitMemRef");
  auto buffers = buffers_by_name(*out->find_function("mm_ksplit"));
  std::set<int64_t> acc_ids;
  auto range = buffers.equal_range("acc");
  for (auto it = range.first; it != range.second; ++it) acc_ids.insert(it->second);
  // acc (matmul), the iter_arg, the matmul_acc result and the loop's return var: one buffer.
  EXPECT_EQ(std::distance(range.first, range.second), 4);
  EXPECT_EQ(acc_ids.size(), 1u);
  // Every other tile has a buffer of its own.
  std::set<int64_t> all;
  for (const auto& [name, id] : buffers) all.insert(id);
  EXPECT_EQ(all.size(), buffers.size() - 3);
  EXPECT_TRUE(check_properties(*out, static_cast<IRProperties>(IRProperty::MemRefsSet)).empty());
}

TEST(InitMemRef, EveryTileGetsItsSpaceAndSize) {
  auto out = run_pipeline_through(load_example("softmax.py"), "InitMemRef");
  std::string text = print(out);
  EXPECT_NE(text.find("t: pl.Tile[[64, 64], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(-1, 16384, 0)]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("peak: pl.Tile[[64, 1], pl.FP32, pl.MemorySpace.Vec, pl.MemRef(-1, 256, 2)]"),
            std::string::npos)
      << text;
}

TEST(InitMemRef, RejectsATileWithoutMemorySpace) {
  auto in = parse_body(kKernelK + R"(
        t = pl.load(x, [0, 0], [64, 64])
        e = pl.exp(t)
        y = pl.store(e, [0, 0], y)
        return y
)" + kCallK);
  EXPECT_EQ(error_of([&] {
              run_passes(in, {"ConvertToSSA", "InitMemRef"});
            }),
            "tile 'e' has no memory space; run InferTileMemorySpace first");
}

}  // namespace
}  // namespace pypto::passes
