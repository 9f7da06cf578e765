// The MPI transport (plugins/mpi/mpi_world.cpp) between the processes of one mpiexec: ctest runs
// this binary as 4 ranks (tests/cpp/CMakeLists.txt), and every test is collective, each rank
// checking its side. Data and signals around a ring, Set and equality waits, a rank's abort
// ending the others' waits, a wait out of time, and the world's gather and broadcast.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "pypto/runtime/comm_transport.h"
#include "pypto/runtime/rank_world.h"

namespace pypto::runtime {
namespace {

using std::chrono::milliseconds;

constexpr size_t kData = 256;   // bytes of data at the start of each window
constexpr size_t kCell = 1024;  // offset of the signal cell of each window

uint8_t pattern(int rank, size_t i) { return static_cast<uint8_t>(rank * 37 + i); }

TEST(MpiWorld, IsEveryProcessOfTheLaunch) {
  auto world = mpi_world();
  EXPECT_EQ(world->nranks(), 4);
  EXPECT_NE(world->library().find("MPI"), std::string::npos) << world->library();
  const std::vector<std::string> all = world->all_gather("rank " + std::to_string(world->rank()));
  ASSERT_EQ(all.size(), 4u);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(all[r], "rank " + std::to_string(r));
  int value = world->rank() == 3 ? 42 : 0;
  world->broadcast(&value, sizeof value, 3);
  EXPECT_EQ(value, 42);
}

TEST(MpiTransport, DataAndSignalsGoAroundARing) {
  auto world = mpi_world();
  auto t = world->open_windows(4096);
  const int me = t->rank(), n = t->nranks();
  const int next = (me + 1) % n, prev = (me + n - 1) % n;
  EXPECT_EQ(t->peer_address(next, 0), nullptr);  // peers are reached by copies only
  size_t nonzero = 0;
  for (size_t i = 0; i < 4096; ++i) nonzero += t->local_window()[i] != 0;
  EXPECT_EQ(nonzero, 0u);  // windows start as zeros
  world->barrier();        // (before any rank writes into another's)
  std::vector<uint8_t> mine(kData);
  for (size_t i = 0; i < kData; ++i) mine[i] = pattern(me, i);
  t->write(next, 0, mine.data(), kData);
  t->notify(next, kCell, 1, SignalOp::AtomicAdd);
  ASSERT_EQ(t->wait(kCell, 1, SignalCmp::Ge, milliseconds(20000)).status,
            SignalWait::Status::Satisfied);
  // What the predecessor wrote is in this rank's window once its signal arrived.
  for (size_t i = 0; i < kData; ++i) ASSERT_EQ(t->local_window()[i], pattern(prev, i)) << i;
  world->barrier();  // every rank has received before any reads back
  std::vector<uint8_t> theirs(kData);
  t->read(next, 0, theirs.data(), kData);
  EXPECT_EQ(theirs, mine);
  world->barrier();
}

TEST(MpiTransport, SetAndEqualityWaits) {
  auto world = mpi_world();
  auto t = world->open_windows(4096);
  if (t->rank() == 0) {
    for (int p = 1; p < t->nranks(); ++p) t->notify(p, kCell, 7, SignalOp::Set);
  } else {
    const SignalWait w = t->wait(kCell, 7, SignalCmp::Eq, milliseconds(20000));
    EXPECT_EQ(w.status, SignalWait::Status::Satisfied);
    EXPECT_EQ(w.last_value, 7);
  }
  world->barrier();
}

TEST(MpiTransport, AWaitNobodyAnswersTimesOut) {
  auto world = mpi_world();
  auto t = world->open_windows(4096);
  const SignalWait w = t->wait(kCell, 1, SignalCmp::Ge, milliseconds(50));
  EXPECT_EQ(w.status, SignalWait::Status::TimedOut);
  EXPECT_EQ(w.last_value, 0);
  EXPECT_EQ(t->aborted_by(), -1);
  world->barrier();
}

TEST(MpiTransport, AFailedRankEndsTheOthersWaits) {
  auto world = mpi_world();
  auto t = world->open_windows(4096);
  if (t->rank() == 1) {
    t->abort(1);
  } else {
    const SignalWait w = t->wait(kCell, 1, SignalCmp::Ge, milliseconds(20000));
    EXPECT_EQ(w.status, SignalWait::Status::Aborted);
    EXPECT_EQ(w.aborted_by, 1);
  }
  world->barrier();
  EXPECT_EQ(t->aborted_by(), 1);  // on every rank, the failed one included
  world->barrier();
}

}  // namespace
}  // namespace pypto::runtime
