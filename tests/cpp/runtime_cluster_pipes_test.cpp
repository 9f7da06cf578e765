// The cross-core pipes of a Group's cluster (PtoIsa::pipes, src/runtime/cluster_pipes.cpp),
// driven directly by hand-written kernels: tiles pass in order through bounded FIFOs, a split
// push gives each AIV lane its half, and waits that can never end fail the cluster with what
// each member waits for instead of hanging. Also run under ThreadSanitizer (scripts/test.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/runtime/tile_isa.h"

namespace pypto::runtime {
namespace {

constexpr int64_t kRows = 4, kCols = 2, kTiles = 5;

// What the kernels of one test saw, written from the members' threads.
struct Seen {
  std::mutex m;
  std::vector<std::string> failures;
  std::vector<std::vector<int32_t>> popped[2];  // per AIV lane, the tiles in pop order
  std::vector<int64_t> valid_rows[2];
};
Seen* g_seen = nullptr;

void record_failure(void*, const char* message) {
  std::lock_guard<std::mutex> lock(g_seen->m);
  g_seen->failures.emplace_back(message);
}

const PtoPipeIsa& pipes() { return *tile_isa().pipes; }

// The AIC pushes kTiles tiles, tile t holding t * 100 + its element index, valid in t + 1 rows
// (capped at kRows), with the split of args[0].i64 and two slots per lane.
void producer(const PtoArg* args, PtoCoreMemory* mem) {
  if (!pipes().init(mem, PTO_PIPE_C2V, 2, 0, 0, "producer")) return;
  for (int32_t t = 0; t < kTiles; ++t) {
    int32_t tile[kRows * kCols];
    for (int32_t i = 0; i < kRows * kCols; ++i) tile[i] = t * 100 + i;
    const int64_t valid_rows = t + 1 < kRows ? t + 1 : kRows;
    if (!pipes().push(mem, PTO_PIPE_C2V, 0, static_cast<int32_t>(args[0].i64), tile, kRows, kCols,
                      4, valid_rows, kCols, 0, "pl.tpush_to_aiv", "producer")) {
      return;
    }
  }
}

// An AIV lane pops every tile (its half with a split), records it and frees its slot.
void consumer(const PtoArg* args, PtoCoreMemory* mem) {
  if (!pipes().init(mem, PTO_PIPE_C2V, 2, 0, 0, "consumer")) return;
  const int64_t rows = args[0].i64 == 1 ? kRows / 2 : kRows;
  for (int32_t t = 0; t < kTiles; ++t) {
    int32_t tile[kRows * kCols] = {};
    int64_t valid_rows = 0, valid_cols = 0;
    if (!pipes().pop(mem, PTO_PIPE_C2V, 0, static_cast<int32_t>(args[0].i64), tile, rows, kCols, 4,
                     &valid_rows, &valid_cols, -1, -1, "pl.tpop_from_aic", "consumer")) {
      return;
    }
    {
      std::lock_guard<std::mutex> lock(g_seen->m);
      g_seen->popped[mem->subblock_idx].emplace_back(tile, tile + rows * kCols);
      g_seen->valid_rows[mem->subblock_idx].push_back(valid_rows);
    }
    if (!pipes().free_slot(mem, PTO_PIPE_C2V, 0, "pl.tfree_to_aic", "consumer")) return;
  }
}

// Pops once from a pipe nobody pushes to.
void lonely_consumer(const PtoArg*, PtoCoreMemory* mem) {
  if (!pipes().init(mem, PTO_PIPE_C2V, 2, 0, 0, "lonely")) return;
  int32_t tile[kRows * kCols];
  int64_t valid_rows = 0, valid_cols = 0;
  pipes().pop(mem, PTO_PIPE_C2V, 0, 0, tile, kRows, kCols, 4, &valid_rows, &valid_cols, -1, -1,
              "pl.tpop_from_aic", "lonely at line 7");
}
void idle_producer(const PtoArg*, PtoCoreMemory* mem) {
  pipes().init(mem, PTO_PIPE_C2V, 2, 0, 0, "idle");
}

class ClusterPipesTest : public ::testing::Test {
 protected:
  void SetUp() override { g_seen = &seen_; }
  void TearDown() override { g_seen = nullptr; }

  PtoCoreMemory memory() {
    PtoCoreMemory mem{};
    mem.fail = &record_failure;
    mem.isa = &tile_isa();
    mem.block_num = 1;
    mem.num_cores = 1;
    mem.stop = &stop_;
    return mem;
  }

  void run(const std::vector<PtoClusterMember>& members, int32_t lanes) {
    PtoCoreMemory mem = memory();
    pipes().run_cluster(&mem, "group", members.data(), static_cast<int32_t>(members.size()), lanes);
  }

