#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "pass_test_helpers.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/liveness.h"

namespace pypto::passes {
namespace {

using namespace testing;

TEST(MemoryReuse, SoftmaxNeedsLessVecThanTheSumOfItsTiles) {
  auto before = run_pipeline_through(load_example("softmax.py"), "InitMemRef");
  auto after = run_passes(before, {"MemoryReuse"});
  MemoryUsage b =
      measure_memory_usage(*before->find_function("softmax_kernel"), ir::MemorySpace::Vec);
  MemoryUsage a =
      measure_memory_usage(*after->find_function("softmax_kernel"), ir::MemorySpace::Vec);
  std::cout << "softmax Vec: sum of tile sizes " << b.tile_bytes << " bytes, buffers before reuse "
            << b.buffer_bytes << " bytes (peak live " << b.peak_live_bytes
            << "), buffers after reuse " << a.buffer_bytes << " bytes (peak live "
            << a.peak_live_bytes << ")\n";
  // 4 tiles of 64x64 and 4 of 64x1 FP32.
  EXPECT_EQ(b.tile_bytes, 4 * 16384 + 4 * 256);
  EXPECT_EQ(b.buffer_bytes, b.tile_bytes);
  EXPECT_LT(a.buffer_bytes, b.tile_bytes);
  EXPECT_LT(a.peak_live_bytes, b.tile_bytes);
  // t and the row_expand_sub result are live together, so two 16 KiB buffers are the minimum.
  EXPECT_GE(a.buffer_bytes, 2 * 16384);
}

TEST(MemoryReuse, ValuesUsedInsideALoopStayLiveForTheWholeLoop) {
  auto in = parse_body(kKernelK + R"(
        w = pl.load(x, [0, 0], [64, 64])
        for i in pl.range(4):
            t = pl.load(x, [0, 0], [64, 64])
            u = pl.add(t, w)
            y = pl.store(u, [0, 0], y)
        return y
)" + kCallK);
  auto out = run_pipeline_through(in, "MemoryReuse");
  const auto& k = *out->find_function("k");
  auto intervals = compute_live_intervals(k);
  // `w` is read in every iteration: its buffer must differ from `t`'s and `u`'s.
  std::map<std::string, int64_t> ids;
  for (const auto& [var, iv] : intervals) {
    if (const auto* t = var->type()->as<ir::TileType>()) ids[var->name] = t->memref->buffer_id;
  }
  EXPECT_NE(ids.at("w"), ids.at("t"));
  EXPECT_NE(ids.at("w"), ids.at("u"));
}

TEST(MemoryReuse, EqualTileTypesAreOneObject) {
  // The memory passes give tiles of equal type (same shape, dtype and MemRef) one shared type
  // object instead of one each: fewer allocations on big kernels, no visible difference.
  auto out = run_pipeline_through(load_example("softmax.py"), "AllocateMemoryAddr");
  std::vector<ir::VarPtr> tiles;
  struct Collector : ir::IRVisitor {
    std::vector<ir::VarPtr>* out;
    void visit_assign(const ir::AssignStmt& s) override {
      if (s.var->type()->as<ir::TileType>()) out->push_back(s.var);
      IRVisitor::visit_assign(s);
    }
  } collector;
  collector.out = &tiles;
  collector.visit(out->find_function("softmax_kernel")->body);
  size_t equal_pairs = 0;
  for (size_t i = 0; i < tiles.size(); ++i) {
    for (size_t j = i + 1; j < tiles.size(); ++j) {
      if (!ir::types_equal(tiles[i]->type(), tiles[j]->type())) continue;
      ++equal_pairs;
      EXPECT_EQ(tiles[i]->type().get(), tiles[j]->type().get())
          << tiles[i]->name << " and " << tiles[j]->name;
    }
  }
  EXPECT_GT(equal_pairs, 0u);  // softmax reuses buffers, so some tiles have equal types
}

}  // namespace
}  // namespace pypto::passes
