// The shared-memory CommTransport of multi-rank runs: two processes exchanging data and
// signals through it, waits that time out or are aborted, and the signal operations.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/task_runtime.h"
#include "pypto/runtime/tile_isa.h"

namespace pypto::runtime {
namespace {

using std::chrono::milliseconds;

constexpr size_t kData = 256;   // bytes of data at the start of each window
constexpr size_t kCell = 1024;  // offset of the signal cell of each window

TEST(CommTransport, TwoProcessesExchangeDataAndSignals) {
  SharedMemoryWorld world(2, 4096);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Rank 1: write a pattern into rank 0's window, notify it, wait for the reply.
    auto t = world.transport(1);
    uint8_t pattern[kData];
    for (size_t i = 0; i < kData; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + 1);
    t->write(0, 0, pattern, kData);
    t->notify(0, kCell, 1, SignalOp::AtomicAdd);
    const SignalWait w = t->wait(kCell, 1, SignalCmp::Ge, milliseconds(10000));
    if (w.status != SignalWait::Status::Satisfied) ::_exit(2);
    uint8_t reply[kData];
    std::memcpy(reply, t->local_window(), kData);
    for (size_t i = 0; i < kData; ++i) {
      if (reply[i] != static_cast<uint8_t>(255 - pattern[i])) ::_exit(3);
    }
    ::_exit(0);
  }
  auto t = world.transport(0);
  ASSERT_EQ(t->wait(kCell, 1, SignalCmp::Ge, milliseconds(10000)).status,
            SignalWait::Status::Satisfied);
  uint8_t got[kData];
  std::memcpy(got, t->local_window(), kData);  // what rank 1 wrote, visible after the wait
  for (size_t i = 0; i < kData; ++i) {
    ASSERT_EQ(got[i], static_cast<uint8_t>(i * 7 + 1)) << "byte " << i;
    got[i] = static_cast<uint8_t>(255 - got[i]);
  }
  t->write(1, 0, got, kData);
  t->notify(1, kCell, 5, SignalOp::Set);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: rank 1's wait failed, 3: its reply was wrong";
  // Rank 1's cell holds what rank 0 set.
  int32_t cell = 0;
  t->read(1, kCell, &cell, sizeof cell);
  EXPECT_EQ(cell, 5);
}

TEST(CommTransport, WaitTimesOutWithTheCellsValue) {
  SharedMemoryWorld world(2, 4096);
  auto t = world.transport(0);
  t->notify(0, kCell, 3, SignalOp::AtomicAdd);
  const auto start = std::chrono::steady_clock::now();
  const SignalWait w = t->wait(kCell, 4, SignalCmp::Ge, milliseconds(150));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(w.status, SignalWait::Status::TimedOut);
  EXPECT_EQ(w.last_value, 3);
  EXPECT_GE(waited, milliseconds(150));
  EXPECT_LT(waited, milliseconds(5000));
}

TEST(CommTransport, EqualityWaitNeedsTheExactValue) {
  SharedMemoryWorld world(1, 4096);
  auto t = world.transport(0);
  t->notify(0, kCell, 2, SignalOp::AtomicAdd);
  t->notify(0, kCell, 2, SignalOp::AtomicAdd);
  EXPECT_EQ(t->wait(kCell, 4, SignalCmp::Eq, milliseconds(10)).status,
            SignalWait::Status::Satisfied);
  EXPECT_EQ(t->wait(kCell, 3, SignalCmp::Eq, milliseconds(10)).status,
            SignalWait::Status::TimedOut);
  t->notify(0, kCell, 1, SignalOp::Set);
  EXPECT_EQ(t->wait(kCell, 1, SignalCmp::Eq, milliseconds(10)).status,
            SignalWait::Status::Satisfied);
}

TEST(CommTransport, AFailedRankEndsTheOthersWaits) {
  SharedMemoryWorld world(3, 4096);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    world.transport(2)->abort(2);
    ::_exit(0);
  }
  const SignalWait w = world.transport(0)->wait(kCell, 1, SignalCmp::Ge, milliseconds(20000));
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(w.status, SignalWait::Status::Aborted);
  EXPECT_EQ(w.aborted_by, 2);
  EXPECT_EQ(world.aborted_by(), 2);
  // The first failure is the one that counts.
  world.transport(1)->abort(1);
  EXPECT_EQ(world.aborted_by(), 2);
}