  Seen seen_;
  uint8_t stop_ = 0;
};

PtoArg split_arg(int64_t split) {
  PtoArg a{};
  a.kind = PTO_ARG_SCALAR;
  a.dtype = PTO_INT64;
  a.i64 = split;
  return a;
}

TEST_F(ClusterPipesTest, TilesPassInOrderThroughTwoSlotsWithTheirValidRows) {
  const PtoArg args[] = {split_arg(0)};
  run({{&producer, args, PTO_PIPE_AIC, 0, "producer", 1},
       {&consumer, args, PTO_PIPE_AIV, 0, "consumer", 1}},
      1);
  ASSERT_TRUE(seen_.failures.empty()) << seen_.failures.front();
  ASSERT_EQ(seen_.popped[0].size(), static_cast<size_t>(kTiles));
  for (int32_t t = 0; t < kTiles; ++t) {
    EXPECT_EQ(seen_.popped[0][t][0], t * 100);
    EXPECT_EQ(seen_.popped[0][t][kRows * kCols - 1], t * 100 + kRows * kCols - 1);
    EXPECT_EQ(seen_.valid_rows[0][t], t + 1 < kRows ? t + 1 : kRows);
  }
}

TEST_F(ClusterPipesTest, ASplitPushGivesEachLaneItsHalfOfTheRows) {
  const PtoArg args[] = {split_arg(1)};
  run({{&producer, args, PTO_PIPE_AIC, 0, "producer", 1},
       {&consumer, args, PTO_PIPE_AIV, 0, "consumer", 1},
       {&consumer, args, PTO_PIPE_AIV, 1, "consumer", 1}},
      2);
  ASSERT_TRUE(seen_.failures.empty()) << seen_.failures.front();
  for (int32_t lane = 0; lane < 2; ++lane) {
    ASSERT_EQ(seen_.popped[lane].size(), static_cast<size_t>(kTiles)) << lane;
    for (int32_t t = 0; t < kTiles; ++t) {
      // Lane 1's half starts at row kRows / 2 of the pushed tile.
      EXPECT_EQ(seen_.popped[lane][t][0], t * 100 + lane * (kRows / 2) * kCols) << lane << t;
      // Tile t is valid in t + 1 rows of the whole: each lane keeps the part within its half.
      const int64_t whole = t + 1 < kRows ? t + 1 : kRows;
      const int64_t part =
          std::min<int64_t>(std::max<int64_t>(whole - lane * (kRows / 2), 0), kRows / 2);
      EXPECT_EQ(seen_.valid_rows[lane][t], part) << lane << t;
    }
  }
}

TEST_F(ClusterPipesTest, APopNoPushCanAnswerFailsAsADeadlockNamingEachMember) {
  const PtoArg args[] = {split_arg(0)};
  run({{&idle_producer, args, PTO_PIPE_AIC, 0, "idle", 1},
       {&lonely_consumer, args, PTO_PIPE_AIV, 0, "lonely", 1}},
      1);
  ASSERT_EQ(seen_.failures.size(), 1u);
  const std::string& message = seen_.failures.front();
  EXPECT_NE(message.find("deadlock in the cluster of Group 'group'"), std::string::npos) << message;
  EXPECT_NE(message.find("AIC kernel 'idle' has returned"), std::string::npos) << message;
  EXPECT_NE(message.find("AIV kernel 'lonely' waits for a tile on pipe 0 (Cube to Vector)"),
            std::string::npos)
      << message;
}

TEST_F(ClusterPipesTest, TheStopFlagEndsAWait) {
  stop_ = 1;
  const PtoArg args[] = {split_arg(0)};
  run({{&idle_producer, args, PTO_PIPE_AIC, 0, "idle", 1},
       {&lonely_consumer, args, PTO_PIPE_AIV, 0, "lonely", 1}},
      1);
  ASSERT_EQ(seen_.failures.size(), 1u);
  EXPECT_NE(seen_.failures.front().find("stopped while waiting for a tile"), std::string::npos)
      << seen_.failures.front();
}

TEST_F(ClusterPipesTest, APipeOpOutsideAClusterFailsSayingSo) {
  PtoCoreMemory mem = memory();
  int32_t tile[kRows * kCols] = {};
  EXPECT_EQ(pipes().push(&mem, PTO_PIPE_C2V, 0, 0, tile, kRows, kCols, 4, kRows, kCols, 0,
                         "pl.tpush_to_aiv", "kernel k at line 3"),
            0);
  ASSERT_EQ(seen_.failures.size(), 1u);
  EXPECT_NE(seen_.failures.front().find("kernel k at line 3: a cross-core pipe op ran outside a "
                                        "Group"),
            std::string::npos)
      << seen_.failures.front();
}

}  // namespace
}  // namespace pypto::runtime
