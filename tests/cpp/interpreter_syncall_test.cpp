// pl.system.syncall in the reference interpreter: the blocks of a kernel that calls it run side
// by side and meet at the barrier, so each reads after it what the others wrote before it; a
// block that returns without arriving ends the launch with a message instead of a hang.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pypto/frontend/parser.h"
#include "pypto/ir/interpreter.h"

namespace pypto::ir {
namespace {

// Four blocks: block b writes b + 1 into row b of the first half of buf, meets the others,
// then copies row (b + 1) % 4 into row 4 + b. Block 0 first spins through a loop, so that in
// one-after-another order the others would read a row it had not written yet.
constexpr const char* kExchange = R"(import pypto.language as pl

@pl.program
class Exchange:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, buf: pl.InOut[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        b = pl.tile.get_block_idx()
        t = pl.tile.full([1, 16], dtype=pl.FP32, value=0.0)
        for i in pl.range(64 * (3 - b)):
            t = pl.add(t, 0.0)
        buf = pl.store(pl.add(t, pl.cast(b + 1, pl.FP32)), [b, 0], buf)
        pl.system.syncall()
        theirs = pl.load(buf, [(b + 1) % 4, 0], [1, 16])
        buf = pl.store(theirs, [4 + b, 0], buf)
        return buf

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, buf: pl.InOut[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        with pl.spmd(4):
            buf = self.k(buf)
        return buf
)";

std::vector<float> run_exchange(const std::string& text) {
  auto program = frontend::parse_module(text, "exchange.py").at(0);
  std::vector<float> buf(8 * 16, -1.0f);
  HostTensor t;
  t.name = "buf";
  t.shape = {8, 16};
  t.data = buf.data();
  interpret(*program, {InterpreterArg(t)});
  return buf;
}

TEST(InterpreterSyncall, BlocksReadWhatTheOthersWroteBeforeTheBarrier) {
  const std::vector<float> buf = run_exchange(kExchange);
  for (int b = 0; b < 4; ++b) {
    EXPECT_EQ(buf[static_cast<size_t>(b * 16)], static_cast<float>(b + 1)) << "row " << b;
    EXPECT_EQ(buf[static_cast<size_t>((4 + b) * 16 + 15)], static_cast<float>((b + 1) % 4 + 1))
        << "row " << 4 + b;
  }
}

TEST(InterpreterSyncall, ABlockThatNeverArrivesEndsTheLaunchWithAMessage) {
  std::string text = kExchange;
  const std::string call = "        pl.system.syncall()\n";
  text.replace(text.find(call), call.size(),
               "        if b != 2:\n            pl.system.syncall()\n");
  try {
    run_exchange(text);
    ADD_FAILURE() << "the launch should not complete";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("1 of the launch's 4 blocks returned without reaching it"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pypto::ir