TEST(CommTransport, WindowsAreZeroedAndSeparate) {
  SharedMemoryWorld world(2, 100);
  EXPECT_EQ(world.window_bytes(), 100u);
  auto t0 = world.transport(0);
  auto t1 = world.transport(1);
  for (size_t i = 0; i < 100; ++i) ASSERT_EQ(t0->local_window()[i], 0);
  t0->local_window()[0] = 42;
  EXPECT_EQ(t1->local_window()[0], 0);
  EXPECT_EQ(*t1->peer_address(0, 0), 42);
  EXPECT_EQ(t0->rank(), 0);
  EXPECT_EQ(t1->nranks(), 2);
}

}  // namespace
}  // namespace pypto::runtime

namespace pypto::runtime {
namespace {

struct FailureNote {
  std::string message;
  static void fail(void* ctx, const char* message) {
    static_cast<FailureNote*>(ctx)->message = message;
  }
};

// The device instruction of pld.system.wait: a wait nobody answers fails the kernel with a
// message naming the rank, the cell, what it waited for and where.
TEST(CommInstructions, AnUnansweredWaitFailsNamingRankAndCell) {
  SharedMemoryWorld world(2, 4096);
  auto transport = world.transport(1);
  set_current_transport(transport.get(), std::chrono::milliseconds(100));
  const int64_t shape[] = {2, 1};
  PtoTensor signal = contiguous_tensor(transport->local_window(), PTO_INT32, 2, shape);
  const PtoIsa& isa = tile_isa();
  EXPECT_EQ(isa.comm_rank(), 1);
  EXPECT_EQ(isa.comm_nranks(), 2);
  const int64_t cell[] = {0, 0};
  FailureNote note;
  EXPECT_EQ(isa.comm_wait(&signal, cell, 2, 1, 1, "stuck: pld.system.wait at line 7",
                          &FailureNote::fail, &note),
            0);
  EXPECT_NE(note.message.find("stuck: pld.system.wait at line 7: rank 1: pld.system.wait on "
                              "signal[0, 0] (waiting for >= 1, it holds 0) timed out after 0.1 s"),
            std::string::npos)
      << note.message;
  // Notified (here by itself), the same wait passes; a peer outside the world is refused.
  EXPECT_EQ(isa.comm_notify(&signal, cell, 2, 1, 1, 0, "k", &FailureNote::fail, &note), 1);
  EXPECT_EQ(isa.comm_wait(&signal, cell, 2, 1, 1, "k", &FailureNote::fail, &note), 1);
  EXPECT_EQ(isa.comm_notify(&signal, cell, 2, 5, 1, 0, "k", &FailureNote::fail, &note), 0);
  EXPECT_NE(note.message.find("addressed peer 5, but the run has ranks 0..1"), std::string::npos);
  // A tensor outside the window cannot be reached on another rank.
  float local[4] = {};
  const int64_t four[] = {1, 4};
  PtoTensor plain = contiguous_tensor(local, PTO_FP32, 2, four);
  PtoTensor view{};
  EXPECT_EQ(isa.comm_peer_view(&view, &plain, 0, "k", &FailureNote::fail, &note), 0);
  EXPECT_NE(note.message.find("is not a window buffer"), std::string::npos) << note.message;
  set_current_transport(nullptr, std::chrono::milliseconds(100));
  take_signal_waits();
}

}  // namespace
}  // namespace pypto::runtime
